"""The batched vector env as a Stable-Baselines3 ``VecEnv`` (needs stable-baselines3: the train extra).

:class:`OpponentsVecEnv` drives the engine of :mod:`dragonstones_env.play.vector` (the same tables,
batched opponents and worker processes as the Gymnasium :class:`~dragonstones_env.play.vector.OpponentsVectorEnv`)
with SB3's conventions, so that ``MaskablePPO`` uses it unchanged:

>>> from sb3_contrib import MaskablePPO
>>> from dragonstones_env.play.sb3 import OpponentsVecEnv
>>> venv = OpponentsVecEnv("Dragonstones-v0", n_envs=8, seed=0, workers=1, num_players=4, opponents="heuristic")
>>> model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, seed=0)

* table ``k`` is reset with ``seed + k`` when the env is made, as ``stable_baselines3``'s
  ``make_vec_env`` seeds its environments; ``reset()`` then draws each table's next episode from its
  generator (``venv.seed(s)`` first reseeds table ``k`` with ``s + k``);
* a finished table's last observation is ``info["terminal_observation"]`` and its episode's return
  and length ``info["episode"]`` (as SB3's ``Monitor`` reports them); the observation is already the
  next episode's (SB3's auto-reset);
* the learner's legal actions come back with the observations: ``action_masks()`` and
  ``env_method("action_masks")`` (what ``MaskablePPO`` asks) answer from them, with no round trip;
* ``get_attr("timers")``: where the time went (stepping the tables, the opponents' decisions),
  summed over the workers. With ``workers=1`` the tables are ``venv.tables``, and ``get_attr``,
  ``set_attr`` and ``env_method`` reach them; with worker processes only the masks and timers.

Only this module imports stable_baselines3 (at its top): import it when you have SB3.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .single_agent import SingleAgentEnv
from .vector import Tables, make_tables, table_seeds


class OpponentsVecEnv(VecEnv):
    """``n_envs`` tables of one learner against batched opponents in ``workers`` processes, as an SB3 ``VecEnv``.

    ``env_id``: a Gymnasium id (``"Dragonstones-v0"``) or registry id; every other keyword as
    :func:`dragonstones_env.play.single_agent.make` takes it (see the module docstring).
    """

    def __init__(self, env_id: str = "Dragonstones-v0", n_envs: int = 8, seed: int = 0, workers: int = 1,
                 **env_kwargs: Any):
        self.engine = make_tables(env_id, n_envs, workers, **env_kwargs)
        super().__init__(n_envs, self.engine.observation_space, self.engine.action_space)
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, int)
        self._actions: np.ndarray | None = None
        self._started = time.time()
        # seeded as make_vec_env seeds its environments: table k is reset with seed + k at creation
        _, self._masks, _ = self.engine.reset(table_seeds(seed, n_envs))

    @property
    def tables(self) -> list[SingleAgentEnv]:
        """The tables, when they play in this process (``workers=1``)."""
        if not isinstance(self.engine, Tables):
            raise AttributeError("the tables live in worker processes (workers > 1)")
        return self.engine.tables

    def reset(self) -> np.ndarray:
        obs, self._masks, infos = self.engine.reset([None if s is None else int(s) for s in self._seeds])
        self._returns[:], self._lengths[:] = 0.0, 0
        self.reset_infos = infos.tables()
        self._reset_seeds()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, self._masks, table_infos = self.engine.step(self._actions)
        rewards = rewards.astype(np.float32)  # as SB3's own vector envs give them
        self._returns += rewards
        self._lengths += 1
        dones = terminated | truncated
        infos: list[dict[str, Any]] = []
        for k, info in enumerate(table_infos.tables()):
            if dones[k]:
                final = dict(info["final_info"])
                final.update({"terminal_observation": info["final_obs"],
                              "TimeLimit.truncated": bool(truncated[k] and not terminated[k]),
                              "episode": {"r": float(self._returns[k]), "l": int(self._lengths[k]),
                                          "t": round(time.time() - self._started, 6)}})
                self.reset_infos[k] = {key: v for key, v in info.items() if key not in ("final_obs", "final_info")}
                self._returns[k], self._lengths[k] = 0.0, 0
                info = final
            infos.append(info)
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions at every table (stored with the last observations)."""
        return self._masks.copy()

    def close(self) -> None:
        self.engine.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "timers":
            return [dict(self.engine.timers)]
        if attr_name == "action_masks":  # MaskablePPO checks that masks are there (has_attr)
            return [self.action_masks for _ in self._get_indices(indices)]
        if attr_name == "render_mode":  # VecEnv asks at creation; the tables render nothing here
            return [None for _ in self._get_indices(indices)]
        return [getattr(self.tables[k], attr_name) for k in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        for k in self._get_indices(indices):
            setattr(self.tables[k], attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":  # MaskablePPO's question, answered from the stored masks
            return list(self._masks[list(self._get_indices(indices))])
        return [getattr(self.tables[k], method_name)(*method_args, **method_kwargs) for k in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
