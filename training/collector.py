"""The batched league collector: many tables in lockstep, each policy deciding for all its seats at once.

A Stable-Baselines3 ``VecEnv`` (so ``MaskablePPO`` uses it unchanged) of ``n_envs`` single-agent
tables (:class:`~dragonstones_env.play.single_agent.SingleAgentEnv`: one learner, the league or
fixed opponents in the other seats). SB3 already evaluates the learner once for all tables; this
does the same for the opponents. At each step every table plays the learner's move, then, until
every table waits on the learner again, the tables' pending opponent decisions are grouped by the
policy that makes them and each group is one call: ``act_batch`` (one forward pass) for
checkpoints and the random bot, ``act`` per table for the rule bots. The tables share one
loaded instance per spec (the league's cache, or one dict of fixed opponents), which is what
makes the groups; so a seated policy must keep no state between decisions but its generator
(the rule bots read everything from the observation).

Masks come back with the observations: ``action_masks()`` (what ``MaskablePPO`` asks through
``env_method``) returns the ones stored at the last step, with no round trip.

``workers > 1`` (:class:`ShardedCollector`) splits the tables over worker processes, each a
:class:`LeagueCollector` of its share, stepped in parallel; the learner's forward pass stays
in the main process. Every table is seeded ``seed + rank`` as ``training.envs.make_vec_env``
seeds its environments, so the same seed gives the same tables, with any number of workers.

Each worker process uses one BLAS thread (``threadpoolctl``): numpy's OpenBLAS otherwise starts
a thread per core in every process, and its threads spin-wait on the cores the other processes
need (a batch-30 forward pass of the champion: 0.84 ms with one thread, 13.7 ms with two on a
busy 2-core machine). The trainer limits its own process the same way (``torch_threads``).

Episode statistics are reported as SB3's ``Monitor`` reports them (``info["episode"]``), and a
finished table's last observation is ``info["terminal_observation"]`` (SB3's auto-reset).
The collector counts where its time goes (``timers``: stepping the tables, the opponents'
decisions) for ``training/bench_train.py``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv
from threadpoolctl import threadpool_limits

from dragonstones_env import games
from dragonstones_env.evaluation.tournament import worker_context
from dragonstones_env.play.single_agent import SingleAgentEnv
from dragonstones_env.play.single_agent import make as make_table
from dragonstones_env.policies import decide


def _game_of(env_id: str) -> str:
    """The registry id of a Gymnasium id (``Dragonstones-v0`` -> ``dragonstones``)."""
    for spec in games.all():
        if spec.gym_id == env_id:
            return spec.id
    raise ValueError(f"unknown Gymnasium id {env_id!r}; the games' ids are {[g.gym_id for g in games.all()]}")


def act_grouped(pending: Sequence[tuple[Any, dict[str, np.ndarray]]]) -> list[int]:
    """One action per ``(policy, observation)``: each policy's decisions in one call where it can."""
    groups: dict[int, list[int]] = {}
    for k, (policy, _) in enumerate(pending):
        groups.setdefault(id(policy), []).append(k)
    actions = [0] * len(pending)
    for members in groups.values():
        policy = pending[members[0]][0]
        if policy.capabilities.batch and len(members) > 1:
            obs = np.stack([pending[k][1]["observation"] for k in members])
            masks = np.stack([pending[k][1]["action_mask"] for k in members])
            chosen = policy.act_batch(obs, masks)
        else:
            chosen = [policy.act(pending[k][1]) for k in members]
        for k, a in zip(members, chosen, strict=True):
            actions[k] = int(a)
    return actions


