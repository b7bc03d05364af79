"""Games and replays held by the server, independent of the web framework.

A :class:`LiveGame` is one table: an AEC env, a policy or a human at each seat, bots moving
server-side at a pace. A :class:`Replay` is a checked engine record stepped through with a
fresh env. What either sends is built by the game's adapter from one seat's observation and
action mask, or for a spectator from what every seat sees alike (the public view; see
:mod:`dragonstones_env.play.app.games`). Every refusal is an :class:`AppError` with an HTTP
status and a message naming what was wrong; a refused request changes nothing.

Where policies and custom decks may come from is a :class:`Sources`: the terminal's (the user's
own files, anything ``load_policy`` and the env read) or the server's (names only: the built-in
and shipped policies, the checkpoints of a configured folder, the decks of a configured folder,
or a deck's text sent in the request; issue #29). No request names a file of the server's disk.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePath
from types import ModuleType
from typing import Any

import numpy as np

from dragonstones_env.bounds import BOUNDS, read_text_limited
from dragonstones_env.core import ReplayError
from dragonstones_env.policies import PolicyError, available, decide, load_policy, seat_all
from dragonstones_env.policies.checkpoint import CARD_FILE, load_checkpoint

from . import games
from .games.common import insight

HUMAN = "human"
WHOLE = "all"  # a replay's whole-table view: every hidden card
MAX_RECORD_EVENTS = 50_000  # a long Fist game has about 1,500 events
MAX_PACE_MS = int(BOUNDS["pace_ms"].high)  # the bounds table's (dragonstones_env/bounds.py)
MAX_SPEC = 100  # characters of a seat's policy name
MAX_NAME = 24  # characters of a player's name
KEYFRAME_EVERY = 256  # a replay keeps its env every this many steps (or more: at most MAX_KEYFRAMES)
MAX_KEYFRAMES = 64  # envs a replay keeps: a step back replays at most steps / 64 steps
REGENERATE_SECONDS = 5.0  # the longest a game of an evaluation may take to play again
_NAME = re.compile(r"^[\w][\w .'-]*$")  # a player's name: letters, digits, spaces, . ' - _
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a policy or deck of a configured folder
DECK_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}


class AppError(Exception):
    """A refused request: ``status`` (4xx) and a message naming what was wrong."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def adapter(name: Any) -> ModuleType:
    try:
        return games.game(name)
    except KeyError as err:
        raise AppError(400, str(err.args[0])) from None


def check_int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AppError(400, f"{name} must be an integer from {low} to {high}, got {str(value)[:40]!r}")
    return value


def _log_server(message: str) -> None:
    """What the server's operator should read (a bad file in a configured folder): stderr, never a response."""
    print(f"dragonstones serve: {message}", file=sys.stderr, flush=True)


class LRU:
    """A bounded mapping that forgets the least recently used entry beyond ``size`` (thread-safe)."""

    def __init__(self, size: int):
        self.size, self._items, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key: Any, make: Any) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()  # outside the lock: loading a checkpoint takes milliseconds
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)


_POLICY_CACHE: dict[tuple[str, str], bool] = {}
# Built-ins with options a server's seat menu offers besides the plain names (a request names no other
# options: one could name a file, or ask a search for hours): a quicker, weaker search and a slower,
# stronger one than ``ismcts`` (30 simulations), about 0.1 s and 1 s a decision; and each game's
# strongest measured search, on its trained champion's rollouts (one game each: the menu shows it
# at its own game's tables only; docs/results.md#search-ismcts).
MENU_SPECS = ("ismcts:simulations=10", "ismcts:simulations=100",
              "ismcts:simulations=10:rollout=champion:order=probability",
              "ismcts:simulations=50:rollout=ds-champion:horizon=8:order=probability")


def load_seat_policy(mod: ModuleType, spec: Any, seed: int, deterministic: bool = False) -> Any:
    """The policy ``spec`` (a name from ``policies.available()`` or a checkpoint folder), checked to
    play ``mod``'s game. Checkpoints load through ``load_policy``: policy.npz and card.json only."""
    if not isinstance(spec, str) or not spec:
        raise AppError(400, f"a seat is 'human' or a policy spec (a name or a checkpoint folder), got {spec!r}")
    try:
        policy = load_policy(spec, seed=seed, deterministic=deterministic)
    except PolicyError as err:
        raise AppError(400, str(err)) from None
    if policy.game is not None and policy.game not in mod.POLICY_GAMES:
        raise AppError(400, f"policy {spec!r} plays {policy.game!r}, not {mod.TITLE}")
    return policy


def policies_for(mod: ModuleType) -> list[str]:
    """The names of ``policies.available()`` and :data:`MENU_SPECS` that play ``mod``'s game (loaded
    once to ask)."""
    out = []
    for spec in [*available(), *MENU_SPECS]:
        key = (mod.GAME_ID, spec)
        if key not in _POLICY_CACHE:
            try:
                load_seat_policy(mod, spec, 0)
                _POLICY_CACHE[key] = True
            except AppError:
                _POLICY_CACHE[key] = False
        if _POLICY_CACHE[key]:
            out.append(spec)
    return out


