"""Where k copies of a policy lose to one bot: the auctions of the panel's worst kind of table.

    python -m tools.copies_table champion value --games 100

Plays ``games`` Fist games of ``players - 1`` copies of CANDIDATE against one BOT (the bot's seat
rotates), reads every game's record and prints, per seat of each side: the share of auctions
won, how often the top bid is tied between copies only, the mean bid value, and the cards won
per game, the cards the bot wins more often than a copy first. The panel says *that* copies lose
(issue #12); this says *which cards* the bot takes from them.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from dragonstones_env import env
from dragonstones_env.play.arena import play_game
from dragonstones_env.policies import load_policy


def copies_table(candidate: str, bot: str, games: int, players: int = 4) -> dict[str, Any]:
    """The auction figures of ``games`` games of ``players - 1`` copies of ``candidate`` against ``bot``."""
    counts: Counter[str] = Counter()
    cards = {"bot": Counter(), "copy": Counter()}
    bid_value = Counter()
    for g in range(games):
        bot_seat = g % players
        specs = [bot if i == bot_seat else candidate for i in range(players)]
        policies = [load_policy(spec, seed=g * players + i) for i, spec in enumerate(specs)]
        result = play_game(lambda: env(num_players=players), policies, specs, g,
                           inspect=lambda game: {"record": game.record})
        counts["bot_won"] += result.rewards[bot_seat] > 0
        for event in result.extra["record"]:
            if event["event"] == "reveal":
                values = event["values"]
                top = max(values)
                tops = [i for i, v in enumerate(values) if v == top]
                counts["auctions"] += 1
                counts["tied_copies_only"] += top > 0 and len(tops) >= 2 and bot_seat not in tops
                for seat, value in enumerate(values):
                    bid_value["bot" if seat == bot_seat else "copy"] += value
            elif event["event"] == "outcome" and event.get("winner") is not None:
                cards["bot" if event["winner"] == bot_seat else "copy"][event["card"]] += 1
    auctions, copies = max(counts["auctions"], 1), players - 1
    per_game = {card: {"bot": cards["bot"][card] / games, "copy": cards["copy"][card] / games / copies}
                for card in set(cards["bot"]) | set(cards["copy"])}
    return {
        "candidate": candidate, "bot": bot, "games": games, "players": players,
        "bot_win_rate": counts["bot_won"] / games,
        "auctions_per_game": counts["auctions"] / games,
        "tied_copies_only": counts["tied_copies_only"] / auctions,
        "auctions_won": {"bot": sum(cards["bot"].values()) / auctions,
                         "copy": sum(cards["copy"].values()) / auctions / copies},
        "mean_bid_value": {"bot": bid_value["bot"] / auctions, "copy": bid_value["copy"] / auctions / copies},
        # the cards the bot wins more often than one copy first
        "cards_per_game": dict(sorted(per_game.items(), key=lambda kv: kv[1]["copy"] - kv[1]["bot"])),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("candidate", help="the policy seated n-1 times (any load_policy spec)")
    parser.add_argument("bot", help="the policy seated once")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be >= 1, got {args.games}")
    r = copies_table(args.candidate, args.bot, args.games, args.players)
    print(f"{args.players - 1} x {r['candidate']} against 1 {r['bot']}, {r['games']} games: the bot won "
          f"{r['bot_win_rate']:.2f}; {r['auctions_per_game']:.1f} auctions a game, top tied between copies only "
          f"{r['tied_copies_only']:.2f}; auctions won per seat: bot {r['auctions_won']['bot']:.2f}, copy "
          f"{r['auctions_won']['copy']:.2f}; mean bid value: bot {r['mean_bid_value']['bot']:.2f}, copy "
          f"{r['mean_bid_value']['copy']:.2f}")
    print(f"{'card':22s} {'bot':>5s} {'copy':>5s}   (won per game, per seat)")
    for card, won in r["cards_per_game"].items():
        print(f"{card:22s} {won['bot']:5.2f} {won['copy']:5.2f}")


if __name__ == "__main__":
    main()
