"""Setup, turn flow, winning and truncation of Fist of Dragonstones (F1-F9, F17, F18)."""

from __future__ import annotations

import copy
import json

import pytest

from dragonstones_env.games.dragonstones.cards import SPECIAL_DECK, STANDARD
from dragonstones_env.games.dragonstones.engine import DEFAULT_MAX_TURNS
from tests.support import (
    choose,
    finish_turn,
    give_doppelganger,
    make_game,
    pass_auction,
    run_to,
    set_player,
    set_specials,
    stones,
    win,
)

pytestmark = pytest.mark.usefixtures("conserved")  # F2 checked on every game of every test


# ---------------------------------------------------------------------------- setup
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_f3_each_player_starts_with_coins_and_four_stones(n):
    """F3: 8 fairy gold, 2 common gold, 5 silver, 4 stones, score 0 each."""
    game = make_game(n)
    for pl in game.players:
        assert (pl.fairy, pl.fairy_spent, pl.common, pl.silver) == (8, 0, 2, 5)
        assert (pl.amulets, pl.black, pl.score, pl.doppelganger) == (0, 0, 0, False)
        assert sum(pl.stones) == 4


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_f3_bank_holds_the_rest_of_the_stock(n):
    """F3 (with F2): everything the players did not get is the bank."""
    game = make_game(n)
    bank = game.bank
    assert (bank.fairy, bank.common, bank.silver, bank.amulets) == (60 - 8 * n, 15 - 2 * n, 40 - 5 * n, 2)
    assert sum(bank.stones) == 36 - 4 * n
    for c in range(3):
        assert bank.stones[c] + sum(pl.stones[c] for pl in game.players) == 12


def test_f3_starting_stones_are_drawn_at_random():
    """F3: the four stones are drawn from the bag, so the seed changes who holds what."""
    deals = {tuple(tuple(pl.stones) for pl in make_game(4, seed=s).players) for s in range(10)}
    assert len(deals) > 1


# ---------------------------------------------------------------------------- F7 specials
def test_f7_each_turn_draws_two_specials():
    """F7: the top 2 special cards join the 8 standard ones."""
    game = make_game()
    assert len(game.turn_specials) == 2
    assert all(card in SPECIAL_DECK for card in game.turn_specials)
    assert len(game.special_pile) == 25 - 2
    assert sorted(game.turn_cards) == sorted([*STANDARD, *game.turn_specials])


def test_f7_empty_pile_reshuffles_the_discards():
    """F7: with no draw pile left, the discarded specials (this turn's too) become the new pile."""
    game = make_game()
    game.special_discards, game.special_pile = game.special_pile, []
    finish_turn(game)
    assert game.turn == 2
    assert len(game.special_pile) == 25 - 2
    assert game.special_discards == []


def test_f7_pile_running_out_between_the_two_draws_reshuffles():
    """F7: one card left: it is drawn first, then the discards are shuffled for the second draw."""
    game = make_game()
    last = game.special_pile[0]
    game.special_discards, game.special_pile = game.special_pile[1:], [last]
    finish_turn(game)
    assert game.turn_specials[0] == last
    assert len(game.special_pile) == 25 - 2
    assert game.special_discards == []


def test_f7_held_doppelganger_is_in_neither_pile_after_a_reshuffle():
    """F7: a Doppelganger held by a player is not shuffled back into the draw pile."""
    game = make_game()
    give_doppelganger(game, 2)
    game.special_discards, game.special_pile = game.special_pile, []
    finish_turn(game)
    assert "Doppelganger" not in game.special_pile + game.special_discards + game.turn_specials
    assert len(game.special_pile) == 24 - 2


# ---------------------------------------------------------------------------- F8 order
def test_f8_witch_first_and_ten_cards_every_turn():
    """F8: each turn auctions the Witch first, then the 9 other cards of the turn, once each."""
    game = make_game(max_turns=3)
    for _ in range(3):
        turn, seen = game.turn, []
        expected = sorted(game.turn_cards)
        while game.turn == turn and not game.over:
            seen.append(game.decision.card)
            pass_auction(game)
        assert seen[0] == "Witch"
        assert sorted(seen) == expected
    assert game.truncated


