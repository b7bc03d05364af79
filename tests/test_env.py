"""The Fist of Dragonstones AEC environment: masks, leaks, errors, rewards.

The contract every game keeps (API, determinism, illegal actions, Gym checkers) is in tests/contract.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from dragonstones_env import env, raw_env
from dragonstones_env.games.dragonstones import actions as A
from dragonstones_env.games.dragonstones.observation import LAYOUT, OBS_SIZE, SEAT_FEATURES, view
from tests.aec_support import play_out, play_until, random_step


def test_metadata_agents_and_spaces_are_shared():
    e3, e6 = env(num_players=3), env(num_players=6)
    assert e3.metadata["name"] == "dragonstones_v1"
    e3.reset(seed=0)
    e6.reset(seed=0)
    assert e3.agents == ["player_0", "player_1", "player_2"]
    assert e3.action_space("player_0") == e6.action_space("player_5")
    assert e3.observation_space("player_1") == e6.observation_space("player_4")
    assert e3.action_space("player_0").n == A.NUM_ACTIONS


@pytest.mark.parametrize("mode", ["recall", "table"])
def test_observations_stay_inside_the_space(mode):
    rng = np.random.default_rng(7)
    for game in range(60):
        e = env(num_players=3 + game % 4, observation_mode=mode)
        e.reset(seed=game)
        space = e.observation_space("player_0")
        low, high = space["observation"].low, space["observation"].high
        for agent in e.agent_iter():
            obs = e.observe(agent)
            o = obs["observation"]
            assert o.dtype == np.float32 and o.shape == (OBS_SIZE,)
            assert (o >= low).all() and (o <= high).all(), f"game {game}: out of bounds"
            assert obs["action_mask"].dtype == np.int8
            if game % 20 == 0:
                assert space.contains(obs)
            random_step(e, rng)


def test_mask_allows_exactly_the_engines_legal_options():
    rng = np.random.default_rng(3)
    for seed in range(15):
        e = env(num_players=4)
        e.reset(seed=seed)
        raw = e.unwrapped
        while not raw.game.over:
            d = raw.game.decision
            mask = e.observe(e.agent_selection)["action_mask"]
            legal = {A.decode(int(a), d.player, 4) for a in np.flatnonzero(mask)}
            options = raw.game.legal_options()
            if d.kind == "bid":  # actions cap fairy gold at FAIRY_CAP
                options = [o for o in options if o[1] <= A.FAIRY_CAP]
            assert legal == set(options)
            for agent in e.agents:
                if agent != e.agent_selection:
                    assert not e.observe(agent)["action_mask"].any()
            random_step(e, rng)


def _sealed_round(e) -> bool:
    d = e.game.decision
    return d is not None and d.kind in ("bid", "tiebreak")


@pytest.mark.parametrize("mode", ["recall", "table"])
def test_a_sealed_bid_is_never_seen_before_the_reveal(mode):
    """F43: branch on two different bids; until the reveal no other agent can tell them apart."""
    rng = np.random.default_rng(11)
    checked = 0
    for seed in range(40):
        e = env(num_players=3 + seed % 4, observation_mode=mode)
        e.reset(seed=seed)
        for _ in range(int(rng.integers(0, 150))):
            if e.unwrapped.game.over:
                break
            random_step(e, rng)
        if not play_until(e, rng, _sealed_round):
            continue
        raw = e.unwrapped
        round_id = (raw.game.turn, len(raw.game.auctions), raw.game.decision.kind)
        bidder = e.agent_selection
        legal = np.flatnonzero(e.observe(bidder)["action_mask"])
        if len(legal) < 2:
            continue
        a1, a2 = rng.choice(legal, size=2, replace=False)
        left, right = copy.deepcopy(e), copy.deepcopy(e)
        left.step(int(a1))
        right.step(int(a2))

        def same_round(branch, round_id=round_id) -> bool:
            g = branch.unwrapped.game
            d = g.decision
            return d is not None and (g.turn, len(g.auctions), d.kind) == round_id and bool(g.auction._sealed)

        # Until the reveal, everybody else bids the same in both branches.
        while same_round(left):
            assert same_round(right)
            for agent in left.possible_agents:
                if agent == bidder:
                    continue
                ol, orr = left.observe(agent), right.observe(agent)
                assert np.array_equal(ol["observation"], orr["observation"]), (seed, agent)
                assert np.array_equal(ol["action_mask"], orr["action_mask"]), (seed, agent)
                il, ir = left.unwrapped.infos[agent], right.unwrapped.infos[agent]
                assert il.keys() == ir.keys() and all(np.array_equal(il[k], ir[k]) for k in il)
            assert left.agent_selection == right.agent_selection
            assert left.unwrapped.state_dict() == right.unwrapped.state_dict()
            checked += 1
            move = int(rng.choice(np.flatnonzero(left.observe(left.agent_selection)["action_mask"])))
            left.step(move)
            right.step(move)
    assert checked >= 25


def test_the_bidder_sees_his_own_sealed_bid():
    e = env(num_players=4)
    e.reset(seed=1)
    raw = e.unwrapped
    action = A.encode(("bid", 3, 1, 0, 0), 0, 4)
    e.step(action)
    own = view(raw.observe("player_0")["observation"], "own")
    assert own[5] == pytest.approx(0.3) and own[6] == pytest.approx(0.1)
    assert not view(raw.observe("player_1")["observation"], "own")[5:].any()


def test_table_mode_hides_other_players_coins_and_recall_shows_them():
    for mode, shown in (("table", False), ("recall", True)):
        e = env(num_players=4, observation_mode=mode)
        e.reset(seed=2)
        seats = view(e.observe("player_0")["observation"], "seats")
        fairy = SEAT_FEATURES.index("fairy")
        assert seats[0, fairy] == pytest.approx(0.8)  # own 8 fairy gold, always
        assert (seats[1:4, fairy] > 0).all() == shown
        assert seats[4:, :].sum() == 0  # absent seats are padding


def test_observations_are_seat_relative():
    e = env(num_players=4)
    e.reset(seed=5)
    raw = e.unwrapped
    raw.game.players[2].score = 2
    raw._observer.invalidate()
    score = SEAT_FEATURES.index("score")
    for viewer in range(4):
        seats = view(raw.observe(f"player_{viewer}")["observation"], "seats")
        assert seats[(2 - viewer) % 4, score] == pytest.approx(2 / 3)


def test_illegal_action_raises_names_it_and_changes_nothing():
    e = env(num_players=4)
    e.reset(seed=0)
    raw = e.unwrapped
    before = json.dumps(raw.state_dict(), sort_keys=True)
    record = len(raw.game.record)
    illegal = A.encode(("bid", 9, 0, 0, 0), 0, 4)  # 9 fairy gold: a player holds 8
    with pytest.raises(ValueError, match=r"player_0.*'bid'.*bid 9 fairy"):
        e.step(illegal)
    for bad in (-1, A.NUM_ACTIONS, 2.5, "3", None):
        with pytest.raises(ValueError, match="player_0"):
            e.step(bad)
    assert json.dumps(raw.state_dict(), sort_keys=True) == before
    assert len(raw.game.record) == record
    assert e.agent_selection == "player_0"


def test_rewards_are_zero_sum_at_a_win_and_zero_at_truncation():
    rng = np.random.default_rng(0)
    for n in (3, 4, 5, 6):
        e = env(num_players=n)
        e.reset(seed=n)
        totals = play_out(e, rng)
        winner = e.unwrapped.game.winner
        assert winner is not None
        assert totals[f"player_{winner}"] == 1.0
        assert sum(totals.values()) == pytest.approx(0.0)
        assert all(v == pytest.approx(-1 / (n - 1)) for a, v in totals.items() if a != f"player_{winner}")
    e = env(num_players=3, max_turns=1)
    e.reset(seed=0)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        assert not term
        if trunc:
            e.step(None)
        else:
            random_step(e, rng)
    assert e.unwrapped.game.truncated and set(totals.values()) == {0.0}


def test_reward_shaping_pays_points_as_they_are_scored():
    e = env(num_players=3, reward_shaping=0.1)
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    got = play_out(e, rng)
    game = e.unwrapped.game
    for p, agent in enumerate(e.possible_agents):
        final = 1.0 if p == game.winner else -0.5
        assert got[agent] == pytest.approx(final + 0.1 * game.players[p].score)


def test_unknown_option_and_bad_values_are_named():
    with pytest.raises(ValueError, match=r"unknown option.*'players'"):
        raw_env(players=4)
    with pytest.raises(ValueError, match="num_players"):
        raw_env(num_players=7)
    with pytest.raises(ValueError, match="num_players"):
        raw_env(num_players=2)
    with pytest.raises(ValueError, match="observation_mode"):
        raw_env(observation_mode="full")
    with pytest.raises(ValueError, match="illegal_action"):
        raw_env(illegal_action="ignore")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array_list")


def test_describe_action_reads_every_family():
    e = env(num_players=4)
    e.reset(seed=0)
    raw = e.unwrapped
    assert raw.describe_action(A.encode(("bid", 3, 1, 0, 1), 0, 4)) == "bid 3 fairy + 1 common + amulet (value 8)"
    assert raw.describe_action(A.encode(("bid", 0, 0, 1, 0), 0, 4)) == "bid 0 fairy + 0 common + black coin (value 0)"
    texts = {A.describe(a) for a in range(A.NUM_ACTIONS)}
    assert len(texts) == A.NUM_ACTIONS  # every action reads differently
    assert A.describe(A.encode(("colour", "blue"), 0, 4)) == "colour blue"
    assert A.describe(A.encode(("buy", "red", "silver"), 0, 4)) == "buy a red stone with 3 silver"
    with pytest.raises(ValueError, match="outside"):
        A.describe(A.NUM_ACTIONS)


def test_describe_action_names_the_character_of_the_decision():
    rng = np.random.default_rng(2)
    for seed in range(100):
        e = env(num_players=4)
        e.reset(seed=seed)
        if play_until(e, rng, lambda r: (r.game.decision.kind, r.game.decision.card) == ("choose_colour", "Troll")):
            break
    else:
        pytest.fail("no Troll decision in 100 random games")
    raw = e.unwrapped
    actor = raw.game.decision.player
    assert raw.describe_action(A.encode(("colour", "blue"), actor, 4)) == "Troll: colour blue"


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_encode_decode_round_trip_with_relative_seats(n):
    for actor in range(n):
        for q in range(n):
            if q == actor:
                continue
            for option in (("target", q), ("steal", q, "blue"), ("steal", q, "coin")):
                assert A.decode(A.encode(option, actor, n), actor, n) == option
    for a in range(A.FAMILY["target"].start):
        assert A.encode(A.decode(a, 0, n), 0, n) == a


def test_render_ansi_shows_the_current_agents_view():
    e = env(num_players=3, render_mode="ansi", observation_mode="table")
    e.reset(seed=0)
    text = e.render()
    assert "seen by player_0" in text and "coins hidden" in text
    assert "player_0: score 0" in text and "fairy 8" in text


def test_observation_layout_names_every_slice_once():
    layout = raw_env.observation_layout()
    covered = np.zeros(OBS_SIZE, int)
    for sl in layout.values():
        covered[sl] += 1
    assert (covered == 1).all()
    assert set(layout) == set(LAYOUT)
