"""Tianshou 2.0.1 trains on every game through its own PettingZoo adapter, with no wrapper of ours.

Before issue #47 it stopped at the first finished game: ``MalformedBufferError: Encountered NaNs in
buffer`` (``info["winners"]`` turned up at the last step only, so every other row held a null).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from dragonstones_env import games

SPECS = games.all()


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_tianshou_collects_whole_games_and_trains_a_shared_dqn(spec):
    torch.manual_seed(0)
    n = spec.players[0]

    def make_env():
        return PettingZooEnv(spec.env(num_players=n))

    env = make_env()
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[64])
    dqn = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.3),
              optim=AdamOptimizerFactory(lr=1e-3), target_update_freq=50)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn] * n, env=env)
    envs = DummyVectorEnv([make_env for _ in range(2)])
    envs.seed(0)
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(20_000, 2), exploration_noise=True)
    collector.reset()

    # Whole games first: the ends are what broke the buffer (the trainer checks exactly this).
    stats = collector.collect(n_episode=2)
    buffer = collector.buffer
    assert stats.n_collected_episodes == 2 and not buffer.hasnull()
    rows = buffer[np.arange(len(buffer))]
    ended = rows.terminated
    assert set(rows.info.get_keys()) >= {"winners", "illegal_action"}
    assert rows.info.winners.shape == (len(buffer), spec.raw_env.MAX_PLAYERS)
    assert not rows.info.winners[~ended].any()  # flags only once a game is won
    assert (rows.info.winners[ended].sum(axis=1) >= 1).all() or rows.truncated.any()

    # Then a few hundred steps of Tianshou's own off-policy trainer.
    before = [p.detach().clone() for p in net.parameters()]
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, test_collector=None, max_epochs=1, epoch_num_steps=300,
        collection_step_num_env_steps=10, batch_size=32, update_step_num_gradient_steps_per_sample=0.1,
        test_in_training=False, show_progress=False, multi_agent_return_reduction=lambda r: r[:, 0]))
    assert not collector.buffer.hasnull()
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))  # it learnt