# Insight policies (probabilities only: no seed matters), shared by every replay and table, by what
# they load: a name, or a configured folder's checkpoint by its resolved path (issue #29: a cache
# per distinct spec string grew without bound).
_INSIGHT = LRU(8)


def deck_name(value: str) -> str:
    """The deck a string names: its file name without a deck suffix (``examples/characters.yaml`` is
    ``characters``). Nothing of a folder part is used: decks are looked up in the server's deck folder."""
    name = PurePath(value.replace("\\", "/")).name
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and f".{suffix.lower()}" in DECK_SUFFIXES else name


@dataclass
class Sources:
    """Where the policies and custom decks of a table come from.

    ``local`` (the terminal): any spec ``load_policy`` takes and any deck file the env reads, as
    the user at the keyboard may. Otherwise (the server, issue #29) only names: the policies
    :func:`policies_for` lists, the checkpoint folders of ``policy_dir`` by folder name, the decks
    of ``deck_dir`` by file name, registered Python characters; and a deck's text in the request.
    A name is looked up in a listing of the folder, so no request makes the server open or test a
    path of its choosing, and no refusal says what is on the disk or quotes a file.
    """

    local: bool = False
    policy_dir: Path | None = None
    deck_dir: Path | None = None
    _decks: LRU = field(default_factory=lambda: LRU(16), repr=False)
    _games: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- policies
    def folder_policies(self) -> dict[str, Path]:
        """The checkpoint folders of ``policy_dir`` (those with a card), by folder name."""
        if self.policy_dir is None or not self.policy_dir.is_dir():
            return {}
        return {p.name: p for p in sorted(self.policy_dir.iterdir())
                if _FILE_NAME.match(p.name) and (p / CARD_FILE).is_file()}

    def _folder_game(self, path: Path) -> str | None:
        """The game a folder's checkpoint plays (None: it does not load; the reason goes to the log)."""
        key = (str(path.resolve()), (path / CARD_FILE).stat().st_mtime_ns)
        if key not in self._games:
            try:
                self._games[key] = load_checkpoint(path, path.name, 0, False).game
            except PolicyError as err:
                _log_server(f"the checkpoint {path.name!r} of the policy folder does not load: {err}")
                self._games[key] = None
        return self._games[key]

    def policies(self, mod: ModuleType) -> list[str]:
        """Every policy name a seat of ``mod``'s game may name here."""
        folder = [name for name, path in self.folder_policies().items()
                  if self._folder_game(path) in mod.POLICY_GAMES]
        listed = policies_for(mod)
        return listed + [name for name in folder if name not in listed]

    def _folder_policy(self, mod: ModuleType, spec: str) -> Path | None:
        if self.local or spec in available() or spec in policies_for(mod):
            return None
        path = self.folder_policies().get(spec)
        if path is None:
            raise AppError(400, f"unknown policy {spec[:MAX_SPEC]!r}: {mod.TITLE} is played here by "
                                f"{', '.join(self.policies(mod))}")
        if self._folder_game(path) is None:
            raise AppError(400, f"the policy {spec!r} of this server does not load (the server's log says why)")
        return path

    def policy(self, mod: ModuleType, spec: Any, seed: int, deterministic: bool = False) -> Any:
        """The policy named ``spec`` for a seat of ``mod``'s game, seeded with ``seed``."""
        if not isinstance(spec, str) or not spec or len(spec) > MAX_SPEC:
            raise AppError(400, f"a seat is 'human' or a policy name of at most {MAX_SPEC} characters, "
                                f"got {str(spec)[:MAX_SPEC]!r}")
        path = self._folder_policy(mod, spec)
        if path is None:
            return load_seat_policy(mod, spec, seed, deterministic)
        policy = load_checkpoint(path, spec, seed, deterministic)
        if policy.game not in mod.POLICY_GAMES:
            raise AppError(400, f"policy {spec!r} plays {policy.game!r}, not {mod.TITLE}")
        return policy

    def insight_policy(self, mod: ModuleType, spec: str) -> Any:
        """A shared copy of ``spec`` to ask for its probabilities (bounded cache, by what it loads)."""
        path = self._folder_policy(mod, spec)
        key = (mod.GAME_ID, spec) if path is None else (mod.GAME_ID, str(path.resolve()))
        return _INSIGHT.get(key, lambda: self.policy(mod, spec, 0))

    def knows_policy(self, mod: ModuleType, spec: str) -> bool:
        return spec in self.policies(mod) or (self.local and spec not in ("", HUMAN, "?"))

    # ---------------------------------------------------------------- decks
    def decks(self) -> dict[str, Path]:
        """The deck files of ``deck_dir`` by name (file name without its suffix)."""
        if self.deck_dir is None or not self.deck_dir.is_dir():
            return {}
        out = {}
        for p in sorted(self.deck_dir.iterdir()):
            if p.suffix.lower() in DECK_SUFFIXES and _FILE_NAME.match(p.name) and p.is_file():
                out.setdefault(p.stem, p)
        return out

    def deck(self, value: str, parse: Any) -> Any:
        """The deck ``value`` names, as ``parse(text, format, label)`` (the game's) reads it: a deck of
        ``deck_dir`` by name, read and checked once per version of its file (bounded cache). What is
        wrong with a file goes to the server's log; the client is told only that the deck is refused.
        The terminal's (``local``) is ``value`` itself, a file the env reads."""
        if self.local:
            return value
        name = deck_name(value)
        decks = self.decks()
        if name not in decks:
            where = f"this server's decks are {', '.join(decks)}" if decks else \
                "this server has no deck folder (dragonstones serve --decks DIR)"
            raise AppError(400, f"unknown deck {value[:60]!r}: {where}; or send the deck's text as "
                                "{\"format\": \"yaml\", \"text\": ...}")
        path = decks[name]

        def load() -> Any:
            try:
                return parse(read_deck(path), DECK_SUFFIXES[path.suffix.lower()], f"deck {name!r}")
            except (OSError, ValueError) as err:  # UnicodeDecodeError and the game's own errors included
                _log_server(f"the deck {path.name!r} of the deck folder is refused: {err}")
                return None

        cards = self._decks.get((str(path.resolve()), path.stat().st_mtime_ns), load)
        if cards is None:
            raise AppError(400, f"the deck {name!r} of this server is not a valid deck (the server's log says why)")
        return cards


