"""Auctions of Fist of Dragonstones: gold bids, reveal, curse, passing, tie-break (F10-F16)."""

from __future__ import annotations

import pytest

from tests.support import (
    auction_of,
    bank_stones,
    bid_all,
    choose,
    make_game,
    pass_auction,
    run_to,
    set_player,
    stones,
    tiebreak,
    win,
)

pytestmark = pytest.mark.usefixtures("conserved")  # F2 checked on every game of every test


def at_red_dragon(**holdings_of_player_0):
    """A 4-player game at the Red Dragon auction (the Witch passed)."""
    game = make_game()
    if holdings_of_player_0:
        set_player(game, 0, **holdings_of_player_0)
    run_to(game, "Red Dragon")
    return game


# ---------------------------------------------------------------------------- F10 gold bid
@pytest.mark.parametrize(
    "bid, holdings",
    [
        (("bid", 9, 0, 0, 0), {}),  # more fairy gold than behind the screen
        (("bid", 0, 3, 0, 0), {}),  # more common gold than held
        (("bid", -1, 0, 0, 0), {}),
        (("bid", 0, 0, 1, 0), {}),  # a black coin not held
        (("bid", 0, 0, 2, 0), {"black": 2}),  # at most one black coin
        (("bid", 0, 0, 0, 1), {}),  # an amulet not held
        (("bid", 1, 0, 0, 2), {"amulets": 2}),  # at most one amulet
    ],
)
def test_f10_bids_beyond_the_caps_are_illegal(bid, holdings):
    """F10: fairy and common up to what is behind the screen, one black coin, one amulet."""
    game = at_red_dragon(**holdings)
    assert not game.is_legal(bid)
    assert bid not in game.legal_options()


@pytest.mark.parametrize(
    "bid, holdings",
    [
        (("bid", 0, 0, 0, 0), {}),  # the closed empty fist
        (("bid", 8, 2, 0, 0), {}),  # everything behind the screen
        (("bid", 8, 2, 1, 1), {"black": 2, "amulets": 2}),
    ],
)
def test_f10_bids_within_the_caps_are_legal(bid, holdings):
    """F10: any fairy and common gold held, one black coin, one amulet; nothing at all too."""
    game = at_red_dragon(**holdings)
    assert game.is_legal(bid)
    assert bid in game.legal_options()


def test_f10_an_amulet_doubles_the_bid_value():
    """F10: (fairy + common) x 2 with an amulet beats a larger plain bid."""
    game = at_red_dragon(amulets=1)
    bid_all(game, [(2, 1, 0, 1), 5, 0, 0])
    assert auction_of(game, "Red Dragon").values == [6, 5, 0, 0]
    assert auction_of(game, "Red Dragon").winner == 0


def test_f10_fairy_and_common_gold_add_up():
    """F10: value = fairy + common without an amulet."""
    game = at_red_dragon()
    bid_all(game, [(3, 2, 0, 0), 4, 0, 0])
    assert auction_of(game, "Red Dragon").values == [5, 4, 0, 0]
    assert auction_of(game, "Red Dragon").winner == 0


# ---------------------------------------------------------------------------- F11 reveal
def test_f11_bids_stay_sealed_until_everyone_has_bid():
    """F11, F43: a bid in is not shown nor paid before the reveal."""
    game = at_red_dragon()
    game.apply(("bid", 3, 1, 0, 0))
    shown = game.state_dict()
    assert shown["auction"]["bids"] is None and shown["auction"]["sealed"] == [0]
    assert (game.players[0].fairy, game.players[0].common) == (8, 2)


def test_f11_winner_pays_fairy_to_the_front_and_the_rest_to_the_bank():
    """F11: fairy gold bid goes in front of the screen; common gold and amulets to the bank."""
    game = at_red_dragon(amulets=1)
    bank_common, bank_fairy = game.bank.common, game.bank.fairy
    bid_all(game, [(2, 1, 0, 1), 5, 0, 0])
    p0 = game.players[0]
    assert (p0.fairy, p0.fairy_spent, p0.common, p0.amulets) == (6, 2, 1, 0)
    assert (game.bank.common, game.bank.amulets, game.bank.fairy) == (bank_common + 1, 2, bank_fairy)


def test_f11_losers_pay_their_bids_too():
    """F11: the coins bid are paid whoever wins."""
    game = at_red_dragon()
    bank_common = game.bank.common
    bid_all(game, [5, (3, 1, 0, 0), (0, 2, 0, 0), 0])
    p1, p2 = game.players[1], game.players[2]
    assert (p1.fairy, p1.fairy_spent, p1.common) == (5, 3, 1)
    assert (p2.fairy, p2.fairy_spent, p2.common) == (8, 0, 0)
    assert game.bank.common == bank_common + 3


def test_f11_black_coin_bid_is_given_up():
    """F11: a black coin bid goes to the bank (the bank's black coins are unlimited, F2)."""
    game = at_red_dragon(black=2)
    bid_all(game, [(0, 0, 1, 0), 0, 0, 0])
    assert game.players[0].black == 1


