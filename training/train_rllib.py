"""Train one shared policy for every seat with Ray RLlib's PPO; write it to policies/<run-name>/.

    python -m training.train_rllib --config configs/rllib_ppo.yaml [--address auto | HOST:PORT | ray://HOST:10001]
                                   [--set key=value ...] [--resume | --overwrite]

RLlib's new API stack: the multi-agent form of the game (training/rllib_env.py: only the
agent to act is observed), one RLModule shared by all seats (training/rllib_module.py: a
plain MLP actor whose illegal actions are masked out, and a critic), ``num_env_runners``
EnvRunner actors sampling in parallel, and a Learner that runs PPO. Without ``--address``
(``rllib.address`` and RAY_ADDRESS unset) Ray starts on this machine; with ``--address auto`` the
script joins the cluster this node belongs to (``ray start --head`` / ``ray start --address``), with
``HOST:PORT`` the head's GCS port, with ``ray://HOST:10001`` it connects as a Ray client. On a cluster
it ships its code to the nodes (``rllib.ship_code``), checks each node imports it, and stops with exit 3
when fewer than ``rllib.min_healthy_share`` of the env runners are healthy (training/cluster.py; token
authentication and ports: docs/rllib.md).

Read top to bottom: the config (every key, its default and its check), the RLlib
``PPOConfig`` it makes, the run's adapter :class:`RLlib` (training/run.py's ``Adapter``: RLlib
iterations, each followed by the runners' health and, when due, a snapshot of the learner joining
the league of frozen opponents; RLlib's checkpoint; the export: ``policy.npz``, the actor's
weights played with numpy only by ``load_policy("policies/<run-name>")``, and ``card.json``), and
``main``, whose checks come before ``run.drive`` runs the run every trainer runs (evaluations,
checkpoints for --resume, the final evaluation and panel, the card).
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from dragonstones_env.bounds import Bound
from dragonstones_env.bounds import flag as bounded
from dragonstones_env.core import same_game
from dragonstones_env.policies import PolicyError, load_policy, marks
from dragonstones_env.policies.checkpoint import (
    CARD_FILE,
    POLICY_FILE,
    CheckpointPolicy,
    expected_layout,
    trained_options,
)

from . import cluster, evals
from . import run as lifecycle
from .config import BOUNDS, Config, ConfigError, build, need, read_config, validate_shared
from .rllib_env import DragonstonesMultiAgentEnv  # imports without ray (its MultiAgentEnv base falls back)

MODULE_ID = "shared"  # the one RLModule every seat maps to
ENV_NAME = "dragonstones_rllib"  # the name the env is registered under with Ray Tune's registry


# ---------------------------------------------------------------------------- config
# The RLlib trainer reads training/config.py's one schema (Config): the shared keys and the ``rllib:``
# section (its rows in the bounds table are config.BOUNDS's ``rllib.*``); the SB3 trainer's is left.
# The rows of the bounds table that are RLlib's (docs/inputs.md), and the --bench-sampling flag's.
RLLIB_BOUNDS: dict[str, Bound] = {
    **{key: bound for key, bound in BOUNDS.items() if key.startswith("rllib.")},
    "bench_sampling": Bound(int, 0, 10**7, "--bench-sampling: env steps per env runner (0: train)"),
}
# what the SB3 trainer has and this one does not: refused when set, rather than silently left out
SB3_ONLY = {"target": "the exploiter (training/exploit.py)", "start": "a start from a checkpoint's weights",
            "imitate.teacher": "behaviour cloning"}


def validate(cfg: Config) -> Config:
    """A config as the RLlib trainer runs it: the shared checks and the ``rllib`` section's."""
    validate_shared(cfg)
    for key, what in SB3_ONLY.items():
        section, _, name = key.rpartition(".")
        need(not getattr(getattr(cfg, section) if section else cfg, name), key,
             f"is the SB3 trainer's ({what}; python -m training.train); the RLlib trainer has none: leave it empty")
    r = cfg.rllib
    need(r.address is None or r.address == "auto" or ":" in r.address, "rllib.address",
         "null, 'auto', 'ray://HOST:10001' or 'HOST:6379'")
    need(r.rollout_fragment_length == "auto" or isinstance(r.rollout_fragment_length, int),
         "rllib.rollout_fragment_length", "must be 'auto' or an int >= 1")
    need(r.minibatch_size <= r.train_batch_size, "rllib.minibatch_size", "must be 1..train_batch_size")
    need(r.activation in ("tanh", "relu"), "rllib.activation", "must be 'tanh' or 'relu'")
    return cfg


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> Config:
    """The config of a YAML file (or the defaults), with ``key=value`` overrides applied."""
    return validate(build(Config, read_config(path, overrides)))


