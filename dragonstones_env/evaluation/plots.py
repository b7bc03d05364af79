"""Figures (matplotlib, the train extra, imported only when a figure is drawn): ratings, a training
curve, a panel."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _pyplot():
    import matplotlib  # the train extra, slow to import: only for figures

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ratings(summary: dict[str, Any], path: str | Path) -> None:
    """Two panels: OpenSkill mu ± 2σ (and mu − 3σ) per policy; win rate with its 95% interval."""
    plt = _pyplot()
    rows = summary["policies"][::-1]  # best at the top
    y = np.arange(len(rows))
    names = [row["spec"] if len(row["spec"]) <= 32 else "…" + row["spec"][-31:] for row in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 1.8 + 0.45 * len(rows)), sharey=True)
    mu = np.array([row["mu"] for row in rows])
    sigma = np.array([row["sigma"] for row in rows])
    ax1.errorbar(mu, y, xerr=2 * sigma, fmt="o", capsize=4, label="mu ± 2σ")
    ax1.plot(mu - 3 * sigma, y, "k|", markersize=12, label="mu − 3σ (sorted by)")
    ax1.set_yticks(y, names)
    ax1.set_xlabel("OpenSkill Plackett–Luce rating")
    ax1.legend(loc="lower right", fontsize=8)
    rate = np.array([row["win_rate"] for row in rows])
    err = np.array([[r - row["ci_low"] for r, row in zip(rate, rows, strict=True)],
                    [row["ci_high"] - r for r, row in zip(rate, rows, strict=True)]])
    ax2.barh(y, rate, xerr=err, capsize=4, color="tab:green", alpha=0.7)
    ax2.axvline(1 / summary["players"], color="grey", linestyle="--", label=f"1/{summary['players']} (chance)")
    ax2.set_xlim(0, 1)
    ax2.set_xlabel("win rate (95% Wilson interval)")
    ax2.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{summary['game']}, {summary['players']} players, {summary['games']} games")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)




def plot_training_curve(rows: Sequence[dict[str, float]], path: str | Path, ylabel: str = "win rate vs heuristic",
                        title: str = "training curve", parity: float | None = None) -> None:
    """A run's win rate over timesteps, with its 95% band (and a parity line if given)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if rows:
        t = [r["timesteps"] for r in rows]
        ax.plot(t, [r["win_rate"] for r in rows], "o-", label="win rate")
        ax.fill_between(t, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows], alpha=0.25, label="95% CI")
    if parity is not None:
        ax.axhline(parity, color="grey", linestyle="--", label=f"parity {parity:.3f}")
    if rows or parity is not None:
        ax.legend(loc="lower right")
    ax.set_xlabel("timesteps")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)



def plot_panel(result: dict[str, Any], players: int, path: str | Path) -> None:
    """Heat map of one table size: rows opponents, columns k, colour and text the ratio to parity."""
    from matplotlib.colors import TwoSlopeNorm  # the train extra: only for figures

    plt = _pyplot()
    rows = [r for r in result["mixes"] if r["players"] == players]
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    ks = sorted({r["k"] for r in rows})
    grid = np.full((len(opponents), len(ks)), np.nan)
    for r in rows:
        grid[opponents.index(r["opponent"]), ks.index(r["k"])] = r["ratio"]
    fig, ax = plt.subplots(figsize=(2.2 + 1.5 * len(ks), 1.4 + 0.7 * len(opponents)))
    # Diverging around parity (ratio 1): red below, blue above.
    norm = TwoSlopeNorm(vmin=0.0, vcenter=1.0, vmax=max(2.0, float(np.nanmax(grid))))
    image = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
    for r in rows:
        i, j = opponents.index(r["opponent"]), ks.index(r["k"])
        shade = float(norm(r["ratio"]))
        ax.text(j, i, f"{r['ratio']:.2f}\n[{r['ratio_low']:.2f}, {r['ratio_high']:.2f}]", ha="center",
                va="center", fontsize=8, color="white" if shade < 0.2 or shade > 0.8 else "black")
    ax.set_xticks(range(len(ks)), [f"k={k}" for k in ks])
    ax.set_yticks(range(len(opponents)), [o if len(o) <= 24 else "…" + o[-23:] for o in opponents])
    ax.set_xlabel(f"copies of the candidate (against {players} - k of the opponent)")
    fig.colorbar(image, ax=ax, label="per-seat win rate / parity")
    deck = result.get("env_options") or {}
    deck = f", deck {Path(str(deck['characters'])).name}" if deck.get("characters") else ""
    ax.set_title(f"{Path(result['candidate']).name}, {players} players, {rows[0]['games'] if rows else 0} games a mix"
                 f"{deck}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
