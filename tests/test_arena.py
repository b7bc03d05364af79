"""The arena's tables: a table of copies counts the games it leaves to the step limit."""

from __future__ import annotations

from functools import partial

from dragonstones_env.games.drachenschatten import env as ds_env
from dragonstones_env.play.arena import copies_match, copies_summary
from dragonstones_env.policies import RandomPolicy


def test_a_table_of_copies_counts_every_game_cut_off_at_the_step_limit():
    copies = [RandomPolicy(i) for i in range(3)]
    cut = copies_match(partial(ds_env, num_players=3, max_steps=7), copies, games=4, seed=1)
    assert cut == {"players": 3, "games": 4, "truncated": 4, "mean_steps": 7.0}
    assert copies_summary(cut).startswith("3 copies of the learner left 4 of 4 games to the step limit (a stall")


def test_a_table_of_copies_that_finishes_reports_none_and_repeats_with_its_seed():
    def table():
        return copies_match(partial(ds_env, num_players=3), [RandomPolicy(i) for i in range(3)], games=5, seed=3)
    first = table()
    assert first["truncated"] == 0 and 7 < first["mean_steps"] < 1000
    assert table() == first
    assert copies_summary(first, "P") == "3 copies of P left 0 of 5 games to the step limit"
