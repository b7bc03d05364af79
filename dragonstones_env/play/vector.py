"""The batched vector env: many tables in lockstep, each opponent policy deciding for all its seats at once.

:class:`OpponentsVectorEnv` is a Gymnasium :class:`gymnasium.vector.VectorEnv` of ``num_envs``
single-agent tables (:class:`~dragonstones_env.play.single_agent.SingleAgentEnv`: one learner, the
other seats policies), optionally spread over ``workers`` processes:

>>> from dragonstones_env.play import OpponentsVectorEnv
>>> envs = OpponentsVectorEnv("dragonstones", num_envs=8, workers=1, num_players=4, opponents="heuristic")
>>> obs, infos = envs.reset(seed=0)          # table k is seeded 0 + k
>>> masks = envs.action_masks()              # also infos["action_mask"], at every step
>>> envs.close()

It takes every keyword the Gym env takes (``num_players``, ``opponents`` in any form the Gym env
accepts, an :class:`~dragonstones_env.play.single_agent.OpponentSampler` included, ``seat``,
``illegal_action``, ``truncation_reward``, a custom deck ``characters=``...). At each step every
table plays the learner's move, then, until every table waits on its learner again, the pending
opponent decisions are grouped by the policy that makes them and each group is one call:
``act_batch`` (one forward pass) for checkpoints and the random bot, ``act_each`` for the instances
of a class that decides for many at once (``capabilities.batch_each``: the heuristic, one instance a
table, its observations read together), ``act`` at once for the other rule bots; a search
(``capabilities.information_state``) decides alone, through
:func:`~dragonstones_env.policies.decide`. The tables of a process share one loaded instance of each
opponent spec that decides in batches (``capabilities.batch``), which is what makes the groups; every
other spec (the rule bots, a search) is loaded once per table, so that its generator and its memory of
the game are its table's. A policy object passed in ``opponents``, and the policies an
``OpponentSampler`` hands out, are seated as given (shared by the tables that draw them).

Autoreset is ``SAME_STEP`` (``metadata["autoreset_mode"]``): a finished table's last observation and
info are ``infos["final_obs"]`` and ``infos["final_info"]`` and its observation is already the next
episode's first. The learner's legal actions come back with the observations: ``action_masks()``
(what sb3-contrib's ``MaskablePPO`` reads) and ``infos["action_mask"]``.

Seeds: ``reset(seed=s)`` seeds table ``k`` with ``s + k`` (as SB3's ``make_vec_env`` seeds its envs), so
the same seed gives the same tables byte for byte whatever the number of workers (when every shared
opponent is deterministic: a stochastic policy shared by tables draws from one generator in an order
that depends on which tables share its process); ``reset()`` draws
each table's next episode from its own generator. ``workers > 1`` splits the tables over worker
processes (forkserver, never fork), each stepping its share while the learner's forward pass stays
in the calling process; every worker uses one BLAS thread: numpy's OpenBLAS otherwise starts a
thread per core in each process, threads that spin on the cores the others need (a batch-30 forward
pass of the champion: 0.84 ms with one thread, 13.7 ms with two on a busy 2-core machine). With an
``OpponentSampler`` each worker holds its own copy (its own reports), as each process of SB3's
``SubprocVecEnv`` would.

Stable-Baselines3 users: :class:`dragonstones_env.play.sb3.OpponentsVecEnv` is the same engine as an
SB3 ``VecEnv``.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from threadpoolctl import threadpool_limits

from dragonstones_env import games
from dragonstones_env.policies import decide

from .single_agent import SingleAgentEnv
from .single_agent import make as make_table


def worker_context() -> mp.context.BaseContext:
    """How every process pool of the package starts its workers (the vector env's, the evaluation's):
    forkserver where the system has it, spawn elsewhere, never fork, which would copy a parent's
    torch threads and locks into the child."""
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def game_of(name: str) -> str:
    """The registry id of a game named by its registry id, PettingZoo name or Gymnasium id."""
    for spec in games.all():
        if name in (spec.id, spec.gym_id, spec.name):
            return spec.id
    known = [(g.id, g.gym_id) for g in games.all()]
    raise ValueError(f"unknown game {name!r}: give a registry id or a Gymnasium id, one of {known}")


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


_COLUMN_TYPES = (int, float, bool, np.ndarray)


class TableInfos:
    """The infos of a set of tables at one step, by key: what a worker sends down its pipe and what the
    Gymnasium front end hands on, a few arrays where a dict per table cost pickling, unpickling and
    gymnasium's ``_add_info`` table by table (issue #47; docs/results.md).

    ``columns[key]`` holds a row per table for every key that every table's info has with values of one
    type (a Python int, float or bool, a numpy scalar type, or arrays of one dtype and shape), typed as
    gymnasium's ``_add_info`` would type it; ``rest[k]`` holds the other entries of table ``k``'s info (a
    finished table's ``final_obs`` and ``final_info``, any key not every table has). :meth:`table` gives a
    table's info back as the dict it was (what SB3's adapter reads), :meth:`gymnasium` the vector env's.
    """

    __slots__ = ("columns", "kinds", "n", "rest")

    def __init__(self, n: int, columns: dict[str, np.ndarray], kinds: dict[str, type], rest: dict[int, dict]):
        self.n, self.columns, self.kinds, self.rest = n, columns, kinds, rest

    @classmethod
    def of(cls, infos: Sequence[dict[str, Any]]) -> TableInfos:
        """The columns of one info per table."""
        columns: dict[str, np.ndarray] = {}
        kinds: dict[str, type] = {}
        for key, first in (infos[0].items() if infos else ()):
            kind = type(first)
            if kind not in _COLUMN_TYPES and not issubclass(kind, np.number):
                continue
            values = [info.get(key) for info in infos]
            if any(type(v) is not kind for v in values):
                continue
            if kind is np.ndarray:
                if any(v.dtype != first.dtype or v.shape != first.shape for v in values):
                    continue
                columns[key] = np.stack(values)
            else:
                columns[key] = np.array(values, dtype=kind)
            kinds[key] = kind
        rest = {}
        for k, info in enumerate(infos):
            extra = {key: value for key, value in info.items() if key not in columns}
            if extra:
                rest[k] = extra
        return cls(len(infos), columns, kinds, rest)

    @classmethod
    def concat(cls, parts: Sequence[TableInfos]) -> TableInfos:
        """The infos of the tables of ``parts`` (workers' shares, in order), one after the other."""
        first = parts[0]
        if any(p.kinds != first.kinds or any(p.columns[key].dtype != first.columns[key].dtype
                                             or p.columns[key].shape[1:] != first.columns[key].shape[1:]
                                             for key in first.columns) for p in parts[1:]):
            return cls.of([info for p in parts for info in p.tables()])  # the workers' columns differ
        rest, offset = {}, 0
        for p in parts:
            rest.update({offset + k: extra for k, extra in p.rest.items()})
            offset += p.n
        return cls(offset, {key: np.concatenate([p.columns[key] for p in parts]) for key in first.columns},
                   dict(first.kinds), rest)

    def table(self, k: int) -> dict[str, Any]:
        """Table ``k``'s info, as the dict it was (its own copies of arrays, Python scalars as such)."""
        info: dict[str, Any] = {}
        for key, column in self.columns.items():
            kind = self.kinds[key]
            value = column[k]
            info[key] = value.copy() if kind is np.ndarray else kind(value) if kind in _COLUMN_TYPES else value
        info.update(self.rest.get(k, {}))
        return info

    def tables(self) -> list[dict[str, Any]]:
        return [self.table(k) for k in range(self.n)]

    def gymnasium(self, env: gym.vector.VectorEnv) -> dict[str, Any]:
        """Gymnasium's vector infos of these tables, as ``env._add_info`` table by table would make them:
        a column and its mask of every table as they are, the rest through ``_add_info``."""
        infos: dict[str, Any] = {}
        everyone = np.ones(self.n, bool)
        for key, column in self.columns.items():
            infos[key] = column
            infos[f"_{key}"] = everyone.copy()
        for k in sorted(self.rest):
            infos = env._add_info(infos, self.rest[k], k)
        return infos


# One step of a set of tables: observations, rewards, terminated, truncated, masks, and the infos (one
# per table, TableInfos); a finished table's info is its next episode's, with "final_obs" and
# "final_info" added.
Step = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, TableInfos]


