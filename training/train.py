"""Train a policy with MaskablePPO and league self-play; write it to runs/policies/<run-name>/.

    python -m training.train --config configs/default.yaml [--set key=value ...] [--resume]
    python -m training.train --config ... --finetune FOLDER --trust-model-zip

``--resume`` reads the ``model.zip`` of this run's own checkpoint (``<runs_dir>/<run_name>``).
``--finetune FOLDER`` starts a new run from another checkpoint's ``model.zip``. SB3's model.zip
unpickles, which runs any code the file holds, and a config can point ``runs_dir`` anywhere: both
read a model.zip only when it carries this machine's mark (``model.zip.mark``, the keyed hash
training writes beside every model.zip it saves; dragonstones_env/policies/marks.py), or with
``--trust-model-zip``: use that only for a file you made yourself or trust like code
(docs/training.md, "Loading checkpoints from others").
The config's ``start`` (training/start.py) starts a new run from a checkpoint folder's actor and
critic read as numpy arrays instead: nothing is unpickled (``make train`` starts so from a clone).

Read top to bottom: the model's recipes (new, fine-tuned, cloned from a teacher), the run's
folders, the callback that adds the learner's weights and snapshots to the league, charges the
leash to the start (``imitate.anchor_kl``, training/anchor.py) and stops at the time budget; the
run's adapter :class:`SB3` (training/run.py's ``Adapter``: the vectorised tables with the league,
or a ``target`` in every other seat, the model, ``learn``, ``save``/``restore``, the weights
written); then ``main``: load and check the config and the command, and ``run.drive`` the run
(folders, schedules, evaluations, checkpoints, final evaluation and panel, the card). Every
hyperparameter is in training/config.py, with its default; the checks that need more than the
keys (the league's pool, the teacher, the target, the start's weights) are config.check_sources
and start.read_start.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.utils import obs_as_tensor
from threadpoolctl import threadpool_limits

from dragonstones_env.core.seeding import stream_seed
from dragonstones_env.policies import PolicyError, marks, zoo
from dragonstones_env.policies.checkpoint import CheckpointPolicy, load_checkpoint, save_checkpoint, save_model
from training.league import FolderVersions, publish_latest

from . import anchor, envs, evals, progress, start  # envs.make_vec_env looked up at call time (tests replace it)
from . import run as lifecycle
from .config import PPO, Config, ConfigError, check_sources, load_config, make_league
from .imitate import (
    Demonstrations,
    clone,
    collect,
    identity_differences,
    load_demonstrations,
    save_demonstrations,
    saved_identity,
)
from .shaped import ShapedPolicy
from .shaped import policy_kwargs as shaped_kwargs


def env_kwargs(cfg: Config, opponents: Any, with_opponents: bool = True) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"num_players": cfg.num_players, **cfg.env_options()}
    if cfg.truncation_reward:  # the single-agent env's, not the game's; unset, runs and their records are as before
        kwargs["truncation_reward"] = cfg.truncation_reward
    if with_opponents:
        kwargs["opponents"] = opponents
    return kwargs


def make_venv(cfg: Config, opponents: Any) -> Any:
    """The config's tables (``collector``, ``n_envs``, ``workers``; training/envs.py), ``opponents`` seated."""
    return envs.make_vec_env(cfg.gym_id, n_envs=cfg.sb3.n_envs, seed=cfg.seed, subproc=cfg.sb3.n_envs > 1,
                             collector=cfg.sb3.collector, workers=cfg.sb3.workers, **env_kwargs(cfg, opponents))


def learner(model: Any, cfg: Config) -> evals.Learner:
    """The model's current weights as a policy (``learner(seed=...)``) for training/evals.py."""
    return partial(CheckpointPolicy.from_sb3, model, spec="training", view=cfg.learner_view(), card=cfg.learner_card())


def ppo_settings(p: PPO) -> dict[str, Any]:
    """MaskablePPO's keyword arguments for the hyperparameters of ``p``, the network's shape aside
    (a new model takes it as ``policy_kwargs``; a fine-tuned one keeps its own)."""
    return {"learning_rate": p.learning_rate, "n_steps": p.n_steps, "batch_size": p.batch_size,
            "n_epochs": p.n_epochs, "gamma": p.gamma, "gae_lambda": p.gae_lambda, "clip_range": p.clip_range,
            "ent_coef": p.ent_coef, "vf_coef": p.vf_coef, "max_grad_norm": p.max_grad_norm}