LOCAL = Sources(local=True)


def read_deck(path: Path) -> str:
    """A deck file of the deck folder, read up to the bounds table's deck limit (FILE_BYTES["deck"]:
    a larger file, or ``/dev/zero`` linked in, is refused unread past it; issue #49)."""
    return read_text_limited(path, "deck", "deck")


def env_options(mod: ModuleType, body: dict[str, Any], sources: Sources) -> dict[str, Any]:
    """The env options of a new table (Fist's custom deck: ``characters``, ``exclude``), each read by the
    game's adapter (:func:`option`: sizes first, then shape; a deck's name through ``sources``) and
    checked in content by the env (a bad card: a 400 naming the card and the field)."""
    options = {}
    for key in ("characters", "exclude"):
        if body.get(key) is None:
            continue
        if key not in mod.ENV_OPTIONS:
            raise AppError(400, f"{key} is not an option of {mod.TITLE}")
        try:
            options[key] = mod.option(key, body[key], sources)
        except ValueError as err:
            raise AppError(400, str(err)[:600]) from None
    return options


def table(mod: ModuleType, players: int, options: dict[str, Any]) -> Any:
    """A new env with ``options`` (a bad custom card: a 400 naming its card and field); the policies are
    seated at it with ``seat_all`` (told its deck, so rule bots value the custom cards)."""
    try:
        return mod.make_env(players, **options)
    except ValueError as err:
        raise AppError(400, str(err)[:600]) from None


def _exact_int(value: Any) -> Any:
    """A seed as JSON carries it: an integer, or a string of digits (a browser's numbers lose the
    digits of an integer past 2**53, so the page sends a chosen seed as text)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        return int(value)
    return value


def _names(body: dict[str, Any], n: int) -> list[str]:
    """The players' names: ``player_k`` unless the request names a seat (unique, short, plain)."""
    given = body.get("names")
    if given is None:
        return [f"player_{i}" for i in range(n)]
    if not isinstance(given, list) or len(given) != n:
        raise AppError(400, f"names must be a list of {n} entries (a name or null), got {str(given)[:80]!r}")
    out = []
    for i, name in enumerate(given):
        if name is None or name == "":
            out.append(f"player_{i}")
            continue
        if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.match(name):
            raise AppError(400, f"a player's name has 1 to {MAX_NAME} letters, digits, spaces, . ' - or _; got "
                                f"{str(name)[:MAX_NAME + 10]!r}")
        out.append(name)
    if len(set(out)) != n:
        raise AppError(400, f"every player needs another name, got {out}")
    return out


def _log(mod: ModuleType, record: list[dict], viewer: Any, names: list[str]) -> list[str]:
    """The whole log ``viewer`` (a seat, :data:`WHOLE`, or None: a spectator) may read, in sentences."""
    return [line for ev in record if (line := mod.log_line(ev, viewer, names)) is not None]


def _prompt(mod: ModuleType, v: dict[str, Any], names: list[str], viewer: Any) -> str | None:
    """The decision's question, with who decides: "Your move: ..." for the one who does."""
    question = mod.prompt(v, names)
    if question is None:
        return None
    return f"{'Your move' if v['acting'] == viewer else names[v['acting']] + ' decides'}: {question}"


def _result(mod: ModuleType, env: Any, names: list[str]) -> dict[str, Any] | None:
    """Once the game is over (then it is public): the winners, each seat's points, and the outcome in words."""
    if env.game.decision is not None:
        return None
    return mod.outcome(env, names)


