"""Vectorised environments for Stable-Baselines3: the recipe every training script uses.

>>> venv = make_vec_env("Dragonstones-v0", n_envs=2, seed=0, num_players=4, opponents="heuristic")

Each worker builds its own environment (and loads its own opponent policies) from the
same keyword arguments, seeded ``seed + rank``; ``MaskablePPO`` reaches each worker's
``action_masks()`` through ``VecEnv.env_method``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

import dragonstones_env  # noqa: F401  (registers the Gym ids, in worker processes too: they import this module)


def make_env_fn(env_id: str, rank: int, seed: int, **env_kwargs: Any) -> Callable[[], gym.Env]:
    """A picklable thunk building one monitored environment (for ``SubprocVecEnv``)."""

    def thunk() -> gym.Env:
        from stable_baselines3.common.monitor import Monitor  # SB3: the optional train extra, slow to import

        env = Monitor(gym.make(env_id, disable_env_checker=True, **env_kwargs))
        env.reset(seed=seed + rank)
        return env

    return thunk


def make_vec_env(env_id: str = "Dragonstones-v0", n_envs: int = 2, seed: int = 0, subproc: bool = True,
                 **env_kwargs: Any):
    """``n_envs`` environments in worker processes (``SubprocVecEnv``), or in this one."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # SB3: the optional train extra

    fns = [make_env_fn(env_id, rank, seed, **env_kwargs) for rank in range(n_envs)]
    if subproc and n_envs > 1:
        return SubprocVecEnv(fns, start_method="forkserver")
    return DummyVecEnv(fns)
