"""What the engine's check of custom Python powers costs per step (issue #30).

    python -m tools.power_audit_cost [--games 300] [--repeats 5]

After every use of a custom Python power the engine compares the F2 totals (every coin and stone)
with those before it (``flow.Game._audit_done``). This plays the same random games (the
"realistic" bids of ``tools.random_games``) with a deck holding a conserving Python card, with
the check and with it switched off (the deck's ``python_cards`` emptied), alternately
``--repeats`` times, and prints the best time per step of each, the uses checked per step, and
the cost of one check (two ``Game.totals`` calls and a comparison, timed apart).
"""

from __future__ import annotations

import argparse
import json
import random
import time
import timeit

from dragonstones_env.games.dragonstones import custom
from dragonstones_env.games.dragonstones.engine import Game
from tools.random_games import choose

NAME = "Audit Benchmark Tax"


def tax(g: Game, p: int, auction: object) -> None:
    """Every other player pays the user 1 silver if he has one: moves coins, creates none."""
    for q, pl in enumerate(g.players):
        if q != p and pl.silver:
            pl.silver -= 1
            g.players[p].silver += 1


def play(deck: custom.Deck, games: int, audited: bool) -> tuple[float, int, int]:
    """Seconds spent in ``apply``, steps, and uses of the Python card, over ``games`` games."""
    spent, steps, uses = 0.0, 0, 0
    for seed in range(games):
        g = Game(3 + seed % 4, seed=seed, deck=deck)
        if not audited:
            g._audited = frozenset()
        rng = random.Random(seed)
        while not g.over:
            option = choose(g, rng, "realistic")
            t = time.perf_counter()
            g.apply(option)
            spent += time.perf_counter() - t
            steps += 1
        uses += sum(1 for ev in g.record if ev["event"] == "power" and ev["card"] == NAME)
    return spent, steps, uses


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    custom.character(NAME, copies=3, text="1 silver from every other player")(tax)
    deck = custom.make_deck([NAME])
    best = {True: float("inf"), False: float("inf")}
    for _ in range(args.repeats):
        for audited in (True, False):
            spent, steps, uses = play(deck, args.games, audited)
            best[audited] = min(best[audited], spent)
    g = Game(6, seed=0, deck=deck)
    check = min(timeit.repeat(lambda: g.totals() == g.totals(), number=20_000, repeat=5)) / 20_000
    print(json.dumps({
        "games": args.games, "steps": steps, "python_power_uses": uses, "uses_per_step": uses / steps,
        "us_per_step_checked": 1e6 * best[True] / steps, "us_per_step_unchecked": 1e6 * best[False] / steps,
        "us_per_step_difference": 1e6 * (best[True] - best[False]) / steps,
        "us_per_check_6_players": 1e6 * check, "us_per_step_from_checks": 1e6 * check * uses / steps,
    }, indent=2))


if __name__ == "__main__":
    main()
