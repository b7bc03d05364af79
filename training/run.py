"""One run lifecycle for every trainer (issue #50): training/train.py (SB3), training/train_rllib.py
(RLlib) and training/exploit.py (the SB3 run of configs/exploit.yaml: one frozen ``target`` in every
other seat) are the same run, written once here and driven through a small per-library adapter.

What a run is, whatever library learns:

* its folders (:class:`Folders`): the run state under ``<runs_dir>/<run_name>`` (:data:`RUN_FILES`:
  ``config.json``, ``eval.csv``, ``checkpoint/state.json``), its result under
  ``<out_dir>/<run_name>`` (:data:`RESULT_FILES`: ``card.json``, ``policy.npz``; the exploiter's
  two are one folder); :func:`check_folders` refuses, before anything is written, a new run over
  an old one (unless ``--overwrite``), ``--resume`` without a checkpoint, and any output inside the
  shipped checkpoints' folder (training/outputs.py); :func:`open_folders` then makes them;
* its state (:class:`Run`, saved as ``checkpoint/state.json``: steps, wall time, evaluations, what
  an adapter adds) and its time budget (``time_budget_s``, asked by :meth:`Run.out_of_time`);
* its schedule (:class:`Schedule`): evaluations, panels and checkpoints every so many steps,
  counted from the step a resumed run starts at;
* ``eval.csv`` with ONE column set (:data:`EVAL_COLUMNS`; ``robustness`` empty where no panel ran);
* the final evaluation and the final panel (:func:`final_evaluation`), then its card
  (:func:`card`): the keys of :data:`CARD_KEYS` in every trainer's ``card.json``.

A library comes in through an :class:`Adapter` (a trainer's subclass): ``learn(n)`` trains about
``n`` more steps and returns the steps done in all, ``policy()`` is the current weights as the
``learner(seed=...)`` factory training/evals.py takes, ``save``/``restore`` write and read the
library's checkpoint in ``checkpoint/``, ``write_policy`` writes the weights and a card in a folder
(the result, the panels' copy of the weights in ``weights/``). :func:`drive` is the lifecycle:
refuse, make the folders, build the adapter (a run that fails to start leaves no folder), restore
on ``--resume`` (naming each setting that differs from the run's ``config.json``), learn in chunks
that end where an evaluation, a panel or a checkpoint is due (or at the time budget), then the
final evaluation, the final panel, the result and its card. Each trainer's ``main`` reads its
config, makes the checks of its own and calls :func:`drive` with its adapter.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn

from dragonstones_env.bounds import read_text_limited
from dragonstones_env.core.seeding import SHARED, stream_seed
from dragonstones_env.evaluation import panel, panel_opponents, robustness, worst_mix
from dragonstones_env.play.arena import copies_summary

from . import evals
from .config import ConfigError, RunConfig
from .outputs import OutputError, check_output
from .provenance import git_commit, machine

# eval.csv's columns, in every trainer's run (RLlib's had four, SB3's five: they drifted apart)
EVAL_COLUMNS = ("timesteps", "win_rate", "ci_low", "ci_high", "robustness")
EVAL_HEADER = ",".join(EVAL_COLUMNS) + "\n"
# The files every trainer's run writes (a trainer adds its own beside them: the SB3 trainer's latest/
# and model.zip, RLlib's snapshots/ and runners.csv, the exploiter's exploit.json): its state in
# <runs_dir>/<run_name>, its result in <out_dir>/<run_name>
RUN_FILES = ("config.json", "eval.csv", "checkpoint/state.json")
RESULT_FILES = ("card.json", "policy.npz")
# the keys every trainer's card.json holds (a trainer adds its own: imitation, exploiter_of...)
CARD_KEYS = ("steps", "wall_time_s", "config", "machine", "git_commit", "evaluation", "training_curve")


@dataclass
class Schedule:
    """Something done every ``every`` steps (an evaluation, a checkpoint): due at the first multiple
    of ``every`` after ``start`` (where a resumed run starts), then at the next multiple after the
    step it was done at (a trainer whose steps come in large iterations does it once, not once per
    multiple it jumped over)."""

    every: int
    start: int = 0
    next: int = field(init=False)

    def __post_init__(self) -> None:
        self.next = (self.start // self.every + 1) * self.every

    def due(self, t: int) -> bool:
        """Whether it is due at step ``t``; if so the next time is set past ``t``."""
        if t < self.next:
            return False
        self.next = (t // self.every + 1) * self.every
        return True


@dataclass(frozen=True)
class Folders:
    """Where one run writes: its state in ``root``, its result in ``out``."""

    root: Path
    out: Path

    @classmethod
    def of(cls, runs_dir: str | Path, out_dir: str | Path, run_name: str) -> Folders:
        return cls(Path(runs_dir) / run_name, Path(out_dir) / run_name)

    checkpoint = property(lambda self: self.root / "checkpoint")  # what --resume reads
    eval_csv = property(lambda self: self.root / "eval.csv")
    config_json = property(lambda self: self.root / "config.json")


def check_folders(folders: Folders, resume: bool, overwrite: bool, checkpoint_file: str = "state.json") -> None:
    """Before anything is written (a ConfigError naming the way out): a new run refuses an existing
    one unless ``overwrite``; ``resume`` needs ``checkpoint/<checkpoint_file>``; neither folder may be
    inside the shipped checkpoints' folder, and a result is replaced only on ``overwrite`` or ``resume``."""
    root = folders.root
    try:  # a resumed run writes its own result again
        check_output(root, "runs_dir/run_name", overwrite=True)
        if not (resume or overwrite) and root.exists() and any(root.iterdir()):
            raise ConfigError(f"{root} exists: use --resume to continue it, --overwrite to start it again, "
                              "or another run_name")
        check_output(folders.out, "out_dir/run_name", overwrite=overwrite or resume)
    except OutputError as err:
        raise ConfigError(str(err)) from None
    if resume and not (folders.checkpoint / checkpoint_file).is_file():
        raise ConfigError(f"--resume: no checkpoint in {folders.checkpoint}")