# ---------------------------------------------------------------------------- F12 curse
def test_f12_black_coin_curses_the_character_without_tiebreak():
    """F12: the tied top bids are not broken; nobody gets the stone; all bids are spent."""
    game = at_red_dragon(black=1)
    before = bank_stones(game)
    bid_all(game, [(1, 0, 1, 0), 4, 4, 0])
    assert auction_of(game, "Red Dragon").outcome == "cursed" and auction_of(game, "Red Dragon").winner is None
    assert game.decision.kind == "bid" and game.decision.card != "Red Dragon"
    assert bank_stones(game) == before
    assert [pl.fairy_spent for pl in game.players] == [1, 4, 4, 0]
    assert ("Red Dragon", "cursed") in game.played


def test_f12_black_coin_alone_curses_rather_than_passes():
    """F12 before F13: a bid of value 0 with a black coin still curses."""
    game = at_red_dragon(black=1)
    bid_all(game, [(0, 0, 1, 0), 0, 0, 0])
    assert auction_of(game, "Red Dragon").outcome == "cursed"


def test_f12_black_coin_from_the_witch_curses_a_later_auction():
    """F12, F19: the Witch's winner bids the black coin and cancels the sole bidder's power."""
    game = make_game()
    win(game, 3)  # the Witch
    run_to(game, "Blue Dragon")
    before = bank_stones(game)
    bid_all(game, [0, 6, 0, (0, 0, 1, 0)])
    assert auction_of(game, "Blue Dragon").outcome == "cursed"
    assert bank_stones(game) == before


# ---------------------------------------------------------------------------- F13 no bids
def test_f13_no_bids_pass_the_character():
    """F13: every bid 0 and no black coin: passed, nobody uses the power."""
    game = at_red_dragon()
    before = [list(pl.stones) for pl in game.players]
    pass_auction(game)
    assert auction_of(game, "Red Dragon").outcome == "passed"
    assert ("Red Dragon", "passed") in game.played
    assert [list(pl.stones) for pl in game.players] == before


# ---------------------------------------------------------------------------- F14 tie-break
def test_f14_only_tied_players_bid_silver():
    """F14: players 1 and 3 tie at 3; the tie-break asks player 1, then player 3, nobody else."""
    game = at_red_dragon()
    bid_all(game, [2, 3, 0, (1, 2, 0, 0)])
    assert auction_of(game, "Red Dragon").tied == [1, 3]
    asked = []
    for silver in (1, 2):
        asked.append(game.decision.player)
        assert game.decision.kind == "tiebreak"
        choose(game, ("tiebreak", silver, 0))
    assert asked == [1, 3]
    assert auction_of(game, "Red Dragon").winner == 3


def test_f14_winner_of_the_tiebreak_uses_the_power():
    """F14, F24: the tie-break winner takes the Red Dragon's stone."""
    game = at_red_dragon()
    red = stones(game, 2)[0]
    bid_all(game, [0, 3, 3, 0])
    tiebreak(game, {1: (1, 0), 2: (2, 0)})
    assert stones(game, 2)[0] == red + 1


def test_f14_amulet_doubles_the_silver_bid():
    """F14: 2 silver with an amulet (4) beats 3 silver."""
    game = at_red_dragon()
    set_player(game, 2, amulets=1)
    bid_all(game, [0, 3, 3, 0])
    tiebreak(game, {1: (3, 0), 2: (2, 1)})
    assert auction_of(game, "Red Dragon").winner == 2


def test_f14_silver_and_amulets_bid_go_to_the_bank():
    """F14: winner and loser both pay their silver and amulets."""
    game = at_red_dragon()
    set_player(game, 2, amulets=1)
    bank_silver = game.bank.silver
    bid_all(game, [0, 3, 3, 0])
    tiebreak(game, {1: (3, 0), 2: (2, 1)})
    assert (game.players[1].silver, game.players[2].silver, game.players[2].amulets) == (2, 3, 0)
    assert (game.bank.silver, game.bank.amulets) == (bank_silver + 5, 2)


@pytest.mark.parametrize("silver", [2, 0])
def test_f14_second_tie_means_nobody_uses_the_power(silver):
    """F14: a new tie, 0-0 included, and the character is not used."""
    game = at_red_dragon()
    before = bank_stones(game)
    bid_all(game, [3, 3, 3, 1])
    tiebreak(game, {0: (silver, 0), 1: (silver, 0), 2: (0, 0)})
    assert auction_of(game, "Red Dragon").outcome == "tied" and auction_of(game, "Red Dragon").winner is None
    assert bank_stones(game) == before
    assert game.decision.kind == "bid"


@pytest.mark.parametrize("option", [("tiebreak", 6, 0), ("tiebreak", 1, 1), ("tiebreak", -1, 0)])
def test_f14_tiebreak_bid_caps(option):
    """F14: silver only up to what is held; an amulet only if held."""
    game = at_red_dragon()
    bid_all(game, [3, 3, 0, 0])
    assert not game.is_legal(option)
    assert game.is_legal(("tiebreak", 5, 0))


# ---------------------------------------------------------------------------- F16 spent fairy
def test_f16_spent_fairy_gold_cannot_be_bid_again():
    """F16: all 8 fairy gold bid on the Witch; on the next card only the common gold is left."""
    game = make_game()
    win(game, 0, fairy=8)
    run_to(game, "Red Dragon")
    assert not game.is_legal(("bid", 1, 0, 0, 0))
    assert game.is_legal(("bid", 0, 2, 0, 0))
    assert game.bid_limits(0) == (0, 2, 1, 0)
