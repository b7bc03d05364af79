"""A policy's guard against the one loop DrachenSchatten's rules allow (D4).

A key makes any used object but itself ready (D4), so a player holding two keys can make each ready
with the other for ever: the state after two restores is the state before them. The rules allow it,
so the env offers those actions and ``max_steps`` cuts such a game off with no winner (the env's
card). A trained policy that meets the loop's state rarely in training can come to take it with a
probability of 0.99999 (docs/experiments.md, "Paying a cut-off game as a loss"), and no reward
reaches a choice that sure. So the choice not to repeat is made here, as a rule a policy may
follow: :func:`loop_guard` drops the ``use`` actions of every card type the acting player already
used ``limit`` times this turn (the observation's ``object_uses``, v1). A turn then holds at most
``limit`` uses of each object type, and a game ends.

It never empties a decision: a ``use`` is only offered in a ``turn`` decision, where the mandatory
turn-over or ``end_turn`` is legal as well (D3, D7); a row it would empty is left as it was.
"""

from __future__ import annotations

import numpy as np

from .actions import CODEC, NUM_ACTIONS
from .observation import MAX_OBJECT_USES, reader

# The card type each action uses (its option is ("use", card type, *target)), or -1.
USED_TYPE = np.array([opt[1] if opt[0] == "use" else -1 for opt in map(CODEC.relative, range(NUM_ACTIONS))],
                     np.intp)
_USES = np.flatnonzero(USED_TYPE >= 0)
_READER = reader((), arrays=("object_uses",))

LIMITS = range(1, MAX_OBJECT_USES + 1)  # the count saturates at MAX_OBJECT_USES


def loop_guard(observations: np.ndarray, masks: np.ndarray, limit: int) -> np.ndarray:
    """``masks`` (a batch, one row per observation) without the ``use`` actions of the card types the
    acting player has used ``limit`` times or more this turn; a row left with no action is kept whole."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit not in LIMITS:
        raise ValueError(f"loop_guard: limit must be an int in {LIMITS.start}..{LIMITS.stop - 1}, got {limit!r}")
    uses = _READER.arrays(np.asarray(observations, np.float32), "object_uses")  # (rows, card types)
    spent = uses[:, USED_TYPE[_USES]] >= limit  # (rows, use actions)
    if not spent.any():
        return masks
    guarded = np.array(masks, copy=True)
    guarded[:, _USES] = np.where(spent, 0, guarded[:, _USES])
    empty = ~guarded.any(axis=1)
    guarded[empty] = masks[empty]
    return guarded