def open_folders(folders: Folders, config: dict[str, Any], resume: bool, overwrite: bool) -> bool:
    """The run's folder made (after :func:`check_folders`): on ``overwrite`` the old run and result are
    removed first; ``config.json`` written and ``eval.csv`` started. True if the folder is new (a run
    that then fails to start removes it, so that the same command is not refused as "exists")."""
    if overwrite and not resume:  # the run and its result, replaced whole
        for folder in (folders.root, folders.out):
            if folder.is_dir():
                shutil.rmtree(folder)
    created = not folders.root.exists()
    folders.root.mkdir(parents=True, exist_ok=True)
    folders.config_json.write_text(json.dumps(config, indent=2) + "\n")
    start_eval_csv(folders.eval_csv)
    return created


def start_eval_csv(path: Path) -> None:
    """``eval.csv`` with :data:`EVAL_HEADER`; a resumed run's file of the old four columns (RLlib's,
    before issue #50) is given the empty fifth, so that every row has the header's columns."""
    if not path.exists():
        path.write_text(EVAL_HEADER)
        return
    lines = path.read_text().splitlines()
    if lines and lines[0] == ",".join(EVAL_COLUMNS[:4]):
        path.write_text(EVAL_HEADER + "".join(f"{row}{',' if row.count(',') == 3 else ''}\n" for row in lines[1:]))


def eval_row(t: int, result: dict[str, Any], robustness: float | None = None) -> str:
    """One line of ``eval.csv`` for an evaluation ``result`` (training/evals.py's: ``rate``, ``ci95``)."""
    low, high = result["ci95"]
    rob = "" if robustness is None else f"{robustness:.4f}"
    return f"{t},{result['rate']:.4f},{low:.4f},{high:.4f},{rob}\n"


