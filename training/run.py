"""One run lifecycle for every trainer (issue #50): training/train.py (SB3), training/train_rllib.py
(RLlib) and training/exploit.py (SB3, one frozen target) write the same run.

What a run is, whatever library learns:

* its folders: the run state under ``<runs_dir>/<run_name>`` (``config.json``, ``eval.csv``,
  ``checkpoint/``), its result under ``<out_dir>/<run_name>`` (``card.json`` and the weights);
  :func:`check_folders` refuses, before anything is written, a new run over an old one (unless
  ``--overwrite``), ``--resume`` without a checkpoint, and any output inside the shipped
  checkpoints' folder (training/outputs.py); :func:`open_folders` then makes them;
* its schedule (:class:`Schedule`): evaluations and checkpoints every so many steps, counted from
  the step a resumed run starts at;
* ``eval.csv`` with ONE column set (:data:`EVAL_COLUMNS`; a column a trainer does not measure,
  such as the SB3 trainer's occasional robustness panel, is left empty);
* its card (:func:`card`): the keys of :data:`CARD_KEYS` in every trainer's ``card.json``.

Each trainer still drives its own learning loop with these pieces (issue #50 asks for one run
driving a small per-library adapter; not done yet).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import ConfigError
from .outputs import OutputError, check_output

# eval.csv's columns, in every trainer's run (RLlib's had four, SB3's five: they drifted apart)
EVAL_COLUMNS = ("timesteps", "win_rate", "ci_low", "ci_high", "robustness")
EVAL_HEADER = ",".join(EVAL_COLUMNS) + "\n"
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
    if not resume and not overwrite and root.exists() and any(root.iterdir()):
        raise ConfigError(f"{root} exists: use --resume to continue it, --overwrite to start it again, "
                          "or another run_name")
    try:  # a resumed run writes its own result again
        check_output(root, "runs_dir/run_name", overwrite=True)
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
