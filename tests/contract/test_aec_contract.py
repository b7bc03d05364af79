"""The AEC contract, for every registered game (see conftest.py)."""

from __future__ import annotations

import copy
import itertools
import json

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from dragonstones_env import games
from dragonstones_env.policies.shaped import ShapedNet, forward, game_shape
from tests.aec_support import play_out, random_step


def test_pettingzoo_api_test(spec, n):
    api_test(spec.env(num_players=n), num_cycles=300)


def test_pettingzoo_seed_test(spec, n):
    seed_test(lambda: spec.env(num_players=n), num_cycles=300)


def test_the_spec_matches_its_env(spec):
    raw = spec.raw_env
    assert spec.env(num_players=spec.default_players).metadata["name"] == spec.name == raw.metadata["name"]
    assert spec.layout.startswith(spec.name + ":")
    assert spec.default_players in spec.players
    assert spec.options["num_players"] == spec.default_players
    with pytest.raises(ValueError, match="num_players"):
        raw(num_players=spec.players.stop)
    with pytest.raises(ValueError, match="num_players"):
        raw(num_players=spec.players.start - 1)
    with pytest.raises(ValueError, match="bogus"):
        raw(bogus=1)


def test_the_shaped_network_reads_every_game(spec):
    """Its seat cuts partition the observation, and every action has its family's component
    (dragonstones_env/policies/shaped.py); a random shaped network gives a logit per action."""
    raw = spec.raw_env
    shape = game_shape(raw)
    assert sorted([*shape.own_index, *shape.seat_index.ravel()]) == list(range(raw.OBS_SIZE))
    assert shape.incidence.shape == (len(shape.components), raw.NUM_ACTIONS)
    families = [shape.components.index(f.name) for f in raw.CODEC.families]
    assert (shape.incidence[families].sum(axis=0) == 1).all()
    rng = np.random.default_rng(0)
    def layer(i, o):
        return rng.normal(size=(i, o)).astype(np.float32), np.zeros(o, np.float32)
    net = ShapedNet("tanh", (layer(shape.seat_index.shape[1], 4),), (layer(len(shape.own_index) + 4, 8),),
                    layer(8, len(shape.components)), layer(8, raw.NUM_ACTIONS))
    env = spec.env(num_players=spec.default_players)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)["observation"]
    logits = forward(net, shape, np.tanh, obs[None])
    assert logits.shape == (1, raw.NUM_ACTIONS) and np.isfinite(logits).all()


def test_agents_and_spaces_are_shared_by_every_table_size(spec, sizes):
    envs = [spec.env(num_players=n) for n in sizes]
    for e, n in zip(envs, sizes, strict=True):
        e.reset(seed=0)
        assert e.agents == [f"player_{i}" for i in range(n)]
    first, last = envs[0], envs[-1]
    assert first.action_space("player_0") == last.action_space(f"player_{sizes[-1] - 1}")
    assert first.observation_space("player_0") == last.observation_space(f"player_{sizes[-1] - 1}")
    assert first.action_space("player_0").n == spec.raw_env.NUM_ACTIONS
    assert first.observation_space("player_0")["observation"].shape == (spec.raw_env.OBS_SIZE,)
    spans = sorted((s.start, s.stop) for s in first.unwrapped.observation_layout().values())
    assert spans[0][0] == 0 and spans[-1][1] == spec.raw_env.OBS_SIZE
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))  # every float named once


def test_observations_stay_inside_the_space_and_only_the_agent_to_act_has_legal_actions(spec, sizes):
    rng = np.random.default_rng(7)
    for game in range(12):
        n = sizes[game % len(sizes)]
        e = spec.env(num_players=n)
        e.reset(seed=game)
        raw = e.unwrapped
        space = e.observation_space("player_0")
        for agent in e.agent_iter():
            obs = e.observe(agent)
            assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
            assert space.contains(obs), f"game {game}: observation outside its space"
            d = raw.game.decision
            if d is not None and agent == e.agent_selection:
                acts = np.flatnonzero(obs["action_mask"])
                assert len(acts) > 0
                for a in acts[:50]:  # every allowed action is a legal option of the engine
                    assert raw.game.is_legal(raw._decode(int(a), d.player))
                for other in e.agents:
                    if other != agent:
                        assert not e.observe(other)["action_mask"].any()
            random_step(e, rng)


