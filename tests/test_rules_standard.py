"""Powers of the standard characters of Fist of Dragonstones (F15, F19-F24, with F4)."""

from __future__ import annotations

import pytest

from dragonstones_env.games.dragonstones.cards import COLOURS
from tests.support import (
    at,
    auction_of,
    bid_all,
    choose,
    drain_bank,
    finish_turn,
    make_game,
    options_of,
    run_to,
    set_player,
    stones,
    tiebreak,
    win,
)

pytestmark = pytest.mark.usefixtures("conserved")  # F2 checked on every game of every test


# ---------------------------------------------------------------------------- F19 Witch
def test_f19_witch_winner_takes_a_black_coin():
    """F19: the Witch's winner holds a black coin behind the screen."""
    game = make_game()
    win(game, 1)
    assert [pl.black for pl in game.players] == [0, 1, 0, 0]


def test_f19_black_coin_is_usable_in_a_later_auction_this_turn():
    """F19: the coin can be bid (F10) on any later card of the turn."""
    game = make_game()
    win(game, 1)
    run_to(game, "Thief")
    bid_all(game, [2, (0, 0, 1, 0), 0, 0])
    assert game.players[1].black == 0
    assert auction_of(game, "Thief").outcome == "cursed"


def test_f19_witch_with_nobody_bidding_gives_no_coin():
    """F13, F19: a passed Witch gives nobody a black coin."""
    game = make_game()
    run_to(game, "Thief")
    assert [pl.black for pl in game.players] == [0, 0, 0, 0]


# ---------------------------------------------------------------------------- F20 Magician
def test_f20_magician_payer_picks_any_four_stones():
    """F20, F15: every way to pay 4 of the winner's stones is offered, and taking."""
    game = at("Magician", p0={"stones": (2, 1, 3)})
    win(game, 0)
    assert game.decision.kind == "pay_or_take"
    pays = {(0, 1, 3), (1, 0, 3), (1, 1, 2), (2, 0, 2), (2, 1, 1)}
    assert options_of(game) == {("pay", *s) for s in pays} | {("take",)}
    before = list(game.bank.stones)
    choose(game, ("pay", 2, 0, 2))
    assert stones(game, 0) == (0, 1, 1)
    assert game.players[0].score == 1
    assert game.bank.stones == [before[0] + 2, before[1], before[2] + 2]


def test_f20_magician_may_take_three_silver_instead():
    """F20, F15: with 4 stones, taking the silver is still a choice."""
    game = at("Magician", p0={"stones": (2, 1, 3)})
    win(game, 0)
    choose(game, ("take",))
    assert (game.players[0].silver, game.players[0].score) == (8, 0)
    assert stones(game, 0) == (2, 1, 3)


def test_f20_magician_without_four_stones_takes_silver_automatically():
    """F15, F20: where 4 stones cannot be paid, the 3 silver are taken."""
    game = at("Magician", p0={"stones": (1, 1, 1)})
    win(game, 0)
    assert game.decision.kind == "bid"
    assert (game.players[0].silver, stones(game, 0)) == (8, (1, 1, 1))


def test_f4_magician_takes_what_silver_the_bank_has():
    """F4, F20: the bank has 1 silver left: the taker gets 1."""
    game = at("Magician", p0={"stones": (1, 1, 1)})
    drain_bank(game, "silver", 3)
    set_player(game, 3, silver=game.players[3].silver - 1)
    win(game, 0)
    assert (game.players[0].silver, game.bank.silver) == (6, 0)


# ---------------------------------------------------------------------------- F21 Wizard
def test_f21_wizard_pays_one_stone_of_each_colour():
    """F21: the only payment is one of each colour; it scores 1."""
    game = at("Wizard", p0={"stones": (2, 1, 1)})
    win(game, 0)
    assert options_of(game) == {("pay", 1, 1, 1), ("take",)}
    choose(game, ("pay", 1, 1, 1))
    assert (stones(game, 0), game.players[0].score) == ((1, 0, 0), 1)


