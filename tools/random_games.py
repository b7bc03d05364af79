"""Play many random games of Fist of Dragonstones and print what they look like.

    python -m tools.random_games --games 10000 --seed 0 [--players 3 4 5 6] [--policy uniform|smallbids]

Prints, per player count, the distribution of game lengths (decisions and turns: mean,
median, p5, p95, max), how often games end by truncation (F18) and which seats win, then
the most coins any player ever held behind the screen at a decision, and the fraction of
decisions at which a player held more than a given amount (to size an action space).

Two random policies:

* ``uniform``: uniform over the legal options; a gold bid draws each of its parts (fairy,
  common, black, amulet) uniformly, which is uniform over all legal bids, so bids are large;
* ``smallbids``: small bids, closer to how real players bid: fairy gold geometric (mostly
  0-3), common gold rarely, the black coin and the amulet now and then; every other
  decision uniform over the legal options.

Game ``i`` has ``seed + i`` as its seed and ``players[i % len(players)]`` players; the
policy's random generator is seeded from the policy name and the game's seed, so a run is
reproducible whatever the number of processes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from multiprocessing import Pool
from typing import Any

import numpy as np

from dragonstones_env.core import Option
from dragonstones_env.games.dragonstones.engine import BID, DEFAULT_MAX_TURNS, MAX_PLAYERS, MIN_PLAYERS, TIEBREAK, Game

POLICIES = ("uniform", "smallbids")
FAIRY_THRESHOLDS = (12, 16, 20, 24)
COMMON_THRESHOLDS = (8, 12)
SILVER_THRESHOLDS = (20, 30)

TABLE_SIZES = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))  # every size the engine plays, from the engine


# ---------------------------------------------------------------------------- policies
def _geometric(rng: random.Random, limit: int, p_more: float) -> int:
    """0, 1, 2, ... with P(n) ~ p_more**n, capped at ``limit``."""
    n = 0
    while n < limit and rng.random() < p_more:
        n += 1
    return n


def choose(game: Game, rng: random.Random, policy: str = "uniform") -> Option:
    """A random legal option of ``game``'s current decision under ``policy``.

    Gold and silver bids are drawn from the bid limits instead of the (long) list of legal
    bids; they are legal by construction.
    """
    d = game.decision
    assert d is not None, "the game is over"
    pl = game.players[d.player]
    if d.kind == BID:
        f_max, c_max, b_max, a_max = game.bid_limits(d.player)
        if policy == "uniform":
            return (BID, rng.randint(0, f_max), rng.randint(0, c_max), rng.randint(0, b_max), rng.randint(0, a_max))
        return (
            BID,
            _geometric(rng, f_max, 0.6),
            _geometric(rng, c_max, 0.25),
            int(b_max > 0 and rng.random() < 0.3),
            int(a_max > 0 and rng.random() < 0.25),
        )
    if d.kind == TIEBREAK:
        a_max = min(pl.amulets, 1)
        if policy == "uniform":
            return (TIEBREAK, rng.randint(0, pl.silver), rng.randint(0, a_max))
        return (TIEBREAK, _geometric(rng, pl.silver, 0.6), int(a_max > 0 and rng.random() < 0.25))
    return rng.choice(game.legal_options())


def policy_rng(policy: str, seed: int) -> random.Random:
    return random.Random(f"{policy}:{seed}")


# ---------------------------------------------------------------------------- one game
def play_game(
    num_players: int, seed: int, policy: str = "uniform", max_turns: int = DEFAULT_MAX_TURNS
) -> dict[str, Any]:
    """Play one random game to its end; returns its length and what the players held."""
    game = Game(num_players, seed=seed, max_turns=max_turns)
    rng = policy_rng(policy, seed)
    players = game.players
    decisions = bids = tiebreaks = 0
    max_fairy = max_owned = max_common = max_silver = max_amulets = 0
    bid_fairy_over = dict.fromkeys(FAIRY_THRESHOLDS, 0)
    bid_common_over = dict.fromkeys(COMMON_THRESHOLDS, 0)
    tie_silver_over = dict.fromkeys(SILVER_THRESHOLDS, 0)
    any_fairy_over = dict.fromkeys(FAIRY_THRESHOLDS, 0)
    any_silver_over = dict.fromkeys(SILVER_THRESHOLDS, 0)
    max_options: dict[str, int] = {}
    while not game.over:
        d = game.decision
        fairy = max(pl.fairy for pl in players)
        silver = max(pl.silver for pl in players)
        max_fairy = max(max_fairy, fairy)
        max_owned = max(max_owned, max(pl.fairy + pl.fairy_spent for pl in players))
        max_common = max(max_common, max(pl.common for pl in players))
        max_silver = max(max_silver, silver)
        max_amulets = max(max_amulets, max(pl.amulets for pl in players))
        for t in FAIRY_THRESHOLDS:
            any_fairy_over[t] += fairy > t
        for t in SILVER_THRESHOLDS:
            any_silver_over[t] += silver > t
        me = players[d.player]
        if d.kind == BID:
            bids += 1
            for t in FAIRY_THRESHOLDS:
                bid_fairy_over[t] += me.fairy > t
            for t in COMMON_THRESHOLDS:
                bid_common_over[t] += me.common > t
        elif d.kind == TIEBREAK:
            tiebreaks += 1
            for t in SILVER_THRESHOLDS:
                tie_silver_over[t] += me.silver > t
        else:
            max_options[d.kind] = max(max_options.get(d.kind, 0), len(game.legal_options()))
        game.apply(choose(game, rng, policy))
        decisions += 1
    return {
        "players": num_players,
        "seed": seed,
        "policy": policy,
        "decisions": decisions,
        "turns": game.turn,
        "truncated": game.truncated,
        "winner": game.winner,
        "winner_score": None if game.winner is None else players[game.winner].score,
        "bids": bids,
        "tiebreaks": tiebreaks,
        "max_fairy": max_fairy,
        "max_fairy_owned": max_owned,
        "max_common": max_common,
        "max_silver": max_silver,
        "max_amulets": max_amulets,
        "bid_fairy_over": bid_fairy_over,
        "bid_common_over": bid_common_over,
        "tie_silver_over": tie_silver_over,
        "any_fairy_over": any_fairy_over,
        "any_silver_over": any_silver_over,
        "max_options": max_options,
    }


def _play(job: tuple[int, int, str, int]) -> dict[str, Any]:
    return play_game(*job)


def jobs(games: int, seed: int, players: list[int], policy: str, max_turns: int) -> list[tuple[int, int, str, int]]:
    return [(players[i % len(players)], seed + i, policy, max_turns) for i in range(games)]


def run(
    games: int,
    seed: int = 0,
    players: list[int] | None = None,
    policy: str = "uniform",
    processes: int = 2,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> list[dict[str, Any]]:
    """Play ``games`` random games, on ``processes`` processes (1: in this process)."""
    todo = jobs(games, seed, players or TABLE_SIZES, policy, max_turns)
    if processes <= 1:
        return [_play(job) for job in todo]
    with Pool(processes) as pool:
        return list(pool.imap(_play, todo, chunksize=max(1, min(50, games // (8 * processes)))))


# ---------------------------------------------------------------------------- report
def _dist(values: list[int]) -> str:
    a = np.asarray(values)
    p5, median, p95 = np.percentile(a, [5, 50, 95])
    return f"{a.mean():8.1f} {median:7.0f} {p5:6.0f} {p95:6.0f} {a.max():6d}"


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:6.2f}%" if whole else "     - "


def _frac(part: int, whole: int) -> str:
    """A fraction precise enough for rare events, with its count."""
    return f"{100.0 * part / whole:.4f}% ({part})" if whole else "-"


def report(results: list[dict[str, Any]], out: Any = None) -> None:
    """Print the figures of a run (to ``out``, by default the standard output)."""
    out = sys.stdout if out is None else out

    def say(line: str = "") -> None:
        print(line, file=out)

    by_n: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_n[r["players"]].append(r)
    policies = sorted({r["policy"] for r in results})
    say(f"{len(results)} games, policy {', '.join(policies)}")
    say()
    cols = f"{'mean':>8} {'median':>7} {'p5':>6} {'p95':>6} {'max':>6}"
    say(f"{'':>7} {'':>6} | {'decisions':^38} | {'turns':^38} |")
    say(f"{'players':>7} {'games':>6} | {cols} | {cols} | truncated | wins by seat (of games won)")
    for n in sorted(by_n):
        rs = by_n[n]
        trunc = sum(r["truncated"] for r in rs)
        seats = Counter(r["winner"] for r in rs if r["winner"] is not None)
        wins = " ".join(_pct(seats[s], len(rs) - trunc).strip() for s in range(n))
        say(
            f"{n:7d} {len(rs):6d} | {_dist([r['decisions'] for r in rs])} | {_dist([r['turns'] for r in rs])}"
            f" | {trunc:5d} {_pct(trunc, len(rs))} | {wins}"
        )
    trunc = sum(r["truncated"] for r in results)
    say(
        f"{'all':>7} {len(results):6d} | {_dist([r['decisions'] for r in results])} | "
        f"{_dist([r['turns'] for r in results])} | {trunc:5d} {_pct(trunc, len(results))} |"
    )
    say()
    say("most any player held (at a decision), per player count:")
    say(f"{'players':>7} {'fairy':>6} {'fairy+spent':>11} {'common':>6} {'silver':>6} {'amulets':>7}")
    for n in sorted(by_n):
        rs = by_n[n]
        say(
            f"{n:7d} {max(r['max_fairy'] for r in rs):6d} {max(r['max_fairy_owned'] for r in rs):11d} "
            f"{max(r['max_common'] for r in rs):6d} {max(r['max_silver'] for r in rs):6d} "
            f"{max(r['max_amulets'] for r in rs):7d}"
        )
    say(
        f"{'all':>7} {max(r['max_fairy'] for r in results):6d} {max(r['max_fairy_owned'] for r in results):11d} "
        f"{max(r['max_common'] for r in results):6d} {max(r['max_silver'] for r in results):6d} "
        f"{max(r['max_amulets'] for r in results):7d}"
    )
    say("per-game maxima of fairy gold behind the screen: p50 / p95 / p99 = "
        + " / ".join(f"{v:.0f}" for v in np.percentile([r["max_fairy"] for r in results], [50, 95, 99])))
    say("per-game maxima of silver: p50 / p95 / p99 = "
        + " / ".join(f"{v:.0f}" for v in np.percentile([r["max_silver"] for r in results], [50, 95, 99])))
    say()

    def total(key: str, t: int) -> int:
        return sum(r[key][t] for r in results)

    decisions = sum(r["decisions"] for r in results)
    bids = sum(r["bids"] for r in results)
    ties = sum(r["tiebreaks"] for r in results)
    say(f"decisions {decisions}: gold bids {bids}, tie-break bids {ties}")
    say("fraction of gold-bid decisions at which the bidder held more than N fairy gold behind the screen:")
    say("    " + "   ".join(f">{t}: {_frac(total('bid_fairy_over', t), bids)}" for t in FAIRY_THRESHOLDS))
    say("fraction of gold-bid decisions at which the bidder held more than N common gold:")
    say("    " + "   ".join(f">{t}: {_frac(total('bid_common_over', t), bids)}" for t in COMMON_THRESHOLDS))
    say("fraction of tie-break decisions at which the bidder held more than N silver:")
    say("    " + "   ".join(f">{t}: {_frac(total('tie_silver_over', t), ties)}" for t in SILVER_THRESHOLDS))
    say("fraction of all decisions at which some player held more than N fairy gold behind the screen:")
    say("    " + "   ".join(f">{t}: {_frac(total('any_fairy_over', t), decisions)}" for t in FAIRY_THRESHOLDS))
    say("fraction of all decisions at which some player held more than N silver:")
    say("    " + "   ".join(f">{t}: {_frac(total('any_silver_over', t), decisions)}" for t in SILVER_THRESHOLDS))
    say()
    kinds: dict[str, int] = {}
    for r in results:
        for k, v in r["max_options"].items():
            kinds[k] = max(kinds.get(k, 0), v)
    say("most legal options at one decision (other than bids): "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    scores = Counter(r["winner_score"] for r in results if r["winner"] is not None)
    say("winner's final score: " + ", ".join(f"{s}: {c}" for s, c in sorted(scores.items())))
    say(f"median decisions per turn: {statistics.median(r['decisions'] / r['turns'] for r in results):.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.random_games", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0, help="game i has seed SEED + i")
    parser.add_argument("--players", type=int, nargs="+", default=TABLE_SIZES,
                        choices=range(MIN_PLAYERS, MAX_PLAYERS + 1), metavar="N")
    parser.add_argument("--policy", choices=POLICIES, default="uniform")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS,
                        help=f"truncation (F18); default: the engine's default, {DEFAULT_MAX_TURNS}")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = run(args.games, args.seed, args.players, args.policy, args.processes, args.max_turns)
    report(results)
    print(f"({time.perf_counter() - start:.0f} s, {args.processes} process(es), max_turns {args.max_turns})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
