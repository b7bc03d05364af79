"""Record (or check) the golden action streams: whole games played by fixed, seeded line-ups.

The golden file pins what a refactoring must not change: every action of every seat, and the
final engine state, of 120 games -- Fist of Dragonstones at 3, 4 and 6 players (the shipped
``champion``, ``heuristic`` and ``random`` seats) and DrachenSchatten at 2, 3 and 4 players
(``ds-heuristic`` and ``random``), 20 seeds each. ``tests/test_golden_streams.py`` replays every
stream with the same policies and seeds and demands identical actions and final state.

Games are made through the game registry (``dragonstones_env.games``), seated with
``dragonstones_env.policies.load_policy`` and played by ``dragonstones_env.play.arena.play_game``
(its ``on_action`` hook records the actions).

    python -m tools.golden_streams                       # re-record every game
    python -m tools.golden_streams --game drachenschatten  # every game of one game family
    python -m tools.golden_streams --only drachenschatten/3p/s7  # one game (repeatable)
    python -m tools.golden_streams --check               # replay and list the games that differ

A rules change that alters games on purpose (a ruling, e.g. D7) re-records exactly the games
it changes (``--check`` lists them, ``--only`` re-records them) and says how many in its commit.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from dragonstones_env import games
from dragonstones_env.core.seeding import seat_seed
from dragonstones_env.play.arena import play_game
from dragonstones_env.policies import load_policy

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "streams.json.gz"
SEEDS = range(20)
# Per game family: the table sizes, and the specs seated in turn (seat i of seed s gets
# SPECS[(i + s) % len(SPECS)], so every spec sits every seat over the seeds).
PLAN: dict[str, dict[str, Any]] = {
    "dragonstones": {"players": (3, 4, 6), "specs": ("champion", "heuristic", "random")},
    "drachenschatten": {"players": (2, 3, 4), "specs": ("ds-heuristic", "random")},
}


def key(game: str, players: int, seed: int) -> str:
    return f"{game}/{players}p/s{seed}"


def lineup(game: str, players: int, seed: int) -> list[str]:
    specs = PLAN[game]["specs"]
    return [specs[(i + seed) % len(specs)] for i in range(players)]


def make_env(game: str, players: int) -> Any:
    return games.get(game).env(num_players=players)


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def play(game: str, players: int, seed: int) -> dict[str, Any]:
    """One game: the line-up's policies, seeded from the game's seed and the seat."""
    names = lineup(game, players, seed)
    policies = [load_policy(spec, seed=seat_seed(seed, i)) for i, spec in enumerate(names)]
    actions: list[int] = []
    result = play_game(lambda: make_env(game, players), policies, names, seed,
                       inspect=lambda engine: {"state": digest(engine.state_dict()), "record": digest(engine.record)},
                       on_action=lambda agent, action: actions.append(action))
    return {
        "game": game, "players": players, "seed": seed, "lineup": names, "actions": actions,
        "rewards": [round(float(r), 9) for r in result.rewards], **result.extra,
    }


def all_keys() -> list[tuple[str, int, int]]:
    return [(g, n, s) for g, plan in PLAN.items() for n in plan["players"] for s in SEEDS]


def load() -> dict[str, dict[str, Any]]:
    if not GOLDEN.exists():
        return {}
    with gzip.open(GOLDEN, "rt") as f:
        return json.load(f)["games"]


def save(games: dict[str, dict[str, Any]]) -> None:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    data = {"about": "tools/golden_streams.py; checked by tests/test_golden_streams.py",
            "games": {k: games[k] for k in sorted(games)}}
    # mtime=0: the same games give the same bytes, so a re-record that changes nothing is no diff
    with gzip.GzipFile(GOLDEN, "wb", mtime=0) as f:
        f.write(json.dumps(data, separators=(",", ":")).encode())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", choices=PLAN, help="re-record only this game family")
    p.add_argument("--only", action="append", default=[], help="re-record one game by key (game/Np/sS)")
    p.add_argument("--check", action="store_true", help="replay and report differences, write nothing")
    args = p.parse_args(argv)
    wanted = [t for t in all_keys()
              if (not args.only or key(*t) in args.only) and (args.game is None or t[0] == args.game)]
    if args.only and len(wanted) != len(set(args.only)):
        p.error(f"unknown key among {args.only}; keys look like {key(*all_keys()[0])}")
    games = load()
    changed = []
    for t in wanted:
        new = play(*t)
        if games.get(key(*t)) != new:
            changed.append(key(*t))
        games[key(*t)] = new
    print(f"{len(wanted)} games played, {len(changed)} differ from the golden file: {', '.join(changed[:30]) or '-'}"
          + (f" and {len(changed) - 30} more" if len(changed) > 30 else ""))
    if not args.check:
        save(games)
        print(f"wrote {GOLDEN.relative_to(ROOT)} ({len(games)} games)")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