class Tables:
    """The engine: ``num_tables`` tables in this process, their opponents batched (the module docstring).

    Both front ends (the Gymnasium :class:`OpponentsVectorEnv`, SB3's
    :class:`~dragonstones_env.play.sb3.OpponentsVecEnv`) drive one of these, or one per worker process
    (:class:`WorkerTables`). It counts where its time goes (``timers``: stepping the tables, of that the
    opponents' decisions).
    """

    def __init__(self, game: str, num_tables: int, **env_kwargs: Any):
        # Fixed opponents: the tables share one instance of each policy that decides in batches (a
        # checkpoint, random), which is what groups its decisions into one call. Every other policy (the
        # rule bots, which decide row by row anyway) gets one instance per table, so that its generator
        # and its memory of the game are its table's alone: a table plays the same game whatever the
        # other tables (and the worker count).
        shared: dict[Any, Any] = {}
        self.tables: list[SingleAgentEnv] = [make_table(game, loaded=shared, **env_kwargs)]
        for _ in range(num_tables - 1):
            own = {key: policy for key, policy in shared.items() if policy.capabilities.batch}
            self.tables.append(make_table(game, loaded=own, **env_kwargs))
        first = self.tables[0]
        self.observation_space, self.action_space = first.observation_space, first.action_space
        self.num_tables = num_tables
        self.timers = {"step_s": 0.0, "opponents_s": 0.0, "opponent_decisions": 0, "learner_steps": 0}
        self._masks = np.zeros((num_tables, first.action_space.n), bool)

    def reset(self, seeds: Sequence[int | None]) -> tuple[np.ndarray, np.ndarray, TableInfos]:
        """Every table's new episode (``seeds[k]`` for table ``k``; None: from its own generator)."""
        for table, seed in zip(self.tables, seeds, strict=True):
            table.start_episode(seed)
        self._play_opponents(range(self.num_tables))
        obs = np.stack([self._observe(k) for k in range(self.num_tables)])
        return obs, self._masks.copy(), TableInfos.of([table._info() for table in self.tables])

    def step(self, actions: Sequence[Any]) -> Step:
        """The learner's move at every table, the opponents' until each waits on its learner again; a
        finished table starts its next episode (same-step autoreset)."""
        started = time.perf_counter()
        n = self.num_tables
        for table, action in zip(self.tables, actions, strict=True):
            table.learner_step(action)
        self._play_opponents(range(n))
        obs = np.zeros((n, *self.observation_space.shape), self.observation_space.dtype)
        rewards = np.zeros(n)  # float64, as gymnasium's vector envs give them (SB3's adapter: float32)
        terminated, truncated = np.zeros(n, bool), np.zeros(n, bool)
        infos: list[dict[str, Any]] = []
        restarted = []
        for k, table in enumerate(self.tables):
            obs[k], rewards[k], terminated[k], truncated[k], info = table.outcome()
            if terminated[k] or truncated[k]:
                info = {"final_obs": obs[k].copy(), "final_info": info}
                # the next line-up is drawn now, table by table, as an SB3 or Gymnasium autoreset draws it
                table.start_episode()
                restarted.append(k)
            else:
                self._masks[k] = table.action_masks()
            infos.append(info)
        self._play_opponents(restarted)
        for k in restarted:
            obs[k] = self._observe(k)
            infos[k] = {**self.tables[k]._info(), **infos[k]}
        self.timers["step_s"] += time.perf_counter() - started
        self.timers["learner_steps"] += n
        return obs, rewards, terminated, truncated, self._masks.copy(), TableInfos.of(infos)

    def close(self) -> None:
        for table in self.tables:
            table.close()

    def _play_opponents(self, indices: Sequence[int] | range) -> None:
        """Every opponent move of the tables ``indices`` until each waits on its learner (or is over).

        Round by round: a policy that decides in batches (``capabilities.batch``: a checkpoint, random)
        is asked once a round for all the tables that wait on it (:func:`act_grouped`); the instances of
        a class that decides for many instances at once (``capabilities.batch_each``: the heuristic, one
        instance a table) are asked together, once a round, through their class's ``act_each``; every
        other policy (a search, a policy object without either) decides and plays at once, table by
        table. Each policy is asked in table order, so each table plays the same game as alone."""
        tables = self.tables
        waiting = list(indices)
        decided = 0
        deciding = 0.0
        clock = time.perf_counter
        while waiting:
            moved = []
            batched: list[tuple[int, Any, dict[str, np.ndarray]]] = []
            each: dict[Any, list[tuple[int, Any, dict[str, np.ndarray]]]] = {}
            for k in waiting:
                table = tables[k]
                due = table.due()
                if due is None:
                    continue
                moved.append(k)
                policy, agent = due
                started = clock()
                capabilities = policy.capabilities
                if capabilities.batch:
                    batched.append((k, policy, table.aec.observe(agent)))
                    deciding += clock() - started
                elif capabilities.batch_each and not capabilities.information_state:
                    each.setdefault(type(policy).act_each, []).append((k, policy, table.aec.observe(agent)))
                    deciding += clock() - started
                else:  # decide() hands a search its information state first
                    action = int(decide(policy, table.aec, agent))
                    deciding += clock() - started
                    table.play(action)
            started = clock()
            decisions: list[tuple[int, int]] = []
            if batched:
                actions = act_grouped([(policy, observation) for _, policy, observation in batched])
                decisions += [(k, action) for (k, _, _), action in zip(batched, actions, strict=True)]
            for act_each, group in each.items():
                if len(group) == 1:
                    (k, policy, observation), = group
                    actions = [policy.act(observation)]
                else:
                    actions = act_each([policy for _, policy, _ in group],
                                       np.stack([observation["observation"] for _, _, observation in group]),
                                       np.stack([observation["action_mask"] for _, _, observation in group]))
                decisions += [(k, int(action)) for (k, _, _), action in zip(group, actions, strict=True)]
            deciding += clock() - started
            for k, action in decisions:
                tables[k].play(action)
            decided += len(moved)
            waiting = moved
        self.timers["opponents_s"] += deciding
        self.timers["opponent_decisions"] += decided

    def _observe(self, k: int) -> np.ndarray:
        observation = self.tables[k].learner_observation()
        self._masks[k] = observation["action_mask"].astype(bool)
        return observation["observation"]