def new_model(venv: Any, p: PPO, seed: int, device: str = "cpu",
              tensorboard_log: str | None = None, game: str = "") -> Any:
    """A fresh MaskablePPO model with the hyperparameters of ``p`` (every run's and every exploiter's);
    ``sb3.architecture: shaped`` needs the registry id of ``game``, whose layout and actions shape it."""
    if p.architecture == "shaped":
        if not game:
            raise ConfigError("sb3.architecture: shaped needs the game the network is shaped like")
        policy: Any = ShapedPolicy
        kwargs = shaped_kwargs(game, p.net_arch, p.seat_arch, p.flat_logits)
    else:
        policy, kwargs = "MlpPolicy", {"net_arch": list(p.net_arch)}
    return MaskablePPO(policy, venv, **ppo_settings(p), policy_kwargs=kwargs,
                       tensorboard_log=tensorboard_log, seed=seed, device=device, verbose=0)


def model_zip_bytes(path: Path, trust: bool, flag: str) -> bytes:
    """The bytes of a ``model.zip`` about to be unpickled: marked by this machine (their hash is the
    mark's: dragonstones_env/policies/marks.py), or trusted with ``--trust-model-zip``; else a
    ConfigError. The bytes checked are the bytes loaded: the file cannot change in between. What
    can be refused without the file (no mark, no key) is, before it is read (a sparse 2 GB file was)."""
    why = marks.precheck_mark(path)
    if why is not None and not trust:
        raise ConfigError(f"{flag}: {why}. Unpickling it can run any code it holds: add --trust-model-zip only "
                          "if you made it or trust it like code")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"{flag}: cannot read {path} ({err.strerror})") from None
    why = marks.check_mark(path, marks.sha256_bytes(data))
    if why is not None and not trust:
        raise ConfigError(f"{flag}: {why}. Unpickling it can run any code it holds: add --trust-model-zip only "
                          "if you made it or trust it like code")
    return data


def finetune_model(venv: Any, folder: str | Path, cfg: Config, tensorboard_log: str, trust: bool = False) -> Any:
    """The model.zip in ``folder`` (marked, or ``trust``) with this config's PPO settings (a smaller
    learning rate, more epochs...) and its step count at 0; its network must have the config's shape."""
    data = model_zip_bytes(Path(folder) / "model.zip", trust, "--finetune")
    model = MaskablePPO.load(io.BytesIO(data), env=venv, device=cfg.sb3.device, seed=cfg.seed,
                             tensorboard_log=tensorboard_log, **ppo_settings(cfg.sb3_ppo()))
    architecture = "shaped" if isinstance(model.policy, ShapedPolicy) else "mlp"
    if architecture != cfg.sb3.architecture:
        raise ConfigError(f"sb3.architecture: {folder}/model.zip is a {architecture} network, the config says "
                          f"{cfg.sb3.architecture}; a fine-tuned network keeps its shape")
    arch = list(model.policy_kwargs.get("net_arch") or [])
    if arch != list(cfg.ppo.net_arch):
        raise ConfigError(f"ppo.net_arch: {folder}/model.zip has hidden layers {arch}, the config says "
                          f"{list(cfg.ppo.net_arch)}; a fine-tuned network keeps its shape: set ppo.net_arch={arch}")
    model.num_timesteps = 0
    return model




def teacher_opponents(cfg: Config) -> list[str]:
    """The other seats of the teacher's games: ``imitate.opponents``, or the teacher and the zoo."""
    return cfg.imitate.opponents or [cfg.imitate.teacher, *zoo(cfg.game)]


def teacher_games(cfg: Config, seed: int, games: int) -> Demonstrations:
    """``games`` games of the teacher from ``seed`` on, in the run's environment (training/imitate.py)."""
    im = cfg.imitate
    return collect(cfg.gym_id, im.teacher, teacher_opponents(cfg), games, cfg.ppo.gamma, seed, im.max_rows,
                   im.workers, im.target, **env_kwargs(cfg, None, with_opponents=False))


def teacher_identity(cfg: Config) -> dict[str, Any]:
    """What decides the teacher's games of :func:`imitate` (its saved collection's identity)."""
    im = cfg.imitate
    return {"env": cfg.gym_id, "env_options": env_kwargs(cfg, None, with_opponents=False), "teacher": im.teacher,
            "opponents": teacher_opponents(cfg), "games": im.games, "seed": stream_seed(cfg.seed, "imitate"),
            "gamma": cfg.ppo.gamma, "max_rows": im.max_rows, "target": im.target}


