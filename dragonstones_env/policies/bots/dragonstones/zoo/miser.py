"""``miser``: keeps its gold for decisive characters. It goes all in on a character that wins
it the game, bids high on one it can score with now, pays for a stone only when that stone
completes a payment for a scoring character still face down this turn, and otherwise bids a
coin or two at most, nothing on a character of no use to it. Its common gold and silver stay
behind the screen unless a point is at stake.
"""

from __future__ import annotations

import dataclasses
import math

from ..table import Seat, Table
from .common import NO_BID, SCORING, Style, ZooPolicy, all_in, fairy_reserve, gold_bid, points_now, price, wins_now

STYLE = Style(
    name="miser",
    fraction=0.9,  # on a character it scores with: nearly all it is worth
    card_weight={"Witch": 0.0, "Doppelganger": 0.0, "Brigand": 0.5, "Troll": 0.5},  # no gold on tricks
    common_from=6.0,  # common gold only for a point (a point at 0 is worth 8 gold)
    amulet_from=8.0,
    tie_silver=0.5,
    jitter=0.1,
)
# What it puts on the rest, by tier: (share of the price, most coins).
ENABLE = (0.6, 4)  # a stone that makes a face-down scoring character payable this turn
LITTLE = (0.25, 2)  # anything else of use
STONES = {  # the colours a character may bring (F23, F24, F26, F36, F39, F42)
    "Red Dragon": (0,), "Blue Dragon": (1,), "Yellow Dragon": (2,), "Ancient Dragon": (0, 1, 2),
    "Thief": (0, 1, 2), "Merchant": (0, 1, 2), "Rainbow Dragon": (0, 1, 2), "Two-headed Dragon": (0, 1, 2),
}


def enables(bot: ZooPolicy, t: Table, card: str) -> bool:
    """Would a stone from ``card`` let the bot pay for a scoring character still face down?"""
    me = t.me
    later = [c for c in dict.fromkeys(t.face_down) if c in SCORING]
    for colour in STONES.get(card, ()):
        stones = list(me.stones)
        stones[colour] += 1
        after: Seat = dataclasses.replace(me, stones=tuple(stones))
        if any(points_now(bot, c, after, t) > points_now(bot, c, me, t) for c in later):
            return True
    return False


def bid(bot: ZooPolicy, t: Table) -> tuple:
    card, me = t.card, t.me
    value = price(bot, card, t)
    if card is None or value <= 0:
        return NO_BID
    if wins_now(bot, card, me, t):
        return all_in(t)
    if points_now(bot, card, me, t) > 0:
        cap = me.fairy - fairy_reserve(bot, t, value)
        return gold_bid(bot, t, bot.style.fraction * value, value, fairy_cap=cap)
    share, most = ENABLE if enables(bot, t, card) else LITTLE
    return gold_bid(bot, t, min(most, math.floor(share * value)), 0.0)


def make(seed: int | None = None) -> ZooPolicy:
    return ZooPolicy(STYLE, bid, seed=seed)
