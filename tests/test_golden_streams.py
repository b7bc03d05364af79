"""The golden action streams (tests/golden/streams.json.gz, written by tools/golden_streams.py).

Each stream is a whole game played by fixed, seeded policies (the shipped champion, the
heuristics, random) at 2 to 6 players of both games. Replaying it must give the same action at
every step and the same final state and record: refactorings keep the rules, the layouts and
the champion's play exactly. A ruling that changes games on purpose re-records them with
``python -m tools.golden_streams --only KEY`` (or ``--game``) and says so in its commit.
"""

import pytest

from tools import golden_streams as G

GOLDEN = G.load()


def test_the_golden_file_holds_every_planned_game():
    assert sorted(GOLDEN) == sorted(G.key(*t) for t in G.all_keys())


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_replay_is_identical(key):
    want = GOLDEN[key]
    got = G.play(want["game"], want["players"], want["seed"])
    assert got["lineup"] == want["lineup"]
    n = next((i for i, (a, b) in enumerate(zip(got["actions"], want["actions"], strict=False)) if a != b), None)
    assert n is None, f"{key}: action {n} differs ({got['actions'][n]} != {want['actions'][n]})"
    assert len(got["actions"]) == len(want["actions"])
    assert got == want
