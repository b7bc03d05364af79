"""Powers of the special characters of Fist of Dragonstones (F6, F25-F42 with F4).

The Doppelganger, Ghost, Goblin and Imp, which use other powers, are in test_rules_copiers.py.
"""

from __future__ import annotations

import pytest

from dragonstones_env.games.dragonstones.cards import COLOURS
from tests.support import (
    at,
    bank_stones,
    bid_all,
    choose,
    drain_bank,
    finish_turn,
    options_of,
    rig_stone_draws,
    run_to,
    set_bank_stones,
    set_player,
    stones,
    win,
)

pytestmark = pytest.mark.usefixtures("conserved")  # F2 checked on every game of every test


def coins(game, p):
    pl = game.players[p]
    return {"fairy": pl.fairy, "common": pl.common, "silver": pl.silver, "amulets": pl.amulets}


# ---------------------------------------------------------------------------- F25 Alchemist
def test_f25_alchemist_takes_three_common_gold():
    """F25: +3 common gold from the bank."""
    game = at("Alchemist")
    win(game, 1)
    assert game.players[1].common == 5


def test_f25_f4_alchemist_takes_what_the_bank_has():
    """F25, F4: the bank has 2 common gold left: the winner gets 2."""
    game = at("Alchemist")
    set_player(game, 3, common=game.players[3].common + game.bank.common - 2)
    win(game, 1)
    assert (game.players[1].common, game.bank.common) == (4, 0)


# ---------------------------------------------------------------------------- F26 Ancient Dragon
def test_f26_ancient_dragon_takes_a_stone_of_the_chosen_colour():
    """F26: the winner picks any colour the bank has."""
    game = at("Ancient Dragon")
    before = stones(game, 2)
    win(game, 2)
    assert options_of(game) == {("colour", c) for c in COLOURS}
    choose(game, ("colour", "yellow"))
    assert stones(game, 2) == (before[0], before[1], before[2] + 1)


def test_f26_ancient_dragon_offers_only_colours_the_bank_has():
    """F26: no red in the bank: red is not offered."""
    game = at("Ancient Dragon")
    drain_bank(game, "red", 3)
    win(game, 2)
    assert options_of(game) == {("colour", "blue"), ("colour", "yellow")}


def test_f26_ancient_dragon_with_an_empty_bank_has_no_effect():
    """F26, F4: the bank has no stones: nothing to take, no decision."""
    game = at("Ancient Dragon")
    set_bank_stones(game, (0, 0, 0), via=3)
    before = stones(game, 2)
    win(game, 2)
    assert game.decision.kind == "bid"
    assert stones(game, 2) == before


# ---------------------------------------------------------------------------- F27 Brigand
def test_f27_brigand_picks_another_player():
    """F27: every other player, and not the winner himself, may be robbed."""
    game = at("Brigand")
    win(game, 0)
    assert options_of(game) == {("target", 1), ("target", 2), ("target", 3)}


def test_f27_brigand_takes_all_common_gold_and_silver_of_the_victim():
    """F27: the victim's common gold and silver all go to the winner, nothing else."""
    game = at("Brigand", p2={"common": 3, "silver": 7})
    win(game, 0)
    victim_fairy, victim_stones = game.players[2].fairy, stones(game, 2)
    choose(game, ("target", 2))
    assert (game.players[0].common, game.players[0].silver) == (2 + 3, 5 + 7)
    assert (game.players[2].common, game.players[2].silver) == (0, 0)
    assert (game.players[2].fairy, stones(game, 2)) == (victim_fairy, victim_stones)


# ---------------------------------------------------------------------------- F6 Dwarves
@pytest.mark.parametrize("card, silver", [("Dwarf (4)", 4), ("Dwarf (5)", 5)])
def test_f6_dwarves_give_four_and_five_silver(card, silver):
    """F6: one Dwarf gives 4 silver, the other 5."""
    game = at(card)
    win(game, 3)
    assert game.players[3].silver == 5 + silver


