"""The one format of the engines' game records, and the reader that brings older records up to it.

Version 2 (today's), shared by every engine:

* every event names its kind under ``"event"`` (:data:`KIND_KEY`);
* the first event is ``{"event": "start", "game": <registry id>, "version": 2, ...}``: the game's
  seed, ``num_players`` and its own truncation limit (Fist's ``max_turns`` counts turns, F18;
  DrachenSchatten's ``max_steps`` counts applied options: two measures, so two names);
* the game's end is one ``{"event": "end", "reason": ..., "winners": [seats]}`` event (no winner
  when it is truncated: ``"reason": "truncated"``, ``"winners": []``).

Version 1 is every record written before: no ``version`` in the start event, Fist of Dragonstones
naming kinds under ``"type"`` and ending with a ``"win"`` (``player``) or ``"truncated"`` event. A
record is never rewritten on disk: :func:`read_record` upgrades it in memory, each engine handing in
its own step from version 1 (``games/dragonstones/flow.py``, ``games/drachenschatten/rules.py``), so old
files from ``dragonstones play --record``, the app's database and evaluation journals replay as
they always did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import ReplayError

RECORD_VERSION = 2
KIND_KEY = "event"

Upgrade = Callable[[list], list]  # a record of version v -> the same game's record of version v + 1


def record_version(record: Any) -> int | None:
    """The version a record says it is (1 when its start event names none), or None when it has
    no start event to tell."""
    if not isinstance(record, (list, tuple)) or not record or not isinstance(record[0], dict):
        return None
    version = record[0].get("version", 1)
    return version if type(version) is int else None


def read_record(record: Any, game: str, upgrades: Mapping[int, Upgrade]) -> Any:
    """``record`` in today's format (:data:`RECORD_VERSION`): as it is when it is, else upgraded step by
    step by ``upgrades`` (version -> its upgrade to the next). Not a list of events: returned as it is,
    for the replay to refuse with its own words.

    Raises :class:`ReplayError` (a ValueError) for a record of a version this package does not read
    (naming those it reads), or a record of today's version that is not ``game``'s."""
    if not isinstance(record, (list, tuple)) or not record or not isinstance(record[0], dict):
        return record
    version = seen = record[0].get("version", 1)
    while version != RECORD_VERSION:
        step = upgrades.get(version) if type(version) is int else None
        if step is None:
            known = sorted({*upgrades, RECORD_VERSION})
            raise ReplayError(0, f"a start event of record version {', '.join(map(str, known))}", record[0],
                              f"record version {seen!r} is not one this dragonstones_env reads")
        record = step(list(record))
        version += 1
    if record[0].get("game") != game:
        raise ReplayError(0, f"a {game} start event", record[0], "the record is another game's")
    return record


def renamed(event: Any, old_key: str) -> Any:
    """``event`` with its kind moved from ``old_key`` to :data:`KIND_KEY` (anything else as it is)."""
    if not isinstance(event, dict) or old_key not in event or KIND_KEY in event:
        return event
    out = {KIND_KEY: event[old_key]}
    out.update((k, v) for k, v in event.items() if k != old_key)
    return out


def start_v2(start: dict[str, Any], game: str) -> dict[str, Any]:
    """A version-1 start event of ``game`` (its kind already under :data:`KIND_KEY`) as version 2's."""
    return {**start, "game": start.get("game", game), "version": RECORD_VERSION}