class LiveGame:
    """One table being played. Not thread-safe by itself: the table store holds its lock.

    ``sources`` says where its policies and deck may come from (:data:`LOCAL` for the terminal).
    A seed chosen by the request is allowed and announced to every seat (``seeded``: whoever chose
    it can know every hidden card); otherwise the seed is drawn from ``secrets`` (63 bits).

    ``background``: a bot that searches (one that needs the game, ``ismcts``: some 0.1 to 1 s a
    decision) is not played by :meth:`advance`, which stops at its decision; the server decides it
    off the table's lock (:meth:`think_due`, then :meth:`play_thought`) while :attr:`thinking` names its
    seat, so that no request waits for a search. Without it (the terminal) every bot moves in
    :meth:`advance`.
    """

    def __init__(self, body: dict[str, Any], sources: Sources = LOCAL, background: bool = False):
        if not isinstance(body, dict):
            raise AppError(400, "the body must be a JSON object {\"game\", \"players\", \"seats\", ...}")
        self.mod = adapter(body.get("game"))
        mod = self.mod
        n = check_int(body.get("players", mod.DEFAULT_PLAYERS), "players", mod.MIN_PLAYERS, mod.MAX_PLAYERS)
        seats = body.get("seats")
        if not isinstance(seats, list) or len(seats) != n:
            raise AppError(400, f"seats must be a list of {n} entries ('human' or a policy name), got "
                                f"{str(seats)[:200]!r}")
        for s in seats:
            if not isinstance(s, str) or not s or len(s) > MAX_SPEC:
                raise AppError(400, f"a seat is 'human' or a policy name of at most {MAX_SPEC} characters, "
                                    f"got {str(s)[:MAX_SPEC]!r}")
        self.names = _names(body, n)
        seed = _exact_int(body.get("seed"))
        self.seeded = seed is not None
        seed = secrets.randbits(63) if seed is None else check_int(seed, "seed", 0, 2**63 - 1)
        self.pace_ms = check_int(body.get("pace_ms", 0), "pace_ms", 0, MAX_PACE_MS)
        self.seats = list(seats)
        if body.get("insight") and HUMAN in self.seats:
            raise AppError(400, "insight shows what a bot privately knows (its coming sealed bid): a table with "
                                "human seats shows it after the game, in its replay")
        options = env_options(mod, body, sources)
        self.env = table(mod, n, options)
        # seated by the one rule (policies.seat_seed of the game's seed), as evaluations seat them
        self.policies = seat_all(self.env, [None if s == HUMAN else sources.policy(mod, s, 0) for s in seats], seed)
        self.env.reset(seed=seed)
        self._start(background)
        self.advance()

    def _start(self, background: bool) -> None:
        self.background = background
        self.thinking: int | None = None  # the seat whose search is being decided off the lock
        # Insight is recorded only where nobody plays against the bots (it shows their private knowledge).
        self.insight_allowed = HUMAN not in self.seats
        self.insights: list[dict[str, Any]] = []
        self.moves = 0
        self.last_move = time.monotonic()

    @classmethod
    def resume(cls, setup: dict[str, Any], record: list[dict], sources: Sources,
               background: bool = False) -> LiveGame:
        """The table of ``setup`` (its game, seats, names, pace) at the end of ``record``, checked by the
        engine's verified replay; each bot is given the observations it saw, so that its own random
        state continues as if the server had never stopped. A search (``ismcts``) is not: it would
        search every past decision again (seconds a table), so it goes on from its seed's state."""
        self = cls.__new__(cls)
        self.mod = mod = adapter(setup["game"])
        try:
            mod.check_record(record)
        except (ReplayError, ValueError, TypeError, KeyError) as err:
            raise AppError(422, f"the stored record does not replay: {err}") from None
        start = record[0]
        setup = check_setup(setup, start.get("num_players"))
        self.seats, self.names = list(setup["seats"]), list(setup["names"])
        self.seeded, self.pace_ms = bool(setup["seeded"]), int(setup["pace_ms"])
        seed = start["seed"]
        self.env = mod.env_for_record(start)
        loaded = [None if s == HUMAN else sources.policy(mod, s, 0) for s in self.seats]
        self.policies = seat_all(self.env, loaded, seed)
        self._start(background)
        n = start["num_players"]
        for ev in record:
            if ev.get(mod.KIND_KEY) in mod.INPUT_EVENTS:
                seat, action = ev["player"], mod.encode(ev["option"], ev["player"], n)
                if self.policies[seat] is not None and not self.policies[seat].capabilities.information_state:
                    self.policies[seat].act(self.env.observe(self.env.agent_selection))
                self._step(action)
        if self.env.game.record != record:
            raise AppError(422, "the stored record does not end where its actions lead")
        return self

    def rename(self, seat: int, name: Any) -> None:
        """A person names their own seat (``null`` or "" gives back ``player_k``); the same rules as
        the names given when the table is made (short, plain, every player another)."""
        names = list(self.names)
        names[seat] = name
        self.names = _names({"names": names}, len(names))

    def setup(self) -> dict[str, Any]:
        """What, with the record, makes the table again (:meth:`resume`): no token, no seed (the record has it)."""
        return {"game": self.mod.GAME_ID, "seats": self.seats, "names": self.names, "seeded": self.seeded,
                "pace_ms": self.pace_ms}

    @property
    def over(self) -> bool:
        return self.env.game.decision is None

    @property
    def humans(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s == HUMAN]

    def actor(self) -> int | None:
        return None if self.over else self.env.agent_name_mapping[self.env.agent_selection]

    def _step(self, action: int) -> None:
        self.env.step(action)
        self.moves += 1
        self.last_move = time.monotonic()

    def _due(self, played: int, now: float | None) -> int | None:
        """The bot seat whose move is due now (pace permitting), or None."""
        seat = self.actor()
        if seat is None or self.policies[seat] is None or self.thinking is not None:
            return None
        now = time.monotonic() if now is None else now
        if self.pace_ms and (played or (now - self.last_move) * 1000 < self.pace_ms):
            return None
        return seat

    def advance(self, now: float | None = None) -> int:
        """Play the bots' moves that are due: all up to a human's decision at pace 0, else at most
        one per ``pace_ms`` since the last move; in the background mode, up to a search's decision
        (:meth:`think_due`). Returns the moves played."""
        played = 0
        while (seat := self._due(played, now)) is not None:
            if self.background and self.policies[seat].capabilities.information_state:
                break
            policy, agent = self.policies[seat], self.env.agent_selection
            if self.insight_allowed:
                seen = insight(policy, self.env, agent, self.seats[seat])
                if seen is not None:
                    self.insights = [*self.insights[-19:], {"seat": seat, "move": self.moves, **seen}]
            self._step(int(decide(policy, self.env, agent)))
            played += 1
        return played

    def think_due(self, now: float | None = None) -> Callable[[], tuple[int, int]] | None:
        """Background mode: if a search's decision is due (after :meth:`advance`), mark its seat
        :attr:`thinking` (nothing moves the game until :meth:`play_thought`) and return the job that
        decides it, to run without the table's lock: it returns ``(moves, action)``. Else None."""
        seat = self._due(0, now)
        if seat is None or not self.background or not self.policies[seat].capabilities.information_state:
            return None
        self.thinking = seat
        # On a copy of the env, taken now under the lock: requests read the game while the search
        # runs. The copy is the same game, so the search decides as it would on the env itself.
        return partial(_think, self.policies[seat], copy.deepcopy(self.env), self.moves)

    def play_thought(self, moves: int, action: int | None) -> bool:
        """Play the action a :meth:`think_due` job returned (None: it failed; the next request tries
        again) if the game is still where it was thought; whether it was played."""
        seat, self.thinking = self.thinking, None
        if action is None or seat is None or self.moves != moves or self.actor() != seat:
            return False
        self._step(action)
        return True

    def act(self, seat: int, body: Any) -> None:
        """A human's action for ``seat`` (the seat its token holds); refused (nothing changes) unless
        it is that seat's legal action now."""
        if not isinstance(body, dict):
            raise AppError(400, "the body must be a JSON object {\"action\": int}")
        if "seat" in body and body["seat"] != seat:
            raise AppError(403, f"this seat token is {self.names[seat]}'s: it acts for no other seat")
        if self.seats[seat] != HUMAN:
            raise AppError(403, f"seat {seat} is played by {self.seats[seat]!r}, not by a human")
        if self.over:
            raise AppError(409, "the game is over")
        if self.actor() != seat:
            raise AppError(409, f"it is {self.names[self.actor()]}'s decision, not {self.names[seat]}'s")
        action = body.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise AppError(400, f"action must be an integer, got {str(action)[:40]!r}")
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        if not 0 <= action < len(mask):
            raise AppError(422, f"action {action} is outside 0..{len(mask) - 1}")
        if not mask[action]:
            raise AppError(422, f"action {action} ({self.env.describe_action(action)}) is not legal now "
                                f"(decision {self.env.game.decision.kind!r})")
        self._step(action)

    def state(self, seat: int | None, log_from: int = 0, want_insight: bool = False) -> dict[str, Any]:
        """Everything ``seat`` may know (None: a spectator, who sees what every seat sees alike), from
        the observations: byte-identical for two games that differ only in what that viewer cannot
        see (no id, seed or time in it). ``log_from`` leaves out the log lines the page already has."""
        n = self.env.num_players
        mod, env = self.mod, self.env
        if seat is not None:
            seat = check_int(seat, "seat", 0, n - 1)
        v = mod.view(env, seat) if seat is not None else mod.public_view(env)
        actions = None
        if seat is not None and self.actor() == seat and self.seats[seat] == HUMAN:
            mask = env.observe(env.possible_agents[seat])["action_mask"]
            actions = mod.groups(env, seat, np.flatnonzero(mask), self.names)
        log = _log(mod, env.game.record, seat, self.names)
        return {
            "kind": "live",
            "game": mod.GAME_ID,
            "title": mod.TITLE,
            "goal": mod.goal(env),
            "players": n,
            "seat": seat,
            "seats": self.seats,
            "names": self.names,
            "seeded": self.seeded,
            "view": v,
            "race": mod.race(v),
            "actor": self.actor(),
            "prompt": _prompt(mod, v, self.names, seat),
            "actions": actions,
            "log": log[log_from:],
            "log_from": min(log_from, len(log)),
            "log_total": len(log),
            "moves": self.moves,
            "thinking": self.thinking,
            "pace_ms": self.pace_ms,
            "insight_allowed": self.insight_allowed,
            "insight": self.insights[-4:] if want_insight and self.insight_allowed else None,
            "result": _result(mod, env, self.names),
        }

    def fork(self) -> LiveGame:
        """An independent copy that continues identically (what-if branches; the no-leak tests)."""
        twin = copy.copy(self)
        twin.env, twin.policies = copy.deepcopy(self.env), copy.deepcopy(self.policies)
        twin.insights = list(self.insights)
        return twin

    def saved(self) -> dict[str, Any]:
        """The file to save once the game is over: the engine record and the line-up."""
        if not self.over:
            raise AppError(409, "the record is available once the game is over (it holds the seed, "
                                "which tells every hidden card)")
        return {"game": self.mod.GAME_ID, "seats": self.seats, "names": self.names, "record": self.env.game.record}