# The worker's young-generation threshold: objects allocated between two collections of the youngest
# generation (CPython's default is 700). A step of 16 tables allocates thousands of short-lived
# containers, none of them in a cycle (refcounting frees them all: the collections of a worker's loop
# found no garbage), and the default made a collection every few tables.
WORKER_GC_THRESHOLD = (20_000, 10, 10)


def quiet_collector() -> None:
    """Make this worker process's cyclic garbage collector rarer (never off: a user's policy may make
    cycles). What the worker loaded (modules, tables, policies, their weights) is frozen out of the
    collections, which otherwise walked it all again at every full one, and the youngest generation is
    collected every :data:`WORKER_GC_THRESHOLD` allocations, not 700: the collector cost 5.6 % of a
    worker's CPU time stepping 16 tables of heuristic opponents, 1.5 % after (docs/results.md, issue #47).
    Only a worker process does this: a :class:`Tables` in the caller's process leaves its collector alone."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*WORKER_GC_THRESHOLD)


def _worker(pipe: Any, game: str, num_tables: int, env_kwargs: dict[str, Any]) -> None:
    """One worker process: the :class:`Tables` of its share, answering the calling process."""
    threadpool_limits(1)  # one BLAS thread (the module docstring says why)
    tables = Tables(game, num_tables, **env_kwargs)
    quiet_collector()
    while True:
        command, data = pipe.recv()
        if command == "step":
            pipe.send(tables.step(data))
        elif command == "reset":
            pipe.send(tables.reset(data))
        elif command == "timers":
            pipe.send(dict(tables.timers))
        elif command == "close":
            tables.close()
            pipe.close()
            return


class WorkerTables:
    """The engine's tables split over ``workers`` processes (a :class:`Tables` each), stepped in parallel."""

    def __init__(self, game: str, num_tables: int, workers: int, spaces: tuple[Any, Any], **env_kwargs: Any):
        self.observation_space, self.action_space = spaces
        shares = [len(part) for part in np.array_split(np.arange(num_tables), workers)]
        context = worker_context()
        self.pipes: list[Any] = []
        self.processes: list[Any] = []
        self.bounds: list[tuple[int, int]] = []
        first = 0
        for share in shares:
            here, there = context.Pipe()
            process = context.Process(target=_worker, args=(there, game, share, env_kwargs), daemon=True)
            process.start()
            there.close()
            self.pipes.append(here)
            self.processes.append(process)
            self.bounds.append((first, first + share))
            first += share
        self.num_tables = num_tables
        self.closed = False

    def reset(self, seeds: Sequence[int | None]) -> tuple[np.ndarray, np.ndarray, TableInfos]:
        for pipe, (lo, hi) in zip(self.pipes, self.bounds, strict=True):
            pipe.send(("reset", list(seeds[lo:hi])))
        parts = [pipe.recv() for pipe in self.pipes]
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                TableInfos.concat([p[2] for p in parts]))

    def step(self, actions: Sequence[Any]) -> Step:
        for pipe, (lo, hi) in zip(self.pipes, self.bounds, strict=True):
            pipe.send(("step", actions[lo:hi]))
        parts = [pipe.recv() for pipe in self.pipes]
        return (*(np.concatenate([p[i] for p in parts]) for i in range(5)),  # type: ignore[return-value]
                TableInfos.concat([p[5] for p in parts]))

    @property
    def timers(self) -> dict[str, float]:
        """The workers' timers, summed."""
        total: dict[str, float] = {}
        for pipe in self.pipes:
            pipe.send(("timers", None))
        for pipe in self.pipes:
            for key, value in pipe.recv().items():
                total[key] = total.get(key, 0) + value
        return total

    def close(self) -> None:
        if self.closed:
            return
        for pipe in self.pipes:
            pipe.send(("close", None))
        for process in self.processes:
            process.join(timeout=30)
        self.closed = True


