"""What evaluation needs to know about a game and its options: the spec, table sizes, a custom deck,
line-ups and seeds. The bottom of the evaluation package."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from dragonstones_env import bounds, games

CHUNK = 8  # games per task sent to a worker (the progress bar moves a chunk at a time)
PANEL_GAMES = 200  # games per panel mix by default: enough to spot a weakness, not to claim one (use >= 1000)
# the keys every game's record has; its other keys are the game's figures (its GameSpec.figures)
RECORD_KEYS = ("game", "seed", "seats", "rewards", "winners", "truncated", "steps")



# ---------------------------------------------------------------------------- per-game facts
# What evaluation needs to know about a game -- its bot, its figures (turns, auctions, unwon), what
# stalling means there, its table sizes -- is its GameSpec, in the game registry.
GAMES = games.ids()  # the games registered at import (the command line's choices)


def check_bounded(key: str, value: Any) -> None:
    """``value`` within the bounds table's row ``key`` (``games``, ``workers``: dragonstones_env/bounds.py)."""
    try:
        bounds.check(key, value)
    except bounds.InputError as err:
        raise EvaluationError(str(err)) from None


class EvaluationError(ValueError):
    """A bad evaluation request (unknown spec, table size, line-up); the message says what to fix."""


# ---------------------------------------------------------------------------- games and line-ups
def player_range(game: str) -> tuple[int, int]:
    """The table sizes ``game`` allows (inclusive)."""
    players = games.get(game).players
    return players.start, players.stop - 1


def checked_options(game: str, players: int, env_options: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    """``env_options`` checked (a bad option fails here), with a custom deck's cards loaded once, and that deck.

    Every game builds a new env; a deck file given as a path would be read and validated (its
    conservation check: a fraction of a second) for each of them, so the options hold the
    deck's checked cards instead. The deck is None for the box's.
    """
    probe = games.get(game).env(num_players=players, **(env_options or {}))
    deck = probe.unwrapped.deck
    options = dict(env_options or {})
    if deck is not None:
        options.update(characters=list(deck.custom), exclude=list(deck.exclude))
    return options, deck


def env_factory(game: str, players: int, options: dict[str, Any] | None = None):
    """A picklable zero-argument function building a new environment of ``game`` with ``options``
    (as :func:`checked_options` returns them)."""
    return partial(games.get(game).env, num_players=players, **(options or {}))


def lineups(specs: Sequence[str], players: int, games: int, seed: int = 0,
            lineup: Sequence[str] | None = None) -> list[tuple[str, ...]]:
    """The spec seated at each seat of each game.

    * ``lineup`` given (one spec per seat): game ``g`` seats ``lineup[(i + g) % players]`` at seat ``i``.
    * exactly ``players`` specs: the same with ``lineup = specs`` (every game seats all of them,
      and every ``players`` consecutive games cover all rotations).
    * fewer specs than seats: the specs repeated in turn to fill the table, then rotated.
    * more specs than seats: groups of ``players`` specs, each time those that have played
      least (ties broken by a generator seeded with ``seed``), in a shuffled order, each group
      playing ``players`` consecutive games in all its rotations.
    """
    specs = list(specs)
    if lineup is None and len(specs) <= players:
        lineup = [specs[i % len(specs)] for i in range(players)]
    if lineup is not None:
        return [tuple(lineup[(i + g) % players] for i in range(players)) for g in range(games)]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x11E0]))
    counts = np.zeros(len(specs))
    out: list[tuple[str, ...]] = []
    while len(out) < games:
        order = np.lexsort((rng.random(len(specs)), counts))  # least played first, random among equals
        group = [int(k) for k in rng.permutation(order[:players])]
        counts[group] += 1
        for r in range(min(players, games - len(out))):
            out.append(tuple(specs[group[(i + r) % players]] for i in range(players)))
    return out