_SETUP_KEYS = ("game", "seats", "names", "seeded", "pace_ms")


def check_setup(setup: Any, players: Any = None) -> dict[str, Any]:
    """A stored table's setup (:meth:`LiveGame.setup`) checked as a request's fields are (issue #49: a
    stored row is input too): its game, seats ('human' or a policy name; ``players`` of them when
    the record's table size is known), names, pace and seeded flag; a 422 naming what is wrong."""
    if not isinstance(setup, dict):
        raise AppError(422, f"a stored setup is a JSON object, got {type(setup).__name__}")
    missing = [k for k in _SETUP_KEYS if k not in setup]
    if missing:
        raise AppError(422, f"the stored setup lacks {missing}")
    try:
        mod = adapter(setup["game"])
        seats = setup["seats"]
        if not isinstance(seats, list) or not mod.MIN_PLAYERS <= len(seats) <= mod.MAX_PLAYERS or not all(
                isinstance(s, str) and s and len(s) <= MAX_SPEC for s in seats):
            raise AppError(400, f"seats must be a list of {mod.MIN_PLAYERS} to {mod.MAX_PLAYERS} seats ('human' or "
                                f"a policy name), got {str(seats)[:200]!r}")
        if players is not None and len(seats) != players:
            raise AppError(400, f"the setup has {len(seats)} seats, its record {str(players)[:10]} players")
        names = _names({"names": setup["names"]}, len(seats))
        pace = check_int(setup["pace_ms"], "pace_ms", 0, MAX_PACE_MS)
        if not isinstance(setup["seeded"], bool):
            raise AppError(400, f"seeded must be true or false, got {str(setup['seeded'])[:20]!r}")
    except AppError as err:
        raise AppError(422, f"the stored setup is refused: {err.message}") from None
    return {**setup, "game": mod.GAME_ID, "seats": list(seats), "names": names, "pace_ms": pace}


