"""Bad input to the Fist of Dragonstones engine: player counts (F1) and illegal options.

An illegal option raises IllegalOptionError (a ValueError) naming the decision and the legal
options, and leaves the state untouched.
"""

from __future__ import annotations

import pytest

from dragonstones_env.core import IllegalOptionError
from dragonstones_env.games.dragonstones.engine import Game
from tests.support import at, choose, make_game, run_to, set_player, win

pytestmark = pytest.mark.usefixtures("conserved")  # F2 checked on every game of every test


@pytest.mark.parametrize("n", [2, 7, 0, -3, "4", 4.0, True, None])
def test_f1_wrong_player_count_is_a_value_error(n):
    """F1: 3 to 6 players, as an int."""
    with pytest.raises(ValueError, match="num_players"):
        Game(n, seed=0)


@pytest.mark.parametrize("n", [3, 6])
def test_f1_three_to_six_players(n):
    """F1: seats 0..n-1; the first decision is seat 0's bid on the Witch (F8)."""
    game = make_game(n)
    assert len(game.players) == n
    assert (game.decision.kind, game.decision.player, game.decision.card) == ("bid", 0, "Witch")


def assert_rejected(game, option, *in_message):
    """The option raises a ValueError naming the decision, and the state does not change."""
    before, record = game.to_json(), len(game.record)
    with pytest.raises(ValueError) as caught:
        game.apply(option)
    assert isinstance(caught.value, IllegalOptionError)
    message = str(caught.value)
    for text in in_message:
        assert text in message
    assert game.to_json() == before
    assert len(game.record) == record
    return caught.value


def test_f10_illegal_bid_names_the_decision_and_the_legal_options():
    """F10: 9 fairy gold with 8 behind the screen; the error tells what is legal."""
    game = make_game()
    err = assert_rejected(game, ("bid", 9, 0, 0, 0), "'bid'", "player 0", "Witch", "legal options")
    assert ("bid", 8, 2, 0, 0) in err.legal
    assert err.decision == game.decision


def test_f41_illegal_choice_names_the_decision_and_its_options():
    """F41: the Troll needs one of the three colours."""
    game = at("Troll")
    win(game, 1)
    err = assert_rejected(game, ("colour", "purple"), "'choose_colour' of player 1 (Troll)", "('colour', 'red')")
    assert set(err.legal) == {("colour", "red"), ("colour", "blue"), ("colour", "yellow")}


def test_option_of_another_players_decision_is_illegal():
    """F10 then F41: a bid where the Troll's colour is asked is refused."""
    game = at("Troll")
    win(game, 1)
    assert_rejected(game, ("bid", 0, 0, 0, 0), "choose_colour", "(Troll)")


@pytest.mark.parametrize(
    "option",
    [
        ("bid", 1, 0, 0),  # too short
        ("bid", 1, 0, 0, 0, 0),  # too long
        ("bid", "1", 0, 0, 0),
        ("bid", 1.0, 0, 0, 0),
        ("bid", True, 0, 0, 0),
        ("tiebreak", 1, 0),
        ("bid",),
        (),
        "bid",
        None,
        {"bid": 1},
        42,
    ],
)
def test_f10_wrongly_shaped_bids_are_value_errors(option):
    """F10: a bid is ('bid', fairy, common, black, amulet) with ints; anything else is refused."""
    game = make_game()
    assert_rejected(game, option, "'bid'")
    assert not game.is_legal(option)


def test_f10_a_bid_may_come_as_a_json_list():
    """F10: options read from JSON are lists; they are accepted as tuples."""
    game = make_game()
    choose(game, ["bid", 2, 0, 0, 0])
    assert game.decision.player == 1


@pytest.mark.parametrize("option", [("tiebreak", 1), ("tiebreak", "1", 0), ("bid", 1, 0, 0, 0), ("tiebreak", 0, 2)])
def test_f14_wrongly_shaped_tiebreak_bids_are_value_errors(option):
    """F14: a tie-break bid is ('tiebreak', silver, amulet) with ints."""
    game = make_game()
    set_player(game, 0, amulets=2)
    run_to(game, "Red Dragon")
    choose(game, ("bid", 3, 0, 0, 0))
    choose(game, ("bid", 3, 0, 0, 0))
    choose(game, ("bid", 0, 0, 0, 0))
    choose(game, ("bid", 0, 0, 0, 0))
    assert game.decision.kind == "tiebreak"
    assert_rejected(game, option, "'tiebreak'")


@pytest.mark.parametrize("option", [("colour",), ("colour", "red", "blue"), ("colour", 0), ["colour"]])
def test_f41_wrongly_shaped_choices_are_value_errors(option):
    """F41: ('colour', name) only."""
    game = at("Troll")
    win(game, 1)
    assert_rejected(game, option, "choose_colour", "(Troll)")


def test_f17_no_option_is_legal_once_the_game_is_over():
    """F17: after the win every option is refused, and the state stays as it is."""
    game = at("Quack Wizard")
    set_player(game, 0, score=2)
    win(game, 0)
    assert game.over
    assert_rejected(game, ("bid", 0, 0, 0, 0), "game is over")
