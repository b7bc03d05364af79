"""Evaluate policies against each other: win rates with 95% intervals and OpenSkill ratings.

    python -m training.evaluate --policies heuristic random policies/my-run random --players 4 \\
        --games 1000 --workers 2 --seed 0 --out runs/eval-my-run

Every game seats ``--players`` policies drawn from the given specs (see :func:`lineups`), the
seats rotating from game to game; the games are spread over ``--workers`` processes, each of
which loads its policies once. Game ``g`` is played with seed ``seed + g`` and every policy is
``reset`` with a seed derived from ``(seed, g, seat)``, so the results depend on ``--seed`` only,
never on the number of workers.

Per policy (distinct spec) it reports the seat-games played, the wins (a game won by ``k``
players counts ``1/k`` to each; a truncated game is no win), the win rate with its 95% Wilson
interval, the mean final reward, and an OpenSkill Plackett–Luce rating (``mu``, ``sigma`` and
the conservative ``mu - 3 sigma`` the table is sorted by). In ``--out`` it writes
``results.md``, ``games.csv``, ``games.json``, ``summary.json`` and ``ratings.png`` (and
``training_curve.png`` from ``<run-dir>/eval.csv`` with ``--run-dir``).

From Python::

    from training.evaluate import evaluate, format_table
    summary = evaluate(["heuristic", "random"], players=4, games=200, lineup=["heuristic"] + ["random"] * 3)
    print(format_table(summary))
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing as mp
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env.arena import GameResult, play_game, wilson_interval
from dragonstones_env.core import same_game

GAMES = ("dragonstones", "drachenschatten")
CHUNK = 8  # games per task sent to a worker (the progress bar moves a chunk at a time)


class EvaluationError(ValueError):
    """A bad evaluation request (unknown spec, table size, line-up); the message says what to fix."""


# ---------------------------------------------------------------------------- games and line-ups
def player_range(game: str) -> tuple[int, int]:
    """The table sizes ``game`` allows (inclusive)."""
    if game == "dragonstones":
        from dragonstones_env.engine import MAX_PLAYERS, MIN_PLAYERS
    elif game == "drachenschatten":
        try:
            from dragonstones_env.drachenschatten.rules import MAX_PLAYERS, MIN_PLAYERS
        except ImportError as err:
            raise EvaluationError(f"the drachenschatten game cannot be imported ({err})") from None
    else:
        raise EvaluationError(f"unknown game {game!r}; choose one of {', '.join(GAMES)}")
    return MIN_PLAYERS, MAX_PLAYERS


def env_factory(game: str, players: int):
    """A picklable zero-argument function building a new environment of ``game``."""
    if game == "drachenschatten":
        from dragonstones_env.drachenschatten import env
    else:
        from dragonstones_env import env
    return partial(env, num_players=players)


def lineups(specs: Sequence[str], players: int, games: int, seed: int = 0,
            lineup: Sequence[str] | None = None) -> list[tuple[str, ...]]:
    """The spec seated at each seat of each game.

    * ``lineup`` given (one spec per seat): game ``g`` seats ``lineup[(i + g) % players]`` at seat ``i``.
    * exactly ``players`` specs: the same with ``lineup = specs`` (every game seats all of them,
      and every ``players`` consecutive games cover all rotations).
    * fewer specs than seats: the specs repeated in turn to fill the table, then rotated.
    * more specs than seats: groups of ``players`` specs, each time those that have played
      least (ties broken by a generator seeded with ``seed``), in a shuffled order, each group
      playing ``players`` consecutive games in all its rotations.
    """
    specs = list(specs)
    if lineup is None and len(specs) <= players:
        lineup = [specs[i % len(specs)] for i in range(players)]
    if lineup is not None:
        return [tuple(lineup[(i + g) % players] for i in range(players)) for g in range(games)]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x11E0]))
    counts = np.zeros(len(specs))
    out: list[tuple[str, ...]] = []
    while len(out) < games:
        order = np.lexsort((rng.random(len(specs)), counts))  # least played first, random among equals
        group = [int(k) for k in rng.permutation(order[:players])]
        counts[group] += 1
        for r in range(min(players, games - len(out))):
            out.append(tuple(specs[group[(i + r) % players]] for i in range(players)))
    return out


def policy_seed(seed: int, game_index: int, seat: int) -> int:
    """The seed a policy is reset with for one game and seat."""
    return int(np.random.SeedSequence([seed, game_index, seat]).generate_state(1)[0])


# ---------------------------------------------------------------------------- playing (workers)
class _Player:
    """The policies of one process: per spec, one instance per copy seated in the same game."""

    def __init__(self, game: str, players: int, seed: int, deterministic: bool,
                 preloaded: dict[str, Any] | None = None):
        self.make_env = env_factory(game, players)
        self.seed = seed
        self.deterministic = deterministic
        self.cache: dict[str, list[Any]] = {spec: [p] for spec, p in (preloaded or {}).items()}

    def _load(self, spec: str, seed: int | None) -> Any:
        from policies import load_policy

        policy = load_policy(spec, seed=seed, deterministic=self.deterministic)
        if "torch" in sys.modules:  # several processes share few cores: one thread each
            sys.modules["torch"].set_num_threads(1)
        return policy

    def _policy(self, spec: str, copy: int, seed: int) -> Any:
        instances = self.cache.setdefault(spec, [])
        while len(instances) <= copy:
            instances.append(self._load(spec, seed))
        policy = instances[copy]
        if callable(getattr(policy, "reset", None)):
            policy.reset(seed)
        else:  # no reset(): a new instance per game keeps results independent of the worker
            policy = instances[copy] = self._load(spec, seed)
        return policy

    def play(self, game_index: int, seats: Sequence[str]) -> dict[str, Any]:
        copies: dict[str, int] = {}
        policies = []
        for seat, spec in enumerate(seats):
            copy = copies[spec] = copies.get(spec, -1) + 1
            policies.append(self._policy(spec, copy, policy_seed(self.seed, game_index, seat)))
        result: GameResult = play_game(self.make_env, policies, list(seats), self.seed + game_index)
        return {"game": game_index, **result.to_dict()}

    def play_chunk(self, chunk: Sequence[tuple[int, Sequence[str]]]) -> list[dict[str, Any]]:
        return [self.play(g, seats) for g, seats in chunk]


_WORKER: _Player | None = None


def _worker_init(game: str, players: int, seed: int, deterministic: bool) -> None:
    global _WORKER
    _WORKER = _Player(game, players, seed, deterministic)


def _worker_chunk(chunk: Sequence[tuple[int, Sequence[str]]]) -> list[dict[str, Any]]:
    assert _WORKER is not None
    return _WORKER.play_chunk(chunk)


def _context() -> mp.context.BaseContext:
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


# ---------------------------------------------------------------------------- statistics
def summarize(records: Sequence[dict[str, Any]], specs: Sequence[str]) -> list[dict[str, Any]]:
    """Per distinct spec: games, wins, win rate and interval, mean reward, OpenSkill rating; best first."""
    from openskill.models import PlackettLuce

    distinct = list(dict.fromkeys(specs))
    model = PlackettLuce()
    ratings = {spec: model.rating(name=spec) for spec in distinct}
    stats = {spec: {"games": 0, "wins": 0.0, "reward": 0.0, "truncated": 0} for spec in distinct}
    for rec in records:
        winners = set(rec["winners"])
        for seat, spec in enumerate(rec["seats"]):
            s = stats[spec]
            s["games"] += 1
            s["reward"] += rec["rewards"][seat]
            s["truncated"] += bool(rec["truncated"])
            if seat in winners:
                s["wins"] += 1.0 / len(winners)
        # One OpenSkill player per distinct spec in the game: rank 1 if one of its seats won, else 2.
        present = list(dict.fromkeys(rec["seats"]))
        if len(present) >= 2:
            won = {rec["seats"][w] for w in winners}
            new = model.rate([[ratings[spec]] for spec in present], ranks=[1 if spec in won else 2 for spec in present])
            for spec, team in zip(present, new, strict=True):
                ratings[spec] = team[0]
    rows = []
    for spec in distinct:
        s, r = stats[spec], ratings[spec]
        n = s["games"]
        low, high = wilson_interval(s["wins"], n)
        rows.append({
            "spec": spec,
            "games": n,
            "wins": s["wins"],
            "win_rate": s["wins"] / n if n else 0.0,
            "ci_low": low,
            "ci_high": high,
            "truncated": s["truncated"],
            "mean_reward": s["reward"] / n if n else 0.0,
            "mu": r.mu,
            "sigma": r.sigma,
            "rating": r.mu - 3 * r.sigma,
        })
    rows.sort(key=lambda row: (-row["rating"], -row["win_rate"], row["spec"]))
    return rows


# ---------------------------------------------------------------------------- the evaluation
def evaluate(specs: Sequence[str], players: int, games: int, workers: int = 1, seed: int = 0,
             lineup: Sequence[str] | None = None, game: str = "dragonstones", deterministic: bool = False,
             out: str | Path | None = None, run_dir: str | Path | None = None, progress: bool = True) -> dict[str, Any]:
    """Play ``games`` games between ``specs`` at a table of ``players`` and summarize them.

    ``specs`` are policy specs for :func:`policies.load_policy` (names or checkpoint paths);
    ``lineup`` optionally fixes the spec of each seat (rotated from game to game, see
    :func:`lineups`). Returns a dict with the settings, ``"policies"`` (one row per distinct
    spec, best rating first: ``spec, games, wins, win_rate, ci_low, ci_high, truncated,
    mean_reward, mu, sigma, rating``), ``"truncated"`` (games without a winner) and
    ``"games"`` (one record per game). With ``out``, also writes the report files there (see
    :func:`write_outputs`). Raises :class:`EvaluationError` (or :class:`policies.PolicyError`
    for a spec that cannot be loaded) before any game is played.
    """
    specs = [str(s) for s in specs]
    lineup = None if lineup is None else [str(s) for s in lineup]
    low, high = player_range(game)
    if isinstance(players, bool) or not isinstance(players, int) or not low <= players <= high:
        raise EvaluationError(f"{game} is played by {low} to {high} players, got players={players!r}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise EvaluationError(f"games must be a positive int, got {games!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise EvaluationError(f"workers must be a positive int, got {workers!r}")
    if not specs and lineup:
        specs = list(dict.fromkeys(lineup))
    if not specs:
        raise EvaluationError("no policy specs given")
    if lineup is not None:
        if len(lineup) != players:
            raise EvaluationError(f"the line-up has {len(lineup)} specs but the table has {players} seats")
        stray = sorted(set(lineup) - set(specs))
        unused = sorted(set(specs) - set(lineup))
        if stray or unused:
            raise EvaluationError(
                "the line-up and the policies must name the same specs"
                + (f"; in the line-up only: {', '.join(stray)}" if stray else "")
                + (f"; never seated by the line-up: {', '.join(unused)}" if unused else "")
            )
    if run_dir is not None and not (Path(run_dir) / "eval.csv").is_file():
        raise EvaluationError(f"--run-dir {run_dir}: there is no {Path(run_dir) / 'eval.csv'}")

    # Load each spec once here, so a bad one fails before any game (and workers=1 reuses them).
    from policies import load_policy

    preloaded = {spec: load_policy(spec, seed=0, deterministic=deterministic) for spec in dict.fromkeys(specs)}
    for spec, policy in preloaded.items():
        plays = getattr(policy, "game", None)  # None: a policy of any game (random, user objects)
        if plays is not None and not same_game(plays, game):
            raise EvaluationError(f"policy {spec!r} plays {plays}, not {game}")

    seats = lineups(specs, players, games, seed, lineup)
    tasks = [list(enumerate(seats))[i : i + CHUNK] for i in range(0, games, CHUNK)]
    records: list[dict[str, Any]] = []
    start = time.perf_counter()
    from tqdm import tqdm

    with tqdm(total=games, desc=f"{game} x{players}", unit="game", disable=not progress, file=sys.stderr) as bar:
        if workers == 1:
            player = _Player(game, players, seed, deterministic, preloaded)
            for chunk in tasks:
                records.extend(player.play_chunk(chunk))
                bar.update(len(chunk))
        else:
            del preloaded
            with _context().Pool(min(workers, len(tasks)), _worker_init,
                                 (game, players, seed, deterministic)) as pool:
                for done in pool.imap_unordered(_worker_chunk, tasks):
                    records.extend(done)
                    bar.update(len(done))
    seconds = time.perf_counter() - start
    records.sort(key=lambda rec: rec["game"])

    summary = {
        "game": game,
        "players": players,
        "games": games,
        "seed": seed,
        "workers": workers,
        "deterministic": deterministic,
        "specs": specs,
        "lineup": lineup,
        "truncated": sum(bool(rec["truncated"]) for rec in records),
        "mean_steps": sum(rec["steps"] for rec in records) / games,
        "seconds": seconds,
        "policies": summarize(records, specs),
        "games_played": records,
    }
    if out is not None:
        write_outputs(summary, out, run_dir)
    return summary


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
    games_json = [{"game": r["game"], "seed": r["seed"], "lineup": r["seats"], "rewards": r["rewards"],
                   "winners": r["winners"], "truncated": r["truncated"], "steps": r["steps"]} for r in records]
    paths[2].write_text(json.dumps(games_json, indent=1) + "\n")
    paths[3].write_text(json.dumps({k: v for k, v in summary.items() if k != "games_played"}, indent=2) + "\n")
    plot_ratings(summary, paths[4])
    if run_dir is not None:
        paths.append(out / "training_curve.png")
        plot_training_curve(read_eval_csv(Path(run_dir) / "eval.csv"), paths[-1])
    return paths


def _pyplot():
    import matplotlib

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


def read_eval_csv(path: str | Path) -> list[dict[str, float]]:
    """Rows ``timesteps, win_rate, ci_low, ci_high`` (header optional) of a training run's ``eval.csv``."""
    keys = ("timesteps", "win_rate", "ci_low", "ci_high")
    rows = []
    with Path(path).open(newline="") as f:
        for line in csv.reader(f):
            if not line or line[0].strip() in ("", "timesteps"):
                continue
            try:
                rows.append(dict(zip(keys, map(float, line[:4]), strict=True)))
            except ValueError:
                raise EvaluationError(f"{path}: cannot read the row {line!r} as {', '.join(keys)}") from None
    return rows