# ---------------------------------------------------------------------------- F29 Enchantress
def test_f29_enchantress_pays_any_five_stones_for_two_points():
    """F29: every way to pay 5 stones is offered; paying scores 2."""
    game = at("Enchantress", p0={"stones": (2, 2, 2)})
    win(game, 0)
    assert options_of(game) == {("pay", 1, 2, 2), ("pay", 2, 1, 2), ("pay", 2, 2, 1), ("take",)}
    choose(game, ("pay", 2, 1, 2))
    assert (stones(game, 0), game.players[0].score) == ((0, 1, 0), 2)


def test_f29_enchantress_may_take_a_fairy_gold_for_good():
    """F29, F15: taking 1 fairy gold is a choice; it is still there after the turn."""
    game = at("Enchantress", p0={"stones": (2, 2, 2)})
    win(game, 0)
    choose(game, ("take",))
    finish_turn(game)
    assert (game.players[0].fairy, game.players[0].score) == (9, 0)


def test_f29_enchantress_without_five_stones_takes_the_fairy_gold():
    """F29, F15: 4 stones cannot pay 5: the fairy gold is taken."""
    game = at("Enchantress", p0={"stones": (2, 2, 0)})
    win(game, 0)
    assert game.decision.kind == "bid"
    assert (game.players[0].fairy + game.players[0].fairy_spent, stones(game, 0)) == (9, (2, 2, 0))


# ---------------------------------------------------------------------------- F30 Fairy
def test_f30_fairy_gives_a_fairy_gold_for_good():
    """F30: +1 fairy gold, still the player's after the end of the turn."""
    game = at("Fairy")
    bank = game.bank.fairy
    win(game, 1, fairy=2)
    assert (game.players[1].fairy, game.bank.fairy) == (7, bank - 1)
    finish_turn(game)
    assert game.players[1].fairy == 9


def test_f30_f4_fairy_with_no_fairy_gold_in_the_bank_gives_nothing():
    """F30, F4: the bank has no fairy gold left."""
    game = at("Fairy")
    drain_bank(game, "fairy", 3)
    win(game, 1)
    assert game.players[1].fairy == 7


# ---------------------------------------------------------------------------- F32 Gnome
def test_f32_gnome_gives_two_common_gold_and_two_silver():
    """F32: +2 common gold, +2 silver."""
    game = at("Gnome")
    win(game, 2)
    assert (game.players[2].common, game.players[2].silver) == (4, 7)


def test_f32_f4_gnome_with_one_common_gold_in_the_bank():
    """F32, F4: the common gold is short, the silver is not."""
    game = at("Gnome")
    set_player(game, 3, common=game.players[3].common + game.bank.common - 1)
    win(game, 2)
    assert (game.players[2].common, game.players[2].silver) == (3, 7)


# ---------------------------------------------------------------------------- F34 Goldsmith
def test_f34_goldsmith_gives_an_amulet():
    """F34: +1 amulet from the bank."""
    game = at("Goldsmith")
    win(game, 1)
    assert (game.players[1].amulets, game.bank.amulets) == (1, 1)


def test_f34_goldsmith_with_no_amulet_in_the_bank_gives_nothing():
    """F34, F4: both amulets are held already."""
    game = at("Goldsmith")
    drain_bank(game, "amulets", 3)
    win(game, 1)
    assert (game.players[1].amulets, game.players[3].amulets) == (0, 2)


def test_f34_the_amulet_won_doubles_a_later_bid_and_goes_to_the_bank():
    """F34, F10, F11: the amulet stays behind the screen until bid, then goes to the bank."""
    game = at("Goldsmith")
    win(game, 1)
    run_to(game, "Red Dragon")
    bid_all(game, [3, (2, 0, 0, 1), 0, 0])
    assert (game.players[1].amulets, game.bank.amulets) == (0, 2)
    red = [a for a in game.auctions if a.card == "Red Dragon"][-1]
    assert (red.values, red.winner) == ([3, 4, 0, 0], 1)


