"""Named seed streams: the one place a seed is derived from another.

A run, an evaluation or a table derives each seed it needs from the user's seed and the purpose it
serves, by name, never by adding a constant: offsets collide (``10_000 + t`` for the evaluation at
step ``t`` and ``20_000 + t`` for the panel meet at ``t = 10_000``) and say nothing of what they are
for. ``stream(seed, purpose, index)`` is numpy's ``SeedSequence(seed)`` spawned by the purpose's name
and the index, so distinct purposes and indices give independent streams, and the same arguments the
same seed on every machine.

Game ``g`` of an evaluation is dealt with ``base + g`` (the arena's and the tournament's rule, which
users rely on: ``dragonstones evaluate --seed S`` plays games ``S, S+1, ...``); a derived base is at
most ``2**31 - 1`` so that adding a game index stays inside the bounds table's ``[0, 2**32)``.

>>> from dragonstones_env.seeding import stream
>>> stream(7, "eval", 1024) == stream(7, "eval", 1024) != stream(7, "panel", 1024)
True
"""

from __future__ import annotations

import zlib

import numpy as np

# Every purpose a seed is derived for, and what its index counts.
STREAMS: dict[str, str] = {
    "eval": "a training run's evaluation against its bots during training (index: the learner's step)",
    "panel": "a training run's panel during training (index: the learner's step)",
    "final-bots": "a finished run's evaluation against each of its bots",
    "final-panel": "a finished run's panel",
    "final-copies": "a finished run's table of its own copies",
    "teacher": "the teacher's games a run imitates before it trains",
    "exploit-eval": "an exploiter's evaluations against its target (every evaluation deals the same games)",
    "meta-copies": "the meta-game's games of one member alone against copies of another",
}
SEED_BITS = 31  # a derived base plus a game index stays under 2**32 (bounds.py "seed")


def stream(seed: int, purpose: str, index: int = 0) -> int:
    """The seed for ``purpose``'s ``index``-th use of ``seed`` (a non-negative int below ``2**31``)."""
    if purpose not in STREAMS:
        raise ValueError(f"unknown seed stream {purpose!r}; the streams are {', '.join(STREAMS)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"a seed stream needs a non-negative int seed, got {seed!r}")
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise ValueError(f"a seed stream's index is a non-negative int, got {index!r}")
    key = (zlib.crc32(purpose.encode()), int(index))
    return int(np.random.SeedSequence(int(seed), spawn_key=key).generate_state(1)[0] >> (32 - SEED_BITS))


def seat_seed(game_seed: int | None, seat_index: int) -> int | None:
    """The seed of the policy at ``seat_index`` for the game dealt with ``game_seed``: the one rule every
    table uses (None when the game is not seeded: each policy's generator goes on). Its tag (``0x5EA7``)
    predates the named streams and is kept: the golden streams replay games seeded by it."""
    if game_seed is None:
        return None
    return int(np.random.SeedSequence([int(game_seed), 0x5EA7, int(seat_index)]).generate_state(1)[0])
