"""Put the results of panels and exploiters into a checkpoint's card.json (what the README quotes).

    python -m tools.champion_card policies/champion --panel runs/panel-champion-4p-1000 \\
        --panel runs/panel-champion-3p --exploit runs/exploit-champion-4p

Each ``--panel`` folder holds a ``panel.json`` (``dragonstones_env.evaluation --panel``), each ``--exploit``
folder an ``exploit.json`` (``training.exploit``). The card keeps, per panel, its settings, the
robustness figure and every mix and all-copies table; per exploiter, its settings, final rate
and learning curve. Nothing is computed here: the figures are the files' own.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

PANEL_KEYS = ("candidate", "players", "games", "ks", "seed", "opponents", "robustness", "mixes", "tables")
EXPLOIT_KEYS = ("target", "players", "timesteps", "seed", "parity", "final", "curve", "wall_time_s")


def panel_entry(folder: Path) -> tuple[str, dict]:
    data = json.loads((folder / "panel.json").read_text())
    name = f"panel_{'_'.join(map(str, data['players']))}p_{data['games']}_games"
    return name, {k: data.get(k) for k in PANEL_KEYS} | {"folder": folder.name}


def exploit_entry(folder: Path) -> tuple[str, dict]:
    data = json.loads((folder / "exploit.json").read_text())
    return f"exploiter_{data['players']}p", {k: data.get(k) for k in EXPLOIT_KEYS} | {"folder": folder.name}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--panel", type=Path, action="append", default=[])
    p.add_argument("--exploit", type=Path, action="append", default=[])
    args = p.parse_args(argv)
    card_path = args.checkpoint / "card.json"
    card = json.loads(card_path.read_text())
    results = card.setdefault("evaluation_panel", {})
    for name, entry in [*map(panel_entry, args.panel), *map(exploit_entry, args.exploit)]:
        results[name] = entry
    card_path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    print(f"{card_path}: {', '.join(sorted(results))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
