"""Pieces shared by every game engine in this package (no RL imports here).

A game engine is a plain object with this protocol, modelled on OpenSpiel's `State`:

* ``decision`` -> :class:`Decision` or ``None`` once the game is over: who must decide
  now and what kind of decision it is;
* ``legal_options()`` -> list of options (tuples whose first item names the option kind,
  e.g. ``("colour", "red")``); JSON-friendly, hashable, comparable;
* ``is_legal(option)`` -> bool, and ``apply(option)``: applies one legal option and
  advances the game to the next decision. An illegal option raises
  :class:`IllegalOptionError` and leaves the state untouched;
* ``over``, ``truncated`` and ``winners`` (the winning seats, a list: empty while the game
  runs or when it is truncated), ``turn``, ``num_players``, ``seed``;
* ``state_dict()`` -> JSON-serialisable snapshot; ``record`` -> append-only list of JSON
  events, from which the game's ``replay(record)`` rebuilds the identical state; every event
  names its kind under the engine's ``record_key``, ``"event"`` in both games (the one format of
  :mod:`.records`, which also reads the records of older versions);
* ``copy.deepcopy(state)`` gives an independent state that continues identically.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Option = tuple
_PLAIN = (int, str)


@dataclass(frozen=True)
class Decision:
    """Who must decide now, and what about.

    ``kind`` names what is chosen (``"bid"``, ``"choose_colour"``, ``"yes_no"``, ...); ``card``
    is the character (or object) that asks, if any, so one kind serves every card.
    """

    kind: str
    player: int
    card: str | None = None


class IllegalOptionError(ValueError):
    """An option that is not legal at the current decision. The state is unchanged."""

    def __init__(self, decision: Decision | None, option: Any, legal: list[Option], why: str = ""):
        self.decision = decision
        self.option = option
        self.legal = legal
        shown = ", ".join(map(repr, legal[:12])) + (f", ... ({len(legal)} in all)" if len(legal) > 12 else "")
        if decision is None:
            msg = f"option {option!r} is not legal: the game is over"
        else:
            where = f"decision {decision.kind!r} of player {decision.player}"
            if decision.card:
                where += f" ({decision.card})"
            msg = f"option {option!r} is not legal at {where}{': ' + why if why else ''}; legal options: {shown}"
        super().__init__(msg)


def same_game(a: str, b: str) -> bool:
    """Whether two PettingZoo names (``dragonstones_v1``, ``dragonstones``) name one game, whatever
    their versions: a policy's ``game`` says which game it plays; layouts are checked apart, by
    their signatures."""
    return a.rsplit("_v", 1)[0] == b.rsplit("_v", 1)[0]


def as_option(option: Any) -> Option:
    """Normalise an option (a list from JSON, or a tuple) to a tuple."""
    if type(option) is tuple and all(type(x) in _PLAIN for x in option):
        return option  # the common case, kept fast
    if isinstance(option, (tuple, list)):
        # numpy integers (from arrays of actions) become ints, so that records stay JSON
        return tuple(int(x) if isinstance(x, np.integer) else x for x in option)
    raise TypeError(f"an option is a tuple such as ('colour', 'red'), not {type(option).__name__}")


def check_seed(seed: Any, name: str = "seed") -> int:
    """``seed`` as an int, or a ValueError naming ``name`` and what is allowed.

    Integers only (numpy integers too): a bool or a float would silently become another seed
    (``1.5`` and ``True`` both gave seed 1), so they are refused rather than converted.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{name} must be a non-negative integer or None, got {seed!r} ({type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, got {seed!r}")
    return int(seed)


class ReplayError(ValueError):
    """A game record that the engine does not reproduce: the first event that differs.

    ``index`` is the position of that event in the record, ``expected`` what the engine
    produces there (``None`` past the end of the game so far), ``found`` what the record holds
    there (``None`` past the end of the record).
    """

    def __init__(self, index: int, expected: Any, found: Any, why: str = ""):
        self.index, self.expected, self.found, self.why = index, expected, found, why
        text = f"record event {index}: expected {_short(expected)}, found {_short(found)}"
        super().__init__(text + (f" ({why})" if why else ""))


def _short(value: Any, limit: int = 300) -> str:
    text = "the end of the record" if value is None else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _canonical(event: Any) -> str | None:
    """An event as canonical JSON, or None when it is not JSON data.

    Comparing JSON text rather than Python values keeps types strict: ``1``, ``1.0`` and
    ``true`` are different events, and tuples in the engine's events equal lists from a file.
    """
    try:
        return json.dumps(event, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


def verify_replay(
    record: Any,
    type_key: str,
    new_game: Callable[[dict[str, Any]], Any],
    inputs: dict[str, Callable[[Any, dict[str, Any]], None]],
    test_inputs: dict[str, Callable[[Any, dict[str, Any]], None]] | None = None,
    allow_test_events: bool = False,
) -> Any:
    """Re-simulate ``record`` and check every event against what the engine produces.

    ``new_game(start_event)`` builds the game from the first event (a ValueError refuses it);
    ``inputs`` maps the types of the events that are *inputs* (a player's choice) to a function
    applying one to the game. ``test_inputs`` are inputs only tests make (DrachenSchatten's
    ``arrange``, which sets any table at all): a record holding one is refused unless
    ``allow_test_events`` (which only tests set), so that a forged set-up never replays as a game
    (issue #30). Every other event is an effect the engine produces itself, and must equal the
    engine's event exactly.

    A record is accepted when it equals the record of the re-simulated game: the complete
    record of a finished game, or the record of a game in progress, which always ends right
    before a pending decision (the engine runs every effect up to the next decision before
    it records anything else). A record cut inside a run of effects, one with a changed,
    added or missing event, or one that goes on after the game is over is refused with a
    :class:`ReplayError` naming the first event that differs.
    """
    if not isinstance(record, (list, tuple)):
        raise ReplayError(0, "a list of events", type(record).__name__, "a record is a list of JSON events")
    if not record:
        raise ReplayError(0, f"a {type_key!r}: 'start' event", None, "the record is empty")
    start = record[0]
    if not isinstance(start, dict) or start.get(type_key) != "start":
        raise ReplayError(0, f"a {type_key!r}: 'start' event", start)
    try:
        game = new_game(start)
    except (ValueError, TypeError, KeyError) as err:
        raise ReplayError(0, "a valid 'start' event", start, f"{type(err).__name__}: {err}") from None
    i = 0
    while True:
        produced = game.record
        while i < len(produced):  # every event the engine produced so far must be in the record
            want = _canonical(produced[i])
            if i >= len(record):
                raise ReplayError(i, produced[i], None, "the record stops inside a run of engine events")
            # an engine event that is not JSON (never expected) is compared as a value instead
            same = _canonical(record[i]) == want if want is not None else record[i] == produced[i]
            if not same:
                raise ReplayError(i, produced[i], record[i])
            i += 1
        if i == len(record):
            return game
        event = record[i]
        kind = event.get(type_key) if isinstance(event, dict) else None
        kind = kind if isinstance(kind, str) else None  # an unhashable kind ([...]) is no kind
        if game.over:
            raise ReplayError(i, None, event, "the game is over")
        apply = inputs.get(kind)
        if apply is None and kind in (test_inputs or {}):
            if not allow_test_events:
                raise ReplayError(i, f"an input event ({', '.join(map(repr, inputs))})", event,
                                  f"{kind!r} events are test set-ups: a record never replays one outside the tests")
            apply = test_inputs[kind]
        if apply is None:
            raise ReplayError(i, f"an input event ({', '.join(map(repr, inputs))})", event)
        try:
            apply(game, event)
        except (ValueError, TypeError, KeyError) as err:
            raise ReplayError(i, "a legal input", event, f"{type(err).__name__}: {err}") from None