# ---------------------------------------------------------------------------- the RLlib side
def env_config(cfg: Config) -> dict[str, Any]:
    """What every env runner builds its games from (picklable: it travels to the cluster)."""
    options = cfg.env_options()
    # the league section as is, and the pool checkpoints' weights: remote workers read no files
    league = dataclasses.asdict(cfg.league)
    items = {spec: pool_item(spec, cfg.env_name) for spec in cfg.league.pool}
    league["weights"] = {spec: item for spec, item in items.items() if isinstance(item, dict)}
    return {"game": cfg.game, "num_players": cfg.num_players, "env_options": options, "league": league,
            "truncation_reward": cfg.truncation_reward, "seed": cfg.seed}


def pool_item(spec: str, env_name: str | None = None) -> Any:
    """A pool spec as the env runners get it: a built-in name, or the checkpoint's actor weights
    (read and checked here, so that remote nodes need no copy of the file). With ``env_name``,
    a policy of another game is refused (ValueError)."""

    policy = load_policy(spec)
    if env_name is not None and policy.game is not None and not same_game(policy.game, env_name):
        raise ValueError(f"league pool policy {spec!r} plays {policy.game}, not {env_name}")
    if isinstance(policy, CheckpointPolicy):
        return {"spec": spec, "weights": [(w, b) for w, b in policy.weights], "activation": policy.activation,
                # what it sees of the table (card_view) travels with it; not the whole card (100 kB of panels)
                "card": {"env": policy.game, "env_options": trained_options(policy.card, spec)}}
    return spec


def make_env(env_ctx: Any) -> Any:

    return DragonstonesMultiAgentEnv(env_ctx)


def build_config(cfg: Config) -> Any:
    """The RLlib ``PPOConfig`` of a run."""
    # Ray and torch: the optional rllib extra, imported only by what runs RLlib (docs and tests import
    # this module without them)
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from .rllib_module import MaskedMLPModule

    register_env(ENV_NAME, make_env)
    r, p = cfg.rllib, cfg.ppo
    return (
        PPOConfig()
        .framework("torch")
        # RLlib's env checker steps random unmasked actions, which this game refuses (ValueError):
        # tests/rllib/test_rllib.py checks the env's multi-agent API instead.
        .environment(env=ENV_NAME, env_config=env_config(cfg), disable_env_checking=True)
        .env_runners(
            num_env_runners=r.num_env_runners,
            num_envs_per_env_runner=r.num_envs_per_env_runner,
            num_cpus_per_env_runner=r.num_cpus_per_env_runner,
            rollout_fragment_length=r.rollout_fragment_length,
            sample_timeout_s=r.sample_timeout_s,
        )
        .learners(num_learners=r.num_learners, num_cpus_per_learner=r.num_cpus_per_learner,
                  num_gpus_per_learner=r.num_gpus_per_learner)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=lambda agent_id, episode, **kwargs: MODULE_ID)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MODULE_ID: RLModuleSpec(module_class=MaskedMLPModule,
                                    model_config={"hiddens": list(p.net_arch), "activation": r.activation}),
        }))
        .training(
            lr=p.learning_rate,
            train_batch_size_per_learner=r.train_batch_size,
            minibatch_size=r.minibatch_size,
            num_epochs=r.num_epochs,
            gamma=p.gamma,
            lambda_=p.gae_lambda,
            clip_param=p.clip_range,
            entropy_coeff=p.ent_coef,
            vf_loss_coeff=p.vf_coef,
            vf_clip_param=r.vf_clip,
            grad_clip=p.max_grad_norm,
            grad_clip_by="global_norm",
            use_kl_loss=r.use_kl_loss,
        )
        .debugging(seed=cfg.seed, log_level="WARN")
    )


