"""Every registered game's Gymnasium id (one learner, the other seats policies), for every game."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dragonstones_env  # noqa: F401  (registers the ids)
from dragonstones_env.policies import load_policy
from tests.extras import TRAIN, TRAIN_MODULE


def test_the_gym_id_is_registered_and_passes_the_checkers(spec):
    e = gym.make(spec.gym_id, opponents=spec.default_bot)
    obs, info = e.reset(seed=0)
    assert obs.shape == (spec.raw_env.OBS_SIZE,) and e.action_space.n == spec.raw_env.NUM_ACTIONS
    assert info["num_players"] == spec.default_players
    check_env(e.unwrapped, skip_render_check=True)


def test_the_gym_id_passes_stable_baselines3s_checker(spec):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(gym.make(spec.gym_id, opponents=spec.default_bot).unwrapped, warn=True)


def test_an_episode_against_random_ends_with_a_reward_in_range(spec):
    e = gym.make(spec.gym_id, num_players=spec.players[-1], opponents="random").unwrapped
    rng = np.random.default_rng(0)
    e.reset(seed=3)
    total = 0.0
    while True:
        _, reward, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        total += reward
        if term or trunc:
            break
    assert -1.0 <= total <= 1.0


def test_random_plays_every_game_and_the_default_bot_plays_its_own(spec):
    bot = load_policy(spec.default_bot, seed=0)
    assert getattr(bot, "game", None) in (None, spec.id, spec.name)  # None: plays any game
    e = spec.env(num_players=spec.default_players)
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    for policy in (load_policy("random", seed=0), bot):
        assert obs["action_mask"][policy.act(obs)] == 1


def _shapes(info: dict) -> dict:
    return {k: (type(v).__name__, getattr(v, "dtype", None), np.shape(v)) for k, v in info.items()}


def test_the_gym_info_has_the_same_keys_and_shapes_at_every_step_and_table_size(spec):
    """Gymnasium's vector envs stack each info key into one array per key (issue #47): a key that
    appears late, or a shape that changes with the table size, breaks them."""
    e = gym.make(spec.gym_id, num_players=list(spec.players), opponents="random").unwrapped
    rng = np.random.default_rng(1)
    _, first = e.reset(seed=0)
    shapes = _shapes(first)
    assert {"seat", "num_players", "winners", "illegal_action"} <= set(shapes)
    for episode in range(6):
        _, info = e.reset(seed=episode)
        assert _shapes(info) == shapes
        while True:
            _, _, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
            assert _shapes(info) == shapes
            if term or trunc:
                break
        if term:
            assert np.flatnonzero(info["winners"]).tolist() == sorted(e.aec.game.winners)
