"""Characters that use other powers: Doppelganger (F28), Ghost (F31), Goblin (F33), Imp (F35)."""

from __future__ import annotations

import pytest

from tests.support import (
    RiggedRng,
    at,
    auction_of,
    bid_all,
    choose,
    give_doppelganger,
    make_game,
    next_cards,
    not_yet_auctioned,
    options_of,
    pass_auction,
    run_to,
    set_player,
    set_specials,
    stones,
    win,
)

pytestmark = pytest.mark.usefixtures("conserved")  # F2 checked on every game of every test


def run_to_last(game, card):
    """Pass every auction until ``card``, made the last card of the turn, is up."""
    game.face_down.remove(card)
    game.face_down.insert(0, card)
    while game.decision.card != card:
        pass_auction(game)
    assert game.face_down == []


# ---------------------------------------------------------------------------- F28 Doppelganger
def test_f28_doppelganger_winner_keeps_the_card_face_up():
    """F28, F43: the winner holds it (public), it is no longer one of the turn's specials."""
    game = at("Doppelganger")
    win(game, 2)
    assert game.players[2].doppelganger
    assert game.state_dict()["players"][2]["doppelganger"] is True
    assert "Doppelganger" not in game.turn_specials


def test_f28_playing_the_doppelganger_uses_the_power_twice():
    """F28: offered right after winning; yes: the Red Dragon gives two red stones."""
    game = make_game()
    give_doppelganger(game, 0)
    run_to(game, "Red Dragon")
    red = stones(game, 0)[0]
    win(game, 0)
    assert (game.decision.kind, game.decision.card, game.decision.player) == ("yes_no", "Doppelganger", 0)
    assert options_of(game) == {("yes",), ("no",)}
    choose(game, ("yes",))
    assert stones(game, 0)[0] == red + 2


def test_f28_played_doppelganger_is_discarded_to_the_special_pile():
    """F28: it can be played once; then it is in the special discards."""
    game = make_game()
    give_doppelganger(game, 0)
    run_to(game, "Red Dragon")
    win(game, 0)
    choose(game, ("yes",))
    assert not game.players[0].doppelganger
    assert "Doppelganger" in game.special_discards
    run_to(game, "Blue Dragon")
    win(game, 0)
    assert game.decision.kind == "bid"


def test_f28_declining_uses_the_power_once_and_keeps_the_card():
    """F28: 'may' play it: no gives one red stone and the card stays held."""
    game = make_game()
    give_doppelganger(game, 0)
    run_to(game, "Red Dragon")
    red = stones(game, 0)[0]
    win(game, 0)
    choose(game, ("no",))
    assert stones(game, 0)[0] == red + 1
    assert game.players[0].doppelganger


def test_f28_doppelganger_can_be_played_the_turn_it_is_won():
    """F28: won on this turn's Doppelganger auction, played on this turn's Blue Dragon."""
    game = at("Doppelganger")
    win(game, 1)
    run_to(game, "Blue Dragon")
    win(game, 1)
    assert (game.decision.kind, game.decision.card, game.decision.player) == ("yes_no", "Doppelganger", 1)


def test_f28_doppelganger_on_the_witch_gives_two_black_coins():
    """F28, F19: doubling the Witch gives two black coins (still one per bid, F10)."""
    game = make_game()
    give_doppelganger(game, 3)
    win(game, 3)
    choose(game, ("yes",))
    assert game.players[3].black == 2
    run_to(game, "Thief")
    bid_all(game, [0, 0, 0, (0, 0, 1, 0)])
    run_to(game, "Wizard")
    assert game.players[3].black == 1


def test_f28_doppelganger_is_not_offered_on_the_necromancer():
    """F28: the Necromancer cannot be doubled: the Necromancer's own decision comes at once."""
    game = at("Necromancer")
    give_doppelganger(game, 0)
    win(game, 0)
    assert (game.decision.kind, game.decision.card) == ("yes_no", "Necromancer")
    assert game.players[0].doppelganger