def init_ray(cfg: Config) -> None:
    import ray  # the optional rllib extra

    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"log_to_driver": True}
    if cfg.rllib.address:  # a node of a cluster may not have this checkout: ship it unless told not to
        ray.init(address=cfg.rllib.address, runtime_env=cluster.runtime_env(cfg.rllib.ship_code), **kwargs)
    else:
        ray.init(**kwargs)


def check_resources(cfg: Config) -> str | None:
    """Why the actors would wait forever for CPUs/GPUs the Ray cluster does not have, or None."""
    import ray  # the optional rllib extra

    r = cfg.rllib
    have = ray.cluster_resources()
    cpus = r.num_env_runners * r.num_cpus_per_env_runner + r.num_learners * r.num_cpus_per_learner
    gpus = r.num_learners * r.num_gpus_per_learner
    if cpus > have.get("CPU", 0) + 1e-9 or gpus > have.get("GPU", 0) + 1e-9:
        return (f"rllib.num_env_runners x rllib.num_cpus_per_env_runner + rllib.num_learners x "
                f"rllib.num_cpus_per_learner = {cpus:g} CPUs and {gpus:g} GPUs, but the Ray cluster has "
                f"{have.get('CPU', 0):g} CPUs and {have.get('GPU', 0):g} GPUs")
    return None


def current_weights(algo: Any) -> list[tuple[Any, Any]]:
    """The learner's actor weights, in ``policy.npz``'s convention (also with remote Learners)."""
    from .rllib_module import actor_weights_from_state  # imports torch and ray (the rllib extra)

    return actor_weights_from_state(algo.learner_group.get_weights([MODULE_ID])[MODULE_ID])


def push_snapshot(algo: Any, snapshot: dict[str, Any]) -> None:
    """A frozen snapshot joins the league of every env of every env runner (local and remote)."""

    def add(runner: Any) -> int:
        envs = getattr(getattr(runner, "env", None), "envs", None) or []
        for env in envs:
            env.unwrapped.add_snapshot(snapshot)
        return len(envs)

    algo.env_runner_group.foreach_env_runner(add, local_env_runner=True)


def sampled_steps(result: dict[str, Any]) -> int:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    return int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
               or result.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))


def learner(weights: Any, activation: str, cfg: Config) -> evals.Learner:
    """The actor's weights as a policy (``learner(seed=...)``) for training/evals.py."""
    return partial(CheckpointPolicy, weights, activation, spec="training", view=cfg.learner_view(),
                   card=cfg.learner_card())


def write_policy(folder: Path, weights: Any, activation: str, card: dict[str, Any], cfg: Config) -> Path:
    """``policy.npz`` + ``card.json``: a checkpoint folder ``load_policy`` plays with numpy only. Its card
    carries the env options the run learns with, for it to see every table as its own (``card_view``)."""
    env_name = cfg.env_name
    folder.mkdir(parents=True, exist_ok=True)
    CheckpointPolicy(weights, activation).save_npz(folder / POLICY_FILE)
    card = {"algorithm": "RLlibPPO", "env": env_name, "layout": expected_layout(env_name), **card, **cfg.card_keys()}
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")
    return folder


