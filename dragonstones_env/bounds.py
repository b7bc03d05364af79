"""Bounds on what is read from outside (issue #30): one table of every numeric input, the sizes
files are read up to, and YAML without aliases.

Every number a user gives -- an env option, a flag of any command, a key of a training config --
is checked against a row of :data:`BOUNDS` (the trainers add their own rows on top of these,
``training.config.BOUNDS``), and a refusal names the key or flag and the range:
``seed: must be an integer in [0, 4294967295], got -1``. The ceilings are set so that the
largest value still fits a 24 GiB, 2-core machine; ``docs/inputs.md`` lists every row (generated
from this table by ``python -m tools.gen_docs``).

Files are read through :func:`read_limited`, which stops after :data:`FILE_BYTES` of their kind
(``/dev/zero`` or a multi-gigabyte file stop with an error naming the limit, not an exhausted
memory); YAML goes through :func:`load_yaml` (PyYAML's safe loader without aliases: an alias bomb
cannot expand, and a key given twice is refused). Part of the shared core: no RL imports.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml


class InputError(ValueError):
    """An input out of its bounds; the message names the key, flag or file and what is allowed."""


GiB = 2**30


@dataclass(frozen=True)
class Bound:
    """The range of one numeric input: ``kind`` int or float, ``low``..``high`` inclusive
    (``low`` or ``high`` itself excluded when ``open_low`` or ``open_high``), and why the ceiling
    is where it is."""

    kind: type
    low: int | float
    high: int | float
    why: str
    open_low: bool = False
    open_high: bool = False

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a finite number"
        low, high = (f"{x:g}" if isinstance(x, float) else str(x) for x in (self.low, self.high))
        return f"{what} in {'(' if self.open_low else '['}{low}, {high}{')' if self.open_high else ']'}"

    def check(self, value: Any, name: str) -> Any:
        """``value`` as an int or float inside the bound, or an :class:`InputError` naming ``name``."""
        if isinstance(value, (bool, np.bool_)):
            raise InputError(f"{name}: must be {self.describe()}, got {value!r} (a bool)")
        if self.kind is int:
            if not isinstance(value, (int, np.integer)):
                raise InputError(f"{name}: must be {self.describe()}, got {_show(value)} ({type(value).__name__})")
            value = value if isinstance(value, HugeInt) else int(value)
        else:
            if not isinstance(value, (int, float, np.integer, np.floating)):
                raise InputError(f"{name}: must be {self.describe()}, got {_show(value)} ({type(value).__name__})")
            value = float_or_inf(value)
            if not math.isfinite(value):
                raise InputError(f"{name}: must be {self.describe()}, got {_show(value)}")
        low_ok = value > self.low if self.open_low else value >= self.low
        high_ok = value < self.high if self.open_high else value <= self.high
        if not (low_ok and high_ok):
            raise InputError(f"{name}: must be {self.describe()}, got {_show(value)}")
        return value


def float_or_inf(value: Any) -> float:
    """``float(value)``, with an int too big for a float as an infinity (which every bound refuses)."""
    try:
        return float(value)
    except OverflowError:  # an int beyond every float: infinite for our purposes
        return math.inf if value > 0 else -math.inf


def _show(value: Any) -> str:
    """A value for a message: a huge integer by its size (printing one of 5,000 digits raises)."""
    if isinstance(value, HugeInt):
        return repr(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and abs(int(value)) >= 10**30:
        return f"an integer of about {int(abs(int(value)).bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# Every numeric input shared by the env options, the `dragonstones` command and the evaluation
# package. training.config.BOUNDS adds the trainers' keys to these. A game's table sizes and
# seat numbers are also checked by the game itself (num_players: its own MIN/MAX_PLAYERS).
BOUNDS: Mapping[str, Bound] = {
    "seed": Bound(int, 0, 2**32 - 1, "numpy's legacy seeding (SB3, torch, np.random.seed) takes 32-bit seeds"),
    "max_turns": Bound(int, 1, 1000, "Fist turns before truncation (F18): 25 x the default 40; random play "
                                     "ends in 17"),
    "max_steps": Bound(int, 1, 100_000, "DrachenSchatten actions before truncation: 100 x the default 1000"),
    "truncation_reward": Bound(float, -1.0, 0.0, "what a game cut off at its step limit pays the single-agent "
                               "learner (the AEC env pays every seat 0; a sole loser at n players gets -1/(n-1))"),
    "reward_shaping": Bound(float, 0.0, 1.0, "reward per point scored, on top of the final +1: at 1 a point "
                                             "already pays as much as the win"),
    "players": Bound(int, 2, 6, "seats at a table (3-6 Fist, 2-4 DrachenSchatten: the game checks its own)"),
    "seat": Bound(int, 0, 5, "a seat number (the game checks it against its table)"),
    "k": Bound(int, 1, 5, "the panel's candidate copies, 1..n-1 (the panel checks n)"),
    "games": Bound(int, 1, 10**6, "games of one evaluation: 10^6 is days of play; results stay in memory"),
    "workers": Bound(int, 1, 32, "worker processes, each holding every policy: 32 is 16 x this machine's cores"),
    "frame_ms": Bound(int, 10, 60_000, "a GIF frame's duration (`dragonstones replay --ms`)"),
    "port": Bound(int, 1, 65_535, "a TCP port (`dragonstones serve --port`)"),
    "pace_ms": Bound(int, 0, 10_000, "the app's delay between two bot moves"),
    # the app server's limits on one client (dragonstones_env/play/app/limits.py; issue #49)
    "app.tables_per_client": Bound(int, 1, 200, "unfinished tables one client (address) may hold (default 20; "
                                               "a server stores 1,000)"),
    "app.search_seats_per_client": Bound(int, 0, 64, "search seats (ismcts) over one client's unfinished tables "
                                                     "(default 6): two bot threads decide them all"),
    "app.tables_per_minute": Bound(int, 1, 6000, "new tables a minute from one client (default 30) or the "
                                                 "whole server (default 120)"),
    "app.all_human_idle_seconds": Bound(float, 60.0, 7 * 24 * 3600.0, "an unfinished table of humans only, "
                                        "nobody asking about it, expires after this (default an hour)"),
    # a search's options in a policy spec (ismcts:simulations=400:...), wherever a spec is accepted
    "ismcts.simulations": Bound(int, 1, 20_000, "simulations a decision: the default 30 take about 0.5 s, "
                                                "20,000 about 5 minutes a move"),
    "ismcts.horizon": Bound(int, 0, 100_000, "decisions a simulation looks ahead (0: to the end): the longest "
                                             "game allowed (max_steps)"),
    "ismcts.c": Bound(float, 0.0, 100.0, "UCB1's exploration constant on rewards scaled to 0..1: at 100 the "
                                         "means no longer matter"),
    "ismcts.widen": Bound(float, 0.0, 1000.0, "progressive widening: at 1,000 a node considers every legal "
                                              "action of either game after one visit"),
    "ismcts.seed": Bound(int, 0, 2**32 - 1, "the search's own seed, as any seed"),
    "ismcts.guard": Bound(int, 1, 1_000, "the limit of its game's loop guard (the game's own range: "
                                         "DrachenSchatten 1..16 uses of an object type a turn)"),
    # python -m training.meta's flags besides --players, --games, --workers and --seed (rows above)
    "meta.grid": Bound(int, 2, 50, "weights in steps of 1/grid (and the mixtures it implies, meta.mixtures)"),
    "meta.mixtures": Bound(int, 1, 2_000_000, "mixtures on the grid, C(grid + members - 1, members - 1): "
                                              "2 M rows of 8 weights are about 0.5 GB while they are built "
                                              "(grid 20 of 8 members: 888,030)"),
    "meta.pure_games": Bound(int, 0, 10**5, "games of each ordered pair of members (8 members: 56 pairs, 5.6 M "
                                            "games at most)"),
}


def check(key: str, value: Any, name: str | None = None, table: Mapping[str, Bound] = BOUNDS) -> Any:
    """``value`` checked against ``table[key]``; the error names ``name`` (default: the key)."""
    return table[key].check(value, name or key)


def flag(key: str, table: Mapping[str, Bound] = BOUNDS) -> Callable[[str], Any]:
    """An argparse ``type`` parsing a flag's text as ``table[key]``'s kind and checking its bound:
    argparse then reports ``argument --seed: must be an integer in [0, 4294967295], got -1``."""
    bound = table[key]

    def parse(text: str) -> Any:
        try:
            value = bound.kind(text)
        except ValueError:  # not a number, or an int of more digits than Python converts
            raise argparse.ArgumentTypeError(f"must be {bound.describe()}, got {text[:40]!r}") from None
        try:
            return bound.check(value, "value")
        except InputError:
            raise argparse.ArgumentTypeError(f"must be {bound.describe()}, got {_show(value)}") from None

    parse.__name__ = f"bounded {key}"
    parse.bound = bound  # type: ignore[attr-defined]  # tests find every bounded flag by it
    return parse


# ---------------------------------------------------------------------------- files
MB = 1_000_000
# The most bytes read from one file of each kind; bigger files are refused unread.
FILE_BYTES: Mapping[str, int] = {
    "record": 16 * MB,  # a game record, or a file saved by the app (the longest 6-player game: ~2 MB)
    "deck": 1 * MB,  # a custom characters file (the example deck: 2 kB)
    "config": 1 * MB,  # a training config (configs/champion.yaml: 3 kB)
    "card": 1 * MB,  # a checkpoint's card.json (the champion's: 9 kB)
    "run_state": 16 * MB,  # a training run's state.json, eval.csv and model.zip mark
    "journal": 64 * MB,  # an unfinished evaluation's journal.jsonl (a 23,000-game panel: ~6 MB)
    # a saved teacher collection (imitate.demonstrations), its arrays as unpacked: about 6 kB a
    # decision, so 1,000 DrachenSchatten search games ~110 MB, a 12,000-game Fist clone ~3.8 GB
    "demonstrations": 8000 * MB,
    "meta": 64 * MB,  # training.meta's --cells, a previous meta.json (8 members at 4 players: ~50 kB)
}


def read_limited(path: str | Path, kind: str, what: str | None = None) -> bytes:
    """At most ``FILE_BYTES[kind]`` bytes of ``path``: more is an :class:`InputError` naming the
    file and the limit (read, not trusted from ``stat``: ``/dev/zero`` has size 0); an OSError
    (missing, unreadable) is raised as it is."""
    limit = FILE_BYTES[kind]
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{path}: more than {limit} bytes; a {what or kind} file holds at most {limit} bytes "
                         "(dragonstones_env/bounds.py FILE_BYTES)")
    return data


def read_text_limited(path: str | Path, kind: str, what: str | None = None) -> str:
    """:func:`read_limited` decoded as UTF-8 (an :class:`InputError` if it is not)."""
    try:
        return read_limited(path, kind, what).decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text ({err})") from None


# ---------------------------------------------------------------------------- YAML
class HugeInt(int):
    """A YAML integer too long to be any input here (more than 30 digits), kept as a stand-in
    beyond every bound: Python refuses to convert 4,300 digits and more, and a message naming
    the key and its range is better than that error."""

    digits: int

    def __new__(cls, text: str) -> HugeInt:
        negative = text.startswith("-")
        self = super().__new__(cls, -(10**40) if negative else 10**40)
        body = text.lstrip("+-")
        body = body[2:] if body[:2].lower() in ("0x", "0b", "0o") else body  # hex, binary: their digits
        self.digits = sum(ch.isalnum() for ch in body)
        return self

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


_LONG_INT = re.compile(r"[-+]?[0-9_]{31,}")


class SafeYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader (plain data only) that refuses aliases (``*a``: an alias bomb doubles
    what it builds at each level), refuses a key given twice in one mapping (YAML keeps the last
    silently), and reads integers of more than 30 digits as :class:`HugeInt`."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise InputError(f"line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not "
                             "allowed; write the value out")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: let the base class report it
                break
            if duplicate:
                raise InputError(f"duplicate key {key!r} (line {key_node.start_mark.line + 1}); give each key once")
            seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(self.construct_scalar(node))
        if _LONG_INT.fullmatch(text):
            return HugeInt(text)
        value = super().construct_yaml_int(node)
        # a hex, binary or base-60 form as large: printing it in a message would raise Python's
        # 4,300-digit conversion error instead of the message
        return HugeInt(text) if abs(value) >= 10**30 else value


SafeYamlLoader.add_constructor("tag:yaml.org,2002:int", SafeYamlLoader.construct_yaml_int)


def load_yaml(text: str, where: str, quote: bool = True) -> Any:
    """The plain data of a YAML text (:class:`SafeYamlLoader`), or an :class:`InputError`
    starting with ``where``. ``quote=False`` for a file the user did not name: the error gives
    the problem and its line, never the text around it (a file that is not YAML at all may be
    anything, a key file included)."""
    try:
        return yaml.load(text, Loader=SafeYamlLoader)
    except InputError as err:
        raise InputError(f"{where}: {err}") from None
    except (yaml.YAMLError, RecursionError, ValueError) as err:
        raise InputError(f"{where} is not valid YAML: {err if quote else _unquoted(err)}") from None


def _unquoted(err: BaseException) -> str:
    """A YAML error without the snippet of the text PyYAML quotes: its problem and position."""
    mark = getattr(err, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{getattr(err, 'problem', None) or type(err).__name__}{where}"
