"""Named seed streams (dragonstones_env/seeding.py, issue #50): independent by purpose and index, the
same on every run, and the only place a seed is derived by a constant."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import policies
from dragonstones_env.seeding import SEED_BITS, STREAMS, seat_seed, stream

ROOT = Path(__file__).resolve().parents[1]
# A seed made by arithmetic on a literal: `seed + 1`, `cfg.seed * 7`, `seed=10_000 + t`, `EVAL_SEED = 5_000`.
OFFSET = re.compile(r"seed[\w.\]\[]*\s*[+*]\s*\d|seed\s*=\s*\d[\d_]*\s*[+*]|[A-Z_]*SEED\s*=\s*\d")


def test_a_stream_is_the_same_for_the_same_seed_purpose_and_index():
    assert stream(3, "eval", 40_960) == stream(3, "eval", 40_960)
    assert stream(np.int64(3), "eval", np.int64(40_960)) == stream(3, "eval", 40_960)


def test_streams_differ_by_seed_purpose_and_index_and_stay_in_range():
    seeds = {stream(s, p, i) for s in range(3) for p in STREAMS for i in range(20)}
    assert len(seeds) == 3 * len(STREAMS) * 20  # no two collide (the offsets 10_000 + t and 20_000 + t did)
    assert all(0 <= x < 2**SEED_BITS for x in seeds)
    assert max(seeds) + 1_000_000 < 2**32  # a derived base plus a game index stays a valid seed


@pytest.mark.parametrize(("args", "words"), [
    ((0, "evaluation"), "unknown seed stream 'evaluation'; the streams are eval, panel"),
    ((-1, "eval"), "non-negative int seed, got -1"),
    ((1.5, "eval"), "non-negative int seed, got 1.5"),
    ((True, "eval"), "non-negative int seed, got True"),
    ((0, "eval", -2), "index is a non-negative int, got -2"),
])
def test_a_bad_stream_request_names_what_is_allowed(args, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        stream(*args)


def test_the_seat_rule_is_unchanged_and_exported_where_it_was():
    assert policies.seat_seed is seat_seed
    assert seat_seed(None, 2) is None
    assert seat_seed(7, 1) == int(np.random.SeedSequence([7, 0x5EA7, 1]).generate_state(1)[0])


def test_the_offset_pattern_catches_what_it_is_for():
    for bad in ("seed=10_000 + t", "cfg.seed + 1", "seed * 7 + i", "IMITATE_SEED = 5_000", "args.seed+3"):
        assert OFFSET.search(bad), bad
    for good in ('stream(cfg.seed, "eval", t)', "seed + g", "seed=seed + rank", "2**63"):
        assert not OFFSET.search(good), good


def test_no_seed_is_derived_by_a_literal_outside_the_seeding_module():
    found = []
    for folder in ("dragonstones_env", "training"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "seeding.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                if OFFSET.search(code):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "seeds derived by a constant (use dragonstones_env.seeding.stream):\n" + "\n".join(found)