def test_f21_wizard_may_take_three_silver():
    """F21, F15: taking is a choice even with the three colours."""
    game = at("Wizard", p0={"stones": (2, 1, 1)})
    win(game, 0)
    choose(game, ("take",))
    assert (stones(game, 0), game.players[0].silver) == ((2, 1, 1), 8)


def test_f21_wizard_lacking_a_colour_takes_silver_automatically():
    """F21, F15: 4 stones but no yellow: the 3 silver are taken."""
    game = at("Wizard", p0={"stones": (3, 1, 0)})
    win(game, 0)
    assert game.decision.kind == "bid"
    assert (stones(game, 0), game.players[0].silver, game.players[0].score) == ((3, 1, 0), 8, 0)


# ---------------------------------------------------------------------------- F22 Sorcerer
def test_f22_sorcerer_pays_four_of_a_colour_he_picks():
    """F22: every colour with 4 stones or more is offered; paying scores 2."""
    game = at("Sorcerer", p0={"stones": (4, 0, 5)})
    win(game, 0)
    assert options_of(game) == {("pay", 4, 0, 0), ("pay", 0, 0, 4), ("take",)}
    choose(game, ("pay", 0, 0, 4))
    assert (stones(game, 0), game.players[0].score) == ((4, 0, 1), 2)


def test_f22_sorcerer_may_take_one_common_gold():
    """F22, F15: taking 1 common gold is a choice."""
    game = at("Sorcerer", p0={"stones": (4, 0, 5)})
    win(game, 0)
    choose(game, ("take",))
    assert (game.players[0].common, game.players[0].score) == (3, 0)


def test_f22_sorcerer_without_four_of_a_colour_takes_common_gold():
    """F22, F15: 3 + 3 + 3 stones are not 4 of a colour: 1 common gold is taken."""
    game = at("Sorcerer", p0={"stones": (3, 3, 3)})
    win(game, 0)
    assert game.decision.kind == "bid"
    assert (game.players[0].common, stones(game, 0)) == (3, (3, 3, 3))


# ---------------------------------------------------------------------------- F23 Thief
def test_f23_thief_steals_from_the_second_highest_bidder():
    """F23: bids 5, 3, 2, 0: only player 1 is second; the thief picks the colour."""
    game = at("Thief", p1={"stones": (1, 2, 0)}, p2={"stones": (3, 3, 3)})
    win_stones = stones(game, 0)
    bid_all(game, [5, 3, 2, 0])
    assert (game.decision.kind, game.decision.card) == ("choose_loot", "Thief")
    assert options_of(game) == {("steal", 1, "red"), ("steal", 1, "blue")}
    choose(game, ("steal", 1, "blue"))
    assert stones(game, 1) == (1, 1, 0)
    assert stones(game, 0) == (win_stones[0], win_stones[1] + 1, win_stones[2])


def test_f23_after_a_tiebreak_second_is_the_best_silver_among_its_losers():
    """F23: three tie at 3; silver 3, 1, 2: player 2 is second, not player 1 nor player 3."""
    game = at("Thief", p1={"stones": (1, 1, 1)}, p2={"stones": (1, 0, 1)}, p3={"stones": (1, 1, 1)})
    bid_all(game, [3, 3, 3, 2])
    tiebreak(game, {0: (3, 0), 1: (1, 0), 2: (2, 0)})
    assert options_of(game) == {("steal", 2, "red"), ("steal", 2, "yellow")}


def test_f23_only_the_winner_bid_so_everyone_else_is_second():
    """F23: with a lone bid, the thief may steal from any other player."""
    game = at("Thief", p1={"stones": (1, 0, 0)}, p2={"stones": (0, 1, 0)}, p3={"stones": (0, 0, 1)})
    win(game, 0)
    assert options_of(game) == {("steal", 1, "red"), ("steal", 2, "blue"), ("steal", 3, "yellow")}


