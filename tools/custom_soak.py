"""Random games with a custom deck (issue #16): nothing crashes, nothing leaks.

    python -m tools.custom_soak --games 10000 [--characters examples/characters.yaml]

Plays random games on the engine (``tools.random_games.choose``, the "realistic" bids) at 3 to 6
players with the custom cards in the special pile, and checks after every decision that no coin
or stone was created or destroyed (F2) and that the game goes on; every 50th game is also
replayed from its JSON record. Prints the games, how many ended in a win, the custom powers
used, and the violations (which must be 0).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from dragonstones_env.games.dragonstones import custom
from dragonstones_env.games.dragonstones.engine import Game
from tools.random_games import choose

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "characters.yaml"


def soak(games: int, characters: Any = EXAMPLE, exclude: tuple[str, ...] = (), seed: int = 0) -> dict[str, Any]:
    """Play ``games`` random games; returns the figures (``violations`` must be 0)."""
    deck = custom.make_deck(characters, exclude)
    names = {c.name for c in deck.custom}
    used: Counter[str] = Counter()
    wins = violations = replayed = 0
    for i in range(games):
        rng = random.Random(seed + i)
        g = Game(3 + i % 4, seed=seed + i, deck=deck)
        totals = g.totals()
        while not g.over:
            g.apply(choose(g, rng, "realistic"))
            if g.totals() != totals:
                violations += 1
                print(f"game {seed + i}: coins or stones changed {totals} -> {g.totals()}", file=sys.stderr)
                break
        wins += g.winner is not None
        used.update(ev["card"] for ev in g.record if ev["event"] == "power" and ev["card"] in names)
        if i % 50 == 0:
            again = custom.replay(json.loads(json.dumps(g.record)))
            violations += again.state_dict() != g.state_dict()
            replayed += 1
    return {"games": games, "wins": wins, "violations": violations, "replayed": replayed,
            "custom_powers_used": dict(used)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--characters", default=str(EXAMPLE))
    ap.add_argument("--exclude", nargs="*", default=[])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    start = time.time()
    result = soak(args.games, args.characters, tuple(args.exclude), args.seed)
    result["seconds"] = round(time.time() - start, 1)
    print(json.dumps(result, indent=1))
    if result["violations"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
