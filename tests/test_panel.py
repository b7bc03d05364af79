"""The panel (dragonstones_env.evaluation --panel): mixes, win accounting, robustness, determinism, outputs, errors."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections import Counter

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")

from dragonstones_env import games
from dragonstones_env import registry as game_registry
from dragonstones_env.evaluation import (
    EvaluationError,
    main,
    mix_result,
    mix_seats,
    panel,
    panel_games,
    panel_opponents,
    robustness,
    worst_mix,
    write_panel,
)
from dragonstones_env.policies import PolicyError, zoo

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs():
    """The same small panel (heuristic against random, 3 players) with 1 and with 2 workers."""
    one = panel("heuristic", ["random"], [3], games=6, workers=1, seed=3)
    two = panel("heuristic", ["random"], [3], games=6, workers=2, seed=3)
    return one, two


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_mixes_cover_every_seat_position_equally(n):
    for k in range(1, n):
        games = mix_seats("cand", "opp", n, k, 2 * n)
        assert all(Counter(seats) == {"cand": k, "opp": n - k} for seats, _ in games)
        assert all(mine == tuple(i for i, s in enumerate(seats) if s == "cand") for seats, mine in games)
        per_seat = Counter(i for _, mine in games for i in mine)
        assert per_seat == dict.fromkeys(range(n), 2 * k)  # every position, k times per rotation
    assert panel_games(200, 3) == 201 and panel_games(200, 4) == 200 and panel_games(5, 6) == 6


def test_panel_plays_every_k_against_every_opponent(runs):
    one, _ = runs
    assert [(r["opponent"], r["k"]) for r in one["mixes"]] == [("random", 1), ("random", 2)]
    assert [(r["policy"], r["role"]) for r in one["tables"]] == [("heuristic", "candidate"), ("random", "opponent")]
    assert all(r["games"] == 6 for r in one["mixes"] + one["tables"])
    result = panel("random", ["random"], [3, 4], games=3, seed=1, ks=None)
    assert sorted((r["players"], r["k"]) for r in result["mixes"]) == [(3, 1), (3, 2), (4, 1), (4, 2), (4, 3)]
    assert all(r["games"] == r["players"] for r in result["mixes"])  # 3 games rounded up to a whole rotation


def test_copies_chooses_the_opponents_all_copies_tables(runs):
    only_candidate = panel("heuristic", ["random"], [3], games=6, seed=3, copies=())
    assert [r["role"] for r in only_candidate["tables"]] == ["candidate"]
    assert only_candidate["mixes"] == runs[0]["mixes"]  # the mixes do not depend on it
    assert only_candidate["robustness"] == runs[0]["robustness"]


def test_win_accounting_on_a_stubbed_table():
    # 3 seats, the candidate in k=2 of them; a shared win counts 1/winners to each winner.
    seats = [(0, 1), (1, 2), (0, 2), (0, 1)]
    records = [{"winners": [0]}, {"winners": [0]}, {"winners": [0, 1]}, {"winners": []}]  # last one truncated
    row = mix_result(records, seats, players=3, k=2)
    assert row["wins"] == pytest.approx(1 + 0 + 0.5 + 0)
    assert row["seat_games"] == 8
    assert row["win_rate"] == pytest.approx(1.5 / 8)
    assert row["parity"] == pytest.approx(1 / 3)
    assert row["ratio"] == pytest.approx(1.5 / 8 * 3)
    assert row["ci_low"] <= row["win_rate"] <= row["ci_high"] <= 1 / 2  # k=2 seats share one win per game
    assert row["ratio_low"] == pytest.approx(row["ci_low"] * 3)
    assert row["ratio_high"] == pytest.approx(row["ci_high"] * 3)


def test_robustness_is_the_worst_mix():
    result = {"mixes": [{"ratio": 1.2, "k": 1}, {"ratio": 0.4, "k": 2}, {"ratio": 0.9, "k": 3}]}
    assert robustness(result) == 0.4
    assert worst_mix(result)["k"] == 2
    with pytest.raises(EvaluationError, match="no mixes"):
        robustness({"mixes": []})


def test_panel_reports_its_worst_mix(runs):
    one, _ = runs
    ratios = [r["ratio"] for r in one["mixes"]]
    assert robustness(one) == min(ratios) == one["robustness"]["ratio"]
    worst = one["mixes"][ratios.index(min(ratios))]
    assert (one["robustness"]["opponent"], one["robustness"]["k"]) == (worst["opponent"], worst["k"])
    # the heuristic beats random bots: above parity in every mix
    assert min(ratios) > 1.0


def test_results_do_not_depend_on_the_worker_count(runs):
    one, two = runs
    assert one["mixes"] == two["mixes"]
    assert one["tables"] == two["tables"]
    other = panel("heuristic", ["random"], [3], games=6, workers=1, seed=4)
    assert other["tables"] != one["tables"]  # the seed does change them


def test_all_copies_tables_measure_length_stalling_and_truncation(runs):
    one, _ = runs
    for row in one["tables"]:
        assert row["mean_turns"] >= 1 and row["std_turns"] >= 0
        assert row["turns_ci"][0] <= row["mean_turns"] <= row["turns_ci"][1]
        assert row["auctions"] > 0 and 0 <= row["unwon_auctions"] <= row["auctions"]
        assert row["unwon_share"] == pytest.approx(row["unwon_auctions"] / row["auctions"])
        assert 0 <= row["truncation_rate"] <= 1
    random_table = one["tables"][1]
    assert random_table["unwon_share"] > 0  # random bidders tie and pass
    ds = panel("ds-heuristic", ["random"], [2], games=2, game="drachenschatten")
    assert all(row["unwon_share"] is None for row in ds["tables"])
    assert ds["stall_signal"].startswith("n/a")


def test_outputs_are_written(runs, tmp_path):
    one, _ = runs
    paths = write_panel(one, tmp_path)
    assert sorted(p.name for p in paths) == ["panel.csv", "panel.json", "panel.md", "panel_3p.png"]
    md = (tmp_path / "panel.md").read_text()
    assert f"**Robustness: {one['robustness']['ratio']:.3f}**" in md and "| random | 2 |" in md
    assert "at least 1000" in md
    rows = list(csv.DictReader((tmp_path / "panel.csv").open()))
    assert [r["kind"] for r in rows] == ["mix", "mix", "all-copies", "all-copies"]
    assert float(rows[0]["ratio"]) == pytest.approx(one["mixes"][0]["ratio"])
    assert json.loads((tmp_path / "panel.json").read_text())["mixes"] == one["mixes"]
    assert (tmp_path / "panel_3p.png").read_bytes()[:8] == PNG


def test_command_line_writes_the_panel(tmp_path, capsys):
    out = tmp_path / "p"
    assert main(["--panel", "heuristic", "--players", "3", "--games", "3", "--k", "1", "--quiet",
                 "--out", str(out)]) == 0
    assert "Robustness" in capsys.readouterr().out
    data = json.loads((out / "panel.json").read_text())
    assert data["opponents"] == [*zoo("dragonstones"), "heuristic", "random"] and {r["k"] for r in data["mixes"]} == {1}


def test_opponents_are_the_zoo_the_heuristic_random_and_baselines(monkeypatch):
    assert panel_opponents("dragonstones") == [*zoo("dragonstones"), "heuristic", "random"]
    assert panel_opponents("drachenschatten", ["champion", "random"]) == ["ds-heuristic", "random", "champion"]
    # a game's zoo is its GameSpec's (the registry's one place); patch a copy of the spec in
    spec = dataclasses.replace(games.get("dragonstones"), zoo=("value", "miser"))
    monkeypatch.setitem(game_registry._GAMES, "dragonstones", spec)
    assert panel_opponents("dragonstones", ["heuristic"]) == ["value", "miser", "heuristic", "random"]
    with pytest.raises(PolicyError, match=r"unknown game 'chess'.*dragonstones"):
        zoo("chess")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"ks": [3]}, EvaluationError, r"k=3 is impossible at a 3-player table: the candidate takes k = 1\.\.2"),
        ({"ks": [0]}, EvaluationError, r"k=0 is impossible"),
        ({"players": [7]}, games.TableSizeError, r"players must be an integer from 3 to 6 for Fist of Dragon"),
        ({"opponents": ["nope"]}, PolicyError, r"unknown policy spec 'nope'.*heuristic"),
        ({"candidate": "nope"}, PolicyError, r"unknown policy spec 'nope'"),
        ({"game": "chess"}, games.UnknownGameError, r"unknown game 'chess'; the games are dragonstones, drachen"),
        ({"game": "drachenschatten", "players": [5]}, games.TableSizeError, r"from 2 to 4 for DrachenSchatten, got 5"),
        ({"games": 0}, EvaluationError, r"games: must be an integer in \[1, 1000000\], got 0"),
        ({"opponents": []}, EvaluationError, r"no opponents"),
    ],
)
def test_bad_input_names_what_is_wrong(kwargs, error, message):
    args = {"candidate": "heuristic", "opponents": ["random"], "players": [3], "games": 1, **kwargs}
    with pytest.raises(error, match=message):
        panel(args.pop("candidate"), args.pop("opponents"), args.pop("players"), **args)


def test_command_line_errors(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--panel", "heuristic", "--players", "4", "--k", "4"])
    assert exit_info.value.code == 2
    assert "k=4 is impossible at a 4-player table" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--panel", "heuristic", "--game", "chess"])
    assert "invalid choice: 'chess'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--policies", "heuristic", "--players", "3", "4"])
    assert "several go with --panel" in capsys.readouterr().err
