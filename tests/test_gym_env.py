"""The single-agent Gymnasium env: registration, checkers, opponents, masks, MaskablePPO."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dragonstones_env  # noqa: F401  (registers the ids)
from dragonstones_env.games.dragonstones import actions as A
from dragonstones_env.play.single_agent import OpponentSampler
from dragonstones_env.play.single_agent import make as make_gym
from dragonstones_env.policies import RandomPolicy
from tests.extras import TRAIN, TRAIN_MODULE


def run_episode(e, rng, seed=None):
    obs, info = e.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        action = int(rng.choice(np.flatnonzero(e.action_masks())))
        obs, reward, term, trunc, info = e.step(action)
        total += reward
        steps += 1
        assert e.observation_space.contains(obs)
        if term or trunc:  # the info's arrays (winners) as lists, so that episodes compare with ==
            return total, steps, {k: np.asarray(v).tolist() for k, v in info.items()}


def test_registered_and_made_by_id():
    e = gym.make("Dragonstones-v0", num_players=3, opponents="random")
    obs, info = e.reset(seed=0)
    assert obs.shape == e.observation_space.shape
    assert e.action_space.n == A.NUM_ACTIONS
    assert 0 <= info["seat"] < 3


@pytest.mark.parametrize("n", [3, 4, 6])
def test_episodes_end_with_the_learners_zero_sum_reward(n):
    rng = np.random.default_rng(n)
    e = make_gym("dragonstones", num_players=n, opponents="random")
    for ep in range(5):
        total, _, info = run_episode(e, rng, seed=ep)
        game = e.aec.game
        if game.winner is None:
            assert total == 0.0
        elif game.winner == info["seat"]:
            assert total == 1.0
        else:
            assert total == pytest.approx(-1 / (n - 1))


def test_the_learner_acts_only_on_its_own_decisions():
    e = make_gym("dragonstones", num_players=4, seat=2)
    e.reset(seed=1)
    for _ in range(50):
        assert e.aec.game.current_player == 2
        mask = e.action_masks()
        assert mask.dtype == bool and mask.any()
        _, _, term, trunc, _ = e.step(int(np.flatnonzero(mask)[0]))
        if term or trunc:
            break


def test_seat_is_drawn_per_episode_unless_fixed():
    e = make_gym("dragonstones", num_players=4)
    seats = {e.reset(seed=s)[1]["seat"] for s in range(30)}
    assert seats == {0, 1, 2, 3}
    fixed = make_gym("dragonstones", num_players=4, seat=3)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(5)} == {3}
    with pytest.raises(ValueError, match="seat"):
        make_gym("dragonstones", num_players=4, seat=4)


def test_same_seed_same_episode():
    def episode():
        e = make_gym("dragonstones", num_players=4, opponents="random")
        return run_episode(e, np.random.default_rng(0), seed=42)

    assert episode() == episode()


@pytest.mark.parametrize("opponents", ["heuristic", "value", "random"])
def test_an_episode_does_not_depend_on_the_episodes_before_it(opponents):
    # Each reset(seed) reseeds the opponents as new ones: the heuristic once kept its generator
    # and its Rainbow Dragon memory (F39) from game to game, so a seed's episode depended on
    # what the env had played before.
    fresh = make_gym("dragonstones", num_players=4, opponents=opponents)
    used = make_gym("dragonstones", num_players=4, opponents=opponents)
    for s in range(3):
        run_episode(used, np.random.default_rng(s), seed=100 + s)
    assert run_episode(used, np.random.default_rng(9), seed=7) == run_episode(fresh, np.random.default_rng(9), seed=7)


def test_opponent_spec_forms():
    one = make_gym("dragonstones", num_players=4, opponents="random")
    one.reset(seed=0)
    assert sum(p is None for p in one.seat_policies) == 1
    bots = [RandomPolicy(1), RandomPolicy(2), RandomPolicy(3)]
    per_seat = make_gym("dragonstones", num_players=4, opponents=bots, seat=0)
    per_seat.reset(seed=0)
    assert per_seat.seat_policies[1:] == bots
    pool = make_gym("dragonstones", num_players=4, opponents=[[bots[0], bots[1]]], seat=0)
    drawn = set()
    for s in range(20):
        pool.reset(seed=s)
        drawn.update(id(p) for p in pool.seat_policies[1:])
    assert drawn == {id(bots[0]), id(bots[1])}
    mixed = make_gym("dragonstones", num_players=3, opponents=["random", [bots[0], bots[2]]], seat=0)
    mixed.reset(seed=0)
    assert isinstance(mixed.seat_policies[1], RandomPolicy) and mixed.seat_policies[2] in (bots[0], bots[2])


def test_bad_opponents_are_named():
    with pytest.raises(ValueError, match="3 other seats"):
        make_gym("dragonstones", num_players=4, opponents=["random", "random"])
    with pytest.raises(ValueError, match="empty"):
        make_gym("dragonstones", num_players=4, opponents=[])
    # issue #14: an unknown spec stops make(), not the first reset()
    with pytest.raises(ValueError, match="no-such-bot"):
        make_gym("dragonstones", num_players=4, opponents="no-such-bot")


def test_illegal_action_penalized_by_default_and_raised_on_request():
    e = make_gym("dragonstones", num_players=4, seat=0)
    e.reset(seed=0)
    _, reward, term, _, info = e.step(A.FAMILY["yes"].start)
    assert term and reward == -1.0 and info["illegal_action"] is True
    strict = make_gym("dragonstones", num_players=4, seat=0, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="player_0"):
        strict.step(A.FAMILY["yes"].start)


def test_maskable_ppo_trains_on_it():
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    import torch
    from sb3_contrib import MaskablePPO

    from training.envs import make_vec_env

    torch.set_num_threads(1)
    venv = make_vec_env("Dragonstones-v0", n_envs=2, seed=0, subproc=False, num_players=4, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=128, n_epochs=2, seed=0, device="cpu")
    model.learn(2048)
    assert model.num_timesteps >= 2048
    masks = np.stack(venv.env_method("action_masks"))
    actions, _ = model.predict(venv.reset(), action_masks=masks)
    assert all(masks[i, a] for i, a in enumerate(actions))
    venv.close()


def test_table_size_drawn_per_episode_from_a_list():
    e = make_gym("dragonstones", num_players=[3, 6], opponents="random")
    sizes = set()
    for s in range(20):
        _, info = e.reset(seed=s)
        sizes.add(info["num_players"])
        assert e.aec.num_players == info["num_players"] and 0 <= info["seat"] < info["num_players"]
    assert sizes == {3, 6}
    rng = np.random.default_rng(0)
    run_episode(e, rng, seed=99)


def test_a_lineup_sampler_is_asked_every_episode():
    class Sampler(OpponentSampler):
        calls = 0

        def sample_lineup(self, rng, seats):
            Sampler.calls += 1
            return [RandomPolicy(i) for i in range(seats)]

    e = make_gym("dragonstones", num_players=[3, 4], opponents=Sampler())
    for s in range(5):
        e.reset(seed=s)
        assert sum(p is None for p in e.seat_policies) == 1
        assert len(e.seat_policies) == e.num_players
    assert Sampler.calls == 5



def _last_step(e, seed):
    """The final (reward, terminated, truncated) of one episode of random legal moves."""
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        _, reward, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(e.unwrapped.action_masks()))))
        if term or trunc:
            return reward, term, trunc


@pytest.mark.parametrize("paid", [0.0, -1 / 3, -1.0])
def test_a_truncated_game_pays_the_learner_the_truncation_reward(paid):
    # a step limit no game reaches an end in: the AEC env truncates it, paying every seat 0
    e = gym.make("DrachenSchatten-v0", num_players=4, opponents="ds-heuristic", max_steps=20,
                 truncation_reward=paid, disable_env_checker=True)
    assert _last_step(e, seed=3) == (pytest.approx(paid), False, True)


def test_the_truncation_reward_leaves_a_finished_game_alone():
    kwargs = {"num_players": 3, "opponents": "ds-heuristic", "disable_env_checker": True}
    plain, paid = (gym.make("DrachenSchatten-v0", truncation_reward=r, **kwargs) for r in (0.0, -1.0))
    assert _last_step(plain, seed=5) == _last_step(paid, seed=5)
    _, term, trunc = _last_step(paid, seed=5)
    assert term and not trunc


@pytest.mark.parametrize("bad", [0.5, -2.0, float("nan"), "loss", True])
def test_a_bad_truncation_reward_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=r"truncation_reward: must be a finite number in \[-1, 0\]"):
        gym.make("DrachenSchatten-v0", truncation_reward=bad, disable_env_checker=True)