def check_saved_teacher_games(cfg: Config) -> None:
    """A ConfigError if ``imitate.demonstrations`` is a file of other settings or not a collection."""
    path = Path(cfg.imitate.demonstrations)
    if not (cfg.imitate.teacher and cfg.imitate.demonstrations and path.exists()):
        return
    try:
        differences = identity_differences(saved_identity(path), teacher_identity(cfg))
    except ValueError as err:
        raise ConfigError(f"imitate.demonstrations: {err}") from None
    if differences:
        raise ConfigError(f"imitate.demonstrations: {path} holds the teacher games of other settings "
                          f"({'; '.join(differences)}): delete it to collect again, or name another file")


def fit_clone(model: Any, demos: Demonstrations, cfg: Config) -> dict[str, float]:
    """The model fitted to ``demos`` with the config's ``imitate`` settings (training/imitate.py)."""
    im = cfg.imitate
    return clone(model, demos, im.epochs, im.batch_size, im.learning_rate, im.value_coef, im.holdout, cfg.seed)


def imitate(model: Any, cfg: Config) -> dict[str, Any]:
    """Behaviour cloning of ``cfg.imitate.teacher`` into the new model (training/imitate.py)."""
    im = cfg.imitate
    opponents = teacher_opponents(cfg)
    started = time.time()
    saved = Path(im.demonstrations) if im.demonstrations else None
    read = saved is not None and saved.exists()
    if read:
        try:
            demos = load_demonstrations(saved, teacher_identity(cfg), model.observation_space.shape[0],
                                        model.action_space.n)
        except ValueError as err:
            raise ConfigError(f"imitate.demonstrations: {err}") from None
        print(f"imitate: {len(demos)} decisions of {im.teacher} over {demos.games} games read from {saved}")
    else:
        demos = teacher_games(cfg, stream_seed(cfg.seed, "imitate"), im.games)
        print(f"imitate: {len(demos)} decisions of {im.teacher} over {demos.games} games "
              f"(it won {demos.wins / demos.games:.3f} of them) in {time.time() - started:.0f} s")
        if saved is not None:
            save_demonstrations(demos, saved, teacher_identity(cfg))
            print(f"imitate: saved them to {saved}, which the next run of these settings reads")
    stats = fit_clone(model, demos, cfg)
    kept = {"demonstrations": {"file": str(saved), "read": read}} if saved is not None else {}
    return {"teacher": im.teacher, "target": im.target, "opponents": opponents, "decisions": len(demos), **kept,
            "games": demos.games,
            "teacher_win_rate": demos.wins / demos.games, "seconds": round(time.time() - started, 1), **stats}


@dataclass(frozen=True)
class RunFolders:
    """Where one run writes: its run state under ``<runs_dir>/<run_name>``, its result in ``<out_dir>/<run_name>``."""

    root: Path
    out: Path

    @classmethod
    def of(cls, cfg: Config) -> RunFolders:
        return cls(Path(cfg.runs_dir) / cfg.run_name, Path(cfg.out_dir) / cfg.run_name)

    snapshots = property(lambda self: self.root / "snapshots")  # past versions: the league's snapshot seats
    checkpoint = property(lambda self: self.root / "checkpoint")  # model.zip and state.json, for --resume
    latest = property(lambda self: self.root / "latest")  # the current weights: the league's latest seats
    anchor = property(lambda self: self.root / "anchor")  # where PPO started: what the leash pulls towards
    eval_csv = property(lambda self: self.root / "eval.csv")

    def latest_at(self, t: int) -> Path:
        """A new folder for the weights of step ``t``: ``step-<t>``, or ``step-<t>-<k>`` when a resumed
        run writes a step again (never rewritten in place: a worker may be reading the folder)."""
        folder, k = self.latest / f"step-{t:09d}", 1
        while folder.exists():
            folder, k = self.latest / f"step-{t:09d}-{k}", k + 1
        return folder


def write_checkpoint(model: Any, folder: Path, cfg: Config, card: dict[str, Any], with_model: bool = True) -> Path:
    """A checkpoint folder of this run: ``card`` and the env options it learns with, which its card must
    carry for it to see every table as it saw its own (``card_view``: Fist's table mode hides coins)."""
    return save_checkpoint(model, folder, {**card, **cfg.card_keys()}, cfg.env_name, with_model)


