"""Fist of Dragonstones: the rules engine (pure Python) and its PettingZoo AEC environment.

| module | holds |
|---|---|
| ``cards`` | the characters and the stock (data) |
| ``engine`` | players, bank, auctions, turn flow and tie-breaks (F1-F18); the powers are passed in |
| ``powers`` | one function per character power (F19-F42) and the ``POWERS`` table |
| ``actions`` | the action families (the codec's table) |
| ``observation`` | the observation layout, the observer, ``decode`` |
| ``global_state`` | the global state (``state()``, a centralised critic's input): its layout, the encoder |
| ``custom`` | custom characters as data or Python, the deck option (issue #16) |
| ``sampler`` | determinizations: the game as one seat may imagine it (the search's sampler, F43) |
| ``env`` | the PettingZoo env (``dragonstones_v1``) |
| ``present`` | the game shown to people: views, prompts, the log in words (the app, terminal, GIFs) |

The package ends by registering the game (``dragonstones_env.games.get("dragonstones")``).
"""

from collections.abc import Mapping
from typing import Any

from dragonstones_env.core.records import KIND_KEY
from dragonstones_env.registry import GameSpec, register

from . import actions, observation, present
from .cards import CARDS_PER_TURN
from .custom import replay  # engine.replay, rebuilding a custom deck too (#16)
from .engine import Game
from .env import env, raw_env
from .flow import GAME, read
from .observation import decode
from .sampler import sample_state
from .state import STOCK


def figures(game: Game) -> dict[str, Any]:
    """Evaluation figures of a finished game: turns, auctions, auctions nobody won."""
    # An auction settles with one "outcome" event; winner None when passed, cursed or tied.
    outcomes = [ev for ev in game.record if ev.get(KIND_KEY) == "outcome"]
    return {"turns": game.turn, "auctions": len(outcomes), "unwon": sum(ev["winner"] is None for ev in outcomes)}


def reward_range(num_players: int) -> tuple[float, float]:
    """A seat's lowest and highest final reward: -1/(n-1) for a loser, +1 for the winner (0 when truncated)."""
    return -1.0 / (num_players - 1), 1.0


def max_decisions(num_players: int, options: Mapping[str, Any]) -> int | None:
    """An upper bound on the decisions of one game with the standard characters (None with custom ones,
    whose powers may ask anything): ``max_turns`` turns (F18) of at most ``10 (2n + 1) + (n + 23) x 37``.

    In one turn: at most 10 auctions (each takes one of the turn's face-down cards, and nothing adds one),
    each with n sealed bids, at most n tie-break bids and at most one Doppelganger offer (F28). Power uses:
    one per won auction (10), a second for each Doppelganger played (a player holds at most one, and at most
    one is kept a turn: n + 1), one copied use per Ghost use (the Ghost is one card, used at most twice) and
    one per card the Imp or Goblin takes from the face-down cards (10): at most n + 23. A use asks at most
    ``1 + 3 x 12`` decisions: the Merchant one per stone bought from the bank (36 stones in all) and a stop,
    the Rainbow Dragon a colour and a draw-or-stop after each draw from the bank; every other power at
    most one (the Ghost's and the Imp's pick; their copied use is counted as a use). A loose bound (1,089 a
    turn at 4 players): in 60 random games at 4 players no turn asked more than 50 decisions, no game 1,400.
    """
    if options.get("characters") is not None:
        return None
    per_use = 1 + 3 * STOCK["stones"]
    per_turn = CARDS_PER_TURN * (2 * num_players + 1) + (num_players + 23) * per_use
    return int(options["max_turns"]) * per_turn


SPEC = register(GameSpec(
    read_record=read, id=GAME, title="Fist of Dragonstones", raw_env=raw_env, env=env, engine=Game, replay=replay,
    decode=decode, default_bot="heuristic", gym_id="Dragonstones-v0", default_players=4,
    action_table=actions.layout_table, observation_table=observation.layout_table,
    zoo=("value", "aggressor", "miser", "collector"), figures=figures,
    stall="share of auctions nobody wins (passed, cursed, or tied with no tie-break winner)",
    sample_state=sample_state, reward_range=reward_range, max_decisions=max_decisions,
    seat_view=observation.seat_view, presenter=present.PRESENTER,
))

__all__ = ["SPEC", "Game", "decode", "env", "figures", "max_decisions", "raw_env", "replay", "reward_range",
           "sample_state"]
