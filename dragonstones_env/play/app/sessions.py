"""Games and replays held by the server, independent of the web framework.

A :class:`LiveGame` is one table: an AEC env, a policy or a human at each seat, bots moving
server-side at a pace. A :class:`Replay` is a checked engine record stepped through with a
fresh env. What either sends to a seat is built by the game's adapter from that seat's
observation and action mask (see :mod:`dragonstones_env.play.app.games`). Every refusal is an :class:`AppError`
with an HTTP status and a message naming what was wrong; a refused request changes nothing.
"""

from __future__ import annotations

import copy
import json
import secrets
import threading
import time
from types import ModuleType
from typing import Any

import numpy as np

from dragonstones_env.core import ReplayError
from dragonstones_env.policies import PolicyError, available, decide, load_policy

from . import games
from .games.common import insight

HUMAN = "human"
MAX_GAMES = 64  # live games and replays each; the oldest is dropped beyond this
MAX_RECORD_EVENTS = 200_000
MAX_PACE_MS = 10_000


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


def _int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AppError(400, f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


_POLICY_CACHE: dict[tuple[str, str], bool] = {}


def load_seat_policy(mod: ModuleType, spec: Any, seed: int, deterministic: bool = False) -> Any:
    """The policy ``spec`` (a name from ``policies.available()`` or a checkpoint folder), checked to
    play ``mod``'s game. Checkpoints load through ``load_policy``: policy.npz and card.json only."""
    if not isinstance(spec, str) or not spec:
        raise AppError(400, f"a seat is 'human' or a policy spec (a name or a checkpoint folder), got {spec!r}")
    try:
        policy = load_policy(spec, seed=seed, deterministic=deterministic)
    except PolicyError as err:
        raise AppError(400, str(err)) from None
    plays = getattr(policy, "game", None)
    if plays is not None and plays not in mod.POLICY_GAMES:
        raise AppError(400, f"policy {spec!r} plays {plays!r}, not {mod.TITLE}")
    return policy


def policies_for(mod: ModuleType) -> list[str]:
    """The names of ``policies.available()`` that play ``mod``'s game (loaded once to ask)."""
    out = []
    for spec in available():
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


def env_options(mod: ModuleType, body: dict[str, Any]) -> dict[str, Any]:
    """The env options of a new table (Fist's custom deck: ``characters``, ``exclude``), checked in shape here
    and in content by the env (a bad card: a 400 naming the file, the card and the field)."""
    options = {k: body[k] for k in ("characters", "exclude") if body.get(k) is not None}
    for key in options:
        if key not in mod.ENV_OPTIONS:
            raise AppError(400, f"{key} is not an option of {mod.TITLE}")
    chars = options.get("characters")
    listed = isinstance(chars, list) and all(isinstance(c, (str, dict)) for c in chars)
    if chars is not None and not ((isinstance(chars, str) and chars) or listed):
        raise AppError(400, "characters must be a YAML or TOML file on the server's disk, or a list of card objects "
                            f"or registered Python character names, got {chars!r}"[:300])
    exclude = options.get("exclude")
    if exclude is not None and not (isinstance(exclude, list) and all(isinstance(x, str) for x in exclude)):
        raise AppError(400, f"exclude must be a list of special characters' names, got {exclude!r}"[:300])
    return options


def table(mod: ModuleType, players: int, options: dict[str, Any], policies: list[Any]) -> Any:
    """A new env with ``options`` (a bad custom card: a 400 naming its file, card and field), whose deck
    the seated rule bots are told (so they value the custom cards, as in dragonstones_env.evaluation)."""
    try:
        env = mod.make_env(players, **options)
    except ValueError as err:
        raise AppError(400, str(err)) from None
    deck = getattr(env, "deck", None)
    for policy in policies:
        if deck is not None and callable(getattr(policy, "use_deck", None)):
            policy.use_deck(deck)
    return env


def _seat_names(seats: list[str]) -> list[str]:
    return [f"player_{i}" + (f" ({s})" if s != HUMAN else " (human)") for i, s in enumerate(seats)]


def _log(mod: ModuleType, record: list[dict], viewer: int | None, names: list[str], last: int = 60) -> list[str]:
    lines = [line for ev in record if (line := mod.log_line(ev, viewer, names)) is not None]
    return lines[-last:]


def _result(env: Any, totals: list[float]) -> dict[str, Any] | None:
    """Winners and final rewards once the game is over (public: the game has ended)."""
    if env.game.decision is not None:
        return None
    winners = sorted({env.agent_name_mapping[a] for info in env.infos.values() for a in info.get("winners", [])})
    return {"winners": winners, "rewards": [round(x, 4) for x in totals],
            "truncated": not winners and all(env.truncations.values())}


class LiveGame:
    """One table being played. Not thread-safe by itself: the :class:`Store` holds its lock."""

    def __init__(self, body: dict[str, Any]):
        self.mod = adapter(body.get("game"))
        mod = self.mod
        n = _int(body.get("players", mod.DEFAULT_PLAYERS), "players", mod.MIN_PLAYERS, mod.MAX_PLAYERS)
        seats = body.get("seats")
        if not isinstance(seats, list) or len(seats) != n:
            raise AppError(400, f"seats must be a list of {n} entries ('human' or a policy spec), got {seats!r}")
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _int(seed, "seed", 0, 2**63 - 1)
        self.pace_ms = _int(body.get("pace_ms", 0), "pace_ms", 0, MAX_PACE_MS)
        self.show_insight = bool(body.get("insight", False))
        options = env_options(mod, body)
        self.seats = [s if s == HUMAN else str(s) for s in seats]
        self.policies = [None if s == HUMAN else load_seat_policy(mod, s, seed + 1 + i) for i, s in enumerate(seats)]
        env = table(mod, n, options, self.policies)
        self.names = _seat_names(self.seats)
        self.env = env
        self.env.reset(seed=seed)
        self.totals = [0.0] * n
        self.moves = 0
        self.insights: list[dict[str, Any]] = []  # the checkpoint seats' decisions (when shown)
        self.last_move = time.monotonic()
        self.advance()

    @property
    def over(self) -> bool:
        return self.env.game.decision is None

    def actor(self) -> int | None:
        return None if self.over else self.env.agent_name_mapping[self.env.agent_selection]

    def _step(self, action: int) -> None:
        self.env.step(action)
        self.moves += 1
        for a, r in self.env.rewards.items():
            self.totals[self.env.agent_name_mapping[a]] += r
        self.last_move = time.monotonic()

    def advance(self, now: float | None = None) -> int:
        """Play the bots' moves that are due: all up to a human's decision at pace 0, else at most
        one per ``pace_ms`` since the last move. Returns the moves played."""
        played = 0
        while (seat := self.actor()) is not None and self.policies[seat] is not None:
            now = time.monotonic() if now is None else now
            if self.pace_ms and (played or (now - self.last_move) * 1000 < self.pace_ms):
                break
            policy, agent = self.policies[seat], self.env.agent_selection
            if self.show_insight:
                seen = insight(policy, self.env, agent)
                if seen is not None:
                    self.insights = [*self.insights[-19:], {"seat": seat, "move": self.moves, **seen}]
            self._step(int(decide(policy, self.env, agent)))
            played += 1
        return played

    def act(self, body: Any) -> None:
        """A human's action; refused (nothing changes) unless it is that seat's legal action now."""
        if not isinstance(body, dict):
            raise AppError(400, "the body must be a JSON object {\"seat\": int, \"action\": int}")
        n = self.env.num_players
        seat = _int(body.get("seat"), "seat", 0, n - 1)
        if self.seats[seat] != HUMAN:
            raise AppError(403, f"seat {seat} is played by {self.seats[seat]!r}, not by a human")
        if self.over:
            raise AppError(409, "the game is over")
        if self.actor() != seat:
            raise AppError(409, f"it is {self.names[self.actor()]}'s decision, not seat {seat}'s")
        action = body.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise AppError(400, f"action must be an integer, got {action!r}")
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        if not 0 <= action < len(mask):
            raise AppError(422, f"action {action} is outside 0..{len(mask) - 1}")
        if not mask[action]:
            raise AppError(422, f"action {action} ({self.env.describe_action(action)}) is not legal now "
                                f"(decision {self.env.game.decision.kind!r})")
        self._step(action)

    def state(self, seat: Any) -> dict[str, Any]:
        """Everything ``seat`` may know, from its observation: byte-identical for two games that
        differ only in what that seat cannot see (no id, seed or time in it)."""
        n = self.env.num_players
        seat = _int(seat, "seat", 0, n - 1)
        mod, env = self.mod, self.env
        v = mod.view(env, seat)
        actions = None
        if self.actor() == seat and self.seats[seat] == HUMAN:
            mask = env.observe(env.possible_agents[seat])["action_mask"]
            actions = mod.groups(env, seat, np.flatnonzero(mask))
        return {
            "kind": "live",
            "game": mod.GAME_ID,
            "title": mod.TITLE,
            "players": n,
            "seat": seat,
            "seats": self.seats,
            "names": self.names,
            "view": v,
            "race": mod.race(v),
            "actor": self.actor(),
            "actions": actions,
            "log": _log(mod, env.game.record, seat, self.names),
            "moves": self.moves,
            "pace_ms": self.pace_ms,
            "insight": self.insights[-4:] if self.show_insight else None,
            "result": _result(env, self.totals),
        }

    def fork(self) -> LiveGame:
        """An independent copy that continues identically (what-if branches; the no-leak tests)."""
        twin = copy.copy(self)
        twin.env, twin.policies = copy.deepcopy(self.env), copy.deepcopy(self.policies)
        twin.totals, twin.insights = list(self.totals), list(self.insights)
        return twin

    def saved(self) -> dict[str, Any]:
        """The file to save once the game is over: the engine record and the line-up."""
        if not self.over:
            raise AppError(409, "the record is available once the game is over (it holds the seed, "
                                "which tells every hidden card)")
        return {"game": self.mod.GAME_ID, "seats": self.seats, "record": self.env.game.record}


def evaluation_seed(seed: int, game_index: int, seat: int) -> int:
    """The seed ``dragonstones_env.evaluation`` resets the policy of one seat of one game with (its
    ``policy_seed``; restated here because play must not import training, and pinned by a test)."""
    return int(np.random.SeedSequence([seed, game_index, seat]).generate_state(1)[0])


def regenerate(body: dict[str, Any]) -> dict[str, Any]:
    """A game of ``dragonstones_env.evaluation``'s output played again exactly, from its ``games.json`` entry:
    ``{"game": summary's game, "deterministic": summary's flag, "regenerate": entry}``. The game's
    seed, line-up and the policies' seeds (derived from the evaluation seed, ``entry["seed"] -
    entry["game"]``) give the same game; a 422 if it does not end as the entry says."""
    mod = adapter(body.get("game"))
    entry = body["regenerate"]
    if not isinstance(entry, dict):
        raise AppError(400, "regenerate takes one entry of games.json: {\"game\", \"seed\", \"lineup\", ...}")
    index = _int(entry.get("game"), "the entry's game index", 0, 2**31)
    seed = _int(entry.get("seed"), "the entry's seed", index, 2**63 - 1)
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
    policies = [load_seat_policy(mod, spec, evaluation_seed(seed - index, index, i), deterministic)
                for i, spec in enumerate(lineup)]
    env = table(mod, len(lineup), env_options(mod, options), policies)
    env.reset(seed=seed)
    steps = 0
    while env.game.decision is not None:
        env.step(int(decide(policies[env.agent_name_mapping[env.agent_selection]], env, env.agent_selection)))
        steps += 1
    winners = sorted({env.agent_name_mapping[a] for info in env.infos.values() for a in info.get("winners", [])})
    if "steps" in entry and (steps != entry["steps"] or winners != entry.get("winners", winners)):
        raise AppError(422, f"the regenerated game differs from the entry ({steps} steps, winners {winners}; the "
                            f"entry says {entry['steps']} steps, winners {entry.get('winners')}): other policies "
                            "or package version, or another 'deterministic' setting")
    return {"game": mod.GAME_ID, "seats": [str(s) for s in lineup], "record": env.game.record}


def parse_record(body: Any) -> tuple[ModuleType, list[dict], list[str] | None]:
    """A record to replay: the engine's JSON record (a list of events), a file saved by the app
    (``{"game", "seats", "record"}``), or a game of ``dragonstones_env.evaluation`` to regenerate (see
    :func:`regenerate`). Checked by the engine's replay; a ReplayError names the first bad event."""
    seats = None
    if isinstance(body, dict) and "regenerate" in body:
        body = regenerate(body)
    if isinstance(body, dict):
        seats = body.get("seats")
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
        raise AppError(422, f"the record does not replay: {err}") from None
    except (ValueError, TypeError, KeyError, RecursionError) as err:
        raise AppError(422, f"the record does not replay: {type(err).__name__}: {err}") from None
    if seats is not None and not (isinstance(seats, list) and all(isinstance(s, str) for s in seats)):
        raise AppError(400, f"seats must be a list of policy names, got {seats!r}")
    return mod, body, seats


class Replay:
    """A checked record, viewed at any of its decisions from any seat or from the whole table."""

    def __init__(self, body: Any):
        self.mod, self.record, seats = parse_record(body)
        start = self.record[0]
        n = start["num_players"]
        self.seats = seats if seats is not None and len(seats) == n else ["?"] * n
        self.names = _seat_names(self.seats)
        probe = self.mod.env_for_record(start)
        kinds = {ev.get(self.mod.KIND_KEY) for ev in self.record}
        if "arrange" in kinds:
            raise AppError(422, "records with 'arrange' events (test set-ups) cannot be stepped through here")
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
        self._insight_policies: dict[str, Any] = {}

    def env_at(self, step: int) -> Any:
        """The env after ``step`` decisions (stepped forward from the nearest earlier state)."""
        if step < self._at:
            self._env, self._at = self.mod.env_for_record(self.record[0]), 0
        while self._at < step:
            self._env.step(self.inputs[self._at][1])
            self._at += 1
        return self._env

    def _insight(self, env: Any, spec: str | None) -> dict[str, Any] | None:
        if env.game.decision is None:
            return None
        actor = env.agent_name_mapping[env.agent_selection]
        spec = spec or self.seats[actor]
        if spec in ("?", HUMAN, ""):
            return None
        if spec not in self._insight_policies:
            self._insight_policies[spec] = load_seat_policy(self.mod, spec, 0)
        seen = insight(self._insight_policies[spec], env, env.agent_selection)
        return None if seen is None else {"seat": actor, **seen}

    def state(self, step: Any, seat: Any, insight_spec: str | None = None) -> dict[str, Any]:
        step = _int(step, "step", 0, self.steps)
        env = self.env_at(step)
        n = env.num_players
        whole = seat == "all"
        if not whole:
            seat = _int(seat, "seat", 0, n - 1)
        viewer = 0 if whole else seat
        v = self.mod.view(env, viewer)
        record = self.record[: self.cut[step + 1] if step < self.steps else len(self.record)]
        chosen = None
        if step < self.steps:
            chosen = {"seat": self.inputs[step][0], "action": self.inputs[step][1],
                      "text": env.describe_action(self.inputs[step][1])}
        return {
            "kind": "replay",
            "game": self.mod.GAME_ID,
            "title": self.mod.TITLE,
            "players": n,
            "seat": "all" if whole else seat,
            "seats": self.seats,
            "names": self.names,
            "step": step,
            "steps": self.steps,
            "view": v,
            "hidden": self.mod.hidden(env) if whole else None,
            "race": self.mod.race(v),
            "actor": None if env.game.decision is None else env.agent_name_mapping[env.agent_selection],
            "actions": None,
            "next": chosen,
            "log": _log(self.mod, record, None if whole else seat, self.names),
            "insight": [x] if (x := self._insight(env, insight_spec)) else None,
            "result": _result(env, [0.0] * n) if env.game.decision is None else None,
        }


class Store:
    """Live games and replays by id, each with its own lock (requests run in a thread pool)."""

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}
        self.locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def add(self, item: Any) -> str:
        with self._lock:
            same = [k for k, v in self.items.items() if type(v) is type(item)]
            for old in same[: max(0, len(same) - MAX_GAMES + 1)]:
                self.items.pop(old)
                self.locks.pop(old)
            key = secrets.token_hex(6)
            self.items[key], self.locks[key] = item, threading.Lock()
            return key

    def get(self, key: str, kind: type) -> tuple[Any, threading.Lock]:
        with self._lock:
            item = self.items.get(key)
            if not isinstance(item, kind):
                what = "game" if kind is LiveGame else "replay"
                raise AppError(404, f"unknown {what} id {key[:40]!r}")
            return item, self.locks[key]

    def remove(self, key: str, kind: type) -> None:
        self.get(key, kind)
        with self._lock:
            self.items.pop(key, None)
            self.locks.pop(key, None)


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, or a 400 naming the problem."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise AppError(400, f"malformed JSON: {err}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