def test_f28_doppelganger_is_not_offered_on_a_cursed_card():
    """F28, F12: the top bidder of a cursed auction does not win it: no offer."""
    game = make_game()
    give_doppelganger(game, 0)
    win(game, 1)  # the Witch: player 1 holds a black coin
    run_to(game, "Red Dragon")
    bid_all(game, [5, (0, 0, 1, 0), 0, 0])
    assert game.decision.kind == "bid" and game.decision.card != "Red Dragon"
    assert game.players[0].doppelganger


def test_f28_doppelganger_on_the_ghost_gives_two_picks():
    """F28, F31: doubling the Ghost repeats the whole power: two picks."""
    game = make_game()
    set_specials(game, "Ghost", "Fairy")
    give_doppelganger(game, 0)
    run_to(game, "Red Dragon")
    pass_auction(game)
    run_to(game, "Ghost")
    red = stones(game, 0)[0]
    win(game, 0)
    choose(game, ("yes",))
    assert (game.decision.kind, game.decision.card) == ("choose_card", "Ghost")
    choose(game, ("character", "Witch"))
    assert (game.decision.kind, game.decision.card) == ("choose_card", "Ghost")
    choose(game, ("character", "Red Dragon"))
    assert (game.players[0].black, stones(game, 0)[0]) == (1, red + 1)


# ---------------------------------------------------------------------------- F31 Ghost
def test_f31_ghost_offers_every_card_auctioned_this_turn_passed_and_cursed_included():
    """F31: Witch (won), Red Dragon (won), Blue Dragon (passed), Yellow Dragon (cursed); not the Ghost."""
    game = make_game()
    set_specials(game, "Ghost", "Fairy")
    next_cards(game, "Red Dragon", "Blue Dragon", "Yellow Dragon", "Ghost")
    win(game, 3)  # the Witch
    win(game, 0)  # the Red Dragon
    pass_auction(game)  # the Blue Dragon
    bid_all(game, [0, 4, 0, (0, 0, 1, 0)])  # the Yellow Dragon
    assert game.decision.card == "Ghost"
    win(game, 1)
    assert (game.decision.kind, game.decision.card) == ("choose_card", "Ghost")
    names = {"Witch", "Red Dragon", "Blue Dragon", "Yellow Dragon"}
    assert options_of(game) == {("character", c) for c in names}


def test_f31_ghost_uses_a_cursed_cards_power_as_if_won():
    """F31, F12: the cursed Yellow Dragon gave nothing; copied by the Ghost, it gives a yellow stone."""
    game = make_game()
    set_specials(game, "Ghost", "Fairy")
    win(game, 3)
    run_to(game, "Yellow Dragon")
    bid_all(game, [0, 4, 0, (0, 0, 1, 0)])
    run_to(game, "Ghost")
    yellow = stones(game, 1)[2]
    win(game, 1)
    choose(game, ("character", "Yellow Dragon"))
    assert stones(game, 1)[2] == yellow + 1


def test_f31_ghost_copying_the_witch_gives_a_second_black_coin():
    """F31, F19: a player may hold several black coins."""
    game = make_game()
    set_specials(game, "Ghost", "Fairy")
    win(game, 2)
    run_to(game, "Ghost")
    win(game, 2)
    choose(game, ("character", "Witch"))
    assert game.players[2].black == 2


def test_f31_ghost_may_copy_a_card_played_through_the_imp():
    """F31, F35: the Red Dragon, taken by the Imp, is among the Ghost's picks."""
    game = make_game()
    set_specials(game, "Imp", "Ghost")
    next_cards(game, "Imp", "Ghost")
    pass_auction(game)  # the Witch
    win(game, 0)
    game.rng = RiggedRng()  # the Imp's reshuffle leaves the Ghost next
    choose(game, ("character", "Red Dragon"))
    assert game.decision.card == "Ghost"
    win(game, 1)
    assert options_of(game) == {("character", c) for c in ("Witch", "Imp", "Red Dragon")}