# ---------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML config (see configs/rllib_ppo.yaml and docs/rllib.md)")
    parser.add_argument("--address", help="Ray cluster to train on (overrides rllib.address): 'auto' (the cluster "
                        "this node joined with `ray start`, or RAY_ADDRESS), 'HOST:PORT' (the head's GCS port, "
                        "6379 by default), or 'ray://HOST:10001' (Ray Client). Default: RAY_ADDRESS if set, "
                        "else start Ray on this machine. The code is shipped to the nodes unless "
                        "rllib.ship_code=false; token authentication needs RAY_AUTH_MODE=token and the token "
                        "(docs/rllib.md)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set rllib.num_env_runners=4 (repeatable)")
    parser.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="let --resume restore a checkpoint without this machine's mark (RLlib's checkpoints "
                             "unpickle, which can run code: only for one you made or trust like code)")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run of this name first")
    parser.add_argument("--bench-sampling", type=bounded("bench_sampling", RLLIB_BOUNDS), metavar="STEPS", default=0,
                        help="only measure sampling: STEPS env steps per env runner, timed; print steps/s")
    return parser


def private_copy(folder: Path) -> Path:
    """A copy of the checkpoint ``folder`` and its mark in a private temporary folder (0700, removed when the
    process ends): what ``--resume`` checks and then restores (symbolic links copied as links, which the
    mark's digest refuses)."""
    scratch = Path(tempfile.mkdtemp(prefix="dragonstones-resume-"))  # mkdtemp: readable by its owner only
    atexit.register(shutil.rmtree, scratch, True)
    copy = scratch / folder.name
    if folder.is_dir():
        shutil.copytree(folder, copy, symlinks=True)
    mark = marks.mark_path(folder)
    if mark.is_file() and not mark.is_symlink():
        shutil.copyfile(mark, marks.mark_path(copy))
    return copy


def no_checks(folders: lifecycle.Folders, result: dict[str, Any]) -> None:
    """The default ``after_iteration`` hook: nothing beyond the run's own schedule."""


class RunnersUnhealthy(cluster.ClusterError):
    """Too few env runners are healthy after an iteration: the run stops (exit 3), its last checkpoint kept."""