def test_same_seed_and_actions_give_the_same_game_byte_for_byte(spec):
    def run():
        e = spec.env(num_players=spec.default_players)
        e.reset(seed=123)
        rng = np.random.default_rng(5)
        while not e.unwrapped.game.over:
            random_step(e, rng)
        return json.dumps(e.unwrapped.state_dict(), sort_keys=True), json.dumps(e.unwrapped.game.record)

    assert run() == run()


def test_the_record_replays_to_the_same_state(spec):
    rng = np.random.default_rng(2)
    e = spec.env(num_players=spec.players[-1])
    e.reset(seed=4)
    while not e.unwrapped.game.over:
        random_step(e, rng)
    game = e.unwrapped.game
    again = spec.replay(json.loads(json.dumps(game.record)))
    assert again.state_dict() == game.state_dict()
    assert list(again.winners) == list(game.winners)
    assert all(event.get(type(game).record_key) for event in game.record)  # every event names its kind


def test_deepcopy_continues_identically(spec):
    def game_at(steps: int):
        rng = np.random.default_rng(9)
        e = spec.env(num_players=spec.players[-1])
        e.reset(seed=21)
        while steps and not e.unwrapped.game.over:
            random_step(e, rng)
            steps -= 1
        return e, steps

    _, left = game_at(50)
    e, _ = game_at(min(25, (50 - left) // 2))  # copied halfway through a short game, after 25 steps of a long one
    twin = copy.deepcopy(e)
    ra, rb = np.random.default_rng(4), np.random.default_rng(4)
    while not e.unwrapped.game.over:
        assert e.agent_selection == twin.agent_selection
        for agent in e.agents:
            oa, ob = e.observe(agent), twin.observe(agent)
            assert np.array_equal(oa["observation"], ob["observation"])
            assert np.array_equal(oa["action_mask"], ob["action_mask"])
        random_step(e, ra)
        random_step(twin, rb)
    assert e.unwrapped.game.record == twin.unwrapped.game.record
    assert e.unwrapped.state_dict() == twin.unwrapped.state_dict()


def test_illegal_actions_raise_name_the_agent_and_change_nothing(spec):
    e = spec.env(num_players=spec.default_players)
    e.reset(seed=0)
    raw = e.unwrapped
    agent = e.agent_selection
    before = json.dumps(raw.state_dict(), sort_keys=True)
    record = len(raw.game.record)
    illegal = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    for bad in (illegal, -1, spec.raw_env.NUM_ACTIONS, 2.5, True, None, "3"):
        with pytest.raises(ValueError, match=agent):
            e.step(bad)
        assert json.dumps(raw.state_dict(), sort_keys=True) == before
        assert len(raw.game.record) == record and e.agent_selection == agent
    random_step(e, np.random.default_rng(0))  # the game goes on


def test_penalize_mode_ends_the_game_with_minus_one_for_the_offender(spec):
    e = spec.env(num_players=spec.default_players, illegal_action="penalize")
    e.reset(seed=3)
    offender = e.agent_selection
    e.step(int(np.flatnonzero(e.observe(offender)["action_mask"] == 0)[0]))
    assert all(e.terminations.values())
    assert e.rewards == {a: (-1.0 if a == offender else 0.0) for a in e.agents}
    assert e.infos[offender]["illegal_action"] is True and e.unwrapped.penalty
    assert all(e.infos[a]["illegal_action"] is False for a in e.agents if a != offender)
    assert not any(info["winners"].any() for info in e.infos.values())
    for agent in e.agent_iter():
        assert not e.observe(agent)["action_mask"].any()
        e.step(None)
    assert e.agents == []


def test_random_games_end_zero_sum_with_the_winners_rewarded(spec, sizes):
    rng = np.random.default_rng(0)
    for n in sizes:
        e = spec.env(num_players=n)
        e.reset(seed=n)
        totals = play_out(e, rng)
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
        winners = list(e.unwrapped.game.winners)
        if 0 < len(winners) < n:
            assert min(totals[f"player_{p}"] for p in winners) > max(
                totals[a] for i, a in enumerate(e.possible_agents) if i not in winners)


def test_state_dict_is_json(spec):
    e = spec.env(num_players=spec.default_players)
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(20):
        if e.unwrapped.game.over:
            break
        assert json.loads(json.dumps(e.unwrapped.state_dict())) == e.unwrapped.state_dict()
        random_step(e, rng)


def test_declared_reward_range_and_length_bound_hold_in_random_games(spec, sizes):
    """``reward_range`` and ``max_decisions`` (what the OpenSpiel wrapper declares) hold: every final reward
    lies in the range and no game asks more decisions than the bound; a lone winner gets the top of the range."""
    if spec.reward_range is None or spec.max_decisions is None:
        # not offered to OpenSpiel (a toy game, a custom deck's): then it declares neither, as one without
        # the other offers nothing
        assert spec.reward_range is None and spec.max_decisions is None, f"{spec.id} declares only one of the two"
        return
    rng = np.random.default_rng(3)
    for n in sizes:
        low, high = spec.reward_range(n)
        assert low < 0 < high
        for game in range(4):
            e = spec.raw_env(num_players=n)
            e.reset(seed=game)
            bound = spec.max_decisions(n, e.options)
            decisions = 0
            while e.game.decision is not None:
                e.step(int(rng.choice(e.legal_actions())))
                decisions += 1
            assert decisions <= bound
            rewards = e.outcome()
            assert all(low - 1e-12 <= r <= high + 1e-12 for r in rewards), (n, rewards, (low, high))
            if len(e.game.winners) == 1:
                assert max(rewards) == pytest.approx(high)


def _info_shape(info: dict) -> dict:
    """Each key's value type, dtype and shape: what a replay buffer's or a spec's columns are made of."""
    return {k: (type(v).__name__, getattr(v, "dtype", None), np.shape(v)) for k, v in info.items()}


def test_every_agent_has_the_same_info_keys_and_shapes_at_every_step(spec, sizes):
    """Tianshou's buffer and TorchRL's specs take their columns from the first step's infos: a key
    that turns up at the end of a game (or a value that is no number) stops them (issue #47)."""
    rng = np.random.default_rng(5)
    for g, (n, mode) in enumerate(itertools.product(sizes, ("raise", "penalize"))):
        e = spec.env(num_players=n, illegal_action=mode)
        e.reset(seed=g)
        first = _info_shape(e.infos["player_0"])
        assert set(first) >= {"winners", "illegal_action"}
        assert first["winners"] == ("ndarray", np.dtype(np.int8), (spec.raw_env.MAX_PLAYERS,))
        assert all(np.issubdtype(np.asarray(v).dtype, np.number) or np.asarray(v).dtype == bool
                   for v in e.infos["player_0"].values())
        steps = 0
        for agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            assert _info_shape(info) == first
            assert all(_info_shape(e.infos[a]) == first for a in e.agents)
            if term or trunc:
                e.step(None)
                continue
            steps += 1
            mask = obs["action_mask"]
            if mode == "penalize" and steps == 7 and (mask == 0).any():  # one game in two ends on a penalty
                e.step(int(np.flatnonzero(mask == 0)[0]))
            else:
                e.step(int(rng.choice(np.flatnonzero(mask))))
            if not e.agents:
                break
            if e.unwrapped.game.over and not e.unwrapped.truncations[agent]:
                won = np.flatnonzero(e.infos[agent]["winners"]).tolist()
                assert won == sorted(e.unwrapped.game.winners)


@pytest.mark.parametrize("game", [s.id for s in games.all()])
def test_pettingzoo_render_test(game, capsys):
    """Every render mode the metadata declares (ansi, human, rgb_array), by PettingZoo's own test."""
    spec = games.get(game)
    render_test(lambda render_mode=None: spec.env(num_players=spec.default_players, render_mode=render_mode))
