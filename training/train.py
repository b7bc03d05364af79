"""Train a policy with MaskablePPO and league self-play; write it to policies/<run-name>/.

    python -m training.train --config configs/default.yaml [--set key=value ...] [--resume]
    python -m training.train --config ... --finetune FOLDER --trust-model-zip

``--resume`` reads the ``model.zip`` of this run's own checkpoint (``<runs_dir>/<run_name>``).
``--finetune FOLDER`` starts a new run from another checkpoint's ``model.zip``; SB3's model.zip
unpickles, which runs any code the file holds, so it also needs ``--trust-model-zip``: use it
only for a folder you made yourself or trust like code (README, "Loading checkpoints from others").
The config's ``start`` (training/start.py) starts a new run from a checkpoint folder's actor and
critic read as numpy arrays instead: nothing is unpickled (``make train`` starts so from a clone).

Read top to bottom: load the config, build the league and the vectorised environments,
build (or resume) the model, train with one callback that adds snapshots to the league,
evaluates against the heuristic, charges the leash to the start (``imitate.anchor_kl``,
training/anchor.py) and saves checkpoints, then write the result and its card.
Every hyperparameter is in training/config.py, with its default.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from dragonstones_env.core import same_game
from play.arena import seat_rotated_match
from play.league import League, publish_latest
from policies import PolicyError, load_policy, zoo
from policies.checkpoint import CheckpointPolicy, load_checkpoint, save_checkpoint

from . import anchor, envs, start  # envs.make_vec_env looked up at call time (tests replace it)
from .config import PPO, Config, ConfigError, load_config
from .evaluate import checked_options, panel, panel_opponents, robustness, worst_mix
from .imitate import Demonstrations, clone, collect


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine() -> dict[str, Any]:
    import torch  # the optional train extra, seconds to import

    return {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__}


def env_kwargs(cfg: Config, opponents: Any, with_opponents: bool = True) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"num_players": cfg.num_players, **cfg.env_options()}
    if with_opponents:
        kwargs["opponents"] = opponents
    return kwargs


def evaluate_model(model: Any, cfg: Config, games: int, opponent: str, seed: int) -> dict[str, Any]:
    """The model (sampling) in one seat against ``opponent`` bots in the others, seats rotated."""
    options, deck = checked_options(cfg.game, cfg.eval.players, deck_options(cfg))
    make = partial(cfg.spec.env, num_players=cfg.eval.players, **options)
    hero = CheckpointPolicy.from_sb3(model, spec="training", seed=seed)
    others = [load_policy(opponent, seed=seed + i) for i in range(1, cfg.eval.players)]
    for bot in others:
        if deck is not None and callable(getattr(bot, "use_deck", None)):
            bot.use_deck(deck)  # a rule bot values the custom cards, as in training.evaluate
    return seat_rotated_match(make, hero, others, games, seed=seed)


def deck_options(cfg: Config) -> dict[str, Any]:
    """The config's custom deck (``characters``, ``exclude``) as env options; empty for the box's deck."""
    return {k: v for k, v in cfg.env_options().items() if k in ("characters", "exclude")}


def ppo_settings(p: PPO) -> dict[str, Any]:
    """MaskablePPO's keyword arguments for the hyperparameters of ``p``, the network's shape aside
    (a new model takes it as ``policy_kwargs``; a fine-tuned one keeps its own)."""
    return {"learning_rate": p.learning_rate, "n_steps": p.n_steps, "batch_size": p.batch_size,
            "n_epochs": p.n_epochs, "gamma": p.gamma, "gae_lambda": p.gae_lambda, "clip_range": p.clip_range,
            "ent_coef": p.ent_coef, "vf_coef": p.vf_coef, "max_grad_norm": p.max_grad_norm}


def new_model(MaskablePPO: Any, venv: Any, p: PPO, seed: int, device: str = "cpu",
              tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO model with the hyperparameters of ``p`` (every run's and every exploiter's)."""
    return MaskablePPO("MlpPolicy", venv, **ppo_settings(p), policy_kwargs={"net_arch": list(p.net_arch)},
                       tensorboard_log=tensorboard_log, seed=seed, device=device, verbose=0)