class RLlib(lifecycle.Adapter):
    """RLlib's PPO as a run's library (training/run.py): the algorithm, its iterations (each followed by
    the runners' health, ``after_iteration`` and, when due, a snapshot joining the league), the
    actor's weights as a policy, and RLlib's checkpoint (marked, restored from a checked copy)."""

    libraries = ("torch", "ray")

    def __init__(self, cfg: Config, restore_from: Path | None,
                 after_iteration: Callable[[lifecycle.Folders, dict[str, Any]], None], run: lifecycle.Run) -> None:
        self.cfg, self.run, self.restore_from, self.after_iteration = cfg, run, restore_from, after_iteration
        self.algo = build_config(cfg).build_algo()
        self.weights: Any = None  # the actor's weights once the algorithm is stopped
        self.snapshot_dir = run.folders.root / "snapshots"
        self.snapshots = lifecycle.Schedule(cfg.league.snapshot_every, run.state["steps"])
        self.snapshots_used = cfg.league.mix.get("snapshot", 0) > 0
        self.runners_csv = run.folders.root / "runners.csv"
        if not self.runners_csv.exists():
            self.runners_csv.write_text(cluster.CSV_HEADER)
        self.health = run.state.setdefault("runners", [])  # one record per iteration, kept across --resume
        self.iteration = 0

    def restore(self, folder: Path) -> None:
        """RLlib's checkpoint from the private copy whose mark was checked (not ``folder``'s files, which
        may have been swapped since), and the league's snapshots back."""
        self.algo.restore_from_path(str(self.restore_from.resolve()))
        if self.snapshots_used and self.snapshot_dir.is_dir():
            for folder in sorted(self.snapshot_dir.iterdir())[-self.cfg.league.max_snapshots:]:
                old = load_policy(folder)  # checked like any checkpoint (its card names the game)
                push_snapshot(self.algo, {"spec": str(folder), "weights": old.weights, "activation": old.activation})

    def learn(self, n: int) -> int:
        """RLlib iterations until ``n`` more env steps are sampled (or the run is out of time)."""
        start = steps = self.run.state["steps"]
        while steps < start + n and not self.run.out_of_time():
            steps = self.iterate()
        return steps

    def iterate(self) -> int:
        """One ``algo.train()``, the runners' health (RunnersUnhealthy below the share), the hook, a snapshot."""
        cfg, folders = self.cfg, self.run.folders
        result = self.algo.train()
        self.iteration += 1
        steps = sampled_steps(result)
        runners = result.get("env_runners", {})
        print(f"iter {self.iteration}: {steps} env steps, {runners.get('num_episodes_lifetime', 0)} games, "
              f"{steps / max(self.run.wall_time(), 1e-9):.0f} steps/s overall, "
              f"episode length {runners.get('episode_len_mean', float('nan')):.1f}", flush=True)
        health = cluster.runner_health(self.algo, cfg.rllib.num_env_runners)
        self.health.append(health)
        with self.runners_csv.open("a") as f:
            f.write(cluster.csv_row(self.iteration, steps, health))
        print(f"  runners: {health['healthy']}/{health['requested']} healthy, "
              f"{health['restarted']} restarts, on {len(health['nodes'])} node(s)", flush=True)
        unhealthy = cluster.health_problem(health, cfg.rllib.min_healthy_share)
        if unhealthy:  # the last checkpoint stays as it was, for --resume
            raise RunnersUnhealthy(f"{unhealthy}; stopped at {steps} env steps, the last checkpoint "
                                   f"({folders.checkpoint}) continues with --resume")
        self.after_iteration(folders, result)
        if self.snapshots.due(steps):
            weights = current_weights(self.algo)
            folder = write_policy(self.snapshot_dir / f"step-{steps:09d}", weights, cfg.rllib.activation,
                                  {"steps": steps, "snapshot": True}, cfg)
            for old in sorted(self.snapshot_dir.iterdir())[: -cfg.league.max_snapshots]:
                shutil.rmtree(old)
            if self.snapshots_used:
                push_snapshot(self.algo, {"spec": str(folder), "weights": weights, "activation": cfg.rllib.activation})
        return steps

    def actor(self) -> Any:
        return self.weights if self.weights is not None else current_weights(self.algo)

    def policy(self) -> evals.Learner:
        return learner(self.actor(), self.cfg.rllib.activation, self.cfg)

    def save(self, folder: Path) -> None:
        self.algo.save_to_path(str((folder / "algo").resolve()))
        marks.write_mark(folder / "algo")  # what --resume checks before restoring (unpickling) it

    def write_policy(self, folder: Path, card: dict[str, Any], final: bool = False) -> Path:
        return write_policy(folder, self.actor(), self.cfg.rllib.activation, card, self.cfg)

    def card(self) -> dict[str, Any]:
        return {"rllib_checkpoint": str(self.run.folders.checkpoint / "algo"),
                "env_runners": cluster.summary(self.health, self.cfg.rllib.min_healthy_share)}

    def close(self) -> None:
        if self.weights is None:
            try:  # the weights outlive the algorithm: the final evaluation and the result play them
                self.weights = current_weights(self.algo)
            finally:
                self.algo.stop()


