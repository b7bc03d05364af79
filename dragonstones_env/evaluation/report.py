"""Results as files and text: the tournament's table and files, a run's eval.csv, the panel's report."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from dragonstones_env.bounds import InputError, read_text_limited

from .facts import RECORD_KEYS, EvaluationError
from .plots import plot_panel, plot_ratings, plot_training_curve


# ---------------------------------------------------------------------------- reporting
def format_table(summary: dict[str, Any]) -> str:
    """The per-policy results as a Markdown table (with a one-line caption)."""
    lines = [
        f"{summary['game']}, {summary['players']} players, {summary['games']} games "
        f"(seats rotated, seed {summary['seed']}); {summary['truncated']} truncated (no win)",
        "",
        "| # | policy | games | wins | win rate | 95% CI | mean reward | mu | sigma | rating (mu-3σ) |",
        "|--:|:--|--:|--:|--:|:--:|--:|--:|--:|--:|",
    ]
    for k, row in enumerate(summary["policies"], 1):
        wins = f"{row['wins']:.0f}" if float(row["wins"]).is_integer() else f"{row['wins']:.2f}"
        lines.append(
            f"| {k} | {row['spec']} | {row['games']} | {wins} | {row['win_rate']:.3f} "
            f"| [{row['ci_low']:.3f}, {row['ci_high']:.3f}] | {row['mean_reward']:+.3f} "
            f"| {row['mu']:.2f} | {row['sigma']:.2f} | {row['rating']:.2f} |"
        )
    return "\n".join(lines)


def write_outputs(summary: dict[str, Any], out: str | Path, run_dir: str | Path | None = None) -> list[Path]:
    """Write ``results.md``, ``games.csv``, ``games.json``, ``summary.json`` and ``ratings.png`` to ``out``
    (and ``training_curve.png`` from ``<run_dir>/eval.csv``); returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = summary["games_played"]
    paths = [out / name for name in ("results.md", "games.csv", "games.json", "summary.json", "ratings.png")]
    paths[0].write_text(format_table(summary) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["game", "seed", "lineup", "rewards", "winners", "truncated", "steps"])
        for rec in records:
            w.writerow([rec["game"], rec["seed"], ";".join(rec["seats"]), ";".join(f"{r:g}" for r in rec["rewards"]),
                        ";".join(map(str, rec["winners"])), int(rec["truncated"]), rec["steps"]])
    # each entry regenerates its game in the web app by itself, so each carries the deck it was dealt from
    deck = {"env_options": summary["env_options"]} if summary.get("env_options") else {}
    # the game's own figures (turns; Fist's auctions) too, so that a table's length can be read back
    # from its games (tools/champion_card.py --copies) as a panel reads it from its journal
    games_json = [{"game": r["game"], "seed": r["seed"], "lineup": r["seats"], "rewards": r["rewards"],
                   "winners": r["winners"], "truncated": r["truncated"], "steps": r["steps"],
                   **{k: v for k, v in r.items() if k not in RECORD_KEYS}, **deck} for r in records]
    paths[2].write_text(json.dumps(games_json, indent=1) + "\n")
    paths[3].write_text(json.dumps({k: v for k, v in summary.items() if k != "games_played"}, indent=2) + "\n")
    plot_ratings(summary, paths[4])
    if run_dir is not None:
        paths.append(out / "training_curve.png")
        plot_training_curve(read_eval_csv(Path(run_dir) / "eval.csv"), paths[-1])
    return paths



def read_eval_csv(path: str | Path) -> list[dict[str, float]]:
    """Rows ``timesteps, win_rate, ci_low, ci_high`` (header optional) of a training run's ``eval.csv``,
    read up to ``FILE_BYTES["run_state"]`` bytes (dragonstones_env/bounds.py)."""
    keys = ("timesteps", "win_rate", "ci_low", "ci_high")
    rows = []
    try:
        text = read_text_limited(path, "run_state", "run's eval.csv")
    except InputError as err:
        raise EvaluationError(str(err)) from None
    try:
        lines = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as err:
        raise EvaluationError(f"{path}: not a CSV file ({err})") from None
    for line in lines:
        if not line or line[0].strip() in ("", "timesteps"):
            continue
        try:
            rows.append(dict(zip(keys, map(float, line[:4]), strict=True)))
        except ValueError:
            raise EvaluationError(f"{path}: cannot read the row {line!r:.200} as {', '.join(keys)}") from None
    return rows