def make_tables(game: str, num_tables: int, workers: int = 1, **env_kwargs: Any) -> Tables | WorkerTables:
    """The engine of ``num_tables`` tables of ``game`` (registry id, PettingZoo name or Gymnasium id) in
    ``workers`` processes (1: this process). Every opponent spec is loaded here: a bad one fails now."""
    game = game_of(game)
    if isinstance(num_tables, bool) or not isinstance(num_tables, (int, np.integer)) or num_tables < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_tables!r}")
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or not 1 <= workers <= num_tables:
        raise ValueError(f"workers must be an int in 1..num_envs ({num_tables}), got {workers!r}")
    if workers == 1:
        return Tables(game, int(num_tables), **env_kwargs)
    probe = make_table(game, **env_kwargs)  # a bad spec or option fails here, not in a worker
    probe.close()
    return WorkerTables(game, int(num_tables), int(workers), (probe.observation_space, probe.action_space),
                        **env_kwargs)


def table_seeds(seed: int | Sequence[int | None] | None, n: int) -> list[int | None]:
    """One seed per table: ``seed + k`` for an int, a list as given, None for every table from None."""
    if seed is None:
        return [None] * n
    if isinstance(seed, (list, tuple)):
        if len(seed) != n:
            raise ValueError(f"seed lists {len(seed)} seeds for {n} tables")
        return [None if s is None else int(s) for s in seed]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be None, an int or a list of num_envs ints, got {seed!r}")
    return [int(seed) + k for k in range(n)]


class OpponentsVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` tables of one learner against batched opponents, as a Gymnasium vector env.

    ``game``: registry id, PettingZoo name or Gymnasium id; ``workers``: processes (1: this one);
    every other keyword as :func:`dragonstones_env.play.single_agent.make` takes it. Same-step
    autoreset; the learner's legal actions in ``action_masks()`` and ``infos["action_mask"]``; table
    ``k`` seeded ``seed + k`` (see the module docstring).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, game: str = "dragonstones", num_envs: int = 8, workers: int = 1, **env_kwargs: Any):
        self.closed = True  # until the engine exists: gymnasium 1.2's __del__ closes a half-made env
        if "render_mode" in env_kwargs and env_kwargs["render_mode"] is not None:
            raise ValueError("the vector env renders nothing: render_mode must be None "
                             "(render one table with gymnasium.make and render_mode)")
        env_kwargs.pop("render_mode", None)
        self.engine = make_tables(game, num_envs, workers, **env_kwargs)
        self.closed = False
        self.num_envs = int(num_envs)
        self.workers = int(workers)
        self.single_observation_space = self.engine.observation_space
        self.single_action_space = self.engine.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._masks = np.zeros((self.num_envs, self.single_action_space.n), bool)
        self._started = False

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Every table's new episode; ``seed``: table ``k`` gets ``seed + k`` (or a list, one per table)."""
        if options:
            raise ValueError(f"the vector env takes no reset options, got {options!r}")
        seeds = table_seeds(seed, self.num_envs)
        if seed is not None and not isinstance(seed, (list, tuple)):
            super().reset(seed=int(seed))
        obs, self._masks, table_infos = self.engine.reset(seeds)
        self._started = True
        return obs, self._infos(table_infos)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner move per table (an array of ``num_envs`` actions)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"step takes one action per table: shape ({self.num_envs},), got {actions.shape}")
        obs, rewards, terminated, truncated, self._masks, table_infos = self.engine.step(actions)
        return obs, rewards, terminated, truncated, self._infos(table_infos)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions at every table, ``(num_envs, actions)`` booleans."""
        return self._masks.copy()

    @property
    def timers(self) -> dict[str, float]:
        """Where the time went (stepping the tables, of that the opponents), summed over the workers."""
        return dict(self.engine.timers)

    def close_extras(self, **kwargs: Any) -> None:
        self.engine.close()

    def _infos(self, table_infos: TableInfos) -> dict[str, Any]:
        infos = table_infos.gymnasium(self)
        infos["action_mask"] = self._masks.copy()
        infos["_action_mask"] = np.ones(self.num_envs, bool)
        return infos
