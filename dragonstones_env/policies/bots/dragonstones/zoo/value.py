"""``value``: the value bidder. It prices every character by what it brings (points, stones
toward a scoring route, coins: the heuristic's valuation) and bids a fixed share of that price
(or, if more, the card's share of the fairy gold left this turn), keeping back the fairy gold
the dearer characters still face down will want, and never more than outbids every purse.
"""

from __future__ import annotations

from .common import Style, ZooPolicy, priced_bid

STYLE = Style(
    name="value",
    fraction=0.75,  # bids three quarters of what a character is worth to it
    card_weight={"Witch": 0.5, "Doppelganger": 0.5},  # a black coin or a double is only worth what it is used on
    common_from=5.0,
    amulet_from=12.0,
)


def make(seed: int | None = None) -> ZooPolicy:
    return ZooPolicy(STYLE, priced_bid, seed=seed)
