"""The game registry: :class:`GameSpec` and ``register`` / ``get`` / ``all``.

Part of the shared core, below the games: a game package registers itself by importing only
this (never the ``games`` package, which imports every built-in game), so the games stay
independent of each other (an import-linter contract). Use it as :mod:`dragonstones_env.games`,
which re-exports it and imports the built-in games.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

# The Gymnasium entry point of every game: a string, so that registering an id imports nothing
# (the single-agent env seats policies by name, so it lives in the play layer above the policies).
GYM_ENTRY_POINT = "dragonstones_env.play.single_agent:make"


@dataclass(frozen=True)
class GameSpec:
    """What the rest of the project needs to know about one game.

    ``id`` is the short name configs and command lines use (``"dragonstones"``); ``raw_env`` the
    PettingZoo class (its ``metadata["name"]``, e.g. ``dragonstones_v1``, is :attr:`name`).
    """

    id: str
    title: str  # for people: "Fist of Dragonstones"
    raw_env: type  # a TurnBasedEnv subclass
    env: Callable[..., Any]  # raw_env wrapped as users get it (PettingZoo's order enforcing)
    engine: type  # the rules engine (the protocol of dragonstones_env.core)
    replay: Callable[[list], Any]  # record -> engine, checked event by event
    decode: Callable[[Any], dict[str, Any]]  # observation vector -> named, unscaled values
    default_bot: str  # the spec of the game's hand-written bot (always on an evaluation panel)
    gym_id: str  # gymnasium.make(gym_id, ...): one learner, the other seats policies
    default_players: int
    action_table: Callable[[], str]  # the action layout as a Markdown table (the README's)
    observation_table: Callable[[], str]  # the observation layout as a Markdown table
    zoo: tuple[str, ...] = ()  # rule-based bots of distinct styles, for panels that mix them
    # evaluation figures read from a finished engine (turns, ...), and what "stalling" means here
    figures: Callable[[Any], dict[str, Any]] = field(default=lambda game: {"turns": game.turn})
    stall: str = "n/a"
    gym_entry_point: str = GYM_ENTRY_POINT
    # The determinization sampler of the search policies (docs/search.md), or None (the game cannot be
    # searched): ``sample_state(engine, seat, rng, options, guess=None) -> engine``, a new engine at the
    # same decision, consistent with everything ``seat`` has seen and drawn afresh in everything it has
    # not (hidden orders, others' hidden choices, the future's randomness). ``options`` are the env's
    # (an observation mode may hide more); ``guess(engine, rng) -> option``, if given, draws the hidden
    # choice of the engine's current decision (another player's sealed bid), else uniformly.
    sample_state: Callable[..., Any] | None = None
    # What the OpenSpiel wrapper (dragonstones_env.openspiel) declares of a game, or None (it is not offered
    # there): ``reward_range(n) -> (lowest, highest)`` final reward of one seat at n players (the env's
    # ``outcome()``), and ``max_decisions(n, options) -> int | None``, an upper bound on the decisions (actions)
    # of one game at n players with these env options (None: no bound is known, e.g. a custom deck's powers).
    # tests/contract checks both against random games.
    reward_range: Callable[[int], tuple[float, float]] | None = None
    max_decisions: Callable[[int, Mapping[str, Any]], int | None] | None = None
    # What a policy trained with some env options sees of an evaluation's table, which shows all a seat may
    # know (Fist's recall mode): ``seat_view(options) -> f`` with ``f(observations) -> observations`` (one vector
    # or a batch), or None for all of it; a ValueError names an option value the game does not know. A policy's
    # card records its options, so it sees at every table what it learnt from (Fist's table mode hides coins).
    # Return the same function for the same view (a module-level one): a run compares its start's with `is`.
    seat_view: Callable[[Mapping[str, Any]], Callable[[Any], Any] | None] = field(default=lambda options: None)

    @property
    def name(self) -> str:
        """The PettingZoo name, with its version (``dragonstones_v1``): what checkpoints' cards name."""
        return self.raw_env.metadata["name"]

    @property
    def layout(self) -> str:
        """The layout signature (``dragonstones_v1:6db71e5c8ea8``): checkpoints of another are refused."""
        return self.raw_env.metadata["layout"]

    @property
    def players(self) -> range:
        """The table sizes the game allows, written once: in its raw env."""
        return range(self.raw_env.MIN_PLAYERS, self.raw_env.MAX_PLAYERS + 1)

    @property
    def options(self) -> dict[str, Any]:
        """The env's options and their defaults."""
        return dict(self.raw_env.OPTIONS)


_GAMES: dict[str, GameSpec] = {}


class UnknownGameError(KeyError, ValueError):
    """A game id (or PettingZoo name) no game registered; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(spec: GameSpec) -> GameSpec:
    """Add a game (and its Gymnasium id, by entry-point string). Registering one id twice is refused."""
    if spec.id in _GAMES and _GAMES[spec.id] is not spec:
        raise ValueError(f"a game {spec.id!r} is already registered")
    _GAMES[spec.id] = spec
    if spec.gym_id not in gym.registry:
        gym.register(spec.gym_id, entry_point=spec.gym_entry_point, kwargs={"game": spec.id})
    return spec


def unregister(game_id: str) -> None:
    """Remove a game (tests that register a game of their own clean up with this)."""
    spec = _GAMES.pop(game_id)
    gym.registry.pop(spec.gym_id, None)


def get(game: str | GameSpec) -> GameSpec:
    """The spec of a game by id (``"dragonstones"``) or PettingZoo name, any version (``"dragonstones_v1"``)."""
    if isinstance(game, GameSpec):
        return game
    if isinstance(game, str):
        spec = _GAMES.get(game) or _GAMES.get(game.rsplit("_v", 1)[0])
        if spec is not None:
            return spec
    raise UnknownGameError(f"unknown game {game!r}; the games are {', '.join(_GAMES)}")


def game_id(name: str) -> str:
    """The registry id users type (``drachenschatten``) of a game name such as a policy's
    ``game`` (``drachenschatten_v0``), for messages; the name itself when no game has it."""
    try:
        return get(name).id
    except UnknownGameError:
        return name


def all() -> list[GameSpec]:
    """Every registered game, in registration order."""
    return list(_GAMES.values())


def ids() -> tuple[str, ...]:
    return tuple(_GAMES)


PLUGIN_GROUP = "dragonstones_env.games"  # the entry-point group of games installed as their own distribution


def load_plugins() -> list[str]:
    """Import the games other distributions declare under the entry-point group ``dragonstones_env.games``
    (each entry names a module that calls :func:`register`), so that a command run from a shell, such
    as ``dragonstones evaluate --game mygame``, knows them; returns the entries' names."""
    entries = list(importlib.metadata.entry_points(group=PLUGIN_GROUP))
    for entry in entries:
        entry.load()
    return [entry.name for entry in entries]


class ByGame(Mapping):
    """A read-only mapping game id -> one fact of its spec (``ByGame(lambda s: s.zoo)``), read from
    the registry at each look-up, so that games registered later are in it too."""

    def __init__(self, fact: Callable[[GameSpec], Any]):
        self._fact = fact

    def __getitem__(self, game: str) -> Any:
        if game not in _GAMES:
            raise KeyError(game)
        return self._fact(_GAMES[game])

    def __iter__(self) -> Iterator[str]:
        return iter(_GAMES)

    def __len__(self) -> int:
        return len(_GAMES)
