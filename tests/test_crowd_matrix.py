"""tools/crowd_matrix.py: one policy alone against n-1 copies of another, read from panels."""

from __future__ import annotations

import json

import pytest

from dragonstones_env.evaluation import panel
from tests.extras import EVAL, EVAL_MODULE
from tools.crowd_matrix import crowd_matrix, main, markdown


def _mix(opponent, k, games, wins, truncated=0, players=4):
    return {"players": players, "opponent": opponent, "k": k, "games": games, "wins": wins, "truncated": truncated}


def _write(folder, candidate, mixes):
    folder.mkdir()
    (folder / "panel.json").write_text(json.dumps({"candidate": candidate, "mixes": mixes}))
    return str(folder)


def test_the_lone_policy_wins_what_the_crowd_and_truncation_leave(tmp_path):
    a = _write(tmp_path / "a", "a", [_mix("b", 1, 10, 9), _mix("b", 3, 10, 6, truncated=1), _mix("a", 3, 10, 8)])
    m = crowd_matrix([a, f"renamed={_write(tmp_path / 'c', 'c', [_mix('a', 3, 20, 5)])}"])
    assert m["rows"]["a"]["b"]["win_rate"] == pytest.approx(0.3)  # 10 games - 6 crowd wins - 1 truncated
    assert m["rows"]["a"]["a"]["win_rate"] == pytest.approx(0.2)
    assert m["worst"] == {"a": "b", "renamed": "a"}  # the crowd's own policy alone is not its worst case
    cell = m["rows"]["renamed"]["a"]
    assert cell["win_rate"] == pytest.approx(0.75) and cell["ci_low"] < 0.75 < cell["ci_high"]
    table = markdown(m)
    assert "| a (10 games) | 0.30 [0.11, 0.60] | 0.20 [0.06, 0.51] | b 0.30 |" in table
    assert "| renamed (20 games) | — | 0.75 [0.53, 0.89] | a 0.75 |" in table


def test_a_real_panel_sums_to_one(tmp_path):
    pytest.importorskip(EVAL_MODULE, reason=EVAL)  # the panel's figure
    out = tmp_path / "panel-heuristic"
    result = panel("heuristic", ["random", "value"], [3], games=6, workers=1, seed=4, out=out, progress=False)
    m = crowd_matrix([str(out)], players=3)
    for mix in result["mixes"]:
        if mix["k"] == 2:
            alone = m["rows"]["heuristic"][mix["opponent"]]["win_rate"]
            assert alone + mix["win_rate"] * 2 + mix["truncated"] / mix["games"] == pytest.approx(1.0)


def test_a_folder_without_a_panel_is_refused_by_name(tmp_path, capsys):
    assert main([str(tmp_path / "nothing")]) == 2
    assert "nothing/panel.json" in capsys.readouterr().err
    bad = _write(tmp_path / "b", "b", [_mix("x", 1, 4, 1)])
    assert main([bad]) == 2
    assert "no mix of 3 copies" in capsys.readouterr().err


def test_the_search_takes_a_row_and_a_column(tmp_path, capsys):
    """``ismcts`` with options is a panel's candidate (its crowd's row) and a --baseline opponent (its
    column) through ``dragonstones evaluate``, at a tiny game count; its seats go through ``decide``
    (``act`` alone raises), so a finished panel is that path's proof."""
    pytest.importorskip(EVAL_MODULE, reason=EVAL)
    from dragonstones_env.evaluation.cli import main as evaluate

    search = "ismcts:simulations=2"
    row, column = tmp_path / "panel-search", tmp_path / "panel-heuristic"
    common = ["--game", "drachenschatten", "--players", "3", "--k", "2", "--games", "3", "--copies", "--no-progress"]
    assert evaluate(["--panel", search, "--baseline", "random", "--out", str(row), *common]) == 0
    assert evaluate(["--panel", "ds-heuristic", "--baseline", search, "--out", str(column), *common]) == 0
    capsys.readouterr()
    m = crowd_matrix([str(row), str(column)], players=3)
    assert search in m["rows"] and search in m["rows"]["ds-heuristic"]
    assert all(cell["games"] == 3 for cells in m["rows"].values() for cell in cells.values())
    assert f"| {search} (3 games) |" in markdown(m)
