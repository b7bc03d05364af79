"""Vectorised environments for Stable-Baselines3: the recipe every training script uses.

>>> venv = make_vec_env("Dragonstones-v0", n_envs=64, seed=0, collector="batched", num_players=4,
...                     opponents="heuristic")

Two collectors of the same tables (one learner, the other seats the league or fixed opponents),
chosen by the config's ``collector``:

* ``"batched"`` (the package's :class:`dragonstones_env.play.sb3.OpponentsVecEnv`): ``n_envs`` tables
  in lockstep in ``workers`` processes, each opponent policy deciding for all its seats in one
  call; masks come back with the observations. Tens to hundreds of tables.
* ``"subproc"``: one table per process (SB3's ``SubprocVecEnv``; ``DummyVecEnv`` for one), each
  opponent deciding alone; ``MaskablePPO`` fetches masks with ``env_method``. The path every
  champion up to v4 was trained on, kept so that their recipes run as they ran.

Either way table ``k`` is reset with ``seed + k`` when it is made, so a seed names the same games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

import dragonstones_env  # noqa: F401  (registers the Gym ids, in worker processes too: they import this module)
from dragonstones_env.play.sb3 import OpponentsVecEnv

from .config import COLLECTORS


def make_env_fn(env_id: str, rank: int, seed: int, **env_kwargs: Any) -> Callable[[], gym.Env]:
    """A picklable thunk building one monitored environment (for ``SubprocVecEnv``)."""

    def thunk() -> gym.Env:
        env = Monitor(gym.make(env_id, disable_env_checker=True, **env_kwargs))
        env.reset(seed=seed + rank)
        return env

    return thunk


def make_vec_env(env_id: str = "Dragonstones-v0", n_envs: int = 2, seed: int = 0, subproc: bool = True,
                 collector: str = "subproc", workers: int = 1, **env_kwargs: Any) -> VecEnv:
    """``n_envs`` tables of ``env_id``: batched in ``workers`` processes, or one per worker process
    (``subproc``; in this process when ``subproc`` is False or there is one table)."""
    if collector not in COLLECTORS:
        raise ValueError(f"collector must be one of {COLLECTORS}, got {collector!r}")
    if collector == "batched":
        return OpponentsVecEnv(env_id, n_envs, seed, workers, **env_kwargs)
    fns = [make_env_fn(env_id, rank, seed, **env_kwargs) for rank in range(n_envs)]
    if subproc and n_envs > 1:
        return SubprocVecEnv(fns, start_method="forkserver")
    return DummyVecEnv(fns)