# ---------------------------------------------------------------------------- panel reports
def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None else format(x, spec)


def format_panel(result: dict[str, Any]) -> str:
    """The panel as Markdown: the robustness figure, one mix table per table size, the all-copies tables."""
    worst = result["robustness"]
    lines = [
        f"# Panel: {result['candidate']} ({result['game']})",
        "",
        f"Opponents: {', '.join(result['opponents'])}; tables of {', '.join(map(str, result['players']))}; "
        f"{result['games']} games per mix (rounded up to whole seat rotations), seed {result['seed']}, "
        f"{result['seconds']:.1f} s."
        + (f" Env options: {json.dumps(result['env_options'])}." if result.get("env_options") else ""),
        *([f"At {result['games']} games a mix the intervals are wide: claims need at least 1000."]
          if result["games"] < 1000 else []),
        "",
        f"**Robustness: {worst['ratio']:.3f}** [{worst['ratio_low']:.3f}, {worst['ratio_high']:.3f}], the worst "
        f"per-seat win rate ratio to parity, at {worst['k']} {result['candidate']} vs "
        f"{worst['players'] - worst['k']} {worst['opponent']} ({worst['players']} players).",
        "",
        "Per-seat win rate: the candidate's wins / (games × k), a shared win counting 1/winners; parity is 1/n. "
        "Intervals: 95% Wilson over games.",
    ]
    for n in result["players"]:
        lines += [
            "",
            f"## {n} players (parity {1 / n:.3f})",
            "",
            "| opponent | k | games | per-seat win rate | 95% CI | ratio to parity | 95% CI | mean turns | truncated |",
            "|:--|--:|--:|--:|:--:|--:|:--:|--:|--:|",
        ]
        for row in (r for r in result["mixes"] if r["players"] == n):
            lines.append(
                f"| {row['opponent']} | {row['k']} | {row['games']} | {row['win_rate']:.3f} "
                f"| [{row['ci_low']:.3f}, {row['ci_high']:.3f}] | {row['ratio']:.2f} "
                f"| [{row['ratio_low']:.2f}, {row['ratio_high']:.2f}] | {row['mean_turns']:.1f} "
                f"| {row['truncation_rate']:.3f} |")
        lines += [
            "",
            f"All-copies tables ({n} copies of one policy):",
            "",
            "| policy | games | mean turns ± std | 95% CI of mean | unwon auctions | truncation rate | 95% CI |",
            "|:--|--:|--:|:--:|--:|--:|:--:|",
        ]
        for row in (r for r in result["tables"] if r["players"] == n):
            name = f"{row['policy']} (candidate)" if row["role"] == "candidate" else row["policy"]
            lines.append(
                f"| {name} | {row['games']} | {row['mean_turns']:.1f} ± {row['std_turns']:.1f} "
                f"| [{row['turns_ci'][0]:.1f}, {row['turns_ci'][1]:.1f}] | {_fmt(row['unwon_share'])} "
                f"| {row['truncation_rate']:.3f} | [{row['truncation_ci'][0]:.3f}, {row['truncation_ci'][1]:.3f}] |")
    lines += ["", f"Unwon auctions: {result['stall_signal']}."]
    return "\n".join(lines)


PANEL_CSV = ("kind", "players", "opponent", "policy", "k", "games", "wins", "win_rate", "ci_low", "ci_high",
             "parity", "ratio", "ratio_low", "ratio_high", "mean_turns", "std_turns", "unwon_share",
             "truncated", "truncation_rate")


def write_panel(result: dict[str, Any], out: str | Path) -> list[Path]:
    """Write ``panel.md``, ``panel.csv`` (one row per mix, then per all-copies table), ``panel.json`` and
    ``panel_<n>p.png`` per table size to ``out``; returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "panel.md", out / "panel.csv", out / "panel.json"]
    paths[0].write_text(format_panel(result) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.DictWriter(f, PANEL_CSV, extrasaction="ignore")
        w.writeheader()
        for row in result["mixes"]:
            w.writerow({"kind": "mix", "policy": result["candidate"], **row})
        for row in result["tables"]:
            w.writerow({"kind": "all-copies", **row, "opponent": ""})
    paths[2].write_text(json.dumps(result, indent=2) + "\n")
    for n in result["players"]:
        paths.append(out / f"panel_{n}p.png")
        plot_panel(result, n, paths[-1])
    return paths