def plot_training_curve(rows: Sequence[dict[str, float]], path: str | Path) -> None:
    """The training run's win rate against the heuristic over timesteps, with its 95% band."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if rows:
        t = [r["timesteps"] for r in rows]
        ax.plot(t, [r["win_rate"] for r in rows], "o-", label="win rate")
        ax.fill_between(t, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows], alpha=0.25, label="95% CI")
        ax.legend(loc="lower right")
    ax.set_xlabel("timesteps")
    ax.set_ylabel("win rate vs heuristic")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title("training curve")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description="Play policies against each other (seats rotated) and report win rates with 95% intervals "
                    "and OpenSkill ratings.",
    )
    p.add_argument("--policies", nargs="+", default=[], metavar="SPEC",
                   help="policy specs: random, heuristic, ds-heuristic, a shipped name or a checkpoint folder; "
                        "repeat a spec to seat it several times")
    p.add_argument("--players", type=int, default=4, help="seats at the table (default: 4)")
    p.add_argument("--games", type=int, default=1000, help="games to play (default: 1000)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    p.add_argument("--seed", type=int, default=0, help="base seed; game g uses seed+g (default: 0)")
    p.add_argument("--lineup", default=None, metavar="SPEC,SPEC,...",
                   help="one spec per seat, comma-separated, rotated across seats from game to game "
                        "(e.g. champion,heuristic,heuristic,heuristic)")
    p.add_argument("--game", choices=GAMES, default="dragonstones", help="which game (default: dragonstones)")
    p.add_argument("--out", default=None,
                   help="folder for results.md, games.csv, games.json, summary.json and ratings.png "
                        "(default: runs/eval-<policies>)")
    p.add_argument("--run-dir", default=None,
                   help="a training run folder: plot its eval.csv into training_curve.png")
    p.add_argument("--deterministic", action="store_true",
                   help="checkpoints take their most likely action instead of sampling")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def default_out(specs: Sequence[str]) -> Path:
    name = "-".join(Path(s).name for s in dict.fromkeys(specs)) or "policies"
    return Path("runs") / f"eval-{name[:80]}"


def main(argv: Sequence[str] | None = None) -> int:
    from policies import PolicyError

    parser = build_parser()
    args = parser.parse_args(argv)
    lineup = None if args.lineup is None else [s.strip() for s in args.lineup.split(",") if s.strip()]
    if not args.policies and not lineup:
        parser.error("give --policies (and/or --lineup)")
    out = Path(args.out) if args.out else default_out(args.policies or lineup)
    try:
        summary = evaluate(args.policies, args.players, args.games, workers=args.workers, seed=args.seed,
                           lineup=lineup, game=args.game, deterministic=args.deterministic, out=out,
                           run_dir=args.run_dir, progress=not args.no_progress)
    except (EvaluationError, PolicyError) as err:
        parser.error(str(err))
    print(format_table(summary))
    print(f"\n{summary['games']} games in {summary['seconds']:.1f} s with {args.workers} worker(s); "
          f"results in {out}/")
    return 0


if __name__ == "__main__":
    # Run through the package module so worker processes unpickle training.evaluate, not __main__.
    from training.evaluate import main as _main

    sys.exit(_main())