def _think(policy: Any, env: Any, moves: int) -> tuple[int, int]:
    return moves, int(decide(policy, env, env.agent_selection))


def regenerate(body: dict[str, Any], sources: Sources = LOCAL,
               seconds: float = REGENERATE_SECONDS) -> dict[str, Any]:
    """A game of ``dragonstones_env.evaluation``'s output played again exactly, from its ``games.json`` entry:
    ``{"game": summary's game, "deterministic": summary's flag, "regenerate": entry}``. The game's
    seed, line-up and the policies' seeds (derived from the game's seed by ``policies.seat_seed``)
    give the same game; a 422 if it does not end as the entry says, or if it takes
    longer than ``seconds`` to play."""
    mod = adapter(body.get("game"))
    entry = body["regenerate"]
    if not isinstance(entry, dict):
        raise AppError(400, "regenerate takes one entry of games.json: {\"game\", \"seed\", \"lineup\", ...}")
    index = check_int(entry.get("game"), "the entry's game index", 0, 2**31)
    seed = check_int(entry.get("seed"), "the entry's seed", index, 2**63 - 1)
    lineup = entry.get("lineup")
    if not isinstance(lineup, list) or not mod.MIN_PLAYERS <= len(lineup) <= mod.MAX_PLAYERS:
        raise AppError(400, f"the entry's lineup must list {mod.MIN_PLAYERS} to {mod.MAX_PLAYERS} policy specs")
    options = entry.get("env_options") or {}
    if not isinstance(options, dict):
        raise AppError(400, f"the entry's env_options must be a mapping (characters, exclude), got {options!r}"[:300])
    stray = sorted(set(options) - set(mod.ENV_OPTIONS))
    if stray:  # dropping one would play another game and end in a misleading 422
        raise AppError(400, f"the entry's env_options {stray} cannot be set in the app; it sets "
                            f"{list(mod.ENV_OPTIONS) or 'none'} for {mod.TITLE}"[:300])
    deterministic = bool(body.get("deterministic", False))
    env = table(mod, len(lineup), env_options(mod, options, sources))
    # seated as the evaluation's arena seats them: each seat's seed from the game's (policies.seat_seed)
    policies = seat_all(env, [sources.policy(mod, spec, 0, deterministic) for spec in lineup], seed)
    env.reset(seed=seed)
    steps, deadline = 0, time.monotonic() + seconds
    while env.game.decision is not None:
        env.step(int(decide(policies[env.agent_name_mapping[env.agent_selection]], env, env.agent_selection)))
        steps += 1
        if time.monotonic() > deadline:
            raise AppError(422, f"the game took longer than {seconds:g} s to play again (this server's limit) and "
                                f"was stopped after {steps} steps")
    # every agent's info holds the same winners flags, one per seat (0 for all when truncated)
    winners = [int(p) for p in np.flatnonzero(env.infos[env.possible_agents[0]]["winners"])]
    if "steps" in entry and (steps != entry["steps"] or winners != entry.get("winners", winners)):
        raise AppError(422, f"the regenerated game differs from the entry ({steps} steps, winners {winners}; the "
                            f"entry says {entry['steps']} steps, winners {entry.get('winners')}): other policies "
                            "or package version, or another 'deterministic' setting")
    return {"game": mod.GAME_ID, "seats": [str(s) for s in lineup], "record": env.game.record}