# ---------------------------------------------------------------------------- F36 Merchant
def test_f36_merchant_offers_every_colour_and_coin_and_stopping():
    """F36: each bank colour can be paid with 1 common, 1 fairy behind the screen or 3 silver."""
    game = at("Merchant")
    win(game, 0)
    expected = {("buy", c, coin) for c in COLOURS for coin in ("common", "fairy", "silver")}
    assert options_of(game) == expected | {("stop",)}


@pytest.mark.parametrize("coin, price", [("common", 1), ("fairy", 1), ("silver", 3)])
def test_f36_merchant_buys_a_stone_and_goes_on(coin, price):
    """F36: one stone for its price, paid to the bank; then he may buy again."""
    game = at("Merchant")
    win(game, 0)
    paid, bank_coin, red = coins(game, 0)[coin], getattr(game.bank, coin), stones(game, 0)[0]
    choose(game, ("buy", "red", coin))
    assert coins(game, 0)[coin] == paid - price
    assert getattr(game.bank, coin) == bank_coin + price
    assert stones(game, 0)[0] == red + 1
    assert (game.decision.kind, game.decision.card) == ("buy_or_stop", "Merchant")


def test_f36_fairy_gold_paid_to_the_merchant_is_lost_for_good():
    """F36: unlike spent fairy gold (F9), it does not come back at the end of the turn."""
    game = at("Merchant")
    win(game, 0, fairy=2)
    choose(game, ("buy", "blue", "fairy"))
    choose(game, ("stop",))
    finish_turn(game)
    assert game.players[0].fairy == 7


def test_f36_merchant_stops_when_asked():
    """F36: stopping ends the power; the next auction starts."""
    game = at("Merchant")
    win(game, 0)
    choose(game, ("buy", "red", "common"))
    choose(game, ("stop",))
    assert game.decision.kind == "bid"
    assert game.players[0].common == 1


def test_f36_merchant_does_not_offer_a_colour_the_bank_lacks():
    """F36: no yellow in the bank: no yellow stone for sale."""
    game = at("Merchant")
    drain_bank(game, "yellow", 3)
    win(game, 0)
    assert not [o for o in game.legal_options() if o[0] == "buy" and o[1] == "yellow"]
    assert ("buy", "red", "common") in game.legal_options()


def test_f36_merchant_who_cannot_pay_stops_automatically():
    """F36: one common gold, no fairy behind the screen, 2 silver: one purchase, then done."""
    game = at("Merchant", p0={"common": 1, "silver": 2})
    win(game, 0, fairy=8)
    assert options_of(game) == {("stop",), *(("buy", c, "common") for c in COLOURS)}
    choose(game, ("buy", "red", "common"))
    assert game.decision.kind == "bid"
    assert coins(game, 0) == {"fairy": 0, "common": 0, "silver": 2, "amulets": 0}


# ---------------------------------------------------------------------------- F37 Necromancer
def test_f37_necromancer_pays_the_fairy_gold_bid_to_the_bank_for_a_point():
    """F37: the spent fairy gold of this bid goes to the bank for good; common gold stays there."""
    game = at("Necromancer")
    bank_fairy, bank_common = game.bank.fairy, game.bank.common
    bid_all(game, [(3, 1, 0, 0), 2, 0, 0])
    assert (game.decision.kind, game.decision.card) == ("yes_no", "Necromancer")
    choose(game, ("yes",))
    p0 = game.players[0]
    assert (p0.score, p0.fairy_spent, p0.fairy, p0.common) == (1, 0, 5, 1)
    assert (game.bank.fairy, game.bank.common) == (bank_fairy + 3, bank_common + 1)
    assert game.players[1].fairy_spent == 2
    finish_turn(game)
    assert game.players[0].fairy == 5


def test_f37_necromancer_declined_keeps_the_fairy_gold():
    """F37: optional; declining scores nothing and the spent fairy gold comes back (F9)."""
    game = at("Necromancer")
    bid_all(game, [(3, 1, 0, 0), 2, 0, 0])
    choose(game, ("no",))
    assert (game.players[0].score, game.players[0].fairy_spent) == (0, 3)
    finish_turn(game)
    assert game.players[0].fairy == 8