def test_f23_thief_must_pick_a_second_bidder_who_has_stones():
    """F23: players 1 and 2 are second; only player 2 has stones, so only he is offered."""
    game = at("Thief", p1={"stones": (0, 0, 0)}, p2={"stones": (1, 1, 0)})
    bid_all(game, [5, 2, 2, 0])
    assert options_of(game) == {("steal", 2, "red"), ("steal", 2, "blue")}


def test_f23_no_second_bidder_has_stones_the_thief_picks_whom_to_rob_of_a_coin():
    """F23: players 1 and 2 are second and stoneless: a coin from either."""
    game = at("Thief", p1={"stones": (0, 0, 0)}, p2={"stones": (0, 0, 0)})
    bid_all(game, [5, 2, 2, 0])
    assert options_of(game) == {("steal", 1, "coin"), ("steal", 2, "coin")}


def test_f23_stoneless_victim_loses_a_common_gold_first():
    """F23: no stone: one common gold goes to the thief."""
    game = at("Thief", p1={"stones": (0, 0, 0)})
    bid_all(game, [5, 3, 0, 0])
    assert game.decision.kind == "bid"  # a single option is applied by the engine
    assert (game.players[0].common, game.players[1].common) == (3, 1)
    assert game.players[1].fairy == 5


def test_f23_then_a_fairy_gold_from_behind_the_screen_which_becomes_the_thiefs():
    """F23: no stone, no common gold: one fairy gold from behind the screen, the thief's for good."""
    game = at("Thief", p1={"stones": (0, 0, 0), "common": 0})
    bid_all(game, [5, 3, 0, 0])
    assert (game.players[0].fairy, game.players[1].fairy) == (3 + 1, 5 - 1)
    finish_turn(game)
    assert (game.players[0].fairy, game.players[1].fairy) == (9, 7)


def test_f23_then_a_spent_fairy_gold_from_in_front_of_the_screen():
    """F23: nothing behind the screen: one spent fairy gold, the thief's own from then on."""
    game = at("Thief", p1={"stones": (0, 0, 0), "common": 0})
    bid_all(game, [(8, 1, 0, 0), 8, 0, 0])
    assert game.players[1].fairy_spent == 7
    assert game.players[0].fairy + game.players[0].fairy_spent == 9
    finish_turn(game)
    assert (game.players[0].fairy, game.players[1].fairy) == (9, 7)


def test_f23_victim_with_nothing_loses_nothing():
    """F23: no stone, no common gold, no fairy gold at all: nothing is stolen."""
    game = at("Thief", n=3, p1={"stones": (0, 0, 0), "common": 0, "fairy": 0}, p2={"stones": (0, 0, 0)})
    win(game, 0)
    assert options_of(game) == {("steal", 1, "coin"), ("steal", 2, "coin")}
    before = [pl.to_dict() for pl in game.players]
    choose(game, ("steal", 1, "coin"))
    assert [pl.to_dict() for pl in game.players] == before


# ---------------------------------------------------------------------------- F24 Dragons
@pytest.mark.parametrize("colour", COLOURS)
def test_f24_dragon_gives_a_stone_of_its_colour(colour):
    """F24: the Red, Blue or Yellow Dragon gives one stone of its colour."""
    card = f"{colour.capitalize()} Dragon"
    game = at(card)
    before = list(stones(game, 2))
    win(game, 2)
    before[COLOURS.index(colour)] += 1
    assert stones(game, 2) == tuple(before)


@pytest.mark.parametrize("colour", COLOURS)
def test_f24_f4_dragon_gives_nothing_when_the_bank_lacks_its_colour(colour):
    """F24, F4: the bank has no stone of the dragon's colour: no effect."""
    card = f"{colour.capitalize()} Dragon"
    game = at(card)
    drain_bank(game, colour, 3)
    before = stones(game, 2)
    win(game, 2)
    assert stones(game, 2) == before
