"""Pieces shared by every game engine in this package (no RL imports here).

A game engine is a plain object with this protocol, modelled on OpenSpiel's `State`:

* ``decision`` -> :class:`Decision` or ``None`` once the game is over: who must decide
  now and what kind of decision it is;
* ``legal_options()`` -> list of options (tuples whose first item names the option kind,
  e.g. ``("colour", "red")``); JSON-friendly, hashable, comparable;
* ``is_legal(option)`` -> bool, and ``apply(option)``: applies one legal option and
  advances the game to the next decision. An illegal option raises
  :class:`IllegalOptionError` and leaves the state untouched;
* ``state_dict()`` -> JSON-serialisable snapshot; ``record`` -> append-only list of JSON
  events, from which the game's ``replay(record)`` rebuilds the identical state;
* ``copy.deepcopy(state)`` gives an independent state that continues identically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Option = tuple
_PLAIN = (int, str)


@dataclass(frozen=True)
class Decision:
    """Who must decide now, and what about.

    ``kind`` names the decision (``"bid"``, ``"troll_colour"``, ...); ``card`` is the
    character (or object) the decision belongs to, if any.
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


def as_option(option: Any) -> Option:
    """Normalise an option (a list from JSON, or a tuple) to a tuple."""
    if type(option) is tuple and all(type(x) in _PLAIN for x in option):
        return option  # the common case, kept fast
    if isinstance(option, (tuple, list)):
        # numpy integers (from arrays of actions) become ints, so that records stay JSON
        return tuple(int(x) if isinstance(x, np.integer) else x for x in option)
    raise TypeError(f"an option is a tuple such as ('colour', 'red'), not {type(option).__name__}")