# ---------------------------------------------------------------------------- F38 Quack Wizard
def test_f38_quack_wizard_pays_all_stones_for_a_point():
    """F38: every stone goes to the bank; +1 point; no choice."""
    game = at("Quack Wizard", p1={"stones": (1, 2, 3)})
    bank = bank_stones(game)
    win(game, 1)
    assert (stones(game, 1), game.players[1].score) == ((0, 0, 0), 1)
    assert bank_stones(game) == (bank[0] + 1, bank[1] + 2, bank[2] + 3)
    assert game.decision.kind == "bid"


def test_f38_quack_wizard_without_stones_scores_for_free():
    """F38: with no stones the point is free."""
    game = at("Quack Wizard", p1={"stones": (0, 0, 0)})
    win(game, 1)
    assert game.players[1].score == 1


# ---------------------------------------------------------------------------- F39 Rainbow Dragon
def test_f39_rainbow_dragon_with_no_bank_stones_has_no_effect():
    """F39: the bank has no stones: no colour to name, nothing happens."""
    game = at("Rainbow Dragon")
    set_bank_stones(game, (0, 0, 0), via=3)
    before = stones(game, 1)
    win(game, 1)
    assert game.decision.kind == "bid"
    assert stones(game, 1) == before


def test_f39_rainbow_dragon_names_only_colours_the_bank_has():
    """F39: no blue in the bank: blue cannot be named."""
    game = at("Rainbow Dragon")
    drain_bank(game, "blue", 3)
    win(game, 1)
    assert (game.decision.kind, game.decision.card) == ("choose_colour", "Rainbow Dragon")
    assert options_of(game) == {("colour", "red"), ("colour", "yellow")}


def test_f39_first_draw_is_compulsory_and_drawn_stones_are_pending():
    """F39: naming a colour draws at once; the drawn stone waits (state_dict shows it)."""
    game = at("Rainbow Dragon")
    rig_stone_draws(game, "blue")
    bank = bank_stones(game)
    win(game, 1)
    choose(game, ("colour", "red"))
    assert (game.decision.kind, game.decision.card) == ("draw_or_stop", "Rainbow Dragon")
    assert options_of(game) == {("draw",), ("stop",)}
    assert game.state_dict()["pending_stones"] == {"red": 0, "blue": 1, "yellow": 0}
    assert bank_stones(game) == (bank[0], bank[1] - 1, bank[2])


def test_f39_drawing_the_named_colour_returns_every_stone_drawn():
    """F39: yellow, yellow, then red (named): all three go back to the bank."""
    game = at("Rainbow Dragon")
    draws = rig_stone_draws(game, "yellow", "yellow", "red")
    before, bank = stones(game, 1), bank_stones(game)
    win(game, 1)
    choose(game, ("colour", "red"))
    choose(game, ("draw",))
    choose(game, ("draw",))
    assert draws.left == []
    assert game.decision.kind == "bid"
    assert (stones(game, 1), bank_stones(game)) == (before, bank)
    assert game.pending_stones == [0, 0, 0]


def test_f39_the_bag_is_all_the_bank_stones():
    """F39: all bank stones are put in the bag."""
    game = at("Rainbow Dragon")
    set_bank_stones(game, (1, 4, 2), via=3)
    draws = rig_stone_draws(game, "blue")
    win(game, 1)
    choose(game, ("colour", "red"))
    assert draws.bags == [(1, 4, 2)]


def test_f39_stopping_keeps_the_stones_drawn():
    """F39: blue, yellow, stop: the winner keeps both."""
    game = at("Rainbow Dragon")
    rig_stone_draws(game, "blue", "yellow")
    before, bank = stones(game, 1), bank_stones(game)
    win(game, 1)
    choose(game, ("colour", "red"))
    choose(game, ("draw",))
    choose(game, ("stop",))
    assert stones(game, 1) == (before[0], before[1] + 1, before[2] + 1)
    assert bank_stones(game) == (bank[0], bank[1] - 1, bank[2] - 1)
    assert game.pending_stones == [0, 0, 0]


