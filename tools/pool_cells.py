"""One cell from several evaluation folders: the games of one line-up played in chunks, pooled.

    python -m tools.pool_cells runs/cells/value-7100000 runs/cells/value-7100200 ...

A long cell (1,000 seat-rotated games of a search bot take half an hour of both cores) is played in
chunks of a few hundred games at consecutive seeds, so that a stopped machine keeps what was played.
This reads each folder's ``games.json`` (written by ``dragonstones evaluate --lineup``), checks that
the chunks are one experiment (the same game, table size and line-up, no game seed twice, a seat
rotation that gives each seat its share) and prints, per policy, its games, its wins and its win
rate with a 95% Wilson interval, counted by the evaluation's own ``summarize`` (a shared win counts
1/winners).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from dragonstones_env.evaluation import summarize


class PoolError(ValueError):
    """The folders are not chunks of one cell."""


def read_games(folder: Path) -> tuple[dict, list[dict]]:
    """A folder's ``summary.json`` and its games (``games.json``) as the evaluation's records."""
    summary = json.loads((folder / "summary.json").read_text())
    games = json.loads((folder / "games.json").read_text())
    if len(games) != summary["games"]:
        raise PoolError(f"{folder}: games.json has {len(games)} games, summary.json says {summary['games']}")
    return summary, [{"seats": g["lineup"], **g} for g in games]


def pooled_games(folders: list[Path]) -> tuple[tuple[str, int, list[str]], list[dict]]:
    """``(game, players, sorted line-up)`` and every game of ``folders``, checked to be chunks of one
    cell: the same line-up, no game seed twice, each lone seat rotated round the table."""
    if not folders:
        raise PoolError("no folders: give the evaluation folders of the chunks")
    first, games = None, []
    for folder in folders:
        summary, rows = read_games(folder)
        key = (summary["game"], summary["players"], sorted(summary["lineup"]))
        if first is None:
            first = key
        elif key != first:
            raise PoolError(f"{folder} plays {key}, the first folder {first}: a cell pools one line-up")
        games += rows
    seeds = Counter(r["seed"] for r in games)
    twice = sorted(s for s, c in seeds.items() if c > 1)
    if twice:
        raise PoolError(f"game seed {twice[0]} is played in two chunks ({len(twice)} seeds twice): "
                        "chunks must start at seeds that do not overlap")
    lone = [spec for spec, c in Counter(games[0]["seats"]).items() if c == 1]
    for spec in lone:  # each chunk rotates the lone seat round the table: off by at most one a chunk
        where = Counter(r["seats"].index(spec) for r in games)
        counts = [where[i] for i in range(first[1])]
        if max(counts) - min(counts) > len(folders):
            raise PoolError(f"{spec} sat {counts} times at seats 0..{first[1] - 1}: not a seat-rotated cell")
    return first, games


def pool(folders: list[Path]) -> dict:
    """The pooled cell of ``folders``: ``{"game", "players", "lineup", "games", "seeds", "policies"}``."""
    first, games = pooled_games(folders)
    seeds = [r["seed"] for r in games]
    rows = summarize(games, games[0]["seats"])  # every chunk seats the same specs (checked above)
    keep = ("spec", "games", "wins", "win_rate", "ci_low", "ci_high", "truncated")
    policies = [{k: row[k] for k in keep} for row in sorted(rows, key=lambda row: row["games"])]  # the lone seat first
    game, players, lineup = first
    return {"game": game, "players": players, "lineup": lineup, "games": len(games),
            "seeds": [min(seeds), max(seeds)], "policies": policies}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.pool_cells", description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="evaluation folders (games.json, summary.json)")
    parser.add_argument("--json", action="store_true", help="print the pooled cell as JSON")
    args = parser.parse_args(argv)
    try:
        cell = pool(args.folders)
    except (PoolError, OSError, KeyError, ValueError) as err:
        parser.error(str(err))
    if args.json:
        print(json.dumps(cell, indent=2))
        return 0
    print(f"{cell['game']}, {cell['players']} players, {cell['games']} games "
          f"(seeds {cell['seeds'][0]:,}..{cell['seeds'][1]:,})")
    print("| policy | seat-games | wins | win rate | 95% CI |")
    print("|:--|--:|--:|--:|:--:|")
    for p in cell["policies"]:
        interval = f"[{p['ci_low']:.3f}, {p['ci_high']:.3f}]"
        print(f"| {p['spec']} | {p['games']} | {p['wins']:g} | {p['win_rate']:.3f} | {interval} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
