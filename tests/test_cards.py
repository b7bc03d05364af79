"""Each shipped policy's card lists its cells with intervals, in step with what they are read from.

``tools/champion_card.py --cells`` writes a card's ``cells`` from the card's own panels,
exploiters and search cells, plus the cells measured elsewhere that ``tools/card_cells.json``
lists, each with the doc section its figure is written in.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dragonstones_env import games
from dragonstones_env.policies.registry import shipped, shipped_dir
from tools import champion_card

ROOT = Path(__file__).resolve().parents[1]


def card_of(name: str) -> dict:
    return json.loads((shipped_dir() / name / "card.json").read_text())


@pytest.mark.parametrize("name", shipped())
def test_the_cards_cells_are_what_the_tool_writes(name):
    card = card_of(name)
    assert "cells" in card, f"{name}: no cells; run python -m tools.champion_card policies/{name} --cells"
    wanted = champion_card.cells(card, champion_card.measured_elsewhere(shipped_dir() / name))
    assert card["cells"] == wanted, f"{name}: cells out of step: python -m tools.champion_card policies/{name} --cells"


@pytest.mark.parametrize("name", shipped())
def test_every_cell_has_an_interval_around_its_rate(name):
    for cell in card_of(name)["cells"]:
        low, high = cell["ci95"]
        assert 0 <= low <= cell["win_rate"] <= high <= 1, cell
        assert cell["games"] > 0 and cell["parity"] == round(1 / cell["players"], 4), cell


@pytest.mark.parametrize("name", shipped())
def test_each_bot_of_the_game_has_its_lone_cell_at_four_players(name):
    """What exploits the policy: its game's bot and zoo, each alone against 3 copies, over 1,000 games."""
    card = card_of(name)
    spec = games.get(card["env"])
    lone = {c["who"]: c for c in card["cells"] if c["players"] == 4 and c["against"] == "3 copies"}
    for bot in (spec.default_bot, *spec.zoo):
        assert bot in lone and lone[bot]["games"] >= 1000, f"{name}: no 1,000-game cell of {bot} against 3 copies"


def _figure(cell: dict) -> str:
    return f"{cell['win_rate']:.3f} [{cell['ci95'][0]:.3f}, {cell['ci95'][1]:.3f}]"


@pytest.mark.parametrize("name", shipped())
def test_a_cell_measured_elsewhere_is_written_where_it_says(name):
    for cell in champion_card.measured_elsewhere(shipped_dir() / name):
        page, _, _section = cell["source"].partition("#")
        text = (ROOT / page).read_text().replace("**", "")
        assert _figure(cell) in text, f"{name}: {_figure(cell)} is not in {page}"


def test_the_tool_reads_a_lone_bots_cell_from_a_panels_mix():
    mix = {"players": 4, "k": 3, "opponent": "value", "games": 100, "wins": 60.0, "truncated": 2,
           "win_rate": 0.2, "ci_low": 0.1, "ci_high": 0.3}
    rows = champion_card.cells({"evaluation_panel": {"panel_4p_100_games": {"mixes": [mix]}}}, [])
    assert [(r["who"], r["against"], r["games"], r["win_rate"]) for r in rows] == [("value", "3 copies", 100, 0.38)]
    assert re.fullmatch(r"0\.380 \[0\.\d{3}, 0\.\d{3}\]", _figure(rows[0]))


def _copies_folder(folder: Path, seed: int, games: int, spec: str = "bot", truncated_at: int = -1,
                   turns: bool = True) -> Path:
    """An evaluation folder of ``games`` games of 4 copies of ``spec`` from ``seed``."""
    folder.mkdir()
    rows = [{"game": g, "seed": seed + g, "lineup": [spec] * 4, "rewards": [0.0] * 4, "winners": [] if g == truncated_at
             else [g % 4], "truncated": g == truncated_at, "steps": 60 + g} | ({"turns": 10 + g % 3} if turns else {})
            for g in range(games)]
    (folder / "games.json").write_text(json.dumps(rows))
    (folder / "summary.json").write_text(json.dumps({"game": "drachenschatten", "players": 4, "games": games,
                                                     "lineup": [spec] * 4}))
    return folder


def test_chunks_of_copies_become_one_all_copies_table(tmp_path):
    """A policy too slow for a panel in one sitting: its copies' evaluations, played in chunks, are one
    table of the card, which the copies test of tests/test_policies.py reads as a panel's."""
    a = _copies_folder(tmp_path / "a", 1000, 6, truncated_at=2)
    b = _copies_folder(tmp_path / "b", 1006, 3)
    name, entry = champion_card.copies_entry([a, b])
    (table,) = entry["tables"]
    assert name == "copies_4p_9_games" and entry["seeds"] == [1000, 1008] and entry["folder"] == ["a", "b"]
    assert (table["role"], table["policy"], table["games"], table["truncated"]) == ("candidate", "bot", 9, 1)
    assert table["mean_turns"] == sum(10 + g % 3 for g in [*range(6), *range(3)]) / 9
    assert champion_card.cells({"evaluation_panel": {name: entry}}, []) == []  # a length, not a win rate


def test_a_copies_table_refuses_mixed_seats_overlapping_chunks_and_games_without_turns(tmp_path):
    mixed = _copies_folder(tmp_path / "mixed", 0, 4)
    rows = json.loads((mixed / "games.json").read_text())
    for row in rows:
        row["lineup"][row["game"] % 4] = "other"
    (mixed / "games.json").write_text(json.dumps(rows))
    (mixed / "summary.json").write_text(json.dumps({"game": "drachenschatten", "players": 4, "games": 4,
                                                   "lineup": ["other", "bot", "bot", "bot"]}))
    with pytest.raises(champion_card.PoolError, match="an all-copies table seats one spec"):
        champion_card.copies_entry([mixed])
    a, b = _copies_folder(tmp_path / "a", 0, 4), _copies_folder(tmp_path / "b", 2, 4)
    with pytest.raises(champion_card.PoolError, match="seed 2 is played in two chunks"):
        champion_card.copies_entry([a, b])
    old = _copies_folder(tmp_path / "old", 0, 4, turns=False)
    with pytest.raises(champion_card.PoolError, match="without the games' turns"):
        champion_card.copies_entry([old])
