"""tools/pool_cells.py: chunks of one cell pool into one count; chunks of different cells, a seed
played twice and an unrotated lone seat are refused."""

import json

import pytest

from tools.pool_cells import PoolError, pool


def chunk(folder, seed, games, winner_of, lineup=("bot", "x", "x", "x"), rotate=True):
    """An evaluation folder of ``games`` games from ``seed``: the lone ``bot`` moves a seat each game."""
    folder.mkdir()
    games_json = []
    for g in range(games):
        seats = list(lineup[1:])
        seats.insert(g % len(lineup) if rotate else 0, lineup[0])
        games_json.append({"game": g, "seed": seed + g, "lineup": seats, "rewards": [0.0] * len(seats),
                           "winners": winner_of(g, seats), "truncated": False, "steps": 100})
    (folder / "games.json").write_text(json.dumps(games_json))
    (folder / "summary.json").write_text(json.dumps(
        {"game": "dragonstones", "players": len(lineup), "games": games, "lineup": list(lineup)}))
    return folder


def test_chunks_pool_into_one_cell_and_a_shared_win_counts_a_share(tmp_path):
    bot_wins = lambda g, seats: [seats.index("bot")] if g % 2 == 0 else [0, 1]  # noqa: E731
    a = chunk(tmp_path / "a", 1000, 8, bot_wins)
    b = chunk(tmp_path / "b", 1008, 4, bot_wins)
    cell = pool([a, b])
    lone, crowd = cell["policies"]
    assert cell["games"] == 12 and cell["seeds"] == [1000, 1011]
    # 6 outright wins; of the 6 shared wins (seats 0 and 1) the bot sits at seat 1 in 3 (g = 1, 5; g = 1)
    shared = sum(1 for g in list(range(8)) + list(range(4)) if g % 2 and g % 4 in (0, 1))
    assert lone["spec"] == "bot" and lone["games"] == 12 and lone["wins"] == 6 + 0.5 * shared
    assert crowd["spec"] == "x" and crowd["games"] == 36 and lone["wins"] + crowd["wins"] == 12
    assert lone["ci_low"] < lone["win_rate"] < lone["ci_high"]


def test_a_seed_played_twice_is_refused(tmp_path):
    a = chunk(tmp_path / "a", 1000, 8, lambda g, s: [0])
    b = chunk(tmp_path / "b", 1004, 8, lambda g, s: [0])
    with pytest.raises(PoolError, match="seed 1004 is played in two chunks"):
        pool([a, b])


def test_chunks_of_different_lineups_are_refused(tmp_path):
    a = chunk(tmp_path / "a", 1000, 4, lambda g, s: [0])
    b = chunk(tmp_path / "b", 2000, 4, lambda g, s: [0], lineup=("bot", "y", "y", "y"))
    with pytest.raises(PoolError, match="a cell pools one line-up"):
        pool([a, b])


def test_a_lone_seat_that_never_moves_is_refused(tmp_path):
    a = chunk(tmp_path / "a", 1000, 8, lambda g, s: [0], rotate=False)
    with pytest.raises(PoolError, match=r"sat \[8, 0, 0, 0\] times"):
        pool([a])


def test_no_folders_is_refused():
    with pytest.raises(PoolError, match="no folders"):
        pool([])