# ---------------------------------------------------------------------------- F40 Apprentice
def test_f40_apprentice_pays_a_pair_of_his_pick_for_a_point():
    """F40: each colour with 2 stones or more is offered; paying scores 1."""
    game = at("Sorcerer's Apprentice", p2={"stones": (2, 3, 1)})
    win(game, 2)
    assert options_of(game) == {("pay", 2, 0, 0), ("pay", 0, 2, 0)}
    choose(game, ("pay", 0, 2, 0))
    assert (stones(game, 2), game.players[2].score) == ((2, 1, 1), 1)


def test_f40_apprentice_with_one_pair_pays_it_without_asking():
    """F40: not optional: a single pair is paid at once."""
    game = at("Sorcerer's Apprentice", p2={"stones": (1, 0, 2)})
    win(game, 2)
    assert game.decision.kind == "bid"
    assert (stones(game, 2), game.players[2].score) == ((1, 0, 0), 1)


def test_f40_apprentice_without_a_pair_has_no_effect():
    """F40: 1 + 1 + 1 stones: no pair, no point."""
    game = at("Sorcerer's Apprentice", p2={"stones": (1, 1, 1)})
    win(game, 2)
    assert (stones(game, 2), game.players[2].score) == ((1, 1, 1), 0)


# ---------------------------------------------------------------------------- F41 Troll
def test_f41_troll_makes_everyone_return_the_colour_winner_included():
    """F41: all red stones of all players, the winner's too, go to the bank."""
    game = at(
        "Troll",
        p0={"stones": (2, 0, 0)},
        p1={"stones": (1, 3, 0)},
        p2={"stones": (0, 0, 0)},
        p3={"stones": (3, 0, 1)},
    )
    bank = bank_stones(game)
    win(game, 1)
    assert options_of(game) == {("colour", c) for c in COLOURS}
    choose(game, ("colour", "red"))
    assert [stones(game, p) for p in range(4)] == [(0, 0, 0), (0, 3, 0), (0, 0, 0), (0, 0, 1)]
    assert bank_stones(game) == (bank[0] + 6, bank[1], bank[2])


# ---------------------------------------------------------------------------- F42 Two-headed
def test_f42_two_headed_dragon_draws_two_from_two_of_each_colour():
    """F42: the bag holds 2 stones of each colour; the 2 drawn are kept."""
    game = at("Two-headed Dragon")
    draws = rig_stone_draws(game, "red", "red")
    before, bank = stones(game, 0), bank_stones(game)
    win(game, 0)
    assert draws.bags == [(2, 2, 2), (1, 2, 2)]
    assert stones(game, 0) == (before[0] + 2, before[1], before[2])
    assert bank_stones(game) == (bank[0] - 2, bank[1], bank[2])


def test_f42_f4_bag_has_fewer_where_the_bank_lacks_stones():
    """F42, F4: bank (1, 0, 7): the bag is 1 red, no blue, 2 yellow."""
    game = at("Two-headed Dragon")
    set_bank_stones(game, (1, 0, 7), via=3)
    draws = rig_stone_draws(game, "yellow", "red")
    before = stones(game, 0)
    win(game, 0)
    assert draws.bags[0] == (1, 0, 2)
    assert stones(game, 0) == (before[0] + 1, before[1], before[2] + 1)
    assert bank_stones(game) == (0, 0, 6)


@pytest.mark.parametrize("bank", [(1, 1, 0), (0, 0, 1), (0, 0, 0)])
def test_f42_f4_two_or_fewer_stones_in_the_bag_are_all_kept(bank):
    """F42, F4: with 2 stones or fewer in the bank, the winner gets them all."""
    game = at("Two-headed Dragon")
    set_bank_stones(game, bank, via=3)
    before = stones(game, 0)
    win(game, 0)
    assert stones(game, 0) == tuple(before[c] + bank[c] for c in range(3))
    assert bank_stones(game) == (0, 0, 0)