def test_f31_ghost_may_copy_a_card_played_through_the_goblin():
    """F31, F33: the Blue Dragon, drawn by the Goblin, is among the Ghost's picks."""
    game = make_game()
    set_specials(game, "Goblin", "Ghost")
    next_cards(game, "Goblin", "Ghost")
    pass_auction(game)  # the Witch
    game.rng = RiggedRng(game.face_down.index("Blue Dragon"))
    win(game, 0)
    assert game.decision.card == "Ghost"
    win(game, 1)
    assert options_of(game) == {("character", c) for c in ("Witch", "Goblin", "Blue Dragon")}


def test_f31_thief_through_the_ghost_robs_the_ghost_auctions_second_bidder():
    """F31, F23: the Thief auction's second was player 1; the Ghost auction's is player 2."""
    game = make_game()
    set_specials(game, "Ghost", "Fairy")
    set_player(game, 1, stones=(1, 1, 1))
    set_player(game, 2, stones=(1, 1, 0))
    run_to(game, "Thief")
    bid_all(game, [5, 3, 0, 0])
    choose(game, ("steal", 1, "yellow"))
    run_to(game, "Ghost")
    bid_all(game, [0, 0, 2, 4])
    choose(game, ("character", "Thief"))
    assert game.decision.player == 3
    assert options_of(game) == {("steal", 2, "red"), ("steal", 2, "blue")}


def test_f31_necromancer_through_the_ghost_pays_the_ghost_auctions_coins():
    """F31, F37: the Ghost's winner pays his 4 fairy gold bid on the Ghost, not the Necromancer's."""
    game = make_game()
    set_specials(game, "Ghost", "Necromancer")
    run_to(game, "Necromancer")
    win(game, 1, fairy=2)
    choose(game, ("no",))
    run_to(game, "Ghost")
    bank_fairy = game.bank.fairy
    bid_all(game, [4, 1, 0, 0])
    choose(game, ("character", "Necromancer"))
    assert (game.decision.kind, game.decision.card) == ("yes_no", "Necromancer")
    choose(game, ("yes",))
    assert (game.players[0].score, game.players[0].fairy_spent) == (1, 0)
    assert game.bank.fairy == bank_fairy + 4
    assert (game.players[1].score, game.players[1].fairy_spent) == (0, 2 + 1)


# ---------------------------------------------------------------------------- F33 Goblin
def test_f33_goblin_draws_a_random_card_which_leaves_the_turn():
    """F33: the drawn Red Dragon gives its stone to the Goblin's winner and is never auctioned."""
    game = at("Goblin")
    left = list(game.face_down)
    game.rng = RiggedRng(left.index("Red Dragon"))
    red = stones(game, 2)[0]
    win(game, 2)
    assert game.rng.values == []  # the pick was the random draw
    assert stones(game, 2)[0] == red + 1
    assert ("Red Dragon", "goblin") in game.played
    assert not_yet_auctioned(game) == sorted(c for c in left if c != "Red Dragon")
    seen = []
    while game.turn == 1:
        seen.append(game.decision.card)
        pass_auction(game)
    assert "Red Dragon" not in seen and len(seen) == len(left) - 1


def test_f33_goblin_at_the_end_of_the_turn_has_no_effect():
    """F33: no character left: nothing happens and the next turn begins."""
    game = make_game()
    set_specials(game, "Goblin", "Fairy")
    run_to_last(game, "Goblin")
    before = game.players[2].to_dict()
    win(game, 2)
    assert game.turn == 2
    after = game.players[2].to_dict()
    assert {k: v for k, v in after.items() if k != "fairy"} == {k: v for k, v in before.items() if k != "fairy"}


# ---------------------------------------------------------------------------- F35 Imp
def test_f35_imp_picks_a_card_not_yet_auctioned_and_uses_it():
    """F35: every face-down card may be picked; the picked one is used and leaves the turn."""
    game = at("Imp")
    left = list(game.face_down)
    win(game, 0)
    assert (game.decision.kind, game.decision.card) == ("choose_card", "Imp")
    assert options_of(game) == {("character", c) for c in left}
    red = stones(game, 0)[0]
    choose(game, ("character", "Red Dragon"))
    assert stones(game, 0)[0] == red + 1
    assert ("Red Dragon", "imp") in game.played
    assert not_yet_auctioned(game) == sorted(c for c in left if c != "Red Dragon")