def finetune_model(MaskablePPO: Any, venv: Any, folder: str | Path, cfg: Config, tensorboard_log: str) -> Any:
    """The model.zip in ``folder`` with this config's PPO settings (a smaller learning rate, more
    epochs...) and its step count at 0; its network must have the config's shape."""
    model = MaskablePPO.load(Path(folder) / "model.zip", env=venv, device=cfg.device, seed=cfg.seed,
                             tensorboard_log=tensorboard_log, **ppo_settings(cfg.ppo))
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
    return collect(cfg.env, im.teacher, teacher_opponents(cfg), games, cfg.ppo.gamma, seed, im.max_rows,
                   **env_kwargs(cfg, None, with_opponents=False))


def fit_clone(model: Any, demos: Demonstrations, cfg: Config) -> dict[str, float]:
    """The model fitted to ``demos`` with the config's ``imitate`` settings (training/imitate.py)."""
    im = cfg.imitate
    return clone(model, demos, im.epochs, im.batch_size, im.learning_rate, im.value_coef, im.holdout, cfg.seed)


def imitate(model: Any, cfg: Config) -> dict[str, Any]:
    """Behaviour cloning of ``cfg.imitate.teacher`` into the new model (training/imitate.py)."""
    im = cfg.imitate
    opponents = teacher_opponents(cfg)
    started = time.time()
    demos = teacher_games(cfg, cfg.seed + 5_000, im.games)
    print(f"imitate: {len(demos)} decisions of {im.teacher} over {demos.games} games "
          f"(it won {demos.wins / demos.games:.3f} of them) in {time.time() - started:.0f} s")
    stats = fit_clone(model, demos, cfg)
    return {"teacher": im.teacher, "opponents": opponents, "decisions": len(demos), "games": demos.games,
            "teacher_win_rate": demos.wins / demos.games, "seconds": round(time.time() - started, 1), **stats}