def main(argv: list[str] | None = None,
         after_iteration: Callable[[lifecycle.Folders, dict[str, Any]], None] = no_checks) -> int:
    """Train; ``after_iteration(folders, result)`` runs after each RLlib iteration (the run's folders
    and ``algo.train()``'s result): the hook for checks of the runners' health (issue #51)."""
    args = build_parser().parse_args(argv)
    overrides = list(args.set) + ([f"rllib.address={args.address}"] if args.address else [])
    if not args.address and os.environ.get("RAY_ADDRESS") and not any(
            o.startswith(("rllib.address=", "ray.address=")) for o in overrides):
        overrides.append(f"rllib.address={os.environ['RAY_ADDRESS']}")  # what ray.init() would join anyway
    try:
        cfg = load_config(args.config, overrides)
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2

    try:  # a bad pool spec must stop the run here, before the run folder exists
        for spec in cfg.league.pool:
            pool_item(spec, cfg.env_name)
    except (PolicyError, ValueError) as err:
        print(f"config error: league.pool: {err}", file=sys.stderr)
        return 2

    folders = lifecycle.Folders.of(cfg.runs_dir, cfg.out_dir, cfg.run_name)
    restore_from = None
    if not args.bench_sampling:
        try:  # the refusals every trainer shares (training/run.py): an old run, no checkpoint, policies/
            lifecycle.check_folders(folders, args.resume, args.overwrite)
        except ConfigError as err:
            print(f"config error: {err}", file=sys.stderr)
            return 2
        # RLlib restores a checkpoint by unpickling it, and runs_dir may point anywhere: only a folder
        # marked on this machine when it was saved (dragonstones_env/policies/marks.py), or trusted. The
        # mark is checked on a private copy, and the copy is what is restored: a file swapped into the run's
        # folder after the check is never read (issue #49).
        restore_from = private_copy(folders.checkpoint / "algo") if args.resume else None
        why = marks.check_mark(restore_from) if restore_from is not None else None
        if why is not None and not args.trust_checkpoint:
            print(f"--resume: {why}. Restoring it can run any code it holds: add --trust-checkpoint only if you "
                  "made it or trust it like code", file=sys.stderr)
            return 2

    import torch  # the optional rllib extra, seconds to import: after the config checks

    torch.set_num_threads(cfg.torch_threads)
    init_ray(cfg)
    if cfg.rllib.address:
        try:  # a node without the code would only fail its env runners, quietly: name it now
            cluster.check_imports()
        except cluster.ClusterError as err:
            print(f"cluster error: {err}", file=sys.stderr)
            return 3
    short = check_resources(cfg)
    if short and not cfg.rllib.address:
        print(f"config error: {short}: the actors would wait for them forever", file=sys.stderr)
        return 2
    if short:  # an autoscaling cluster may still add nodes
        print(f"warning: {short} now; waiting for the cluster to grow", file=sys.stderr)
    if args.bench_sampling:
        print(json.dumps(bench_sampling(cfg, args.bench_sampling)))
        return 0
    try:  # the run every trainer writes (training/run.py), RLlib learning
        lifecycle.drive(cfg, partial(RLlib, cfg, restore_from, after_iteration), args.resume, args.overwrite)
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2
    except RunnersUnhealthy as err:
        print(f"cluster error: {err}", file=sys.stderr)
        return 3
    return 0


# ---------------------------------------------------------------------------- sampling benchmark
def bench_sampling(cfg: Config, steps: int, repeats: int = 3) -> dict[str, Any]:
    """Env steps/s of the env runners' ``sample()`` (the policy's forward pass, the games, the
    episode bookkeeping), all runners at once, no learning: the best of ``repeats`` timings. Also
    the CPU time each runner spends per env step (what the machine's load does not change)."""
    algo = build_config(cfg).build_algo()
    group = algo.env_runner_group
    remote = cfg.rllib.num_env_runners > 0

    def sample(runner: Any) -> tuple[int, float]:
        cpu = time.process_time()
        episodes = runner.sample(num_timesteps=steps, force_reset=False)
        return sum(e.env_steps() for e in episodes), time.process_time() - cpu

    group.foreach_env_runner(sample, local_env_runner=not remote)  # warm-up
    best, cpu_per_step = 0.0, float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        results = group.foreach_env_runner(sample, local_env_runner=not remote)
        elapsed = time.perf_counter() - t0
        count = sum(n for n, _ in results)
        best = max(best, count / elapsed)
        cpu_per_step = min(cpu_per_step, sum(c for _, c in results) / count)
    algo.stop()
    return {"num_env_runners": cfg.rllib.num_env_runners, "num_envs_per_env_runner": cfg.rllib.num_envs_per_env_runner,
            "steps_per_runner": steps, "env_steps_per_s": round(best, 1),
            "runner_cpu_ms_per_step": round(1000 * cpu_per_step, 3)}

if __name__ == "__main__":
    sys.exit(main())