def test_f8_order_of_the_face_down_cards_varies():
    """F8: the 9 cards after the Witch are shuffled."""
    orders = set()
    for seed in range(10):
        game = make_game(seed=seed)
        standard_order = [c for c in game.face_down if c in STANDARD]
        orders.add(tuple(standard_order))
    assert len(orders) > 1


def test_f8_state_dict_does_not_show_the_face_down_order():
    """F8, F43: two states differing only in the order of the face-down cards look the same."""
    game = make_game()
    other = copy.deepcopy(game)
    other.face_down.reverse()
    assert other.face_down != game.face_down
    assert other.to_json() == game.to_json()
    assert sorted(json.loads(game.to_json())["face_down"]) == sorted(game.face_down)


# ---------------------------------------------------------------------------- F9 end of turn
def test_f9_spent_fairy_gold_goes_back_behind_the_screen():
    """F9: fairy gold bid this turn is spent (F11) until the end of the turn."""
    game = make_game()
    win(game, 1, fairy=3)
    assert (game.players[1].fairy, game.players[1].fairy_spent) == (5, 3)
    finish_turn(game)
    assert (game.players[1].fairy, game.players[1].fairy_spent) == (8, 0)


def test_f9_unused_black_coins_go_back():
    """F9: a black coin won on the Witch and not bid is gone at the end of the turn."""
    game = make_game()
    win(game, 2)
    assert game.players[2].black == 1
    finish_turn(game)
    assert game.players[2].black == 0


def test_f9_the_turns_specials_are_discarded():
    """F9: both specials of the turn go to the discards, auctioned or not."""
    game = make_game()
    specials = list(game.turn_specials)
    finish_turn(game)
    assert sorted(game.special_discards) == sorted(specials)


def test_f9_doppelganger_won_this_turn_is_kept():
    """F9, F28: the Doppelganger's winner keeps it past the end of the turn."""
    game = make_game()
    set_specials(game, "Doppelganger", "Fairy")
    run_to(game, "Doppelganger")
    win(game, 3)
    finish_turn(game)
    assert game.players[3].doppelganger
    assert game.special_discards == ["Fairy"]


# ---------------------------------------------------------------------------- F17, F18
def test_f17_reaching_three_points_ends_the_game_mid_turn():
    """F17: the game ends at once: no further auction of the turn is run."""
    game = make_game()
    set_specials(game, "Quack Wizard", "Fairy")
    set_player(game, 1, score=2)
    run_to(game, "Quack Wizard")
    left = list(game.face_down)
    win(game, 1)
    assert (game.winner, game.over, game.decision) == (1, True, None)
    assert game.players[1].score == 3
    assert game.face_down == left
    assert game.legal_options() == []


def test_f17_win_in_the_first_use_of_a_doubled_power_stops_the_second():
    """F17, F28: the Doppelganger's second use never happens once the first one wins."""
    game = make_game()
    set_specials(game, "Sorcerer's Apprentice", "Fairy")
    give_doppelganger(game, 0)
    set_player(game, 0, score=2, stones=(2, 2, 0))
    run_to(game, "Sorcerer's Apprentice")
    win(game, 0)
    choose(game, ("yes",))  # play the Doppelganger
    choose(game, ("pay", 2, 0, 0))
    assert game.winner == 0 and game.decision is None
    assert game.players[0].score == 3
    assert stones(game, 0) == (0, 2, 0)


def test_f18_game_is_truncated_after_max_turns():
    """F18: after the last allowed turn the game is over, truncated, with no winner."""
    game = make_game(max_turns=2)
    finish_turn(game)
    assert not game.over and game.turn == 2
    finish_turn(game)
    assert game.truncated and game.over and game.winner is None
    assert game.turn == 2 and game.decision is None


def test_f18_default_turn_limit():
    """F18: a game made without max_turns uses the documented default."""
    assert make_game().max_turns == DEFAULT_MAX_TURNS
