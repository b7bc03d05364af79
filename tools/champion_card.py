"""Put the results of panels and exploiters into a checkpoint's card.json (what the README quotes).

    python -m tools.champion_card policies/champion --panel runs/panel-champion-4p-1000 \\
        --panel runs/panel-champion-3p --exploit runs/exploit-champion-4p
    python -m tools.champion_card policies/champion --cells

Each ``--panel`` folder holds a ``panel.json`` (``dragonstones_env.evaluation --panel``), each ``--exploit``
folder an ``exploit.json`` (``training.exploit``). ``--copies`` takes the folders of a plain evaluation
of the policy's copies alone (``dragonstones evaluate --lineup S,S,S,S``), played in one go or in
chunks at seeds that do not overlap (tools/pool_cells.py checks them): their games become one
all-copies table, as a panel's, for a policy too slow for a whole panel in one sitting. The card
keeps, per panel, its settings, the robustness figure and every mix and all-copies table; per
exploiter, its settings, final rate and learning curve. The figures are the files' own; only a copies
table's length and truncation figures are counted here, by the panel's own ``table_figures``.

``--cells`` (re)writes the card's ``cells``: one row per measured table with its interval, read
from the card's own panels (the policy alone against n-1 of a bot; one bot alone against n-1
copies, by :func:`tools.lone_bot.lone_bot_rates`), its exploiters' final points and its search
cells, plus the cells measured outside a panel (pooled runs, other tables) that
``tools/card_cells.json`` lists with the doc section each is written in.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dragonstones_env.evaluation import table_figures
from tools.lone_bot import lone_bot_rates
from tools.pool_cells import PoolError, pooled_games

PANEL_KEYS = ("candidate", "players", "games", "ks", "seed", "opponents", "robustness", "mixes", "tables")
EXPLOIT_KEYS = ("target", "players", "timesteps", "seed", "parity", "final", "curve", "wall_time_s")
MEASURED_ELSEWHERE = Path(__file__).with_name("card_cells.json")


def panel_entry(folder: Path) -> tuple[str, dict]:
    data = json.loads((folder / "panel.json").read_text())
    name = f"panel_{'_'.join(map(str, data['players']))}p_{data['games']}_games"
    return name, {k: data.get(k) for k in PANEL_KEYS} | {"folder": folder.name}


def exploit_entry(folder: Path) -> tuple[str, dict]:
    data = json.loads((folder / "exploit.json").read_text())
    return f"exploiter_{data['players']}p", {k: data.get(k) for k in EXPLOIT_KEYS} | {"folder": folder.name}


def copies_entry(folders: list[Path]) -> tuple[str, dict]:
    """The all-copies table of the evaluation(s) in ``folders``: every seat one spec."""
    (game, players, lineup), games = pooled_games(folders)
    if len(set(lineup)) != 1:
        raise PoolError(f"{folders[0]} seats {sorted(set(lineup))}: an all-copies table seats one spec")
    if any("turns" not in g for g in games):
        raise PoolError("a games.json without the games' turns (written before it carried them): play the "
                        "evaluation again, or --resume it from its journal while it has one")
    table = {"players": players, "opponent": None, "k": players, "policy": lineup[0], "role": "candidate",
             **table_figures(games)}
    seeds = [g["seed"] for g in games]
    return f"copies_{players}p_{len(games)}_games", {
        "candidate": lineup[0], "game": game, "players": [players], "games": len(games),
        "seeds": [min(seeds), max(seeds)], "folder": [f.name for f in folders], "tables": [table]}


def _cell(who: str, against: str, players: int, games: float, rate: float, low: float, high: float,
          source: str) -> dict:
    return {"who": who, "against": against, "players": players, "games": games, "win_rate": round(rate, 4),
            "ci95": [round(low, 4), round(high, 4)], "parity": round(1 / players, 4), "source": source}


def _panel_cells(key: str, panel: dict) -> list[dict]:
    rows = []
    for mix in panel["mixes"]:
        if mix["k"] == 1:
            n = mix["players"]
            rows.append(_cell("the policy", f"{n - 1} {mix['opponent']}", n, mix["games"], mix["win_rate"],
                              mix["ci_low"], mix["ci_high"], f"evaluation_panel.{key}"))
    for n in sorted({m["players"] for m in panel["mixes"]}):
        for r in lone_bot_rates(panel, n):
            rows.append(_cell(r["bot"], f"{n - 1} copies", n, r["games"], r["win_rate"], r["ci_low"],
                              r["ci_high"], f"evaluation_panel.{key}"))
    return rows


def _entry_cells(key: str, entry: dict) -> list[dict]:
    if "mixes" in entry:
        return _panel_cells(key, entry)
    if "final" in entry:  # an exploiter: its last point
        final = entry["final"]
        who = f"its exploiter after {entry['timesteps']:,} steps (seed {entry['seed']})"
        return [_cell(who, f"{entry['players'] - 1} copies", entry["players"], final["games"], final["win_rate"],
                      *final["ci95"], f"evaluation_panel.{key}")]
    if "lineup" in entry:  # a search cell: the search alone against copies
        return [_cell(entry["lineup"].split(" alone")[0], f"{entry['players'] - 1} copies", entry["players"],
                      entry["games"], entry["win_rate"], *entry["ci95"], f"evaluation_panel.{key}")]
    return []


def cells(card: dict, elsewhere: list[dict]) -> list[dict]:
    """The card's cells: per table (who, against, players) the one with the most games, then the
    cells measured elsewhere as listed (each names its doc section)."""
    best: dict[tuple, dict] = {}
    for key, entry in sorted(card.get("evaluation_panel", {}).items()):
        for row in _entry_cells(key, entry):
            table = (row["who"], row["against"], row["players"])
            if table not in best or row["games"] > best[table]["games"]:
                best[table] = row
    derived = sorted(best.values(), key=lambda r: (r["players"] != 4, r["players"], r["who"] != "the policy",
                                                    r["who"], r["against"]))
    return derived + [dict(row) for row in elsewhere]


def measured_elsewhere(checkpoint: Path) -> list[dict]:
    return json.loads(MEASURED_ELSEWHERE.read_text()).get(checkpoint.resolve().name, [])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--panel", type=Path, action="append", default=[])
    p.add_argument("--exploit", type=Path, action="append", default=[])
    p.add_argument("--copies", type=Path, nargs="+", default=[], help="the folders of one all-copies "
                   "evaluation (games.json, summary.json), pooled into one table")
    p.add_argument("--cells", action="store_true", help="rewrite the card's cells (tools/card_cells.json adds "
                   "the ones measured outside its panels)")
    args = p.parse_args(argv)
    card_path = args.checkpoint / "card.json"
    card = json.loads(card_path.read_text())
    results = card.setdefault("evaluation_panel", {})
    for name, entry in [*map(panel_entry, args.panel), *map(exploit_entry, args.exploit)]:
        results[name] = entry
    if args.copies:
        try:
            name, entry = copies_entry(args.copies)
        except (PoolError, OSError, KeyError, ValueError) as err:
            p.error(str(err))
        results[name] = entry
    if args.cells or "cells" in card:  # cells kept in step with the panels they are read from
        card["cells"] = cells(card, measured_elsewhere(args.checkpoint))
    card_path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    print(f"{card_path}: {', '.join(sorted(results))}" + (f"; {len(card['cells'])} cells" if "cells" in card else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