def parse_record(body: Any, sources: Sources = LOCAL,
                 seconds: float = REGENERATE_SECONDS) -> tuple[ModuleType, list[dict], list[str] | None, Any]:
    """A record to replay: the engine's JSON record (a list of events), a file saved by the app
    (``{"game", "seats", "names", "record"}``), or a game of ``dragonstones_env.evaluation`` to
    regenerate (see :func:`regenerate`). Checked by the engine's replay; a ReplayError names the
    first bad event. Returns the adapter, the record, the seats' policies and the names if given."""
    seats = names = None
    if isinstance(body, dict) and "regenerate" in body:
        body = regenerate(body, sources, seconds)
    if isinstance(body, dict):
        seats, names = body.get("seats"), body.get("names")
        body = body.get("record")
    if not isinstance(body, list) or not body:
        raise AppError(400, "a record is a non-empty JSON list of events, or an object with a 'record' list")
    if len(body) > MAX_RECORD_EVENTS:
        raise AppError(413, f"the record has {len(body)} events; at most {MAX_RECORD_EVENTS}")
    try:
        mod = games.for_record(body)
    except KeyError as err:
        raise AppError(422, str(err.args[0])) from None
    try:
        mod.check_record(body)
    except ReplayError as err:
        raise AppError(422, replay_refusal(err)) from None
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as err:
        raise AppError(422, f"the record does not replay: {type(err).__name__}: {str(err)[:600]}") from None
    if seats is not None and not (isinstance(seats, list) and all(isinstance(s, str) and len(s) <= MAX_SPEC
                                                                  for s in seats)):
        raise AppError(400, f"seats must be a list of policy names, got {str(seats)[:200]!r}")
    return mod, body, seats, names


def _as_json(value: Any, limit: int = 200) -> str:
    """A record's piece as the file spells it (JSON, not Python's repr), cut at ``limit`` characters."""
    if value is None:
        return "nothing (the record ends there)"
    if isinstance(value, str):  # the engine's description of what it wanted
        return value[:limit]
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def replay_refusal(err: ReplayError) -> str:
    """A record the engine does not reproduce, said to a person: which event, in the file's JSON, and
    the usual cause of a first event that differs (a seed rounded by a tool that reads numbers as doubles)."""
    hint = (" (the start event deals the game from its seed: a seed rounded by a tool that reads numbers as "
            "doubles deals another game)" if err.index <= 1 else "")
    why = f" ({err.why})" if err.why else ""  # first: what the engine says of it outlives the cut at 900
    return (f"the record does not replay{why}: record event {err.index} is {_as_json(err.found)}, where the game "
            f"gives {_as_json(err.expected)}{hint}")[:900]