def _start(cfg: Config, args: argparse.Namespace, league: Any, run_dir: Path, ckpt_dir: Path,
           make_vec_env: Any, MaskablePPO: Any,
           start_weights: dict[str, Any] | None) -> tuple[Any, Any, dict[str, Any]]:
    """The environments, the model (new, from the config's start, resumed or fine-tuned) and the run state."""
    (run_dir / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    venv = make_vec_env(cfg.env, n_envs=cfg.n_envs, seed=cfg.seed, subproc=cfg.n_envs > 1,
                        **env_kwargs(cfg, league))
    try:
        state: dict[str, Any] = {"wall_time": 0.0, "evaluations": []}
        if args.resume:  # this run's own checkpoint, under the user's runs_dir
            model = MaskablePPO.load(ckpt_dir / "model.zip", env=venv, device=cfg.device)
            state = json.loads((ckpt_dir / "state.json").read_text())
            print(f"resuming {cfg.run_name} at {model.num_timesteps} timesteps")
            return venv, model, state
        if args.finetune:  # allowed by --trust-model-zip only (checked in main)
            model = finetune_model(MaskablePPO, venv, args.finetune, cfg, tensorboard_log=str(run_dir / "tb"))
            print(f"fine-tuning from {args.finetune} with the config's PPO settings")
        else:
            model = new_model(MaskablePPO, venv, cfg.ppo, cfg.seed, cfg.device, tensorboard_log=str(run_dir / "tb"))
            if start_weights is not None:  # the config's start, read (and checked) in main
                state["start"] = start.apply_start(model, start_weights)
                print(f"starting from {cfg.start} (actor{' and critic' if state['start']['critic'] else ''})")
            if cfg.imitate.teacher:
                state["imitation"] = imitate(model, cfg)
        if cfg.imitate.anchor_kl:  # where PPO starts: what the leash pulls towards, also after --resume
            save_checkpoint(model, run_dir / "anchor", {"steps": 0, "anchor": True}, cfg.env_name, with_model=False)
        return venv, model, state
    except BaseException:
        venv.close()
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML config (see configs/ and training/config.py)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run of this name first")
    parser.add_argument("--finetune", metavar="FOLDER",
                        help="start from the model.zip of this checkpoint folder (needs --trust-model-zip)")
    parser.add_argument("--trust-model-zip", action="store_true",
                        help="allow --finetune to unpickle FOLDER/model.zip: it can run code, so only for "
                             "a folder you made or trust like code")
    args = parser.parse_args(argv)
    if args.finetune and not args.trust_model_zip:
        print("--finetune reads a model.zip, which can run code when loaded: add --trust-model-zip if you "
              "made this folder or trust it like code", file=sys.stderr)
        return 2
    if args.finetune and args.resume:
        print("--finetune starts a new run; --resume continues one: give one of them", file=sys.stderr)
        return 2
    if args.finetune and not (Path(args.finetune) / "model.zip").is_file():
        print(f"--finetune: there is no {Path(args.finetune) / 'model.zip'}", file=sys.stderr)
        return 2
    try:
        cfg = load_config(args.config, args.set)
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2
    if cfg.start and (args.finetune or cfg.imitate.teacher):
        print(f"config error: start ({cfg.start}) is where the run starts, and so is "
              f"{'--finetune' if args.finetune else 'imitate.teacher'}: give one of them (--set start= "
              "clears start)", file=sys.stderr)
        return 2
    start_weights = None
    if cfg.start and not args.resume:
        try:  # a missing or damaged start must stop the run before the run folder exists
            start_weights = start.read_start(cfg.start, cfg.env_name)
        except ConfigError as err:
            print(f"config error: {err}", file=sys.stderr)
            return 2
    if cfg.imitate.anchor_kl and not (cfg.imitate.teacher or cfg.start or args.finetune or args.resume):
        print("config error: imitate.anchor_kl leashes PPO to where it starts, a clone of imitate.teacher, "
              "start or the --finetune model, and random weights are no place to leash to: set one, or "
              "imitate.anchor_kl=0", file=sys.stderr)
        return 2
    lg = cfg.league
    league = League(Path(cfg.runs_dir) / cfg.run_name, lg.mix, lg.pool, zoo=zoo(cfg.game), heuristic=cfg.heuristic,
                    table=lg.table, mixed=lg.mixed, pfsp_power=lg.pfsp_power, game=cfg.env_name)
    try:  # a bad pool spec must stop the run here, before the run folder exists
        league.check()
    except (PolicyError, ValueError) as err:
        print(f"config error: league.pool: {err}", file=sys.stderr)
        return 2
    for spec in filter(None, [cfg.imitate.teacher, *cfg.imitate.opponents]):
        try:  # an unknown teacher, or one of another game, must stop the run before any training
            game = getattr(load_policy(spec), "game", None)
        except PolicyError as err:
            print(f"config error: imitate: {err}", file=sys.stderr)
            return 2
        if game is not None and not same_game(game, cfg.env_name):
            print(f"config error: imitate: {spec!r} plays {game}, not {cfg.env_name}", file=sys.stderr)
            return 2

    # -- the rest needs the training stack (torch, SB3: seconds to import, and an optional extra);
    # imported here so that config errors are instant and the module imports without them
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.utils import obs_as_tensor

    torch.set_num_threads(cfg.torch_threads)
    run_dir = Path(cfg.runs_dir) / cfg.run_name
    snapshot_dir = run_dir / "snapshots"
    ckpt_dir = run_dir / "checkpoint"
    out_dir = Path(cfg.out_dir) / cfg.run_name
    env_name = cfg.env_name
    if args.overwrite and not args.resume and run_dir.exists():
        shutil.rmtree(run_dir)
    if not args.resume and run_dir.exists() and any(run_dir.iterdir()):
        print(f"{run_dir} exists: use --resume to continue it, or another run_name", file=sys.stderr)
        return 2
    if args.resume and not (ckpt_dir / "model.zip").is_file():
        print(f"--resume: no checkpoint in {ckpt_dir}", file=sys.stderr)
        return 2
    if args.resume and cfg.imitate.anchor_kl and not (run_dir / "anchor").is_dir():
        print(f"--resume: imitate.anchor_kl is {cfg.imitate.anchor_kl}, but {run_dir} has no anchor to leash to "
              "(it was started without one): resume it with imitate.anchor_kl=0", file=sys.stderr)
        return 2
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        venv, model, state = _start(cfg, args, league, run_dir, ckpt_dir, envs.make_vec_env, MaskablePPO, start_weights)
    except BaseException as err:
        # A run that fails to start must not block the same command ("exists: use --resume"
        # while --resume finds no checkpoint): remove the folder it made.
        if created:
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(err, ConfigError):  # --finetune from a network of another shape
            print(f"config error: {err}", file=sys.stderr)
            return 2
        raise
    leash = None
    if cfg.imitate.anchor_kl:
        try:
            leash = load_checkpoint(run_dir / "anchor", "anchor", seed=0, deterministic=False)
        except PolicyError as err:  # a damaged anchor folder
            venv.close()
            print(f"imitate.anchor_kl: {err}", file=sys.stderr)
            return 2
    eval_csv = run_dir / "eval.csv"
    if not eval_csv.exists():
        eval_csv.write_text("timesteps,win_rate,ci_low,ci_high,robustness\n")

    def run_panel(folder: Path, games: int, seed: int) -> dict[str, Any]:
        """The robustness panel of the policy in ``folder`` at the evaluation table size."""
        result = panel(str(folder), panel_opponents(cfg.game), [cfg.eval.players], games=games, workers=1,
                       seed=seed, game=cfg.game, copies=(), env_options=deck_options(cfg) or None)
        worst = worst_mix(result)
        return {"robustness": robustness(result), "worst_mix": {k: worst[k] for k in ("opponent", "k", "games")},
                "games_per_mix": games, "players": cfg.eval.players,
                "mixes": [{k: row[k] for k in ("opponent", "k", "win_rate", "ratio")} for row in result["mixes"]]}

    latest_dir = run_dir / "latest"

    def refresh_latest(t: int) -> None:
        """The learner's current weights take the league's `latest` seats (the two newest folders
        are kept: a worker may be loading the previous one)."""
        save_checkpoint(model, latest_dir / f"step-{t:09d}", {"steps": t, "latest": True}, env_name, with_model=False)
        publish_latest(run_dir, latest_dir / f"step-{t:09d}")
        for old in sorted(latest_dir.iterdir())[:-2]:
            shutil.rmtree(old, ignore_errors=True)

    class LeagueCallback(BaseCallback):
        """The learner's weights and snapshots join the league, evaluations, checkpoints for --resume."""

        def __init__(self) -> None:
            super().__init__()
            t = model.num_timesteps
            refresh_latest(t)
            self.next_latest = t + cfg.league.latest_every
            self.next_snapshot = (t // cfg.league.snapshot_every + 1) * cfg.league.snapshot_every
            self.next_eval = (t // cfg.eval.every + 1) * cfg.eval.every
            self.next_ckpt = (t // cfg.checkpoint_every + 1) * cfg.checkpoint_every
            every = cfg.eval.panel_every
            self.next_panel = (t // every + 1) * every if every else None
            self.started = time.time()

        def _on_step(self) -> bool:
            t = self.num_timesteps
            if t >= self.next_latest:
                self.next_latest = t + cfg.league.latest_every
                refresh_latest(t)
            if t >= self.next_snapshot:
                self.next_snapshot += cfg.league.snapshot_every
                save_checkpoint(self.model, snapshot_dir / f"step-{t:09d}", {"steps": t, "snapshot": True},
                                env_name, with_model=False)
                for old in sorted(snapshot_dir.iterdir())[: -cfg.league.max_snapshots]:
                    for f in old.iterdir():
                        f.unlink()
                    old.rmdir()
            if t >= self.next_eval:
                self.next_eval += cfg.eval.every
                result = evaluate_model(self.model, cfg, cfg.eval.games, cfg.heuristic, seed=10_000 + t)
                low, high = result["ci95"]
                self.logger.record("eval/win_rate_vs_heuristic", result["rate"])
                rob = ""
                if self.next_panel is not None and t >= self.next_panel:
                    self.next_panel += cfg.eval.panel_every
                    refresh_latest(t)  # the panel plays the weights of now
                    p = run_panel(latest_dir / f"step-{t:09d}", cfg.eval.panel_games, seed=20_000 + t)
                    self.logger.record("eval/robustness", p["robustness"])
                    result["panel"] = p
                    rob = f"{p['robustness']:.4f}"
                with eval_csv.open("a") as f:
                    f.write(f"{t},{result['rate']:.4f},{low:.4f},{high:.4f},{rob}\n")
                state["evaluations"].append({"timesteps": t, **result})
            if t >= self.next_ckpt:
                self.next_ckpt += cfg.checkpoint_every
                self.save()
            spent = state["wall_time"] + time.time() - self.started
            if cfg.time_budget_s and spent >= cfg.time_budget_s:
                print(f"time budget of {cfg.time_budget_s:.0f} s reached at {t} timesteps")
                return False
            return True

        def _on_rollout_end(self) -> None:
            """The leash (training/anchor.py): each decision's reward pays for its divergence
            from the clone, then the advantages are computed again from the new rewards."""
            if leash is None:
                return
            buf = self.model.rollout_buffer
            cost, kl = anchor.penalty(leash, buf.observations, buf.action_masks, buf.actions, buf.log_probs,
                                      cfg.imitate.anchor_kl)
            buf.rewards -= cost
            with torch.no_grad():  # the value after the rollout's last step, as collect_rollouts computed it
                last = self.model.policy.predict_values(obs_as_tensor(self.locals["new_obs"], self.model.device))
            buf.compute_returns_and_advantage(last_values=last, dones=self.locals["dones"])
            self.logger.record("anchor/kl", kl)
            self.logger.record("anchor/penalty", float(cost.mean()))

        def save(self) -> None:
            state["wall_time"] += time.time() - self.started
            self.started = time.time()
            ckpt_dir.mkdir(parents=True, exist_ok=True)
            model.save(ckpt_dir / "model.zip")  # also when no step was left to learn (a finished run resumed)
            (ckpt_dir / "state.json").write_text(json.dumps(state, default=list) + "\n")

    callback = LeagueCallback()
    remaining = cfg.total_timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(remaining, callback=callback, reset_num_timesteps=not args.resume, progress_bar=cfg.progress_bar,
                    tb_log_name="ppo")
    callback.save()
    venv.close()

    # -- the result: the model, its card, and a final evaluation
    final = {}
    for opponent in (cfg.heuristic, "random"):
        if cfg.eval.final_games:
            r = evaluate_model(model, cfg, cfg.eval.final_games, opponent, seed=cfg.seed + 1)
            final[f"vs_{opponent}"] = {"players": cfg.eval.players, **r}
            low, high = r["ci95"]
            print(f"final: {r['rate']:.3f} [{low:.3f}, {high:.3f}] wins against {cfg.eval.players - 1} "
                  f"{opponent} bots over {r['games']} games")
    if cfg.eval.final_panel_games:
        t = int(model.num_timesteps)
        refresh_latest(t)
        p = run_panel(latest_dir / f"step-{t:09d}", cfg.eval.final_panel_games, seed=cfg.seed + 2)
        final["panel"] = p
        w = p["worst_mix"]
        print(f"robustness: {p['robustness']:.3f} (worst per-seat win rate / parity over every mix at "
              f"{cfg.eval.players} players, {p['games_per_mix']} games a mix; worst: {w['k']} learner(s) vs "
              f"{cfg.eval.players - w['k']} {w['opponent']})")
    card = {
        "steps": int(model.num_timesteps),
        "wall_time_s": round(state["wall_time"], 1),
        "config": cfg.to_dict(),
        "machine": machine(),
        "git_commit": git_commit(),
        "evaluation": final,
        **({"imitation": state["imitation"]} if "imitation" in state else {}),
        **({"start": state["start"]} if "start" in state else {}),
        "training_curve": [{k: e[k] for k in ("timesteps", "rate", "ci95")} for e in state["evaluations"]],
    }
    save_checkpoint(model, out_dir, card, env_name)
    print(f"wrote {out_dir} ({model.num_timesteps} timesteps, {state['wall_time']:.0f} s); "
          f"load it with load_policy({str(out_dir)!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
