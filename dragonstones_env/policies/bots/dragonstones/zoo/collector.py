"""``collector``: the stone collector. It prices stones well above the others (the dragons,
the Merchant, the Rainbow Dragon), buys with the Merchant whatever its common gold and silver
can pay for, draws on with the Rainbow Dragon, and turns its stones into points with every
scoring character it can pay (Magician, Wizard, Sorcerer, Enchantress, Apprentice, Quack).
"""

from __future__ import annotations

from dataclasses import replace

from dragonstones_env.games.dragonstones.cards import COLOURS

from ..params import PARAMS
from ..table import Table
from .common import Style, ZooPolicy, colour_of, priced_bid

STONE_CARDS = ("Red Dragon", "Blue Dragon", "Yellow Dragon", "Ancient Dragon", "Two-headed Dragon",
               "Rainbow Dragon", "Merchant")
COIN_CARDS = ("Alchemist", "Dwarf (4)", "Dwarf (5)", "Gnome", "Fairy", "Goldsmith", "Brigand")
STYLE = Style(
    name="collector",
    fraction=0.8,
    card_weight={**dict.fromkeys(STONE_CARDS, 1.6), "Merchant": 2.0, "Thief": 1.3,
                 **dict.fromkeys(COIN_CARDS, 0.5), "Witch": 0.3},
    common_from=4.0,
    # Its valuation: every stone is worth more, and a route a stone or two short counts more.
    params=replace(PARAMS, stone_base=0.8, D=(0.6, 0.42, 0.26, 0.14, 0.07, 0.03)),
)
# Merchant (F36): what one stone bought costs it, per coin; fairy gold paid is gone for good.
COIN_COST = {"common": 1.0, "silver": 3 * PARAMS.silver, "fairy": 2.0}
BUST_LIMIT = 0.4  # Rainbow Dragon (F39): draws again while the chance of drawing the named colour is below this


def buy(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Merchant: the stone that helps most, with the cheapest coin, while it is worth the coin."""
    if option[0] == "stop":
        return 0.0
    _, colour, coin = option
    gain = bot.values.stone_gain(t.me.score, t.me.stones, COLOURS.index(colour)) + bot.values.p.stone_base
    return gain - COIN_COST[coin]


def rainbow(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Rainbow Dragon: draw again while the named colour is unlikely and the bag still holds stones."""
    bs, label = t.bank_stones, t.decoded["rainbow_named"]
    named = None if label is None else COLOURS.index(label)
    total = sum(bs)
    risky = total == 0 or (named is not None and bs[named] / total >= BUST_LIMIT)
    return float((option[0] == "draw") != risky)


def name_colour(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Rainbow Dragon: name the colour the bank has fewest of, so a bust is least likely (F39)."""
    return -t.bank_stones[colour_of(option)]


def pay(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Pay-or-take (F15): always pay when it can (stones are there to be turned into points),
    with the payment that leaves the best stones behind."""
    if option[0] != "pay":
        return -1.0
    me = t.me
    rest = tuple(me.stones[i] - option[1 + i] for i in range(3))
    return 100.0 + bot.values.potential(rest, me.score)


def make(seed: int | None = None) -> ZooPolicy:
    choices = {"buy_or_stop": buy, "draw_or_stop": rainbow, ("choose_colour", "Rainbow Dragon"): name_colour,
               "pay_or_take": pay, "choose_payment": pay}
    return ZooPolicy(STYLE, priced_bid, choices, seed=seed)
