"""tools/lone_bot.py: the bot's share of an "n-1 candidates against 1 bot" table is what the candidate's
seats and the games without a winner leave."""

from tools.lone_bot import lone_bot_rates


def test_the_lone_bot_gets_what_the_copies_and_the_unwon_games_leave():
    panel = {"mixes": [
        {"players": 4, "k": 3, "opponent": "value", "games": 100, "wins": 70.5, "truncated": 2},
        {"players": 4, "k": 1, "opponent": "value", "games": 100, "wins": 40, "truncated": 0},  # not a crowd
        {"players": 3, "k": 2, "opponent": "value", "games": 100, "wins": 10, "truncated": 0},  # another size
    ]}
    (row,) = lone_bot_rates(panel, players=4)
    assert row["bot"] == "value" and row["win_rate"] == 0.275
    assert row["ci_low"] < 0.275 < row["ci_high"]
