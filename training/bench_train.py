"""Learner steps per second of a training config, today's collector beside the batched one, in one run.

    python -m training.bench_train --config configs/default.yaml --steps 32768 [--workers 1 2]
    make bench-train

Each row trains the config's model (from its start, against its league: latest weights,
snapshots, the zoo, random) for ``--steps`` learner steps in a scratch run folder under
``runs/bench-train/`` and reports:

* ``steps/s``: learner steps per second of wall time, end to end (collection and updates);
* ``collect s``: time in SB3's ``collect_rollouts`` (stepping the tables, the opponents' and the
  learner's forward passes); ``update s``: the rest (PPO's gradient steps, the league's refreshes);
* ``tables s`` and ``opponents s`` (batched collector only, summed over its processes): stepping
  the tables, and of that the opponents' decisions; ``learner s``: collection time not spent
  waiting on the tables (the learner's forward pass and SB3's rollout buffer).

The first row is today's path as ``make train`` ran it before the batched collector
(``collector: subproc``, 2 tables in 2 processes, ``ppo.n_steps`` 1024 and ``batch_size`` 256); the
others are the config as written with 1 and 2 worker processes. The ratio is each row's steps/s
over the first's. A benchmark, not a test: the figures depend on the machine and what else runs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from threadpoolctl import threadpool_limits

from . import start
from .config import Config, load_config, make_league
from .train import LeagueCallback, RunFolders, make_venv, new_model, refresh_latest

TODAY = ["sb3.collector=subproc", "sb3.n_envs=2", "sb3.workers=1", "sb3.n_steps=1024", "sb3.batch_size=256"]


class PhaseTimer(BaseCallback):
    """Wall time inside and outside ``collect_rollouts``."""

    def __init__(self) -> None:
        super().__init__()
        self.collect = 0.0
        self._since = 0.0

    def _on_rollout_start(self) -> None:
        self._since = time.perf_counter()

    def _on_rollout_end(self) -> None:
        self.collect += time.perf_counter() - self._since

    def _on_step(self) -> bool:
        return True


def bench(cfg: Config, steps: int, label: str) -> dict[str, Any]:
    """Train ``cfg`` for ``steps`` learner steps in a scratch folder; the timings of the run."""
    run = RunFolders(Path("runs") / "bench-train" / label, Path("runs") / "bench-train" / f"{label}-out")
    shutil.rmtree(run.root, ignore_errors=True)
    run.root.mkdir(parents=True)
    torch.set_num_threads(cfg.torch_threads)
    threadpool_limits(cfg.torch_threads)
    venv = make_venv(cfg, make_league(cfg, run.root))
    try:
        model = new_model(venv, cfg.sb3_ppo(), cfg.seed, cfg.sb3.device, game=cfg.game)
        if cfg.start:
            start.apply_start(model, start.read_start(cfg.start, cfg.env_name))
        refresh_latest(model, run, 0, cfg)
        timer = PhaseTimer()
        state: dict[str, Any] = {"wall_time": 0.0, "evaluations": []}
        started = time.perf_counter()
        model.learn(steps, callback=CallbackList([LeagueCallback(cfg, run, state), timer]), progress_bar=False)
        wall = time.perf_counter() - started
        timers = venv.get_attr("timers")[0] if cfg.sb3.collector == "batched" else {}
    finally:
        venv.close()
    row = {"label": label, "collector": cfg.sb3.collector, "tables": cfg.sb3.n_envs, "workers": cfg.sb3.workers,
           "steps": int(model.num_timesteps), "wall_s": wall, "steps_per_s": model.num_timesteps / wall,
           "collect_s": timer.collect, "update_s": wall - timer.collect}
    if timers:
        # the tables of all workers, summed: divided by the workers for the wall time they took
        row["tables_s"] = timers["step_s"] / cfg.sb3.workers
        row["opponents_s"] = timers["opponents_s"] / cfg.sb3.workers
        row["learner_s"] = max(0.0, timer.collect - row["tables_s"])
    return row


def table(rows: Sequence[dict[str, Any]]) -> str:
    base = rows[0]["steps_per_s"]
    lines = ["| run | collector | tables | workers | steps | steps/s | ratio | collect s | update s | tables s "
             "| opponents s | learner s |",
             "|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        extra = [f"{r[k]:.1f}" if k in r else "n/a" for k in ("tables_s", "opponents_s", "learner_s")]
        lines.append(f"| {r['label']} | {r['collector']} | {r['tables']} | {r['workers']} | {r['steps']} "
                     f"| {r['steps_per_s']:.0f} | {r['steps_per_s'] / base:.2f} | {r['collect_s']:.1f} "
                     f"| {r['update_s']:.1f} | {' | '.join(extra)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.bench_train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/default.yaml")
    parser.add_argument("--steps", type=int, default=32768, help="learner steps per row (default: 32768)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="batched rows' worker processes")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config overrides")
    args = parser.parse_args(argv)
    if args.steps < 1 or any(w < 1 for w in args.workers):
        parser.error("--steps and --workers must be >= 1")
    rows = [bench(load_config(args.config, [*args.set, *TODAY]), args.steps, "today")]
    for workers in args.workers:
        cfg = load_config(args.config, [*args.set, "sb3.collector=batched", f"sb3.workers={workers}"])
        rows.append(bench(cfg, args.steps, f"batched-{workers}w"))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
