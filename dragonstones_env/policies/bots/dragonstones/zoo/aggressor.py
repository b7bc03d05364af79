"""``aggressor``: hits whoever leads. It buys the Witch to curse (F12) any character an
opponent could score with, prices characters by what they deny as much as by what they
bring, and turns the Thief, the Brigand and the Troll on the leader.
"""

from __future__ import annotations

from dragonstones_env.games.dragonstones.cards import COLOURS

from ..bidding import CURSE
from ..table import Table
from .common import (
    Style,
    ZooPolicy,
    colour_loss,
    colour_of,
    leader,
    priced_bid,
    should_curse,
)

STYLE = Style(
    name="aggressor",
    fraction=0.8,
    # The weapons: the Witch's black coin and the three characters that take from others.
    card_weight={"Witch": 1.5, "Thief": 1.5, "Brigand": 1.5, "Troll": 1.5},
    denial=1.0,  # a point kept from an opponent counts as much as its own
    curse_from=4.0,  # curses any character that gives an opponent a point (heuristic threat_point)
    common_from=5.0,
)
LEADER = 1.0  # weight of the victim's loss in a steal or a Troll, against the bot's own gain


def bid(bot: ZooPolicy, t: Table) -> tuple:
    return CURSE if should_curse(bot, t) else priced_bid(bot, t)


def steal(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Thief (F23): from the highest-scoring second bidder, the stone that hurts him most."""
    _, rel, what = option
    victim = t.seats[rel]
    hurt = 0.0
    if what != "coin":
        c = COLOURS.index(what)
        hurt = bot.values.stone_gain(t.me.score, t.me.stones, c) + LEADER * colour_loss(bot, victim, c, 1)
    return 100.0 * victim.score + hurt


def rob(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Brigand (F27): the leader, then the richest."""
    s = t.seats[option[1]]
    return 100.0 * s.score + s.common + 0.3 * s.silver


def troll(bot: ZooPolicy, t: Table, option: tuple) -> float:
    """Troll (F41): the colour whose loss sets the leader back most, less the bot's own loss."""
    c = colour_of(option)
    return LEADER * colour_loss(bot, leader(t), c) - colour_loss(bot, t.me, c)


def make(seed: int | None = None) -> ZooPolicy:
    choices = {"choose_loot": steal, "choose_seat": rob, ("choose_colour", "Troll"): troll}
    return ZooPolicy(STYLE, bid, choices, seed=seed)
