"""TorchRL's ``PettingZooWrapper(use_mask=True)`` rolls out every game to its end, with no wrapper of ours:
masks as TorchRL's action masks, the infos (same keys at every step) as specs of their own, and the
global state (``return_state=True``, read from the env's ``state_space``)."""

from __future__ import annotations

import pytest
import torch
from torchrl.envs import PettingZooWrapper
from torchrl.envs.utils import check_env_specs

from dragonstones_env import games

SPECS = games.all()


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_torchrl_rolls_out_whole_games_with_masks_infos_and_the_global_state(spec):
    torch.manual_seed(0)
    n = spec.players[0]
    env = PettingZooWrapper(env=spec.env(num_players=n), use_mask=True, return_state=True, seed=0)
    check_env_specs(env, seed=0)
    groups = list(env.group_map)
    assert len(groups) == n
    state_size = spec.raw_env(num_players=n).state_space.shape[0]
    assert env.observation_spec["state"].shape == (state_size,)
    # random legal actions (TorchRL samples inside each action mask) until the first game ends
    td = env.rollout(5000, break_when_any_done=True)
    steps = td.batch_size[0]
    assert td["next", "done"][-1].all() and not td["next", "done"][:-1].any() and steps < 5000
    assert td["state"].shape == (steps, state_size)
    for g in groups:
        info = td["next", g, "info"]
        assert set(info.keys()) >= {"winners", "illegal_action"}
        assert info["winners"].shape == (steps, 1, spec.raw_env.MAX_PLAYERS)
        assert not info["winners"][:-1].any()  # flags only at the end
        acted = td[g, "action_mask"].any(-1).squeeze(-1)
        legal = td[g, "action_mask"][acted].squeeze(1).gather(-1, td[g, "action"][acted].reshape(-1, 1))
        assert legal.all()  # every action the seat took was in its mask
    winners = td["next", groups[0], "info", "winners"][-1, 0, :n]
    rewards = torch.stack([td["next", g, "reward"][-1].reshape(()) for g in groups])
    if winners.any() and not winners.all():  # a decided game: the winners got the most
        assert rewards[winners.bool()].min() > rewards[~winners.bool()].max()
