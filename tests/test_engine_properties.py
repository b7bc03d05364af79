"""Property tests of the Fist of Dragonstones engine over random legal play (hypothesis).

Hypothesis draws the seed, the player count (F1), the truncation turn (F18) and the seed of
a cheap random policy; the game is then played to its end and checked at every decision:
the F2 stock is conserved, nothing is negative, the state is JSON; per turn: the Witch is
auctioned first (F8), ten characters are auctioned or played (F7, F8), spent fairy gold and
black coins are home at the turn's start (F9); per game: replay, determinism, deepcopy,
seeds, monotone scores, and the end (F17, F18).
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragonstones_env.core import IllegalOptionError
from dragonstones_env.games.dragonstones.cards import CARDS_PER_TURN, COLOURS, SPECIAL_DECK, STANDARD
from dragonstones_env.games.dragonstones.engine import BID, TIEBREAK, WIN_SCORE, Game, replay

STOCK_TOTALS = {"fairy": 60, "silver": 40, "common": 15, "amulets": 2}  # F2
STONES_PER_COLOUR = 12  # F2

SETTINGS = {"deadline": None, "database": None, "print_blob": True}

seeds = st.integers(0, 2**63 - 1)
player_counts = st.integers(3, 6)
max_turns = st.integers(1, 12)


# ---------------------------------------------------------------------------- the policy
def random_option(game: Game, rng: random.Random) -> tuple:
    """A cheap random legal option: bids uniform over a random small subset, else uniform."""
    d = game.decision
    assert d is not None
    if d.kind == BID:
        f_max, c_max, b_max, a_max = game.bid_limits(d.player)
        cap = rng.choice((0, 1, 2, 3, f_max))  # mostly small bids, now and then anything
        return (BID, rng.randint(0, min(cap, f_max)), rng.randint(0, min(cap, c_max) // 2),
                int(b_max > 0 and rng.random() < 0.2), int(a_max > 0 and rng.random() < 0.3))
    if d.kind == TIEBREAK:
        pl = game.players[d.player]
        return (TIEBREAK, rng.randint(0, min(pl.silver, rng.choice((0, 2, 5, pl.silver)))),
                int(pl.amulets > 0 and rng.random() < 0.3))
    return rng.choice(game.legal_options())


# ---------------------------------------------------------------------------- checks
def walk_ints(obj: Any, path: str = ""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk_ints(v, f"{path}.{k}")
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            yield from walk_ints(v, f"{path}[{i}]")
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield path, obj


def check_decision(game: Game, scores: list[int]) -> dict:
    """The invariants that hold at every decision (and at the end). Returns the state."""
    s = game.state_dict()
    text = game.to_json()
    assert json.loads(text) == json.loads(json.dumps(s)), "to_json() is the state_dict() as JSON"
    players, bank = s["players"], s["bank"]
    assert len(players) == game.num_players
    # F2: conservation of every coin and stone.
    assert bank["fairy"] + sum(p["fairy"] + p["fairy_spent"] for p in players) == STOCK_TOTALS["fairy"]
    for coin in ("silver", "common", "amulets"):
        assert bank[coin] + sum(p[coin] for p in players) == STOCK_TOTALS[coin], coin
    for c in COLOURS:
        held = sum(p["stones"][c] for p in players)
        assert bank["stones"][c] + held + s["pending_stones"][c] == STONES_PER_COLOUR, c
    for path, value in walk_ints(s):
        assert value >= 0, f"negative count at {path}: {value}"
        assert isinstance(value, int), f"non-int count at {path}: {value!r}"
    # F7, F28: the 25 special cards are in the pile, the discards, this turn or a hand.
    held_doppelgangers = sum(p["doppelganger"] for p in players)
    assert held_doppelgangers <= 1
    specials = [*game.special_pile, *game.special_discards, *game.turn_specials]
    assert Counter(specials + ["Doppelganger"] * held_doppelgangers) == Counter(SPECIAL_DECK)
    assert s["special_pile"] == len(game.special_pile)
    # F8: ten characters this turn, the Witch first; each is played, face down or in auction.
    assert len(s["turn_cards"]) == CARDS_PER_TURN
    assert Counter(s["turn_cards"]) - Counter(SPECIAL_DECK) == Counter(STANDARD)
    assert s["auctions"] and s["auctions"][0]["card"] == "Witch"
    assert not s["played"] or s["played"][0][0] == "Witch"
    open_card = [game.auction.card] if game.auction is not None and game.auction.outcome in ("open", "tiebreak") else []
    assert Counter([c for c, _ in s["played"]] + game.face_down + open_card) == Counter(s["turn_cards"])
    assert sorted(game.face_down) == s["face_down"]
    # Scores never decrease; 3 points ends the game (F17).
    for p, pl in enumerate(players):
        assert pl["score"] >= scores[p], f"player {p}'s score fell from {scores[p]} to {pl['score']}"
        scores[p] = pl["score"]
    if not game.over:
        assert all(pl["score"] < WIN_SCORE for pl in players)
        assert game.decision is not None and s["decision"]["player"] in range(game.num_players)
        assert game.legal_options(), "a pending decision has legal options"
        assert not s["over"] and s["winner"] is None and not s["truncated"]
        assert 1 <= game.turn <= game.max_turns
    if sum(s["pending_stones"].values()):
        assert game.decision is not None and game.decision.kind == "draw_or_stop"
    return s


def illegal_options(game: Game) -> list:
    """Options that are not legal now, whatever the state (well typed, or plainly malformed)."""
    d = game.decision
    pl = game.players[d.player]
    out: list = [("nope",), (), 3, "bid", None]
    if d.kind == BID:
        out += [(BID, pl.fairy + 1, 0, 0, 0), (BID, 0, pl.common + 1, 0, 0), (BID, -1, 0, 0, 0),
                (BID, 0, 0, 2, 0), (BID, 0, 0, 0, 2), (BID, 0, 0, 0), (TIEBREAK, 0, 0), (BID, 0, 0, 0, 0, 0)]
        if pl.black == 0:
            out.append((BID, 0, 0, 1, 0))
        if pl.amulets == 0:
            out.append((BID, 0, 0, 0, 1))
    elif d.kind == TIEBREAK:
        out += [(TIEBREAK, pl.silver + 1, 0), (TIEBREAK, -1, 0), (TIEBREAK, 0, 2), (BID, 0, 0, 0, 0)]
        if pl.amulets == 0:
            out.append((TIEBREAK, 0, 1))
    else:
        legal = game.legal_options()
        out += [(legal[0][0], "bogus"), (*legal[0], 0), (BID, 0, 0, 0, 0), ("colour", "purple"),
                ("target", game.num_players), ("steal", d.player, "red")]
        out = [o for o in out if o not in legal]
    return out


def check_illegal_rejected(game: Game, rng: random.Random) -> None:
    """F-independent API contract: an illegal option raises and leaves the state untouched."""
    before, n_events, decision = game.to_json(), len(game.record), game.decision
    for option in rng.sample(illegal_options(game), 3):
        assert not game.is_legal(option), option
        with pytest.raises(IllegalOptionError):
            game.apply(option)
        assert game.to_json() == before and len(game.record) == n_events and game.decision == decision


def check_record_turns(game: Game) -> None:
    """F8: per turn, the Witch is auctioned first and ten characters are auctioned or played."""
    turns: list[list[dict]] = []
    for event in game.record:
        if event["event"] == "turn":
            turns.append([event])
        elif turns:
            turns[-1].append(event)
    assert len(turns) == game.turn
    for i, events in enumerate(turns, start=1):
        assert events[0]["turn"] == i and len(events[0]["specials"]) == 2
        auctioned = [e["card"] for e in events if e["event"] == "auction"]
        assert auctioned[0] == "Witch" and auctioned.count("Witch") == 1
        done = [e["card"] for e in events if e["event"] == "outcome"]
        done += [e["card"] for e in events if e["event"] in ("imp_picks", "goblin_draws")]
        cards = Counter([*STANDARD, *events[0]["specials"]])
        if any(e["event"] == "end_turn" for e in events):
            assert len(done) == CARDS_PER_TURN and Counter(done) == cards, f"turn {i}: {done}"
        else:  # the game was won during this turn (F17)
            assert i == game.turn and game.winner is not None
            assert len(done) <= CARDS_PER_TURN and not Counter(done) - cards


def check_end(game: Game, scores: list[int]) -> None:
    """F17, F18: a winner at 3 points or more, or truncation after max_turns; nothing else."""
    assert game.over and game.decision is None and game.legal_options() == []
    assert (game.winner is None) == game.truncated, "exactly one of a winner and truncation"
    if game.winner is not None:
        assert game.players[game.winner].score >= WIN_SCORE
        assert [p for p, pl in enumerate(game.players) if pl.score >= WIN_SCORE] == [game.winner]
        assert game.record[-1] == {"event": "end", "reason": "won", "winners": [game.winner]}
        assert game.turn <= game.max_turns
    else:
        assert game.turn == game.max_turns
        assert all(pl.score < WIN_SCORE for pl in game.players)
        assert game.record[-1]["event"] == "end" and game.record[-1]["reason"] == "truncated"
    # Every point scored is in the record, and the totals only grow.
    for p, pl in enumerate(game.players):
        total = 0
        for e in game.record:
            if e["event"] == "score" and e["player"] == p:
                assert e["points"] > 0 and e["total"] == total + e["points"]
                total = e["total"]
        assert pl.score == total == scores[p]
    s = game.state_dict()
    assert s["over"] and s["decision"] is None and s["winner"] == game.winner and s["truncated"] == game.truncated
    with pytest.raises(IllegalOptionError):
        game.apply((BID, 0, 0, 0, 0))
    json.dumps(game.record)


# ---------------------------------------------------------------------------- playing
def play(num_players: int, seed: int, policy_seed: int, turns: int) -> tuple[Game, list[tuple]]:
    """Play a random game to its end, checking every decision; returns it and its options."""
    game = Game(num_players, seed=seed, max_turns=turns)
    rng = random.Random(policy_seed)
    scores = [0] * num_players
    options: list[tuple] = []
    turn_seen = 0
    while not game.over:
        s = check_decision(game, scores)
        if game.turn != turn_seen:  # the first decision of a turn: F9 was done, the Witch is up
            assert game.turn == turn_seen + 1
            turn_seen = game.turn
            assert all(p["fairy_spent"] == 0 and p["black"] == 0 for p in s["players"])
            assert s["decision"] == {"kind": BID, "player": 0, "card": "Witch"}
            assert s["played"] == [] and [a["card"] for a in s["auctions"]] == ["Witch"]
            assert s["auction"]["card"] == "Witch"
        if rng.random() < 0.03:
            check_illegal_rejected(game, rng)
        option = random_option(game, rng)
        assert game.is_legal(option), option
        game.apply(option)
        options.append(option)
    check_decision(game, scores)
    check_end(game, scores)
    check_record_turns(game)
    return game, options


# ---------------------------------------------------------------------------- the properties
@settings(max_examples=100, **SETTINGS)
@given(num_players=player_counts, seed=seeds, policy_seed=seeds, turns=max_turns, copy_at=st.floats(0, 1))
def test_random_play_keeps_every_invariant(num_players, seed, policy_seed, turns, copy_at):
    game, options = play(num_players, seed, policy_seed, turns)
    n_choices = sum(e["event"] == "choice" for e in game.record)
    assert n_choices == len(options)
    assert [tuple(e["option"]) for e in game.record if e["event"] == "choice"] == options

    # Replay equality: the record rebuilds the identical game (and the identical record).
    again = replay(json.loads(json.dumps(game.record)))
    assert again.to_json() == game.to_json()
    assert json.dumps(again.record) == json.dumps(game.record)

    # Determinism per seed: the same seed and options give the same game, record included.
    twin = Game(num_players, seed=seed, max_turns=turns)
    for option in options:
        twin.apply(option)
    assert twin.to_json() == game.to_json()
    assert json.dumps(twin.record) == json.dumps(game.record)
    assert twin.winner == game.winner and twin.truncated == game.truncated and twin.turn == game.turn

    # copy.deepcopy mid-game: the copy and the original continue identically under the same
    # options, and playing the original on does not touch the copy.
    at = min(int(copy_at * len(options)), len(options) - 1)
    original = Game(num_players, seed=seed, max_turns=turns)
    for option in options[:at]:
        original.apply(option)
    clone = copy.deepcopy(original)
    text = clone.to_json()
    for option in options[at:]:
        original.apply(option)
    assert clone.to_json() == text
    for option in options[at:]:
        clone.apply(option)
    assert clone.to_json() == original.to_json() == game.to_json()
    assert json.dumps(clone.record) == json.dumps(original.record) == json.dumps(game.record)


@settings(max_examples=40, **SETTINGS)
@given(num_players=player_counts, seed=seeds)
def test_different_seeds_differ(num_players, seed):
    a, b = Game(num_players, seed=seed), Game(num_players, seed=seed + 1)
    hidden_a = (a.record[1], a.special_pile, a.face_down)
    hidden_b = (b.record[1], b.special_pile, b.face_down)
    assert hidden_a != hidden_b
    # The same seed gives the same start, hidden order included.
    c = Game(num_players, seed=seed)
    assert (c.record, c.special_pile, c.face_down) == (a.record, a.special_pile, a.face_down)


@settings(max_examples=25, **SETTINGS)
@given(num_players=player_counts, seed=seeds, policy_seed=seeds)
def test_different_seeds_give_different_games(num_players, seed, policy_seed):
    """Played with the same policy, two seeds give different games (records and states)."""
    a, _ = play(num_players, seed, policy_seed, 2)
    b, _ = play(num_players, seed + 1, policy_seed, 2)
    assert json.dumps(a.record) != json.dumps(b.record)


@settings(max_examples=30, **SETTINGS)
@given(num_players=player_counts, seed=seeds, policy_seed=seeds, steps=st.integers(0, 300))
def test_deepcopy_is_independent(num_players, seed, policy_seed, steps):
    """Playing on a deepcopy leaves the original untouched, and vice versa."""
    game = Game(num_players, seed=seed)
    rng = random.Random(policy_seed)
    for _ in range(steps):
        if game.over:
            break
        game.apply(random_option(game, rng))
    if game.over:
        return
    text, record = game.to_json(), json.dumps(game.record)
    clone = copy.deepcopy(game)
    clone_rng = random.Random(policy_seed + 1)
    for _ in range(50):
        if clone.over:
            break
        clone.apply(random_option(clone, clone_rng))
    assert game.to_json() == text and json.dumps(game.record) == record
    # the original, played on with the clone's options from the copy, would equal the clone
    options = [tuple(e["option"]) for e in clone.record[len(game.record):] if e["event"] == "choice"]
    for option in options:
        game.apply(option)
    assert game.to_json() == clone.to_json()


# ---------------------------------------------------------------------------- option types
def _games_with_int_options(count: int):
    """Games waiting at a listed decision whose options hold ints (target, steal, pay)."""
    found = []
    for seed in range(200):
        game = Game(3 + seed % 4, seed=seed, max_turns=40)
        rng = random.Random(seed)
        while not game.over and len(found) < count:
            d = game.decision
            if d.kind not in (BID, TIEBREAK):
                legal = game.legal_options()
                if any(type(x) is int for x in legal[0][1:]):
                    found.append(copy.deepcopy(game))
                    break
            game.apply(random_option(game, rng))
        if len(found) >= count:
            break
    return found


def test_option_item_types_are_checked_or_normalised():
    """An option equal to a legal one but with float/bool/numpy items must either be
    rejected (state untouched) or act exactly as the int option (state and JSON record)."""
    games = _games_with_int_options(12)
    assert games
    bidding = Game(4, seed=11)
    games.append(bidding)  # a gold bid: ('bid', 1, 1, 0, 0)
    for game in games:
        legal = [(BID, 1, 1, 0, 0)] if game is bidding else game.legal_options()
        option = next(o for o in legal if any(type(x) is int for x in o[1:]))
        for convert in (float, np.int64, bool):
            if convert is bool and any(type(x) is int and x not in (0, 1) for x in option[1:]):
                continue
            variant = tuple(convert(x) if type(x) is int else x for x in option)
            expected, trial = copy.deepcopy(game), copy.deepcopy(game)
            expected.apply(option)
            before = trial.to_json()
            try:
                trial.apply(variant)
            except IllegalOptionError:
                assert trial.to_json() == before and trial.decision == game.decision
                continue
            assert trial.to_json() == expected.to_json(), variant
            assert json.dumps(trial.record) == json.dumps(expected.record), variant


def test_is_legal_agrees_with_apply_on_lists():
    """apply() takes an option as a list (from JSON); is_legal() should say the same."""
    game = Game(4, seed=3)
    option = [BID, 0, 0, 0, 0]
    assert game.is_legal(option)
    game.apply(option)
    assert [e["option"] for e in game.record if e["event"] == "choice"] == [option]
