"""A few hundred random games over 3-6 players, with both random policies of
``tools.random_games``: none raises, each ends with a winner (F17) or truncation (F18).

The 10,000-game runs are done by the CLI (``python -m tools.random_games``), not here.
"""

from __future__ import annotations

import io
import random

import pytest

from dragonstones_env.games.dragonstones.engine import DEFAULT_MAX_TURNS, WIN_SCORE, Game
from tools.random_games import POLICIES, choose, main, play_game, policy_rng, report, run


def check_result(r: dict, max_turns: int) -> None:
    assert (r["winner"] is None) == r["truncated"], r
    assert 1 <= r["turns"] <= max_turns
    if r["truncated"]:
        assert r["turns"] == max_turns
    else:
        assert r["winner"] in range(r["players"]) and r["winner_score"] >= WIN_SCORE
    assert r["decisions"] >= r["bids"] + r["tiebreaks"] and r["bids"] >= r["players"]
    assert 0 <= r["max_fairy"] <= r["max_fairy_owned"] <= 60 and r["max_silver"] <= 40 and r["max_common"] <= 15


@pytest.mark.parametrize("policy", POLICIES)
def test_random_games_end_with_a_winner_or_truncation(policy):
    results = run(160, seed=1000, players=[3, 4, 5, 6], policy=policy, processes=1)
    assert sorted({r["players"] for r in results}) == [3, 4, 5, 6]
    for r in results:
        check_result(r, DEFAULT_MAX_TURNS)
    assert sum(r["winner"] is not None for r in results) > len(results) // 2


@pytest.mark.parametrize("policy", POLICIES)
def test_short_random_games_truncate(policy):
    """With a small max_turns some games are truncated, and those have no winner (F18)."""
    results = run(60, seed=5000, players=[3, 6], policy=policy, processes=1, max_turns=2)
    for r in results:
        check_result(r, 2)
    assert any(r["truncated"] for r in results)


@pytest.mark.parametrize("policy", POLICIES)
def test_policies_only_choose_legal_options(policy):
    for seed in range(6):
        game = Game(3 + seed % 4, seed=seed, max_turns=8)
        rng = policy_rng(policy, seed)
        while not game.over:
            option = choose(game, rng, policy)
            assert game.is_legal(option), (game.decision, option)
            game.apply(option)


def test_smallbids_bids_small():
    rng = random.Random(0)
    game = Game(4, seed=0)
    fairy = [choose(game, rng, "smallbids")[1] for _ in range(2000)]
    assert sum(f <= 3 for f in fairy) / len(fairy) > 0.8
    uniform = [choose(game, rng, "uniform")[1] for _ in range(2000)]
    assert sum(uniform) > 2 * sum(fairy)


def test_games_are_reproducible_across_processes():
    one = run(12, seed=7, policy="smallbids", processes=1)
    two = run(12, seed=7, policy="smallbids", processes=2)
    assert one == two
    assert play_game(5, 7, "smallbids") == play_game(5, 7, "smallbids")


def test_cli_prints_the_figures(capsys):
    assert main(["--games", "8", "--seed", "3", "--players", "3", "6", "--policy", "uniform",
                 "--processes", "1"]) == 0
    out = capsys.readouterr().out
    assert "8 games, policy uniform" in out
    for needle in ("truncated", "fairy", "silver", ">12", ">16", ">20", ">24", ">30"):
        assert needle in out
    buf = io.StringIO()
    report(run(4, seed=1, players=[4], processes=1), out=buf)
    assert "4 games" in buf.getvalue()
