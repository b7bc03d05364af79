"""One policy alone against n-1 copies of another: the crowd matrix, read from panels already played.

    python -m tools.crowd_matrix runs/panel-value champion=runs/panel-champion ... [--out FILE]

A panel of CANDIDATE (``dragonstones_env.evaluation --panel``) plays, at k = n-1, n-1 copies of the
candidate (the crowd) against one opponent (alone). The opponent's win rate there is the share of
games the copies did not win, less the truncated games (nobody wins those); its 95% Wilson
interval is over games. One row per crowd (named by the panel's candidate, or by LABEL in
``LABEL=FOLDER``), one column per lone opponent, and the worst cell of each row other than the
crowd's own policy alone: issue #12 asks that no bot alone win more than 0.20 against 3 champions, and this
table shows how far every policy of the project, rule-based or learned, is from that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dragonstones_env.play.arena import wilson_interval


def alone_rates(panel: dict[str, Any], players: int) -> dict[str, dict[str, float]]:
    """The lone opponent's win rate at each k = players - 1 mix of ``panel`` (its ``panel.json``)."""
    rows = {}
    for mix in panel["mixes"]:
        if mix["players"] != players or mix["k"] != players - 1:
            continue
        games = mix["games"]
        wins = games - mix["truncated"] - mix["wins"]  # the crowd's wins are summed over its seats
        low, high = wilson_interval(wins, games)
        rows[mix["opponent"]] = {"win_rate": wins / games, "ci_low": low, "ci_high": high, "games": games}
    return rows


def crowd_matrix(folders: list[str], players: int = 4) -> dict[str, Any]:
    """Every panel's crowd row (``{crowd: {alone: cell}}``) and each row's worst cell; a folder
    written ``LABEL=FOLDER`` names its row LABEL."""
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for given in folders:
        label, _, folder = str(given).rpartition("=")
        path = Path(folder) / "panel.json"
        try:
            panel = json.loads(path.read_text())
            crowd = label or str(panel["candidate"])
            rows[crowd] = alone_rates(panel, players)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path}: not a panel.json of dragonstones_env.evaluation --panel ({err})") from None
        if not rows[crowd]:
            raise ValueError(f"{path}: no mix of {players - 1} copies against 1 opponent at {players} players")
    others = {crowd: [name for name in cells if name != crowd] or list(cells) for crowd, cells in rows.items()}
    worst = {crowd: max(others[crowd], key=lambda name: rows[crowd][name]["win_rate"]) for crowd in rows}
    return {"players": players, "rows": rows, "worst": worst}


def markdown(matrix: dict[str, Any]) -> str:
    """The matrix as a Markdown table: rows the crowds, columns the lone opponents, then the worst."""
    rows, n = matrix["rows"], matrix["players"]
    columns = list(dict.fromkeys(name for cells in rows.values() for name in cells))
    lines = [f"One policy alone against {n - 1} copies of another, {n} players: the lone policy's win rate "
             f"(parity {1 / n:.2f}), 95% interval, games per cell as played by each panel.", "",
             "| crowd \\ alone | " + " | ".join(columns) + " | worst |",
             "|:--|" + "--:|" * (len(columns) + 1)]
    for crowd, cells in rows.items():
        shown = []
        for name in columns:
            c = cells.get(name)
            shown.append("—" if c is None else f"{c['win_rate']:.2f} [{c['ci_low']:.2f}, {c['ci_high']:.2f}]")
        worst = matrix["worst"][crowd]
        lines.append(f"| {crowd} ({next(iter(cells.values()))['games']} games) | " + " | ".join(shown)
                     + f" | {worst} {cells[worst]['win_rate']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("panels", nargs="+", metavar="[LABEL=]FOLDER", help="panel folders (each with a panel.json)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--out", help="also write the Markdown table to this file")
    args = parser.parse_args(argv)
    try:
        text = markdown(crowd_matrix(args.panels, args.players))
    except ValueError as err:
        print(f"crowd_matrix: {err}", file=sys.stderr)
        return 2
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