def append_eval(path: Path, t: int, result: dict[str, Any], robustness: float | None = None) -> None:
    with path.open("a") as f:
        f.write(eval_row(t, result, robustness))


def training_curve(evaluations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's ``training_curve``: each evaluation's step, rate and interval."""
    return [{k: e[k] for k in ("timesteps", "rate", "ci95")} for e in evaluations]


def card(steps: int, wall_time: float, config: dict[str, Any], machine: dict[str, Any], git_commit: Any,
         evaluation: dict[str, Any], evaluations: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A run's card: :data:`CARD_KEYS` (``evaluations`` as :func:`training_curve`), then ``extra``."""
    return {"steps": int(steps), "wall_time_s": round(wall_time, 1), "config": config, "machine": machine,
            "git_commit": git_commit, "evaluation": evaluation, "training_curve": training_curve(evaluations),
            **extra}


# ---------------------------------------------------------------------------- the run, driven
# What a run's state.json holds (read_state checks each key's type before --resume trusts it); a
# trainer's adapter adds its own keys (the SB3 trainer's imitation, RLlib's runner health)
RUN_STATE = {"wall_time": (int, float), "steps": int, "evaluations": list}


def read_state(path: Path, shape: dict[str, Any] = RUN_STATE, what: str = "a run state") -> dict[str, Any]:
    """A run state saved with a checkpoint (JSON, at most ``FILE_BYTES["run_state"]`` bytes) whose keys
    have the types ``shape`` gives."""
    try:
        state = json.loads(read_text_limited(path, "run_state", "run state"))
    except (OSError, ValueError) as err:  # InputError and JSON's errors are ValueErrors
        raise ConfigError(f"--resume: cannot read {path} ({err})") from None
    if isinstance(state, dict):  # an SB3 run's state before issue #50 had none: its model counts them (restore)
        state.setdefault("steps", 0)
    if not isinstance(state, dict) or not all(isinstance(state.get(k), t) for k, t in shape.items()):
        raise ConfigError(f"--resume: {path} is not {what} ({', '.join(shape)})")
    return state


@dataclass
class Run:
    """One run under way: its config, folders and state (what ``checkpoint/state.json`` saves)."""

    cfg: RunConfig
    folders: Folders
    resume: bool
    state: dict[str, Any] = field(default_factory=lambda: {"wall_time": 0.0, "steps": 0, "evaluations": []})
    started: float = field(default_factory=time.time)

    def wall_time(self) -> float:
        """Seconds of training so far, a resumed run's earlier ones included."""
        return self.state["wall_time"] + time.time() - self.started

    def out_of_time(self) -> bool:
        """Whether ``time_budget_s`` (0: none) is spent: an adapter may ask it at every step."""
        return bool(self.cfg.time_budget_s) and self.wall_time() >= self.cfg.time_budget_s

    def clock(self) -> None:
        """The wall time so far into the state (before it is saved)."""
        self.state["wall_time"], self.started = self.wall_time(), time.time()


class Adapter:
    """What a run needs of a learning library; a trainer subclasses it. Made by :func:`drive`'s
    ``make(run)`` after the run's folder exists: a new run's weights are ready then, a resumed run's
    come from :meth:`restore`."""

    libraries: tuple[str, ...] = ("torch",)  # the card's machine lists their versions
    checkpoint_file = "state.json"  # what --resume needs in checkpoint/ (check_folders)

    def learn(self, n: int) -> int:
        """Train about ``n`` more steps (a library's whole rollouts or iterations: at least ``n``, or
        fewer when the run is out of time); the steps done in all."""
        raise NotImplementedError

    def policy(self) -> evals.Learner:
        """The current weights as ``learner(seed=...)`` (what training/evals.py plays)."""
        raise NotImplementedError

    def save(self, folder: Path) -> None:
        """The library's checkpoint (weights, optimiser...) in ``folder``, for :meth:`restore`."""
        raise NotImplementedError

    def restore(self, folder: Path) -> None:
        """Continue from the checkpoint :meth:`save` wrote in ``folder`` (``--resume``)."""
        raise NotImplementedError

    def write_policy(self, folder: Path, card: dict[str, Any], final: bool = False) -> Path:
        """The current weights and ``card`` in ``folder``, a checkpoint ``load_policy`` plays; ``final``:
        the run's result (a library may add what a later run starts from)."""
        raise NotImplementedError

    def card(self) -> dict[str, Any]:
        """The trainer's own keys of the result's card (after :data:`CARD_KEYS`)."""
        return {}

    def close(self) -> None:
        """Release what learning holds (processes, actors) before the final evaluation."""


def checkpoint(run: Run, adapter: Adapter) -> None:
    """The checkpoint ``--resume`` reads: the library's and the run state."""
    run.clock()
    run.folders.checkpoint.mkdir(parents=True, exist_ok=True)
    adapter.save(run.folders.checkpoint)
    (run.folders.checkpoint / "state.json").write_text(json.dumps(run.state, default=list) + "\n")


def evaluation_opponent(cfg: RunConfig) -> str:
    """Whom the evaluations play: the exploiter's ``target``, else the game's rule-based bot."""
    return cfg.target or cfg.heuristic


def evaluate(run: Run, adapter: Adapter, t: int, panel_due: bool) -> dict[str, Any]:
    """The evaluation at step ``t`` (and the robustness panel when due): eval.csv and the run state."""
    cfg = run.cfg
    opponent = evaluation_opponent(cfg)
    seed = stream_seed(SHARED, "eval", t) if cfg.eval.seed is None else cfg.eval.seed
    result = evals.against_bots(adapter.policy(), cfg, cfg.eval.games, opponent, seed=seed)
    if panel_due:  # the panel plays the weights of now, written beside the run state
        folder = adapter.write_policy(run.folders.root / "weights", {"steps": t, "panel": True})
        result["panel"] = run_panel(cfg, folder, cfg.eval.panel_games, seed=stream_seed(SHARED, "panel", t))
    record_eval(run, t, result)
    low, high = result["ci95"]
    print(f"  eval at {t}: {result['rate']:.3f} [{low:.3f}, {high:.3f}] vs {cfg.eval.players - 1} {opponent}"
          + (f", robustness {result['panel']['robustness']:.3f}" if "panel" in result else ""), flush=True)
    return result


def record_eval(run: Run, t: int, result: dict[str, Any]) -> None:
    """The evaluation ``result`` at step ``t`` in eval.csv and the run state (the card's curve)."""
    append_eval(run.folders.eval_csv, t, result, result["panel"]["robustness"] if "panel" in result else None)
    run.state["evaluations"].append({"timesteps": t, **result})


def final_follows(run: Run, t: int) -> bool:
    """Whether the final evaluation comes next, at step ``t``, and plays the periodic evaluation's
    opponent at its table: then the periodic one would play the same games again (costly for an
    exploiter of a slow target), so the final one's result is the curve's last point instead."""
    cfg = run.cfg
    return ((t >= cfg.total_timesteps or run.out_of_time()) and cfg.eval.final_games > 0
            and evaluation_opponent(cfg) in final_opponents(cfg))


def run_panel(cfg: RunConfig, folder: Path, games: int, seed: int, shown: bool = False) -> dict[str, Any]:
    """The robustness panel of the policy in ``folder`` at the evaluation table size."""
    result = panel(str(folder), panel_opponents(cfg.game), [cfg.eval.players], games=games, workers=1,
                   seed=seed, game=cfg.game, copies=(), env_options=evals.deck_options(cfg) or None,
                   progress=shown)
    worst = worst_mix(result)
    return {"robustness": robustness(result), "worst_mix": {k: worst[k] for k in ("opponent", "k", "games")},
            "games_per_mix": games, "players": cfg.eval.players,
            "mixes": [{k: row[k] for k in ("opponent", "k", "win_rate", "ratio")} for row in result["mixes"]]}


@contextlib.contextmanager
def games_bar(total: int, title: str, shown: bool) -> Iterator[Callable[[], None]]:
    """A bar of ``total`` games (the final evaluation's); yields the function to call after each game."""
    if not shown or total <= 0:
        yield lambda: None
        return
    columns = (TextColumn(title), BarColumn(bar_width=24), TextColumn("{task.completed}/{task.total} games"))
    with Progress(*columns) as bar:
        task = bar.add_task(title, total=total)
        yield lambda: bar.advance(task)


def final_opponents(cfg: RunConfig) -> tuple[str, ...]:
    """The final evaluation's opponents: the exploiter's target alone, else the rule-based bot and random."""
    return (cfg.target,) if cfg.target else (cfg.heuristic, "random")


def final_evaluation(run: Run, adapter: Adapter, t: int) -> dict[str, Any]:
    """Against each of :func:`final_opponents` and (no target) a table of the learner's copies, then
    the robustness panel, as the config asks; each with its bar when the config shows one."""
    cfg, final = run.cfg, {}
    games, opponents = cfg.eval.final_games, final_opponents(cfg)
    copies = games and not cfg.target
    shown = cfg.progress_bar and sys.stderr.isatty()
    with games_bar((len(opponents) + bool(copies)) * games, "final evaluation", shown) as on_game:
        for opponent in opponents if games else ():
            seed = stream_seed(cfg.seed, "final-eval") if cfg.eval.seed is None else cfg.eval.seed
            r = evals.against_bots(adapter.policy(), cfg, games, opponent, seed=seed, on_game=on_game)
            final[f"vs_{Path(opponent).name}"] = {"players": cfg.eval.players, **r}
            low, high = r["ci95"]
            print(f"final: {r['rate']:.3f} [{low:.3f}, {high:.3f}] wins against {cfg.eval.players - 1} "
                  f"{opponent} bots over {r['games']} games")
        if copies:
            final["copies"] = evals.copies(adapter.policy(), cfg, games, seed=stream_seed(cfg.seed, "final-copies"),
                                           on_game=on_game)
            print(f"final: {copies_summary(final['copies'])}")
    if cfg.eval.final_panel_games:
        folder = adapter.write_policy(run.folders.root / "weights", {"steps": t, "panel": True})
        p = run_panel(cfg, folder, cfg.eval.final_panel_games, seed=stream_seed(cfg.seed, "final-panel"), shown=shown)
        final["panel"] = p
        w = p["worst_mix"]
        print(f"robustness: {p['robustness']:.3f} (worst per-seat win rate / parity over every mix at "
              f"{cfg.eval.players} players, {p['games_per_mix']} games a mix; worst: {w['k']} learner(s) vs "
              f"{cfg.eval.players - w['k']} {w['opponent']})")
    return final


def next_stop(t: int, total: int, *schedules: Schedule | None) -> int:
    """Where the next chunk of learning ends: the first scheduled step after ``t``, or ``total``."""
    return min([total, *(s.next for s in schedules if s is not None)])


def flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A config as dotted keys (``ppo.learning_rate``) and their values."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict) and key != "mix":
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def changed_settings(saved: Path, config: dict[str, Any]) -> list[str]:
    """Each key a resumed run's ``config`` gives otherwise than the run's saved ``config.json`` (a
    longer budget is a reason to resume; another seed or target is more likely a slip, and is named)."""
    try:
        old = flat(json.loads(read_text_limited(saved, "run_state", "run config")))
    except (OSError, ValueError):
        return [f"{saved} cannot be read: nothing to compare"]
    new = flat(config)
    return [f"{key}: saved {old.get(key)!r}, given {value!r}" for key, value in new.items() if old.get(key) != value]


def drive(cfg: RunConfig, make: Callable[[Run], Adapter], resume: bool = False, overwrite: bool = False,
          checkpoint_file: str = "state.json") -> Run:
    """A whole run of ``cfg``, its library's :class:`Adapter` made by ``make(run)``: refusals (a
    ConfigError before anything is written), folders, ``--resume``, learning with evaluations,
    panels and checkpoints on schedule, then the final evaluation, the result and its card. The
    run returned holds its state (and ``run.state["final"]``, the card's evaluation)."""
    folders = Folders.of(cfg.runs_dir, cfg.out_dir, cfg.run_name)
    check_folders(folders, resume, overwrite, checkpoint_file)
    state = read_state(folders.checkpoint / "state.json") if resume else None
    if resume:
        for line in changed_settings(folders.config_json, cfg.to_dict()):
            print(f"note: resumed with another setting than the run's config.json: {line}")
    created = open_folders(folders, cfg.to_dict(), resume, overwrite)
    run = Run(cfg, folders, resume)
    if state is not None:
        run.state = state
    adapter = None
    try:
        adapter = make(run)
        if resume:
            adapter.restore(folders.checkpoint)
            print(f"resuming {cfg.run_name} at {run.state['steps']} steps")
    except BaseException:
        if adapter is not None:
            with contextlib.suppress(Exception):  # the error that stopped the start is the one to see
                adapter.close()
        # A run that fails to start must not block the same command ("exists: use --resume" while
        # --resume finds no checkpoint): remove the folder it made.
        if created:
            shutil.rmtree(folders.root, ignore_errors=True)
        raise
    run.started = time.time()
    t = run.state["steps"]
    # every trainer's schedules, from where a resumed run starts
    evals_due = Schedule(cfg.eval.every, t)
    last_eval = None  # the step of a periodic evaluation left to the final one
    panels_due = Schedule(cfg.eval.panel_every, t) if cfg.eval.panel_every else None
    checkpoints_due = Schedule(cfg.checkpoint_every, t)
    try:
        if cfg.eval.at_start and not resume:  # where a curve starts: the untrained learner
            evaluate(run, adapter, t, panel_due=False)
        while t < cfg.total_timesteps and not run.out_of_time():
            t = run.state["steps"] = adapter.learn(next_stop(t, cfg.total_timesteps, evals_due, panels_due,
                                                             checkpoints_due) - t)
            panel_due = panels_due is not None and panels_due.due(t)
            eval_due = evals_due.due(t)
            if eval_due and not panel_due and final_follows(run, t):
                last_eval = t  # the final evaluation plays the same opponent at this step: its row
            elif eval_due or panel_due:
                evaluate(run, adapter, t, panel_due)
            if checkpoints_due.due(t):
                checkpoint(run, adapter)
        if run.out_of_time():
            print(f"time budget of {cfg.time_budget_s:.0f} s reached at {t} steps")
        checkpoint(run, adapter)  # also when no step was left to learn (a finished run resumed)
    except BaseException:
        adapter.close()
        raise
    adapter.close()
    # -- the result: the weights, a final evaluation and the card
    final = run.state["final"] = final_evaluation(run, adapter, t)
    if last_eval is not None:
        record_eval(run, last_eval, final[f"vs_{Path(evaluation_opponent(cfg)).name}"])
        # the checkpoint's state too, so that a resumed run's curve keeps this point
        saved = {k: v for k, v in run.state.items() if k != "final"}
        (folders.checkpoint / "state.json").write_text(json.dumps(saved, default=list) + "\n")
    card_ = card(t, run.state["wall_time"], cfg.to_dict(), machine(*adapter.libraries), git_commit(), final,
                 run.state["evaluations"], **adapter.card())
    adapter.write_policy(folders.out, card_, final=True)
    print(f"wrote {folders.out} ({t} steps, {run.state['wall_time']:.0f} s); "
          f"load it with load_policy({str(folders.out)!r})")
    return run
