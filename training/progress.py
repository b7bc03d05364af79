"""The SB3 trainer's bar: training toward its real stopping point (the games bar is training/run.py's).

SB3's own bar counts to ``total_timesteps``, which says neither when a run really stops: PPO
collects whole rollouts (``--set total_timesteps=4096`` with 8,192-decision rollouts ends at 8,192,
so the bar read ``8,192/4,096``), and ``time_budget_s`` may stop it long before (``make train``:
1,000,000 steps and a 20-minute estimate while its 600 s budget stops it). This bar ends where
the run ends: the last whole rollout past ``total_timesteps``, or the time budget, whichever
comes first, and says which.
"""

from __future__ import annotations

import time

from rich.progress import BarColumn, Progress, TextColumn
from stable_baselines3.common.callbacks import BaseCallback

REFRESH_S = 0.5  # seconds between redraws (the callback runs once per vectorised step)


def final_step(start: int, total: int, rollout: int) -> int:
    """The step a run from ``start`` stops at when no budget stops it first: PPO learns whole
    rollouts of ``rollout`` decisions, the first one that reaches ``total``."""
    if start >= total:
        return start
    return start + -(-(total - start) // rollout) * rollout


def stop_line(steps: int, target: int, elapsed: float, budget: float, rate: float) -> tuple[float, str]:
    """The fraction done toward the first stop to come, and the text that says it: steps of the
    target, seconds of the budget (``budget`` 0: none), and the time left at ``rate`` steps/s."""
    left_steps = (target - steps) / rate if rate > 0 else float("inf")
    left_budget = budget - elapsed if budget > 0 else float("inf")
    by_budget = left_budget < left_steps
    done = max(steps / target if target else 1.0, elapsed / budget if budget > 0 else 0.0)
    text = f"{steps:,}/{target:,} steps"
    if budget > 0:
        text += f", {elapsed:,.0f}/{budget:,.0f} s budget"
    left = min(left_steps, left_budget)
    if left != float("inf"):
        minutes, seconds = divmod(round(max(left, 0.0)), 60)
        text += f"; ends in {minutes}:{seconds:02d} ({'budget' if by_budget else 'steps'})"
    return min(done, 1.0), text


class TrainingBar(BaseCallback):
    """A rich bar of :func:`stop_line`, drawn on stderr while ``model.learn`` runs. ``spent`` is the
    wall time a resumed run had already used of its budget."""

    def __init__(self, total: int, budget: float, spent: float = 0.0) -> None:
        super().__init__()
        self.total, self.budget, self.spent = total, budget, spent
        self.progress = Progress(TextColumn("training"), BarColumn(bar_width=24), TextColumn("{task.fields[line]}"),
                                 transient=False)

    def _on_training_start(self) -> None:
        model = self.model
        self.start, self.started, self.drawn = model.num_timesteps, time.time(), 0.0
        self.target = final_step(self.start, self.total, model.n_steps * model.n_envs)
        self.task = self.progress.add_task("training", total=1.0, line="")
        self.progress.start()
        self._draw()

    def _draw(self) -> None:
        now = time.time()
        self.drawn = now
        steps, ran = self.model.num_timesteps, now - self.started
        rate = (steps - self.start) / ran if ran > 0 else 0.0
        done, line = stop_line(steps, self.target, self.spent + ran, self.budget, rate)
        self.progress.update(self.task, completed=done, line=line)

    def _on_step(self) -> bool:
        if time.time() - self.drawn >= REFRESH_S:
            self._draw()
        return True

    def _on_training_end(self) -> None:
        self._draw()
        self.progress.stop()