class LeagueCollector(VecEnv):
    """``n_envs`` tables of ``env_id`` in this process, their opponents batched (see the module docstring)."""

    def __init__(self, env_id: str, n_envs: int, seed: int = 0, first_rank: int = 0, **env_kwargs: Any):
        game = _game_of(env_id)
        loaded: dict[Any, Any] = {}  # fixed opponents: one instance per spec for every table
        self.tables: list[SingleAgentEnv] = [make_table(game, loaded=loaded, **env_kwargs) for _ in range(n_envs)]
        first = self.tables[0]
        super().__init__(n_envs, first.observation_space, first.action_space)
        self.timers = {"step_s": 0.0, "opponents_s": 0.0, "opponent_decisions": 0, "learner_steps": 0}
        self._actions: np.ndarray | None = None
        self._masks = np.zeros((n_envs, first.action_space.n), bool)
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, int)
        self._started = time.time()
        # seeded as make_vec_env seeds its environments: table k is reset with seed + k at creation
        for k, table in enumerate(self.tables):
            table.start_episode(seed + first_rank + k)
        self._play_opponents(range(n_envs))

    # ------------------------------------------------------------------ playing
    def _play_opponents(self, indices: Sequence[int] | range) -> None:
        """Every opponent move of the tables ``indices`` until each waits on its learner (or is over)."""
        waiting = list(indices)
        while waiting:
            due = [(k, self.tables[k].due()) for k in waiting]
            due = [(k, d) for k, d in due if d is not None]
            if not due:
                return
            started = time.perf_counter()
            batched, alone = [], []  # a search (observe_game) needs its table's game: it decides alone
            for k, (policy, agent) in due:
                (alone if policy.capabilities.information_state else batched).append((k, policy, agent))
            pending = [(policy, self.tables[k].aec.observe(agent)) for k, policy, agent in batched]
            actions = dict(zip([k for k, _, _ in batched], act_grouped(pending), strict=True))
            for k, policy, agent in alone:
                actions[k] = int(decide(policy, self.tables[k].aec, agent))
            self.timers["opponents_s"] += time.perf_counter() - started
            self.timers["opponent_decisions"] += len(due)
            for k, _ in due:
                self.tables[k].play(actions[k])
            waiting = [k for k, _ in due]

    def _observe(self, k: int) -> np.ndarray:
        observation = self.tables[k].learner_observation()
        self._masks[k] = observation["action_mask"].astype(bool)
        return observation["observation"]

    # ------------------------------------------------------------------ VecEnv
    def reset(self) -> np.ndarray:
        for k, table in enumerate(self.tables):
            table.start_episode(self._seeds[k])
            self._returns[k], self._lengths[k] = 0.0, 0
        self._play_opponents(range(self.num_envs))
        self._reset_seeds()
        return np.stack([self._observe(k) for k in range(self.num_envs)])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        started = time.perf_counter()
        for table, action in zip(self.tables, self._actions, strict=True):
            table.learner_step(action)
        self._play_opponents(range(self.num_envs))
        obs = np.zeros((self.num_envs, *self.observation_space.shape), self.observation_space.dtype)
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        infos: list[dict[str, Any]] = []
        restarted = []
        for k, table in enumerate(self.tables):
            o, reward, terminated, truncated, info = table.outcome()
            self._masks[k] = table.action_masks()
            self._returns[k] += reward
            self._lengths[k] += 1
            rewards[k], obs[k] = reward, o
            if terminated or truncated:
                dones[k] = True
                info = {**info, "terminal_observation": o, "TimeLimit.truncated": truncated and not terminated,
                        "episode": {"r": float(self._returns[k]), "l": int(self._lengths[k]),
                                    "t": round(time.time() - self._started, 6)}}
                self._returns[k], self._lengths[k] = 0.0, 0
                # the next line-up is drawn now, table by table, as DummyVecEnv's auto-reset draws it
                table.start_episode()
                restarted.append(k)
            infos.append(info)
        self._play_opponents(restarted)
        for k in restarted:
            obs[k] = self._observe(k)
        self.timers["step_s"] += time.perf_counter() - started
        self.timers["learner_steps"] += self.num_envs
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions at every table (stored with the last observations)."""
        return self._masks.copy()

    def close(self) -> None:
        for table in self.tables:
            table.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "timers":
            return [dict(self.timers)]
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


# ---------------------------------------------------------------------------- worker processes
def _worker(pipe: Any, env_id: str, n_envs: int, seed: int, first_rank: int, env_kwargs: dict[str, Any]) -> None:
    """One worker process: a LeagueCollector of its share of the tables, answering the main process."""
    # One BLAS thread: the checkpoints' batched forward passes are small, and OpenBLAS's threads
    # spin-wait for work on cores the other processes need (a 16x slower forward pass measured).
    threadpool_limits(1)
    collector = LeagueCollector(env_id, n_envs, seed, first_rank, **env_kwargs)
    while True:
        command, data = pipe.recv()
        if command == "step":
            collector.step_async(data)
            obs, rewards, dones, infos = collector.step_wait()
            pipe.send((obs, rewards, dones, infos, collector.action_masks()))
        elif command == "reset":
            collector._seeds = data
            pipe.send((collector.reset(), collector.action_masks()))
        elif command == "timers":
            pipe.send(dict(collector.timers))
        elif command == "close":
            collector.close()
            pipe.close()
            return


class ShardedCollector(VecEnv):
    """The tables of a :class:`LeagueCollector` split over ``workers`` processes, stepped in parallel."""

    def __init__(self, env_id: str, n_envs: int, seed: int = 0, workers: int = 2, **env_kwargs: Any):
        if not 1 <= workers <= n_envs:
            raise ValueError(f"workers must be 1..n_envs ({n_envs}), got {workers}")
        shares = [len(part) for part in np.array_split(np.arange(n_envs), workers)]
        context = worker_context()
        self.pipes, self.processes, self.bounds = [], [], []
        first = 0
        for share in shares:
            here, there = context.Pipe()
            process = context.Process(target=_worker, args=(there, env_id, share, seed, first, env_kwargs),
                                      daemon=True)
            process.start()
            there.close()
            self.pipes.append(here)
            self.processes.append(process)
            self.bounds.append((first, first + share))
            first += share
        probe = make_table(_game_of(env_id), **{k: v for k, v in env_kwargs.items() if k != "opponents"})
        super().__init__(n_envs, probe.observation_space, probe.action_space)
        self._masks = np.zeros((n_envs, probe.action_space.n), bool)
        self.closed = False

    def reset(self) -> np.ndarray:
        for pipe, (lo, hi) in zip(self.pipes, self.bounds, strict=True):
            pipe.send(("reset", self._seeds[lo:hi]))
        obs = []
        for pipe, (lo, hi) in zip(self.pipes, self.bounds, strict=True):
            o, masks = pipe.recv()
            obs.append(o)
            self._masks[lo:hi] = masks
        self._reset_seeds()
        return np.concatenate(obs)

    def step_async(self, actions: np.ndarray) -> None:
        for pipe, (lo, hi) in zip(self.pipes, self.bounds, strict=True):
            pipe.send(("step", actions[lo:hi]))

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, dones, infos = [], [], [], []
        for pipe, (lo, hi) in zip(self.pipes, self.bounds, strict=True):
            o, r, d, i, masks = pipe.recv()
            obs.append(o)
            rewards.append(r)
            dones.append(d)
            infos.extend(i)
            self._masks[lo:hi] = masks
        return np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones), infos

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()

    def close(self) -> None:
        if self.closed:
            return
        for pipe in self.pipes:
            pipe.send(("close", None))
        for process in self.processes:
            process.join(timeout=30)
        self.closed = True

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "action_masks":  # MaskablePPO checks that masks are there (has_attr)
            return [self.action_masks for _ in self._get_indices(indices)]
        if attr_name == "render_mode":  # VecEnv asks at creation; the tables render nothing here
            return [None for _ in self._get_indices(indices)]
        if attr_name == "timers":  # summed over the workers
            total: dict[str, float] = {}
            for pipe in self.pipes:
                pipe.send(("timers", None))
                for key, value in pipe.recv().items():
                    total[key] = total.get(key, 0) + value
            return [total]
        raise AttributeError(f"the sharded collector's tables live in worker processes: no {attr_name!r} here")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError("the sharded collector's tables live in worker processes")

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            return list(self._masks[list(self._get_indices(indices))])
        raise AttributeError(f"the sharded collector's tables live in worker processes: no {method_name!r} here")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def make_collector(env_id: str, n_envs: int, seed: int = 0, workers: int = 1, **env_kwargs: Any) -> VecEnv:
    """The batched collector of ``n_envs`` tables in ``workers`` processes (1: this process)."""
    if workers == 1:
        return LeagueCollector(env_id, n_envs, seed, **env_kwargs)
    return ShardedCollector(env_id, n_envs, seed, workers, **env_kwargs)
