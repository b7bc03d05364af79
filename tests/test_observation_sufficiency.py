"""Every public fact is in the observation (layout v1), beside the no-leak tests of test_env.py.

The no-leak tests pin the observation from above (nothing private gets out); these pin it
from below: two moments that a seat may tell apart by the rules must give that seat two
different observations. *Public state* is everything the seat may know (F43): its own
hidden holdings, everything on the table, the public data of the pending decision and of
the power being used (announced to the table as it happens), and the history the
observation mode promises (this turn's auctions and their revealed bids). In ``"table"``
mode other players' coins behind their screens are not in it.

Readings recorded here (the rules leave them without effect on play, so a memoryless
observation keeps counts, not orders): the order of the discard pile (F7 reshuffles it) and
the order in which this turn's characters were played through the Imp or Goblin are kept as
multisets.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from dragonstones_env import env
from dragonstones_env.games.dragonstones.cards import COLOURS
from dragonstones_env.games.dragonstones.engine import Game
from dragonstones_env.games.dragonstones.observation import OBS_SIZE, Observer, decode
from tests.aec_support import play_until, random_step


def _rotate(seq, viewer, n):
    return None if seq is None else [seq[(viewer + k) % n] for k in range(n)]


def public_state(game: Game, viewer: int, mode: str) -> str:
    """What ``viewer`` may know now, in seats relative to him, as canonical JSON."""
    n = game.num_players
    sd = game.state_dict()

    def rel(p):
        return None if p is None else (p - viewer) % n

    players = []
    for k, p in enumerate(_rotate(sd["players"], viewer, n)):
        p = dict(p)
        if mode == "table" and k != 0:
            for coin in ("fairy", "common", "silver"):
                del p[coin]
        players.append(p)

    def auction(a):
        if a is None:
            return None
        return {
            "card": a["card"],
            "bids": _rotate(a["bids"], viewer, n),
            "values": _rotate(a["values"], viewer, n),
            "tied": None if a["tied"] is None else sorted(rel(p) for p in a["tied"]),
            "silver": None if a["silver"] is None else {str(rel(int(p))): v for p, v in a["silver"].items()},
            "outcome": a["outcome"],
            "winner": rel(a["winner"]),
        }

    current = sd["auction"]
    decision = sd["decision"]
    sealed_now = decision is not None and decision["kind"] in ("bid", "tiebreak")
    power = sd["power"]
    if power is not None:
        power = dict(power, player=rel(power["player"]))
        if power["second_bidders"] is not None:
            power["second_bidders"] = sorted(rel(q) for q in power["second_bidders"])
    own_sealed = game.auction._sealed.get(viewer) if game.auction is not None else None
    state = {
        "num_players": n,
        "turn": sd["turn"],
        "max_turns": sd["max_turns"],
        "players": players,
        "bank": sd["bank"],
        "pending_stones": sd["pending_stones"],
        "special_pile": sd["special_pile"],
        "special_discards": sorted(sd["special_discards"]),
        "turn_cards": sd["turn_cards"],
        "played": sorted(map(tuple, sd["played"])),
        "face_down": sd["face_down"],
        "auctions": [auction(a) for a in sd["auctions"]],
        "auction": None if current is None else {
            **auction(current),
            "sealed": sorted(rel(p) for p in current["sealed"]) if sealed_now else None,
        },
        "own_sealed": None if own_sealed is None else list(own_sealed),
        "decision": None if decision is None else {**decision, "player": rel(decision["player"])},
        "power": power,
        "winner": rel(sd["winner"]),
        "truncated": sd["truncated"],
    }
    return json.dumps(state, sort_keys=True)


def _record(seen: dict, game: Game, observer: Observer, mode: str, where: str) -> None:
    observer.invalidate()  # the test checks the vectors themselves, not the observer's caching
    for viewer in range(game.num_players):
        key = observer.observe(game, viewer).tobytes()
        state = public_state(game, viewer, mode)
        if key in seen:
            assert seen[key][0] == state, (
                f"same observation for viewer {viewer}, different public states:\n{seen[key][1]}\n{state}\n{where}")
        else:
            seen[key] = (state, where)


@pytest.mark.parametrize("mode", ["recall", "table"])
def test_equal_observations_never_come_with_different_public_states(mode):
    """Over random games at 3-6 players, every seat at every step: observation -> public state
    is a function. At each decision but most bids, the game is also branched on up to three of
    its options (the branches share the random generator's state, so they differ only by the
    choice) and each branch is observed at its next decision: a public choice that the
    observation forgets (the Rainbow Dragon's colour, say) shows up as two equal observations
    of different states. Bids are small most of the time, so that powers and ties come up often."""
    seen: dict[bytes, tuple[str, str]] = {}
    rng = np.random.default_rng(7)
    steps = 0
    for g in range(16):
        n = 3 + g % 4
        game = Game(n, seed=1000 + g, max_turns=8)
        observer = Observer(mode)
        while not game.over:
            where = f"game {g} ({n} players) turn {game.turn} decision {game.decision}"
            _record(seen, game, observer, mode, where)
            options = game.legal_options()
            if game.decision.kind == "bid" and rng.random() < 0.8:  # small bids: more auctions with winners
                options = [o for o in options if o[1] + o[2] <= 2 and o[3] == 0] or options
            branches = 3 if game.decision.kind != "bid" or rng.random() < 0.05 else 0
            for i in rng.permutation(len(options))[:branches]:
                branch = copy.deepcopy(game)
                branch.apply(options[i])
                _record(seen, branch, Observer(mode), mode, f"{where}, branch {options[i]}")
            game.apply(options[rng.integers(len(options))])
            steps += 1
    assert steps > 2000 and len(seen) > 2000


def _branch_at(kind: str, card: str, seed: int = 0, n: int = 4):
    """A game (random play) waiting for a decision of ``kind`` asked by ``card``, found by trying seeds."""
    rng = np.random.default_rng(seed)
    for s in range(400):
        e = env(num_players=n)
        e.reset(seed=s)
        if play_until(e, rng, lambda raw: (raw.game.decision.kind, raw.game.decision.card) == (kind, card),
                      limit=20000):
            return e
    raise AssertionError(f"no {kind} decision of the {card} in 400 random games")


def test_the_rainbow_dragons_named_colour_is_in_the_chooser_observation():
    """Issue #9's example (F39): branch at the colour choice, name two different colours that
    the first draw does not bust; at 'draw again or stop' the chooser's observations differ."""
    rng = np.random.default_rng(1)
    for _ in range(50):
        e = _branch_at("choose_colour", "Rainbow Dragon", seed=int(rng.integers(1 << 30)))
        game = e.unwrapped.game
        chooser = game.decision.player
        reached = {}
        for option in game.legal_options():
            g = copy.deepcopy(game)
            g.apply(option)
            if g.decision is not None and g.decision.kind == "draw_or_stop" and g.decision.player == chooser:
                reached[option[1]] = g
        if len(reached) >= 2:
            (c1, g1), (c2, g2) = list(reached.items())[:2]
            o1, o2 = Observer().observe(g1, chooser), Observer().observe(g2, chooser)
            assert not np.array_equal(o1, o2)
            assert decode(o1)["rainbow_named"] == c1 and decode(o2)["rainbow_named"] == c2
            assert g1.state_dict()["power"]["named"] == c1
            return
    pytest.fail("no Rainbow Dragon colour choice with two non-busting colours found")


def test_the_merchants_purchases_of_this_use_are_observed():
    e = _branch_at("buy_or_stop", "Merchant", seed=3)
    game = e.unwrapped.game
    p = game.decision.player
    buys = [o for o in game.legal_options() if o[0] == "buy"]
    game.apply(buys[0])
    if game.decision is not None and game.decision.kind == "buy_or_stop":
        d = decode(Observer().observe(game, p))
        assert d["merchant_bought"][buys[0][1]] == 1
        assert sum(d["merchant_paid"].values()) == (3 if buys[0][2] == "silver" else 1)


def test_the_copied_power_names_its_source():
    """F31/F35: a power used through the Ghost or the Imp says so (power_source)."""
    for source in ("Ghost", "Imp"):
        e = _branch_at("choose_card", source, seed=5)
        game = e.unwrapped.game
        assert decode(Observer().observe(game, game.decision.player))["card"] == source
        for option in game.legal_options():
            g = copy.deepcopy(game)
            g.apply(option)
            if g.power is not None and g.decision is not None:
                d = decode(Observer().observe(g, g.decision.player))
                assert d["power_source"] == source and d["card"] == option[1]
                assert g.state_dict()["power"]["source"] == source
                break


def test_the_thiefs_second_bidders_and_the_necromancers_price_are_observed():
    e = _branch_at("choose_loot", "Thief", seed=11)
    game = e.unwrapped.game
    p = game.decision.player
    d = decode(Observer().observe(game, p))
    victims = {(o[1] - p) % game.num_players for o in game.legal_options()}
    assert victims <= {k for k in range(game.num_players) if d["second_bidders"][k] == 1}
    e = _branch_at("yes_no", "Necromancer", seed=13)
    game = e.unwrapped.game
    p = game.decision.player
    price = game.state_dict()["power"]["price"]
    assert decode(Observer().observe(game, p))["necromancer_price"][0] == price
    before = game.players[p].fairy_spent
    game.apply(("yes",))
    assert before - game.players[p].fairy_spent == price


def test_decode_inverts_the_encoding_of_every_piece():
    """decode(obs) gives back the engine's counts (the bots read nothing else)."""
    rng = np.random.default_rng(2)
    e = env(num_players=5)
    e.reset(seed=2)
    for _ in range(300):
        if e.unwrapped.game.over:
            break
        random_step(e, rng)
    game = e.unwrapped.game
    viewer = game.decision.player if game.decision else 0
    d = decode(Observer("recall").observe(game, viewer))
    n = game.num_players
    for k in range(n):
        pl = game.players[(viewer + k) % n]
        assert d["seats"]["score"][k] == pl.score
        assert [d["seats"][c][k] for c in COLOURS] == pl.stones
        assert (d["seats"]["fairy"][k], d["seats"]["common"][k], d["seats"]["silver"][k]) == (
            pl.fairy, pl.common, pl.silver)
    assert d["own"]["fairy"] == game.players[viewer].fairy
    assert d["bank"]["silver"] == game.bank.silver and d["bank"]["red"] == game.bank.stones[0]
    assert d["progress"]["auctions_held"] == len(game.auctions)
    assert d["bid_cards"][: len(game.auctions)] == [a.card for a in game.auctions]
    assert d["seat_present"].sum() == n


def test_decoding_some_pieces_gives_those_pieces_of_the_whole_decode():
    """The bots decode only the pieces they read (a cost, not a different view): every piece so
    decoded equals the whole decode's, at every decision of a random game of each game."""
    from dragonstones_env import games
    from dragonstones_env.games.drachenschatten.observation import decode as ds_decode
    from dragonstones_env.policies.bots.drachenschatten import PIECES as DS_PIECES
    from dragonstones_env.policies.bots.dragonstones.table import PIECES

    def same(a, b):
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, np.ndarray):
            return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
        return type(a) is type(b) and a == b

    rng = np.random.default_rng(5)
    for game, dec, pieces in (("dragonstones", decode, PIECES), ("drachenschatten", ds_decode, DS_PIECES)):
        e = games.get(game).env(num_players=4)
        e.reset(seed=5)
        seen = 0
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            whole, part = dec(obs["observation"]), dec(obs["observation"], pieces)
            assert set(part) == set(pieces) | ({"asks"} if game == "dragonstones" else set())
            assert all(same(part[k], whole[k]) for k in part), game
            seen += 1
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert seen > 50
    blank = np.zeros(OBS_SIZE, np.float32)
    with pytest.raises(ValueError, match="no piece named 'cards'"):
        decode(blank, ("decision", "card", "cards"))
    with pytest.raises(ValueError, match="must include 'decision' and 'card'"):
        decode(blank, ("seats",))