class Replay:
    """A checked record, viewed at any of its decisions from any seat or from the whole table.

    The steps are the record's own actions, so a replay plays whatever its seats' policies were;
    insight needs the policy on this server, and the seats whose policy is not here are listed
    (``insight_unavailable``) instead of refused.
    """

    def __init__(self, body: Any, sources: Sources = LOCAL, seconds: float = REGENERATE_SECONDS):
        self.sources = sources
        self.mod, self.record, seats, names = parse_record(body, sources, seconds)
        start = self.record[0]
        n = start["num_players"]
        self.seats = seats if seats is not None and len(seats) == n else ["?"] * n
        try:
            self.names = _names({"names": names}, n)
        except AppError:
            self.names = _names({}, n)
        probe = self.mod.env_for_record(start)
        self.inputs: list[tuple[int, int]] = []  # (record index after which the step happens, action)
        self.cut: list[int] = [0]  # record length before each step
        self.turns: dict[int, int] = {}  # turn number -> the first step of that turn ("jump to a turn")
        for i, ev in enumerate(self.record):
            if ev.get(self.mod.KIND_KEY) == "turn" and isinstance(ev.get("turn"), int):
                self.turns.setdefault(ev["turn"], len(self.inputs))
            if ev.get(self.mod.KIND_KEY) in self.mod.INPUT_EVENTS:
                self.cut.append(i)
                self.inputs.append((ev["player"], self.mod.encode(ev["option"], ev["player"], n)))
        self.cut.append(len(self.record))
        self.steps = len(self.inputs)
        self._env, self._at = probe, 0
        self._start_keyframes()
        # A seat played by a policy this server does not have: its decisions replay, its insight cannot.
        self.insight_unavailable = [i for i, s in enumerate(self.seats)
                                    if s not in ("?", HUMAN, "") and not sources.knows_policy(self.mod, s)]

    def summary(self) -> dict[str, Any]:
        return {"game": self.mod.GAME_ID, "steps": self.steps, "players": len(self.seats), "seats": self.seats,
                "names": self.names, "turns": {str(t): step for t, step in self.turns.items()},
                "insight_unavailable": self.insight_unavailable}

    def env_at(self, step: int) -> Any:
        """The env after ``step`` decisions (stepped forward from the nearest earlier state: the
        current one, or the last keyframe at or before ``step``)."""
        if step < self._at:
            self._env, self._at = self._from_keyframe(step)
        while self._at < step:
            self._env.step(self.inputs[self._at][1])
            self._at += 1
            self._keep_keyframe()
        return self._env

    # ---------------------------------------------------------------- keyframes (issue #49)
    def _start_keyframes(self) -> None:
        """A step back costs at most ``self._every`` steps (before: every step from the start, 0.45 s
        in a 32k-step record): the env is kept every ``_every`` steps, at most :data:`MAX_KEYFRAMES`
        copies, each without its record (the record's prefix is this replay's own, shared)."""
        self._every = max(KEYFRAME_EVERY, -(-self.steps // MAX_KEYFRAMES))
        self._keyframes: dict[int, Any] = {}

    def _keep_keyframe(self) -> None:
        if self._at % self._every or self._at in self._keyframes:
            return
        record = self._env.game.record
        self._keyframes[self._at] = (copy.deepcopy(self._env, {id(record): []}), len(record))

    def _from_keyframe(self, step: int) -> tuple[Any, int]:
        at = max((k for k in self._keyframes if k <= step), default=0)
        if at == 0:
            return self.mod.env_for_record(self.record[0]), 0
        kept, length = self._keyframes[at]
        env = copy.deepcopy(kept)
        env.game.record = self.record[:length]  # the engine's events are the record's (checked on upload)
        return env, at

    def _insight(self, env: Any, spec: str | None) -> dict[str, Any] | None:
        if env.game.decision is None:
            return None
        actor = env.agent_name_mapping[env.agent_selection]
        if spec is None:
            spec = self.seats[actor]
            if spec in ("?", HUMAN, "") or actor in self.insight_unavailable:
                return None
        seen = insight(self.sources.insight_policy(self.mod, spec), env, env.agent_selection, spec)
        return None if seen is None else {"seat": actor, **seen}

    def state(self, step: Any, seat: Any, insight_spec: str | None = None, log_from: int = 0) -> dict[str, Any]:
        step = check_int(step, "step", 0, self.steps)
        env = self.env_at(step)
        n = env.num_players
        whole = seat == WHOLE
        if not whole:
            seat = check_int(seat, "seat", 0, n - 1)
        v = self.mod.view(env, 0 if whole else seat)
        record = self.record[: self.cut[step + 1] if step < self.steps else len(self.record)]
        chosen = None
        if step < self.steps:
            chosen = {"seat": self.inputs[step][0], "action": self.inputs[step][1],
                      "text": self.mod.action_text(env, self.inputs[step][1], self.names)}
        log = _log(self.mod, record, seat, self.names)
        return {
            "kind": "replay",
            "game": self.mod.GAME_ID,
            "title": self.mod.TITLE,
            "goal": self.mod.goal(env),
            "players": n,
            "seat": seat,
            "seats": self.seats,
            "names": self.names,
            "step": step,
            "steps": self.steps,
            "turns": {str(t): k for t, k in self.turns.items()},
            "view": v,
            "hidden": self.mod.hidden(env) if whole else None,
            "race": self.mod.race(v),
            "actor": None if env.game.decision is None else env.agent_name_mapping[env.agent_selection],
            "prompt": _prompt(self.mod, v, self.names, seat),
            "actions": None,
            "next": chosen,
            "log": log[log_from:],
            "log_from": min(log_from, len(log)),
            "log_total": len(log),
            "insight": [x] if (x := self._insight(env, insight_spec)) else None,
            "insight_unavailable": self.insight_unavailable,
            "result": _result(self.mod, env, self.names),
        }


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, or a 400 naming the problem."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise AppError(400, f"malformed JSON: {str(err)[:200]}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
