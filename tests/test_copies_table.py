"""tools/copies_table.py: the auction figures of n-1 copies against one bot add up, and bad input is refused."""

from __future__ import annotations

import pytest

from tools.copies_table import copies_table, main


def test_the_figures_of_a_copies_table_add_up():
    r = copies_table("random", "heuristic", games=4, players=4)
    won = r["auctions_won"]
    # every auction is won by the bot, by one of the 3 copies, or by nobody
    assert 0 < won["bot"] + 3 * won["copy"] <= 1
    assert 0 <= r["tied_copies_only"] <= 1 and 0 <= r["bot_win_rate"] <= 1
    per_game = sum(c["bot"] + 3 * c["copy"] for c in r["cards_per_game"].values())
    assert per_game == pytest.approx((won["bot"] + 3 * won["copy"]) * r["auctions_per_game"])
    gaps = [c["copy"] - c["bot"] for c in r["cards_per_game"].values()]
    assert gaps == sorted(gaps)  # the cards the bot wins more often than one copy first
    assert r == copies_table("random", "heuristic", games=4, players=4)  # seeded: the same games


def test_bad_game_counts_are_refused(capsys):
    with pytest.raises(SystemExit):
        main(["random", "heuristic", "--games", "0"])
    assert "--games must be >= 1, got 0" in capsys.readouterr().err