def test_a_tiebreak_bid_is_observed_as_silver_and_amulet_not_only_its_value():
    """F14: 2 silver with an amulet and 4 silver alone are both worth 4, but they are different
    public facts (the amulet is gone); layout v1 shows both parts of a revealed tie-break bid."""
    rng = np.random.default_rng(4)
    for seed in range(200):
        game = Game(3, seed=seed)
        while not game.over and not any(a.silver for a in game.auctions):
            options = game.legal_options()
            if game.decision.kind == "bid":  # equal small bids: ties come up
                options = [o for o in options if o[1] == 1 and o[2] == 0 and o[3] == 0] or options
            game.apply(options[rng.integers(len(options))])
        auction = next((a for a in game.auctions if a.silver), None)
        if auction is None:
            continue
        p, (silver, _) = next(iter(auction.silver.items()))
        twin = copy.deepcopy(game)
        twin_auction = twin.auctions[game.auctions.index(auction)]
        twin_auction.silver[p] = (silver * 2, 0) if silver else (0, 1)  # another bid of the same kind of value
        slot = game.auctions.index(auction)
        seen = [decode(Observer().observe(g, p))["bids"] for g in (game, twin)]
        assert (seen[0]["tiebreak_silver"][slot, 0], seen[0]["tiebreak_amulet"][slot, 0]) == auction.silver[p]
        assert (seen[1]["tiebreak_silver"][slot, 0], seen[1]["tiebreak_amulet"][slot, 0]) == twin_auction.silver[p]
        return
    pytest.fail("no tie-break in 200 games")
