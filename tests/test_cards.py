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