def test_f35_imp_reshuffles_the_remaining_cards():
    """F35: the order of the cards left after the pick is shuffled again."""
    game = at("Imp")
    win(game, 0)
    before = [c for c in game.face_down if c != "Red Dragon"]
    choose(game, ("character", "Red Dragon"))
    after = [*game.face_down, game.decision.card]  # the last card is open for bids already
    assert sorted(after) == sorted(before)
    assert after != before


def test_f35_imp_at_the_end_of_the_turn_has_no_effect():
    """F35: no character left: no pick, and the next turn begins."""
    game = make_game()
    set_specials(game, "Imp", "Fairy")
    run_to_last(game, "Imp")
    win(game, 0)
    assert game.turn == 2
    assert game.decision.kind == "bid" and game.decision.card == "Witch"


def test_f35_imp_pick_of_the_thief_uses_the_imp_auctions_bidders():
    """F35, F23: through the Imp, the second bidder is the Imp auction's."""
    game = at("Imp", p1={"stones": (0, 2, 0)}, p3={"stones": (1, 1, 1)})
    bid_all(game, [3, 2, 0, 0])
    choose(game, ("character", "Thief"))
    assert stones(game, 1) == (0, 1, 0)
    assert auction_of(game, "Imp").winner == 0


# ---------------------------------------------------------------------------- unsettled readings
def test_unsettled_ghost_copying_a_doppelganger_another_player_holds_has_no_effect():
    """F28, F31 (unsettled, see powers.doppelganger): player 2 won and holds the Doppelganger;
    the Ghost's winner copying it gets nothing, and player 2 keeps it."""
    game = make_game()
    set_specials(game, "Doppelganger", "Ghost")
    next_cards(game, "Doppelganger", "Ghost")
    pass_auction(game)  # the Witch
    win(game, 2)  # the Doppelganger
    assert game.decision.card == "Ghost"
    win(game, 1)
    choose(game, ("character", "Doppelganger"))
    assert game.players[2].doppelganger and not game.players[1].doppelganger


def test_unsettled_ghost_copying_a_passed_doppelganger_takes_the_card():
    """F28, F31 (unsettled): a passed Doppelganger is still among the turn's cards: the Ghost's
    winner takes it, and it is not discarded at the end of the turn (F9)."""
    game = make_game()
    set_specials(game, "Doppelganger", "Ghost")
    next_cards(game, "Doppelganger", "Ghost")
    pass_auction(game)  # the Witch
    pass_auction(game)  # the Doppelganger
    win(game, 1)
    choose(game, ("character", "Doppelganger"))
    assert game.players[1].doppelganger
    assert "Doppelganger" not in game.turn_specials


def test_unsettled_a_doubled_ghost_can_pay_an_auctions_coins_to_the_necromancer_only_once():
    """F28, F37 (unsettled, see powers.necromancer): the doubled Ghost copies the Necromancer
    twice; the Ghost auction's 3 fairy gold are paid once for one point; the second use has
    nothing to pay and no effect."""
    game = make_game()
    set_specials(game, "Ghost", "Necromancer")
    give_doppelganger(game, 0)
    next_cards(game, "Necromancer", "Ghost")
    pass_auction(game)  # the Witch
    pass_auction(game)  # the Necromancer
    bank_fairy = game.bank.fairy
    win(game, 0, fairy=3)  # the Ghost
    choose(game, ("yes",))  # play the Doppelganger
    choose(game, ("character", "Necromancer"))
    choose(game, ("yes",))
    assert (game.players[0].score, game.bank.fairy) == (1, bank_fairy + 3)
    assert (game.decision.kind, game.decision.card) == ("choose_card", "Ghost")
    choose(game, ("character", "Necromancer"))
    assert game.players[0].score == 1
    assert game.decision is None or game.decision.kind == "bid"
