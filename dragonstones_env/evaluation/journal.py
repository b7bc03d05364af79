"""The journal of an evaluation in progress: every game's record as soon as its chunk is played, so
that an interrupted evaluation or panel plays on where it stopped (``--resume``).

An evaluation with an ``out`` folder keeps ``out/journal.jsonl`` while it plays: a first line naming
the evaluation (the game, table sizes, seed, line-ups and env options, and a hash of its whole plan
of games), then one line per finished game. The finished evaluation writes its report and removes
the journal. Run again with ``resume=True`` (``--resume``), the same evaluation skips the games
its journal holds and plays the rest; game ``g`` is played with seed ``seed + g`` and its policies
reset from ``(seed, g, seat)`` wherever it is played, so the result is the uninterrupted one, game
for game (tests/test_evaluate.py). The journal names policy specs, not their weights: a checkpoint
changed in between is not noticed, so resume only the evaluation you stopped.

A journal is read as untrusted input: JSON lines only, at most ``FILE_BYTES["journal"]`` bytes,
every record checked against the plan (its game, seed and seats) and its fields' types. A last line
cut short (the process stopped mid-write) is dropped and its game played again.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dragonstones_env.bounds import InputError, read_text_limited

from .facts import RECORD_KEYS, EvaluationError

JOURNAL = "journal.jsonl"
VERSION = 1

# (table, [(game index, seats), ...]): the chunks of games an evaluation plays (play_tasks' tasks)
Tasks = Sequence[tuple[int, Sequence[tuple[int, Sequence[str]]]]]


def plan_hash(tasks: Tasks) -> str:
    """A hash of every game of the plan: its table, index and seats."""
    games = sorted((table, g, list(seats)) for table, chunk in tasks for g, seats in chunk)
    return hashlib.sha256(json.dumps(games).encode()).hexdigest()


@dataclass
class Journal:
    """The journal file of one evaluation, and the records it held when opened."""

    path: Path
    done: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)  # (table, game) -> record

    def remaining(self, tasks: Tasks) -> list[tuple[int, list[tuple[int, Sequence[str]]]]]:
        """``tasks`` without the games already played; chunks left empty are dropped."""
        left = [(table, [(g, s) for g, s in chunk if (table, g) not in self.done]) for table, chunk in tasks]
        return [(table, chunk) for table, chunk in left if chunk]

    def write(self, table: int, records: Sequence[dict[str, Any]]) -> None:
        """Append the records of a finished chunk, the file opened and closed for each (a chunk
        takes seconds to play), so that a stop loses no finished chunk and nothing is left open."""
        with self.path.open("a") as f:
            f.writelines(json.dumps({"table": table, "record": record}) + "\n" for record in records)

    def remove(self) -> None:
        """The evaluation is finished and its report written: the journal has served."""
        self.path.unlink(missing_ok=True)


def open_journal(out: str | Path, identity: dict[str, Any], tasks: Tasks, resume: bool) -> Journal:
    """The journal in ``out`` for the evaluation ``identity`` (JSON-able settings) playing ``tasks``.

    Without ``resume``, a journal already there is an error (an unfinished evaluation would be
    overwritten); with it, a journal of another evaluation is an error naming what differs, and
    none at all starts the evaluation from its first game.
    """
    out = Path(out)
    path = out / JOURNAL
    header = {"journal": VERSION, **identity, "plan": plan_hash(tasks)}
    header = json.loads(json.dumps(header))  # as it reads back (tuples become lists)
    journal = Journal(path)
    if path.exists():
        if not resume:
            raise EvaluationError(f"{path}: an unfinished evaluation's journal is there; give --resume "
                                  "(resume=True) to play on from it, or remove it, or choose another --out")
        journal.done = _read(path, header, tasks)
    out.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:  # rewritten whole: drops a line cut short, keeps the checked records
        f.write(json.dumps(header) + "\n")
        for (table, _), record in sorted(journal.done.items()):
            f.write(json.dumps({"table": table, "record": record}) + "\n")
    return journal


def _read(path: Path, header: dict[str, Any], tasks: Tasks) -> dict[tuple[int, int], dict[str, Any]]:
    try:
        lines = read_text_limited(path, "journal", "evaluation journal").split("\n")
    except InputError as err:
        raise EvaluationError(str(err)) from None
    try:
        first = json.loads(lines[0])
    except json.JSONDecodeError:
        first = None
    if not isinstance(first, dict):
        raise EvaluationError(f"{path}: line 1 is not the JSON header of an evaluation journal")
    if first != header:
        differ = sorted(k for k in header.keys() | first.keys() if first.get(k) != header.get(k))
        raise EvaluationError(f"{path}: the journal of another evaluation (it differs in {', '.join(differ)}); "
                              "remove it, or choose another --out")
    planned = {(table, g): list(seats) for table, chunk in tasks for g, seats in chunk}
    seed = header["seed"]
    done: dict[tuple[int, int], dict[str, Any]] = {}
    last = max((i for i, line in enumerate(lines) if line.strip()), default=0)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if number == last + 1:
                break  # the last line, cut short by a stop mid-write: that game is played again
            raise EvaluationError(f"{path}: line {number} is not JSON") from None
        where = f"{path}: line {number}"
        if not isinstance(entry, dict) or set(entry) != {"table", "record"} or not isinstance(entry["record"], dict):
            raise EvaluationError(f"{where}: expected {{\"table\": ..., \"record\": {{...}}}}")
        table, record = entry["table"], entry["record"]
        key = (table, record.get("game"))
        if type(table) is not int or type(key[1]) is not int or key not in planned:
            raise EvaluationError(f"{where}: table {table!r}, game {key[1]!r} is not a game of this evaluation")
        _check_record(record, planned[key], seed + key[1], where)
        done[key] = record
    return done


def _number(x: Any) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def _check_record(record: dict[str, Any], seats: list[str], seed: int, where: str) -> None:
    """A game record as :func:`play_game` returns it, for the planned seats and seed."""
    n = len(seats)
    problems = []
    if record.get("seats") != seats:
        problems.append(f"seats {record.get('seats')!r}, planned {seats!r}")
    if record.get("seed") != seed:
        problems.append(f"seed {record.get('seed')!r}, planned {seed}")
    rewards, winners = record.get("rewards"), record.get("winners")
    if not (isinstance(rewards, list) and len(rewards) == n and all(_number(r) for r in rewards)):
        problems.append(f"rewards must be {n} finite numbers")
    if not (isinstance(winners, list) and len(set(winners)) == len(winners)
            and all(type(w) is int and 0 <= w < n for w in winners)):
        problems.append(f"winners must be distinct seats 0..{n - 1}")
    if type(record.get("truncated")) is not bool:
        problems.append("truncated must be true or false")
    if type(record.get("steps")) is not int or record["steps"] < 0:
        problems.append("steps must be a count")
    figures = {k: v for k, v in record.items() if k not in RECORD_KEYS}
    bad = sorted(k for k, v in figures.items() if v is not None and type(v) is not bool and not _number(v))
    if bad:
        problems.append(f"figures {bad} must be numbers")
    if problems:
        raise EvaluationError(f"{where}: not a record of this evaluation's game: {'; '.join(problems)}")
