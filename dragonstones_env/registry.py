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


def _no_option(key: str, value: Any, sources: Any) -> Any:
    raise ValueError(f"{key} is not an option a table of this game may set")


@dataclass(frozen=True)
class Presenter:
    """How a game is shown to people: what the web app, the terminal and the GIF writer need of it.

    Each game package builds its own (``games/dragonstones/present.py``); nothing outside ``games/`` tells
    games apart. Every value shown to a seat comes from that seat's observation and action mask;
    ``view``/``public_view``/``hidden`` return JSON-plain dicts that the other functions read back.
    The game's facts (id, title, table sizes, default bot, env options) stay on :class:`GameSpec`.
    """

    how_to: tuple[str, ...]  # how to play, a few sentences for a first-time player
    kind_key: str  # the key naming an event's kind in the engine's record ("event": core/records.py)
    input_events: tuple[str, ...]  # the record's event kinds that are a seat's decision (they carry an "option")
    env_for_record: Callable[[dict], Any]  # a record's start event -> a fresh env at its start
    encode: Callable[[list, int, int], int]  # (a record's option, actor, num_players) -> action index
    rules: Callable[[], dict[str, str]]  # every card's rules text, by name
    goal: Callable[[Any], str]  # env -> how to win, in a sentence
    view: Callable[[Any, int], dict[str, Any]]  # (env, seat) -> what that seat sees
    public_view: Callable[[Any], dict[str, Any]]  # env -> what every seat sees alike (a spectator's)
    hidden: Callable[[Any], dict[str, Any]]  # env -> the whole table (a replay's "all" view)
    race: Callable[[dict], list]  # view -> each seat's progress bars
    prompt: Callable[[dict, list[str]], str | None]  # (view, names) -> the decision's question
    action_text: Callable[[Any, int, list[str]], str]  # (env, action, names) -> the action in words
    groups: Callable[..., list[dict[str, Any]]]  # (env, seat, legal actions, names) -> the choices, grouped
    log_line: Callable[[dict, Any, list[str]], str | None]  # (event, viewer, names) -> a sentence or None
    outcome: Callable[[Any, list[str]], dict[str, Any]]  # (finished env, names) -> winners, points, words
    headline: Callable[[dict], str]  # view -> one line for the terminal
    seat_line: Callable[[dict, int], str]  # (view, seat) -> one seat's line for the terminal
    # env options a new table may set (by name, a subset of the env's) and the reader of a request's value:
    # ``option(key, value, sources) -> value`` (a ValueError says what is wrong; ``sources.deck(name, parse)``)
    table_options: tuple[str, ...] = ()
    option: Callable[[str, Any, Any], Any] = _no_option
    make_env: Callable[..., Any] | None = None  # (num_players, **options) -> env; None: the spec's raw_env


@dataclass(frozen=True)
class OlderVersion:
    """An earlier observation layout of a game whose checkpoints still play (``drachenschatten_v0``):
    its PettingZoo name, layout signature and observation size, and ``view(observations) ->
    observations``, the older vector (one or a batch) from the current one. ``columns`` are the
    current observation's indices the older one's inputs come from (in order), so a start of the
    older layout can be widened with zero weights for the rest (training/start.py)."""

    name: str
    layout: str
    obs_size: int
    view: Callable[[Any], Any]
    columns: tuple[int, ...]


@dataclass(frozen=True)
class LoopGuard:
    """A rule a policy may follow where a game's rules allow a loop without end (DrachenSchatten's two
    keys restoring each other, D4): ``apply(observations, masks, limit) -> masks``, the batch's masks
    without the actions that would repeat past ``limit`` (one of ``limits``). A checkpoint's card asks
    for it with ``"loop_guard": limit`` (policies/checkpoint.py)."""

    apply: Callable[[Any, Any, int], Any]
    limits: range


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
    replay: Callable[[list], Any]  # record (of any version the game wrote) -> engine, checked event by event
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
    # A record this game's engine wrote, of any version, in today's format (dragonstones_env/core/records.py);
    # a ReplayError when it is not this game's record or of a version it does not read.
    read_record: Callable[[list], list] = field(default=lambda record: record)
    # How people see the game (the web app, terminal play, GIFs), or None: it is not offered there.
    presenter: Presenter | None = None
    # Earlier observation layouts whose checkpoints still play, seeing their own view of the table.
    older: tuple[OlderVersion, ...] = ()
    # The loop a policy may refuse to repeat (LoopGuard), or None: the game has none to guard.
    loop_guard: LoopGuard | None = None

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

    def check_players(self, n: Any, what: str = "num_players") -> int:
        """``n`` if the game is played at that table size, else a ValueError naming ``what`` and the
        allowed range (a :class:`TableSizeError`): the one check of a table size, read from the raw env."""
        players = self.players
        if isinstance(n, bool) or not isinstance(n, int) or n not in players:
            raise TableSizeError(f"{what} must be an integer from {players.start} to {players.stop - 1} for "
                             f"{self.title}, got {repr(n)[:40]}")
        return n

    def plays(self, game: Any) -> bool:
        """Whether a policy's ``game`` (this game's id, or its PettingZoo name) is this game."""
        return game in (self.id, self.name) or any(game == v.name for v in self.older)

    def older_version(self, name: str) -> OlderVersion | None:
        """The earlier layout named ``name`` (``drachenschatten_v0``), or None (the current one or unknown)."""
        return next((v for v in self.older if v.name == name), None)

    def make_table(self, num_players: int, **options: Any) -> Any:
        """A raw env for people to play at (the presenter's ``make_env``, else :attr:`raw_env`)."""
        self.check_players(num_players, "players")
        make = self.presenter.make_env if self.presenter and self.presenter.make_env else self.raw_env
        return make(num_players=num_players, **options)

    @property
    def options(self) -> dict[str, Any]:
        """The env's options and their defaults."""
        return dict(self.raw_env.OPTIONS)


_GAMES: dict[str, GameSpec] = {}


class UnknownGameError(KeyError, ValueError):
    """A game id (or PettingZoo name) no game registered; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


class TableSizeError(ValueError):
    """A table size the game is not played at (:meth:`GameSpec.check_players`); the message names the range."""


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
