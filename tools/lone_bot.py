"""The lone bot's win rate at a panel's "n-1 candidates against 1 bot" tables (the crowd matrix's cells).

    python -m tools.lone_bot runs/panels/NAME [--players 4]

A panel reports the candidate's per-seat rate at each mix; at k = n - 1 the one other seat is the
bot, and its share is what the candidate's seats and the games without a winner leave:
``(games - candidate wins - truncated games) / games``, with a 95% Wilson interval over games.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dragonstones_env.play.arena import wilson_interval


def lone_bot_rates(panel: dict, players: int) -> list[dict]:
    rows = []
    for mix in panel["mixes"]:
        if mix["players"] != players or mix["k"] != players - 1:
            continue
        wins = mix["games"] - mix["wins"] - mix["truncated"]
        low, high = wilson_interval(wins, mix["games"])
        rows.append({"bot": mix["opponent"], "games": mix["games"], "win_rate": wins / mix["games"],
                     "ci_low": low, "ci_high": high})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.lone_bot", description=__doc__.split("\n\n")[0])
    parser.add_argument("panel", type=Path, help="a panel folder (panel.json)")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args(argv)
    panel = json.loads((args.panel / "panel.json").read_text())
    print(f"| one bot against {args.players - 1} of {panel['candidate']} | games | its win rate | 95% CI |")
    print("|:--|--:|--:|:--:|")
    for r in lone_bot_rates(panel, args.players):
        print(f"| {r['bot']} | {r['games']} | {r['win_rate']:.3f} | [{r['ci_low']:.3f}, {r['ci_high']:.3f}] |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
