"""Learner steps/s of the package's vector env beside SB3's SubprocVecEnv over the Gym env, in one run.

    python -m tools.vector_throughput [--tables 2] [--workers 2] [--steps 1500] [--runs 3] [--more-tables 16]
                                      [--warmup 200]
    make bench-vector

Both sides seat the same opponents (``--opponents``, default the heuristic) at ``--players``-player
tables of ``Dragonstones-v0`` and play the learner's moves uniformly at random among the legal ones
(the same rule, in the calling process, on both sides):

* ``subproc``: ``stable_baselines3.common.env_util.make_vec_env("Dragonstones-v0", n_envs=tables,
  vec_env_cls=SubprocVecEnv)`` (a process per table, each wrapped in ``Monitor``), the masks fetched
  with ``env_method("action_masks")`` every step as ``MaskablePPO`` fetches them;
* ``vector``: :class:`dragonstones_env.play.OpponentsVectorEnv` with the same tables in ``--workers``
  processes (so ``--tables 2 --workers 2``: the same processes and tables), the masks from
  ``action_masks()``;
* ``vector-N`` (``--more-tables N ...``, 0 for none): the vector env with N tables in the same workers,
  what batching the opponents buys beyond one table a process.

Every run starts its own processes, then plays ``--warmup`` learner steps per table untimed (the
same on every side) before the timed ones: the rule bots remember valuations across decisions, and
a training run, long, sees them warm, not the first few hundred decisions of each process (with
16 tables a process, each table's timed share of the run is an eighth of a 2-table run's).
Runs alternate between the sides (the same machine load on each); each line gives every run's
steps/s, their median and spread, and the median's ratio to ``subproc``'s. A benchmark, not a test:
the figures depend on the machine and what else runs on it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

import dragonstones_env  # noqa: F401  (registers the Gym ids)
from dragonstones_env.play import OpponentsVectorEnv


def random_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])


def run_subproc(tables: int, steps: int, seed: int, env_kwargs: dict[str, Any], warmup: int = 0) -> float:
    venv = make_vec_env("Dragonstones-v0", n_envs=tables, seed=seed, vec_env_cls=SubprocVecEnv, env_kwargs=env_kwargs)
    try:
        rng = np.random.default_rng(seed)
        venv.reset()
        for step in range(warmup + steps):
            if step == warmup:
                started = time.perf_counter()
            masks = np.stack(venv.env_method("action_masks"))
            venv.step(random_legal(rng, masks))
        return tables * steps / (time.perf_counter() - started)
    finally:
        venv.close()


def run_vector(tables: int, workers: int, steps: int, seed: int, env_kwargs: dict[str, Any], warmup: int = 0) -> float:
    envs = OpponentsVectorEnv("Dragonstones-v0", num_envs=tables, workers=workers, **env_kwargs)
    try:
        rng = np.random.default_rng(seed)
        envs.reset(seed=seed)
        for step in range(warmup + steps):
            if step == warmup:
                started = time.perf_counter()
            envs.step(random_legal(rng, envs.action_masks()))
        return tables * steps / (time.perf_counter() - started)
    finally:
        envs.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.vector_throughput", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=2, help="tables on both sides (default 2)")
    parser.add_argument("--workers", type=int, default=2, help="the vector env's processes (default 2)")
    parser.add_argument("--more-tables", type=int, nargs="*", default=[16],
                        help="a vector row with each of these many tables (0 or none: no such row; default 16)")
    parser.add_argument("--steps", type=int, default=1500, help="learner steps per table per run (default 1500)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--opponents", default="heuristic")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=200,
                        help="untimed learner steps per table before the timed ones, every side (default 200)")
    args = parser.parse_args(argv)
    if min(args.tables, args.workers, args.steps, args.runs) < 1 or args.workers > args.tables or args.warmup < 0:
        parser.error("--tables, --workers, --steps and --runs must be >= 1, --workers at most --tables, "
                     "--warmup >= 0")
    env_kwargs = {"num_players": args.players, "opponents": args.opponents}
    warmup = args.warmup
    sides: dict[str, Callable[[int], float]] = {
        "subproc": lambda run: run_subproc(args.tables, args.steps, args.seed + run, env_kwargs, warmup),
        "vector": lambda run: run_vector(args.tables, args.workers, args.steps, args.seed + run, env_kwargs, warmup),
    }
    for more in [m for m in args.more_tables if m > 0]:
        if more < args.workers:
            parser.error(f"--more-tables {more}: at least --workers ({args.workers}) tables")
        steps = max(1, args.steps * args.tables // more)  # the same learner steps in all

        def side(run: int, more: int = more, steps: int = steps) -> float:
            return run_vector(more, args.workers, steps, args.seed + run, env_kwargs, warmup)

        sides[f"vector-{more}"] = side
    figures: dict[str, list[float]] = {name: [] for name in sides}
    for run in range(args.runs):
        for name, side in sides.items():
            figures[name].append(side(run))
    base = statistics.median(figures["subproc"])
    print(f"{args.players}-player tables, opponents {args.opponents!r}, random legal learner moves; "
          f"{args.tables} tables, the vector env in {args.workers} worker processes; "
          f"{warmup} untimed steps per table first")
    for name, runs in figures.items():
        median = statistics.median(runs)
        tables = int(name.split("-")[1]) if name.startswith("vector-") else args.tables
        print(f"{name:>10}  tables {tables:>3}  steps/s {median:7.0f}  (runs {', '.join(f'{r:.0f}' for r in runs)}; "
              f"spread {min(runs):.0f}-{max(runs):.0f})  ratio {median / base:.2f}")
    print(f"ratio vector/subproc at {args.tables} tables: {statistics.median(figures['vector']) / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
