"""A table for people: a live game (:class:`LiveGame`) and a replay (:class:`Replay`), framework-free.

A :class:`LiveGame` is one table: an AEC env, a policy or a human at each seat, bots moving at a
pace. A :class:`Replay` is a checked engine record stepped through with a fresh env. What either
shows is built by the game's presenter (``GameSpec.presenter``, :class:`~dragonstones_env.registry.Presenter`)
from one seat's observation and action mask, or for a spectator from what every seat sees alike
(the public view). Used by the web app (``play/app``), the terminal (``play/terminal``) and the
GIF writer (``play/gif``). Every refusal is a :mod:`~dragonstones_env.play.refusals` exception naming
what was wrong (the app maps each to an HTTP status); a refused request changes nothing. Where
policies and decks may come from is a :class:`~dragonstones_env.play.sources.Sources`.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from dragonstones_env import registry
from dragonstones_env.bounds import BOUNDS
from dragonstones_env.core import ReplayError
from dragonstones_env.policies import Policy, PolicyError, decide, seat_all
from dragonstones_env.registry import GameSpec, Presenter

from .refusals import Conflict, Forbidden, Refused, TooLarge, Unplayable
from .sources import HUMAN, LOCAL, MAX_SPEC, Sources

WHOLE = "all"  # a replay's whole-table view: every hidden card
MAX_RECORD_EVENTS = 50_000  # a long Fist game has about 1,500 events
MAX_PACE_MS = int(BOUNDS["pace_ms"].high)  # the bounds table's (dragonstones_env/bounds.py)
MAX_NAME = 24  # characters of a player's name
KEYFRAME_EVERY = 256  # a replay keeps its env every this many steps (or more: at most MAX_KEYFRAMES)
MAX_KEYFRAMES = 64  # envs a replay keeps: a step back replays at most steps / 64 steps
REGENERATE_SECONDS = 5.0  # the longest a game of an evaluation may take to play again
_NAME = re.compile(r"^[\w][\w .'-]*$")  # a player's name: letters, digits, spaces, . ' - _


def shown(game: Any) -> GameSpec:
    """The spec of a game people can be shown: the registry's one lookup (an unknown game is an
    :class:`~dragonstones_env.registry.UnknownGameError` naming the known ones), and a presenter."""
    spec = registry.get(game)
    if spec.presenter is None:
        raise Refused(f"{spec.title} ({spec.id}) has no presenter: it cannot be shown at a table; the games "
                      f"shown are {', '.join(g.id for g in shown_games())}")
    return spec


def shown_games() -> list[GameSpec]:
    """The registered games that have a presenter, in the registry's order (the app's menu)."""
    return [g for g in registry.all() if g.presenter is not None]


def for_record(record: list) -> tuple[GameSpec, list]:
    """The game whose engine wrote ``record`` and the record in today's format (an older version upgraded,
    dragonstones_env/core/records.py), checked by that engine's verified replay: of the games that read
    its start event, the first that replays it. An :class:`Unplayable` names the first bad event (for the
    first such game), or the known games."""
    candidates = []
    for spec in shown_games():
        try:
            candidates.append((spec, spec.read_record(record)))
        except ReplayError:
            continue
    if not candidates:
        raise Unplayable("the record's first event is not the start event of any known game "
                         f"({', '.join(g.id for g in shown_games())})")
    refusal = None
    for spec, record in candidates:
        try:
            spec.replay(record)
        except ReplayError as err:
            refusal = refusal or replay_refusal(err)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as err:
            refusal = refusal or f"the record does not replay: {type(err).__name__}: {str(err)[:600]}"
        else:
            return spec, record
    raise Unplayable(refusal)


def check_int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Refused(f"{name} must be an integer from {low} to {high}, got {str(value)[:40]!r}")
    return value


def table_option_names() -> set[str]:
    """Every env option a table of some shown game may set (a request's other fields are not options)."""
    return {key for spec in shown_games() for key in spec.presenter.table_options}


def env_options(spec: GameSpec, body: dict[str, Any], sources: Sources) -> dict[str, Any]:
    """The env options of a new table (the presenter's ``table_options``, e.g. Fist's custom deck), each
    read by the presenter (``option``: sizes first, then shape; a deck's name through ``sources``) and
    checked in content by the env (a bad card: a refusal naming the card and the field). An option of
    another game is refused, naming those of this one."""
    options = {}
    for key in sorted(table_option_names() | set(spec.presenter.table_options)):
        if body.get(key) is None:
            continue
        if key not in spec.presenter.table_options:
            raise Refused(f"{key} is not an option of {spec.title}")
        try:
            options[key] = spec.presenter.option(key, body[key], sources)
        except ValueError as err:
            raise Refused(str(err)[:600]) from None
    return options


def table(spec: GameSpec, players: int, options: dict[str, Any]) -> Any:
    """A new env with ``options`` (a bad custom card: a refusal naming its card and field); the policies
    are seated at it with ``seat_all`` (told its deck, so rule bots value the custom cards)."""
    try:
        return spec.make_table(players, **options)
    except ValueError as err:
        raise Refused(str(err)[:600]) from None


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
        raise Refused(f"names must be a list of {n} entries (a name or null), got {str(given)[:80]!r}")
    out = []
    for i, name in enumerate(given):
        if name is None or name == "":
            out.append(f"player_{i}")
            continue
        if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.match(name):
            raise Refused(f"a player's name has 1 to {MAX_NAME} letters, digits, spaces, . ' - or _; got "
                          f"{str(name)[:MAX_NAME + 10]!r}")
        out.append(name)
    if len(set(out)) != n:
        raise Refused(f"every player needs another name, got {out}")
    return out


def _log(show: Presenter, record: list[dict], viewer: Any, names: list[str]) -> list[str]:
    """The whole log ``viewer`` (a seat, :data:`WHOLE`, or None: a spectator) may read, in sentences."""
    return [line for ev in record if (line := show.log_line(ev, viewer, names)) is not None]


def _prompt(show: Presenter, v: dict[str, Any], names: list[str], viewer: Any) -> str | None:
    """The decision's question, with who decides: "Your move: ..." for the one who does."""
    question = show.prompt(v, names)
    if question is None:
        return None
    return f"{'Your move' if v['acting'] == viewer else names[v['acting']] + ' decides'}: {question}"


def _result(show: Presenter, env: Any, names: list[str]) -> dict[str, Any] | None:
    """Once the game is over (then it is public): the winners, each seat's points, and the outcome in words."""
    if env.game.decision is not None:
        return None
    return show.outcome(env, names)


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
            raise Refused("the body must be a JSON object {\"game\", \"players\", \"seats\", ...}")
        self.spec = spec = shown(body.get("game"))
        n = spec.check_players(body.get("players", spec.default_players), "players")
        seats = body.get("seats")
        if not isinstance(seats, list) or len(seats) != n:
            raise Refused(f"seats must be a list of {n} entries ('human' or a policy name), got "
                          f"{str(seats)[:200]!r}")
        for s in seats:
            if not isinstance(s, str) or not s or len(s) > MAX_SPEC:
                raise Refused(f"a seat is 'human' or a policy name of at most {MAX_SPEC} characters, "
                              f"got {str(s)[:MAX_SPEC]!r}")
        self.names = _names(body, n)
        seed = _exact_int(body.get("seed"))
        self.seeded = seed is not None
        seed = secrets.randbits(63) if seed is None else check_int(seed, "seed", 0, 2**63 - 1)
        self.pace_ms = check_int(body.get("pace_ms", 0), "pace_ms", 0, MAX_PACE_MS)
        self.seats = list(seats)
        if body.get("insight") and HUMAN in self.seats:
            raise Refused("insight shows what a bot privately knows (its coming sealed bid): a table with "
                          "human seats shows it after the game, in its replay")
        options = env_options(spec, body, sources)
        self.env = table(spec, n, options)
        # seated by the one rule (policies.seat_seed of the game's seed), as evaluations seat them
        self.policies = seat_all(self.env, [None if s == HUMAN else sources.policy(spec, s, 0) for s in seats], seed)
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
        self.spec = spec = shown(setup["game"])
        show = spec.presenter
        try:
            record = spec.read_record(record)  # stored by an older version: today's format, event for event
            spec.replay(record)
        except (ReplayError, ValueError, TypeError, KeyError) as err:
            raise Unplayable(f"the stored record does not replay: {err}") from None
        start = record[0]
        setup = check_setup(setup, start.get("num_players"))
        self.seats, self.names = list(setup["seats"]), list(setup["names"])
        self.seeded, self.pace_ms = bool(setup["seeded"]), int(setup["pace_ms"])
        seed = start["seed"]
        self.env = show.env_for_record(start)
        loaded = [None if s == HUMAN else sources.policy(spec, s, 0) for s in self.seats]
        self.policies = seat_all(self.env, loaded, seed)
        self._start(background)
        n = start["num_players"]
        for ev in record:
            if ev.get(show.kind_key) in show.input_events:
                seat, action = ev["player"], show.encode(ev["option"], ev["player"], n)
                if self.policies[seat] is not None and not self.policies[seat].capabilities.information_state:
                    self.policies[seat].act(self.env.observe(self.env.agent_selection))
                self._step(action)
        if self.env.game.record != record:
            raise Unplayable("the stored record does not end where its actions lead")
        return self

    def rename(self, seat: int, name: Any) -> None:
        """A person names their own seat (``null`` or "" gives back ``player_k``); the same rules as
        the names given when the table is made (short, plain, every player another)."""
        names = list(self.names)
        names[seat] = name
        self.names = _names({"names": names}, len(names))

    def setup(self) -> dict[str, Any]:
        """What, with the record, makes the table again (:meth:`resume`): no token, no seed (the record has it)."""
        return {"game": self.spec.id, "seats": self.seats, "names": self.names, "seeded": self.seeded,
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
            raise Refused("the body must be a JSON object {\"action\": int}")
        if "seat" in body and body["seat"] != seat:
            raise Forbidden(f"this seat token is {self.names[seat]}'s: it acts for no other seat")
        if self.seats[seat] != HUMAN:
            raise Forbidden(f"seat {seat} is played by {self.seats[seat]!r}, not by a human")
        if self.over:
            raise Conflict("the game is over")
        if self.actor() != seat:
            raise Conflict(f"it is {self.names[self.actor()]}'s decision, not {self.names[seat]}'s")
        action = body.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise Refused(f"action must be an integer, got {str(action)[:40]!r}")
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        if not 0 <= action < len(mask):
            raise Unplayable(f"action {action} is outside 0..{len(mask) - 1}")
        if not mask[action]:
            raise Unplayable(f"action {action} ({self.env.describe_action(action)}) is not legal now "
                             f"(decision {self.env.game.decision.kind!r})")
        self._step(action)

    def state(self, seat: int | None, log_from: int = 0, want_insight: bool = False) -> dict[str, Any]:
        """Everything ``seat`` may know (None: a spectator, who sees what every seat sees alike), from
        the observations: byte-identical for two games that differ only in what that viewer cannot
        see (no id, seed or time in it). ``log_from`` leaves out the log lines the page already has."""
        n = self.env.num_players
        show, env = self.spec.presenter, self.env
        if seat is not None:
            seat = check_int(seat, "seat", 0, n - 1)
        v = show.view(env, seat) if seat is not None else show.public_view(env)
        actions = None
        if seat is not None and self.actor() == seat and self.seats[seat] == HUMAN:
            mask = env.observe(env.possible_agents[seat])["action_mask"]
            actions = show.groups(env, seat, np.flatnonzero(mask), self.names)
        log = _log(show, env.game.record, seat, self.names)
        return {
            "kind": "live",
            "game": self.spec.id,
            "title": self.spec.title,
            "goal": show.goal(env),
            "players": n,
            "seat": seat,
            "seats": self.seats,
            "names": self.names,
            "seeded": self.seeded,
            "view": v,
            "race": show.race(v),
            "actor": self.actor(),
            "prompt": _prompt(show, v, self.names, seat),
            "actions": actions,
            "log": log[log_from:],
            "log_from": min(log_from, len(log)),
            "log_total": len(log),
            "moves": self.moves,
            "thinking": self.thinking,
            "pace_ms": self.pace_ms,
            "insight_allowed": self.insight_allowed,
            "insight": self.insights[-4:] if want_insight and self.insight_allowed else None,
            "result": _result(show, env, self.names),
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
            raise Conflict("the record is available once the game is over (it holds the seed, "
                           "which tells every hidden card)")
        return {"game": self.spec.id, "seats": self.seats, "names": self.names, "record": self.env.game.record}


_SETUP_KEYS = ("game", "seats", "names", "seeded", "pace_ms")


def check_setup(setup: Any, players: Any = None) -> dict[str, Any]:
    """A stored table's setup (:meth:`LiveGame.setup`) checked as a request's fields are (issue #49: a
    stored row is input too): its game, seats ('human' or a policy name; ``players`` of them when
    the record's table size is known), names, pace and seeded flag; an :class:`Unplayable` naming what is wrong."""
    if not isinstance(setup, dict):
        raise Unplayable(f"a stored setup is a JSON object, got {type(setup).__name__}")
    missing = [k for k in _SETUP_KEYS if k not in setup]
    if missing:
        raise Unplayable(f"the stored setup lacks {missing}")
    try:
        spec = shown(setup["game"])
        seats = setup["seats"]
        if not isinstance(seats, list) or not all(isinstance(s, str) and s and len(s) <= MAX_SPEC for s in seats):
            raise Refused(f"seats must be a list of seats ('human' or a policy name), got {str(seats)[:200]!r}")
        spec.check_players(len(seats), "the number of seats")
        if players is not None and len(seats) != players:
            raise Refused(f"the setup has {len(seats)} seats, its record {str(players)[:10]} players")
        names = _names({"names": setup["names"]}, len(seats))
        pace = check_int(setup["pace_ms"], "pace_ms", 0, MAX_PACE_MS)
        if not isinstance(setup["seeded"], bool):
            raise Refused(f"seeded must be true or false, got {str(setup['seeded'])[:20]!r}")
    except ValueError as err:  # Refused, an unknown game, a table size
        raise Unplayable(f"the stored setup is refused: {err}") from None
    return {**setup, "game": spec.id, "seats": list(seats), "names": names, "pace_ms": pace}


def _think(policy: Any, env: Any, moves: int) -> tuple[int, int]:
    return moves, int(decide(policy, env, env.agent_selection))


def regenerate(body: dict[str, Any], sources: Sources = LOCAL,
               seconds: float = REGENERATE_SECONDS) -> dict[str, Any]:
    """A game of ``dragonstones_env.evaluation``'s output played again exactly, from its ``games.json`` entry:
    ``{"game": summary's game, "deterministic": summary's flag, "regenerate": entry}``. The game's
    seed, line-up and the policies' seeds (derived from the game's seed by ``policies.seat_seed``)
    give the same game; an :class:`Unplayable` if it does not end as the entry says, or if it takes
    longer than ``seconds`` to play."""
    spec = shown(body.get("game"))
    show = spec.presenter
    entry = body["regenerate"]
    if not isinstance(entry, dict):
        raise Refused("regenerate takes one entry of games.json: {\"game\", \"seed\", \"lineup\", ...}")
    index = check_int(entry.get("game"), "the entry's game index", 0, 2**31)
    seed = check_int(entry.get("seed"), "the entry's seed", index, 2**63 - 1)
    lineup = entry.get("lineup")
    if not isinstance(lineup, list):
        raise Refused(f"the entry's lineup must be a list of policy specs, got {str(lineup)[:80]!r}")
    spec.check_players(len(lineup), "the entry's lineup (one policy spec a seat)")
    options = entry.get("env_options") or {}
    if not isinstance(options, dict):
        raise Refused(f"the entry's env_options must be a mapping (of {list(show.table_options) or 'no option'} for "
                      f"{spec.title}), got {options!r}"[:300])
    stray = sorted(set(options) - set(show.table_options))
    if stray:  # dropping one would play another game and end in a misleading 422
        raise Refused(f"the entry's env_options {stray} cannot be set in the app; it sets "
                      f"{list(show.table_options) or 'none'} for {spec.title}"[:300])
    deterministic = bool(body.get("deterministic", False))
    env = table(spec, len(lineup), env_options(spec, options, sources))
    # seated as the evaluation's arena seats them: each seat's seed from the game's (policies.seat_seed)
    policies = seat_all(env, [sources.policy(spec, s, 0, deterministic) for s in lineup], seed)
    env.reset(seed=seed)
    steps, deadline = 0, time.monotonic() + seconds
    while env.game.decision is not None:
        env.step(int(decide(policies[env.agent_name_mapping[env.agent_selection]], env, env.agent_selection)))
        steps += 1
        if time.monotonic() > deadline:
            raise Unplayable(f"the game took longer than {seconds:g} s to play again (this server's limit) and "
                             f"was stopped after {steps} steps")
    # every agent's info holds the same winners flags, one per seat (0 for all when truncated)
    winners = [int(p) for p in np.flatnonzero(env.infos[env.possible_agents[0]]["winners"])]
    if "steps" in entry and (steps != entry["steps"] or winners != entry.get("winners", winners)):
        raise Unplayable(f"the regenerated game differs from the entry ({steps} steps, winners {winners}; the "
                         f"entry says {entry['steps']} steps, winners {entry.get('winners')}): other policies "
                            "or package version, or another 'deterministic' setting")
    return {"game": spec.id, "seats": [str(s) for s in lineup], "record": env.game.record}


def parse_record(body: Any, sources: Sources = LOCAL,
                 seconds: float = REGENERATE_SECONDS) -> tuple[GameSpec, list[dict], list[str] | None, Any]:
    """A record to replay: the engine's JSON record (a list of events), a file saved by the app
    (``{"game", "seats", "names", "record"}``), or a game of ``dragonstones_env.evaluation`` to
    regenerate (see :func:`regenerate`). Checked by the engine's replay; a ReplayError names the
    first bad event. Returns the game's spec, the record (an older version upgraded:
    dragonstones_env/core/records.py), the seats' policies and the names if given."""
    seats = names = None
    if isinstance(body, dict) and "regenerate" in body:
        body = regenerate(body, sources, seconds)
    if isinstance(body, dict):
        seats, names = body.get("seats"), body.get("names")
        body = body.get("record")
    if not isinstance(body, list) or not body:
        raise Refused("a record is a non-empty JSON list of events, or an object with a 'record' list")
    if len(body) > MAX_RECORD_EVENTS:
        raise TooLarge(f"the record has {len(body)} events; at most {MAX_RECORD_EVENTS}")
    spec, body = for_record(body)
    if seats is not None and not (isinstance(seats, list) and all(isinstance(s, str) and len(s) <= MAX_SPEC
                                                                  for s in seats)):
        raise Refused(f"seats must be a list of policy names, got {str(seats)[:200]!r}")
    return spec, body, seats, names


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
        self.spec, self.record, seats, names = parse_record(body, sources, seconds)
        show = self.spec.presenter
        start = self.record[0]
        n = start["num_players"]
        self.seats = seats if seats is not None and len(seats) == n else ["?"] * n
        try:
            self.names = _names({"names": names}, n)
        except Refused:
            self.names = _names({}, n)
        probe = show.env_for_record(start)
        self.inputs: list[tuple[int, int]] = []  # (record index after which the step happens, action)
        self.cut: list[int] = [0]  # record length before each step
        self.turns: dict[int, int] = {}  # turn number -> the first step of that turn ("jump to a turn")
        for i, ev in enumerate(self.record):
            if ev.get(show.kind_key) == "turn" and isinstance(ev.get("turn"), int):
                self.turns.setdefault(ev["turn"], len(self.inputs))
            if ev.get(show.kind_key) in show.input_events:
                self.cut.append(i)
                self.inputs.append((ev["player"], show.encode(ev["option"], ev["player"], n)))
        self.cut.append(len(self.record))
        self.steps = len(self.inputs)
        self._env, self._at = probe, 0
        self._start_keyframes()
        # A seat played by a policy this server does not have: its decisions replay, its insight cannot.
        self.insight_unavailable = [i for i, s in enumerate(self.seats)
                                    if s not in ("?", HUMAN, "") and not sources.knows_policy(self.spec, s)]

    def summary(self) -> dict[str, Any]:
        return {"game": self.spec.id, "steps": self.steps, "players": len(self.seats), "seats": self.seats,
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
            return self.spec.presenter.env_for_record(self.record[0]), 0
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
        seen = insight(self.sources.insight_policy(self.spec, spec), env, env.agent_selection, spec)
        return None if seen is None else {"seat": actor, **seen}

    def state(self, step: Any, seat: Any, insight_spec: str | None = None, log_from: int = 0) -> dict[str, Any]:
        step = check_int(step, "step", 0, self.steps)
        env = self.env_at(step)
        n = env.num_players
        whole = seat == WHOLE
        if not whole:
            seat = check_int(seat, "seat", 0, n - 1)
        show = self.spec.presenter
        v = show.view(env, 0 if whole else seat)
        record = self.record[: self.cut[step + 1] if step < self.steps else len(self.record)]
        chosen = None
        if step < self.steps:
            chosen = {"seat": self.inputs[step][0], "action": self.inputs[step][1],
                      "text": show.action_text(env, self.inputs[step][1], self.names)}
        log = _log(show, record, seat, self.names)
        return {
            "kind": "replay",
            "game": self.spec.id,
            "title": self.spec.title,
            "goal": show.goal(env),
            "players": n,
            "seat": seat,
            "seats": self.seats,
            "names": self.names,
            "step": step,
            "steps": self.steps,
            "turns": {str(t): k for t, k in self.turns.items()},
            "view": v,
            "hidden": show.hidden(env) if whole else None,
            "race": show.race(v),
            "actor": None if env.game.decision is None else env.agent_name_mapping[env.agent_selection],
            "prompt": _prompt(show, v, self.names, seat),
            "actions": None,
            "next": chosen,
            "log": log[log_from:],
            "log_from": min(log_from, len(log)),
            "log_total": len(log),
            "insight": [x] if (x := self._insight(env, insight_spec)) else None,
            "insight_unavailable": self.insight_unavailable,
            "result": _result(show, env, self.names),
        }




def insight(policy: Policy, env: Any, agent: str, name: str, top: int = 5) -> dict[str, Any] | None:
    """A checkpoint's masked action probabilities at the current decision of ``agent``: its top
    actions, described, and its critic's estimate of the seat's final reward when it has one. None for
    policies without ``probabilities`` (rule bots). ``name`` is the policy's spec, as shown."""
    if not policy.capabilities.probabilities:
        return None
    obs = env.observe(agent)
    probs = policy.probabilities(obs["observation"][None], obs["action_mask"][None])[0]
    order = np.argsort(-probs, kind="stable")[:top]
    shown = [(int(a), round(float(probs[a]), 4)) for a in order]
    return {
        "policy": name,
        # an action below 0.00005 would read "p 0": only those that show a probability are listed
        "top": [{"action": a, "text": env.describe_action(a), "p": p} for a, p in shown if p > 0],
        # the critic's estimate of this seat's final reward (+1 a win, -1/(n-1) a loss), if it ships one
        "value": _value(policy, obs),
    }


def _value(policy: Policy, obs: dict[str, np.ndarray]) -> float | None:
    if not policy.capabilities.value:
        return None
    try:
        return round(policy.value(obs), 3)
    except PolicyError:  # a broken value.npz: the insight still shows the actor's probabilities
        return None
