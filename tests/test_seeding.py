"""The named seed streams of dragonstones_env/core/seeding.py, and that no seed offset lives elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dragonstones_env import policies
from dragonstones_env.core import seeding
from dragonstones_env.core.seeding import STREAMS, seat_seed, stream_seed

ROOT = Path(__file__).resolve().parents[1]


def test_a_stream_is_the_same_seed_every_time_and_machine():
    # pinned: a changed derivation would silently change which games every evaluation plays
    assert stream_seed(0, "eval", 0) == stream_seed(0, "eval", 0)
    assert [stream_seed(0, "eval", t) for t in (0, 1)] == [1976665982, 1806813825]
    assert stream_seed(7, "final-eval") == 1921100091


def test_streams_differ_by_purpose_index_and_root():
    seeds = {stream_seed(root, purpose, i) for root in (0, 1) for purpose in STREAMS for i in range(50)}
    assert len(seeds) == 2 * len(STREAMS) * 50
    assert all(0 <= s < 2**31 for s in seeds)  # a batch seed + g stays a valid numpy/torch seed


def test_the_spawn_keys_are_distinct():
    assert len(set(STREAMS.values())) == len(STREAMS)


@pytest.mark.parametrize("args, words", [
    ((0, "evaluation"), ["unknown seed stream 'evaluation'", "'eval'"]),
    ((-1, "eval"), ["seed must be a non-negative integer"]),
    ((0, "eval", -3), ["index of seed stream 'eval'", "-3"]),
    ((0, "eval", 1.5), ["index of seed stream 'eval'"]),
    ((True, "eval"), ["seed must be"]),
])
def test_bad_stream_arguments_are_named(args, words):
    with pytest.raises(ValueError) as err:
        stream_seed(*args)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_seat_seed_is_the_old_rule_bit_for_bit():
    # the values of policies/base.py's seat_seed before it moved here: every recorded game depends on them
    assert [seat_seed(0, i) for i in range(3)] == [136000000, 2844300890, 1789835731]
    assert seat_seed(None, 2) is None
    assert policies.seat_seed is seeding.seat_seed


# Seed arithmetic with a literal: an offset (seed + 1, 10_000 + t, seed + 1_000_000) or a scale
# (1000 * seed, seed * 7) picking a stream by hand. A loop's variable index (seed + g) is a batch's
# game, the env's own convention, and is allowed; so is deriving something else from a seed (3 + seed % 4).
OFFSET = re.compile(r"\bseed\w*\s*[-+*]\s*\(?\d"          # seed + 1, cfg.seed * 7, seed + 100 * g
                    r"|\d\s*\*\s*\(?[\w.]*seed\b"          # 1000 * seed
                    r"|\b\d[\d_]*\s*\+\s*(t|steps|step)\b"  # 10_000 + t
                    r"|\b\d[\d_]*\s*\+\s*[\w.]*seed\b(?!\s*%)"  # 20_000 + seed (not 3 + seed % 4)
                    r"|\b[A-Z_]*SEED\w*\s*=\s*\d")         # IMITATE_SEED = 5_000
SCANNED = ("dragonstones_env", "training", "tools")


def offsets_in(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if OFFSET.search(line.split("#")[0])]


def test_the_scan_finds_each_kind_of_offset():
    # the patterns the streams replaced, so the scan below can fail
    found = offsets_in("a(seed * 7 + i)\nb(10_000 + t)\nc(seed=20_000 + steps)\nd(cfg.seed + 1)\n"
                       "e(seed + 1_000_000)\nIMITATE_SEED = 5_000\nf(1000 * seed + i)\ng(args.seed + 1000 * r)\n")
    assert len(found) == 8, found
    assert offsets_in("env.reset(seed=seed + g)\nn = 3 + seed % 4\n# seed + 1 in a comment\n") == []


def test_no_seed_offset_literal_outside_the_seeding_module():
    found = []
    for top in SCANNED:
        for path in (ROOT / top).rglob("*.py"):
            if path == ROOT / "dragonstones_env" / "core" / "seeding.py":
                continue
            found += [f"{path.relative_to(ROOT)}: {line}" for line in offsets_in(path.read_text())]
    assert not found, "use a named stream of dragonstones_env/core/seeding.py:\n" + "\n".join(found)
