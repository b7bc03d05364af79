"""Every seed the package derives from another seed, by name: the one home of the seeding conventions.

A run, an evaluation or a tool holds one root seed; whatever else it needs seeded (the games of an
evaluation at step ``t``, the teacher's demonstrations, a panel) is drawn from a *named stream*:
``stream_seed(root, "final-eval")``, ``stream_seed(root, "eval", t)``. A stream is
``numpy.random.SeedSequence(root, spawn_key=(STREAMS[purpose], *index))``, so two purposes never
share games by accident, which fixed offsets did not promise (``seed + 1`` of one run was
``seed + 0`` of the next, ``10_000 + t`` met ``20_000 + t'`` at ``t = t' + 10_000``).

Two rules are not streams and stay as they are, because games already recorded and the golden
streams depend on them:

* game ``g`` of a batch is dealt with ``seed + g`` (a vectorized env's table ``k`` is reset with
  ``seed + k``, as Gymnasium and SB3 do), written where the batch is played;
* the policy at seat ``i`` of a game dealt with ``game_seed`` plays from :func:`seat_seed`, the one
  reseeding rule of every table (evaluations, the app, the terminal, training's opponents).

Derived seeds are below ``2**31``: a batch of games ``seed + g`` stays below ``2**32``, which
``numpy.random.seed`` (SB3's ``set_random_seed``) and torch accept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import check_seed

# purpose -> spawn key. Data, not code: a new purpose is a new line with a new number; a number is
# never reused or renumbered (that would change which games every run already made plays).
STREAMS: dict[str, int] = {
    "eval": 1,           # a trainer's evaluation against the heuristic at step t (index t)
    "panel": 2,          # a trainer's robustness panel at step t (index t)
    "final-eval": 3,     # a trainer's final evaluation against each opponent
    "final-panel": 4,    # the SB3 trainer's final panel
    "final-copies": 5,   # the final table of the learner's copies
    "imitate": 6,        # the teacher's demonstration games (training/imitate.py)
    "meta-alone": 7,     # the meta-game's alone-vs-copies games (training/meta.py)
    "repeat": 8,         # a benchmark's repeated measurement r of the same workload (index r)
}

# The root of the streams every run shares: a trainer's evaluation at step t plays the same games
# in every run (whatever the run's seed), so two runs' learning curves compare on the same deals.
SHARED = 0

SEAT_TAG = 0x5EA7  # mixed into seat_seed's entropy: a seat's seed differs from the game's own


def _index(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def stream_seed(seed: int, purpose: str, *index: int) -> int:
    """The seed of ``purpose``'s draw ``index`` (none, or ints such as a step or a game and a seat)
    from the root ``seed``: the same arguments give the same seed on every machine and version.

    Raises ValueError naming a purpose not in :data:`STREAMS` (and the ones there are) or a seed or
    index that is not a non-negative int."""
    key = STREAMS.get(purpose)
    if key is None:
        raise ValueError(f"unknown seed stream {purpose!r}: the streams are {sorted(STREAMS)} "
                         "(a new purpose gets its own line in dragonstones_env/core/seeding.py)")
    root = check_seed(seed)
    spawn = (key, *(_index(i, f"the index of seed stream {purpose!r}") for i in index))
    return int(np.random.SeedSequence(root, spawn_key=spawn).generate_state(1)[0] >> 1)


def seat_seed(game_seed: int | None, seat_index: int) -> int | None:
    """The seed of the policy at ``seat_index`` for the game dealt with ``game_seed``: the one rule every
    table uses (None when the game is not seeded: each policy's generator goes on)."""
    if game_seed is None:
        return None
    return int(np.random.SeedSequence([int(game_seed), SEAT_TAG, int(seat_index)]).generate_state(1)[0])