def refresh_latest(model: Any, run: RunFolders, t: int, cfg: Config) -> Path:
    """The learner's current weights take the league's `latest` seats. The folder published before
    is kept too (a worker may be loading it) and every other is removed. Not "the two newest by step":
    a run resumed from an earlier checkpoint writes a step below those its stopped timeline left, and
    must neither delete what it has just published nor keep that timeline's weights."""
    before = FolderVersions(str(run.root)).latest()
    folder = run.latest_at(t)
    write_checkpoint(model, folder, cfg, {"steps": t, "latest": True}, with_model=False)
    publish_latest(run.root, folder)
    keep = {folder.resolve()} | ({Path(before).resolve()} if before else set())
    for old in run.latest.iterdir():
        if old.resolve() not in keep:
            shutil.rmtree(old, ignore_errors=True)
    return folder


class LeagueCallback(BaseCallback):
    """The learner's weights and snapshots join the league; the leash; the time budget (``out_of_time``:
    the run's, training/run.py). Evaluations and checkpoints are the run's (training/run.py's drive).

    ``state`` is the run state saved with each checkpoint (the leash's moves are kept there).
    """

    def __init__(self, cfg: Config, run: RunFolders, state: dict[str, Any], leash: Any = None,
                 out_of_time: Callable[[], bool] = lambda: False) -> None:
        super().__init__()
        self.cfg, self.run, self.state, self.leash, self.out_of_time = cfg, run, state, leash, out_of_time
        self.scheduled_from: int | None = None

    def _on_training_start(self) -> None:
        # once, at the first of the run's chunks of learning (model.learn is called once per chunk)
        if self.scheduled_from is not None:
            return
        cfg, t = self.cfg, self.model.num_timesteps  # the adapter published the weights of step t as `latest`
        self.scheduled_from = t
        self.next_latest = t + cfg.league.latest_every
        self.next_snapshot = (t // cfg.league.snapshot_every + 1) * cfg.league.snapshot_every
        if cfg.target:  # an exploiter's other seats are its target: no league to refresh or snapshot for
            self.next_latest = self.next_snapshot = float("inf")
        magnet = cfg.imitate.magnet_every
        self.next_magnet = (t // magnet + 1) * magnet if magnet and self.leash is not None else None

    def _on_step(self) -> bool:
        cfg, t = self.cfg, self.num_timesteps
        if t >= self.next_latest:
            self.next_latest = t + cfg.league.latest_every
            refresh_latest(self.model, self.run, t, cfg)
        if t >= self.next_snapshot:
            self.next_snapshot += cfg.league.snapshot_every
            self.snapshot(t)
        if self.next_magnet is not None and t >= self.next_magnet:
            self.next_magnet += cfg.imitate.magnet_every
            self.move_leash(t)
        return not self.out_of_time()

    def snapshot(self, t: int) -> None:
        """A past version for the league's PFSP seats; only the newest ``max_snapshots`` are kept."""
        write_checkpoint(self.model, self.run.snapshots / f"step-{t:09d}", self.cfg, {"steps": t, "snapshot": True},
                         with_model=False)
        for old in sorted(self.run.snapshots.iterdir())[: -self.cfg.league.max_snapshots]:
            shutil.rmtree(old)

    def move_leash(self, t: int) -> None:
        """Regularised self-play: the leash now pulls toward the learner's weights of step ``t``
        (saved as the run's anchor, so that --resume leashes to the same ones)."""
        write_checkpoint(self.model, self.run.anchor, self.cfg, {"steps": t, "anchor": True}, with_model=False)
        self.leash = load_checkpoint(self.run.anchor, "anchor", seed=0, deterministic=False)
        self.state["magnet_steps"] = t

    def _on_rollout_end(self) -> None:
        """The leash (training/anchor.py): each decision's reward pays for its divergence from the
        clone, then the advantages are computed again from the new rewards."""
        if self.leash is None:
            return
        buf = self.model.rollout_buffer
        cost, kl = anchor.penalty(self.leash, buf.observations, buf.action_masks, buf.actions, buf.log_probs,
                                  self.cfg.imitate.anchor_kl)
        buf.rewards -= cost
        with torch.no_grad():  # the value after the rollout's last step, as collect_rollouts computed it
            last = self.model.policy.predict_values(obs_as_tensor(self.locals["new_obs"], self.model.device))
        buf.compute_returns_and_advantage(last_values=last, dones=self.locals["dones"])
        self.logger.record("anchor/kl", kl)
        self.logger.record("anchor/penalty", float(cost.mean()))


def build_model(cfg: Config, args: argparse.Namespace, venv: Any, run: RunFolders,
                start_weights: dict[str, Any] | None, state: dict[str, Any]) -> Any:
    """A new run's model (fine-tuned, new from the config's start or a teacher's clone); what it
    started from goes into the run ``state``."""
    if args.finetune:  # a marked model.zip, or --trust-model-zip
        model = finetune_model(venv, args.finetune, cfg, tensorboard_log=str(run.root / "tb"),
                               trust=args.trust_model_zip)
        print(f"fine-tuning from {args.finetune} with the config's PPO settings")
    else:
        model = new_model(venv, cfg.sb3_ppo(), cfg.seed, cfg.sb3.device, tensorboard_log=str(run.root / "tb"),
                          game=cfg.game)
        if start_weights is not None:  # the config's start, read (and checked) in main
            state["start"] = start.apply_start(model, start_weights)
            print(f"starting from {cfg.start} (actor{' and critic' if state['start']['critic'] else ''})")
            if cfg.spec.seat_view(state["start"]["env_options"]) is not cfg.learner_view():
                # a curriculum may mean it (table mode after recall); a typo in a config should not pass unseen
                print(f"note: {cfg.start} learnt with env options {state['start']['env_options']}, so it saw the "
                      f"table otherwise than this run's learner will ({cfg.env_options()})")
        if cfg.imitate.teacher:
            state["imitation"] = imitate(model, cfg)
    if cfg.imitate.anchor_kl:  # where PPO starts: what the leash pulls towards, also after --resume
        write_checkpoint(model, run.anchor, cfg, {"steps": 0, "anchor": True}, with_model=False)
    return model


class SB3(lifecycle.Adapter):
    """MaskablePPO as a run's library (training/run.py): the vectorised tables with the league (or
    the exploiter's ``target``) in the other seats, the model, and the callback of the league's
    seats, the leash and the time budget."""

    checkpoint_file = "model.zip"

    def __init__(self, cfg: Config, args: argparse.Namespace, start_weights: dict[str, Any] | None,
                 run: lifecycle.Run) -> None:
        self.cfg, self.args, self.run = cfg, args, run
        self.folders = RunFolders(run.folders.root, run.folders.out)
        self.venv = make_venv(cfg, cfg.target or make_league(cfg, self.folders.root))
        try:
            self.model = None if run.resume else build_model(cfg, args, self.venv, self.folders, start_weights,
                                                             run.state)
            if self.model is not None:
                self.ready()
        except BaseException:
            self.close()
            raise

    def ready(self) -> None:
        """The leash, the league's `latest` seats from the first game, the callback."""
        cfg, folders = self.cfg, self.folders
        leash = load_checkpoint(folders.anchor, "anchor", seed=0, deterministic=False) if cfg.imitate.anchor_kl \
            else None
        if not cfg.target:  # an exploiter's other seats are its target: no league
            refresh_latest(self.model, folders, self.model.num_timesteps, cfg)
        self.callback = LeagueCallback(cfg, folders, self.run.state, leash, self.run.out_of_time)

    def restore(self, folder: Path) -> None:
        """The run's model.zip (marked here, or trusted: it unpickles) and its step count."""
        try:
            data = model_zip_bytes(folder / "model.zip", self.args.trust_model_zip, "--resume")
            self.model = MaskablePPO.load(io.BytesIO(data), env=self.venv, device=self.cfg.sb3.device)
            self.run.state["steps"] = int(self.model.num_timesteps)
            self.ready()
        except BaseException:
            self.close()
            raise

    def learn(self, n: int) -> int:
        cfg = self.cfg
        # our bar, not SB3's: it ends where the run ends (training/progress.py)
        bar = [progress.TrainingBar(cfg.total_timesteps, cfg.time_budget_s, self.run.wall_time())] \
            if cfg.progress_bar else []
        # one learn per chunk, the step count and the tables' games carried on: the rollouts of one
        # unbroken learn (SB3 resets the tables only on a model's first learn)
        self.model.learn(n, callback=CallbackList([self.callback, *bar]), reset_num_timesteps=False,
                         progress_bar=False, tb_log_name="ppo")
        return int(self.model.num_timesteps)

    def policy(self) -> evals.Learner:
        return learner(self.model, self.cfg)

    def save(self, folder: Path) -> None:
        save_model(self.model, folder / "model.zip")  # and its mark, which --resume checks

    def write_policy(self, folder: Path, card: dict[str, Any], final: bool = False) -> Path:
        return write_checkpoint(self.model, folder, self.cfg, card, with_model=final)  # model.zip: --finetune

    def card(self) -> dict[str, Any]:
        state = self.run.state
        return {**{k: state[k] for k in ("imitation", "start") if k in state},
                **({"exploiter_of": self.cfg.target} if self.cfg.target else {})}

    def close(self) -> None:
        if self.venv is not None:
            self.venv.close()
            self.venv = None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML config (see configs/ and training/config.py)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run of this name first")
    parser.add_argument("--finetune", metavar="FOLDER",
                        help="start from the model.zip of this checkpoint folder (marked by training on this "
                             "machine, or with --trust-model-zip)")
    parser.add_argument("--trust-model-zip", action="store_true",
                        help="let --resume and --finetune unpickle a model.zip without this machine's mark: it "
                             "can run code, so only for a file you made or trust like code")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def check_command(cfg: Config, args: argparse.Namespace, run: RunFolders) -> None:
    """What the command line asks of this config and these folders, before anything is written (a ConfigError)."""
    if args.finetune and args.resume:
        raise ConfigError("--finetune starts a new run; --resume continues one: give one of them")
    if args.finetune and not (Path(args.finetune) / "model.zip").is_file():
        raise ConfigError(f"--finetune: there is no {Path(args.finetune) / 'model.zip'}")
    if args.finetune:  # refused here already, before anything is made (build_model checks the bytes it loads)
        model_zip_bytes(Path(args.finetune) / "model.zip", args.trust_model_zip, "--finetune")
    if cfg.start and args.finetune:
        raise ConfigError(f"start ({cfg.start}) is where the run starts, and so is --finetune: give one of them "
                          "(--set start= clears start)")
    if cfg.imitate.anchor_kl and not (cfg.imitate.teacher or cfg.start or args.finetune or args.resume):
        raise ConfigError("imitate.anchor_kl leashes PPO to where it starts, a clone of imitate.teacher, start or "
                          "the --finetune model, and random weights are no place to leash to: set one, or "
                          "imitate.anchor_kl=0")
    # the refusals every trainer shares (training/run.py): an old run, a missing checkpoint, policies/
    lifecycle.check_folders(lifecycle.Folders(run.root, run.out), args.resume, args.overwrite, "model.zip")
    if args.resume:
        model_zip_bytes(run.checkpoint / "model.zip", args.trust_model_zip, "--resume")
        lifecycle.read_state(run.checkpoint / "state.json")
    if args.resume and cfg.imitate.anchor_kl and not run.anchor.is_dir():
        raise ConfigError(f"--resume: imitate.anchor_kl is {cfg.imitate.anchor_kl}, but {run.root} has no anchor "
                          "to leash to (it was started without one): resume it with imitate.anchor_kl=0")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cfg = load_config(args.config, args.set)
        run_or_refuse(cfg, args)
    except (ConfigError, PolicyError) as err:  # --finetune of another shape, a damaged anchor...
        print(f"config error: {err}", file=sys.stderr)
        return 2
    return 0


def run_or_refuse(cfg: Config, args: argparse.Namespace) -> lifecycle.Run:
    """The checks of this command, then the run (training/run.py) with :class:`SB3` learning."""
    check_command(cfg, args, RunFolders.of(cfg))
    check_sources(cfg)  # the league's pool, the teacher, the target: loaded once, before the run folder exists
    if not (args.resume or args.finetune):  # the runs that imitate
        check_saved_teacher_games(cfg)
    # a missing or damaged start stops the run here too
    start_weights = start.read_start(cfg.start, cfg.env_name) if cfg.start and not args.resume else None
    torch.set_num_threads(cfg.torch_threads)
    threadpool_limits(cfg.torch_threads)  # numpy's BLAS too: the in-process collector's forward passes
    run = lifecycle.drive(cfg, partial(SB3, cfg, args, start_weights), args.resume, args.overwrite,
                          SB3.checkpoint_file)
    print(f"ship it with python -m training.promote {run.folders.out} policies/NAME")
    return run


if __name__ == "__main__":
    sys.exit(main())
