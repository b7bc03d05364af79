"""What the zoo bots share: one policy shell, card prices in gold, and turning a price into a bid.

A zoo bot is a :class:`ZooPolicy` put together from data and a few functions:

* a :class:`Style` (per-card weights, the share of a card's price it bids, when it adds
  common gold or an amulet, how it tilts the valuation), written at the top of its module;
* a bid function (the heart of the style) and, for the power decisions its style changes,
  scoring functions by decision kind. Every other power decision is the heuristic's.

The worth of points, stones and coins is the heuristic's valuation (:mod:`..values`), with the
style's parameters: a bot reads the observation only as the heuristic's :class:`..table.Table`,
read from the game's ``observation.decode``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from dragonstones_env.games.dragonstones import actions as A
from dragonstones_env.games.dragonstones.cards import COLOURS
from dragonstones_env.games.dragonstones.env import raw_env
from dragonstones_env.policies import base

from ..bidding import NO_BID
from ..params import PARAMS, Params
from ..policy import HeuristicPolicy
from ..table import Seat, Table, for_decision, observe

GOLD = PARAMS.common  # the heuristic's worth of one gold coin: divides its utilities into coins
SCORING = ("Magician", "Wizard", "Sorcerer", "Enchantress", "Sorcerer's Apprentice", "Quack Wizard", "Necromancer")


@dataclass(frozen=True)
class Style:
    """A bot's temperament, as data."""

    name: str
    fraction: float  # share of a character's price (in gold) it bids
    card_weight: dict[str, float] = field(default_factory=dict)  # price multiplier per character (missing: 1)
    denial: float = 0.0  # share of an opponent's threat with a character (Values.threat) added to its price
    common_from: float = 6.0  # least price (gold) for which common gold, which is gone for good, joins the bid
    amulet_from: float = 12.0  # least price (gold) worth doubling with an amulet (lost to the bank, F11)
    curse_from: float = math.inf  # least threat (heuristic utility) worth the black coin (F12)
    tie_silver: float = 1.0  # silver bid in a tie-break per gold of price (F14)
    jitter: float = 0.15  # chance of one coin more, so that copies of the bot rarely tie
    params: Params = PARAMS  # the heuristic's valuation, as this style tilts it


BidFn = Callable[["ZooPolicy", Table], tuple]
ScoreFn = Callable[["ZooPolicy", Table, tuple], float]


class ZooPolicy(base.Policy):
    """``act(observation_dict) -> action`` for one style; never a masked action."""

    game = raw_env.metadata["name"]  # the game it plays: seating it at another game's table can be refused

    def __init__(self, style: Style, bid: BidFn, choices: dict[str | tuple[str, str], ScoreFn] | None = None,
                 seed: int | None = None):
        # ``choices``: a scorer per decision kind, or per (kind, asking card); see table.for_decision.
        self.style = style
        self.bid = bid
        self.choices = choices or {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        # The heuristic prices points, stones and coins with the style's parameters, and takes the
        # power decisions the style leaves alone; seeded too, so the whole bot replays per seed.
        self.heuristic = HeuristicPolicy(seed=seed, params=self.style.params)
        self.values = self.heuristic.values
        self.fallbacks = 0  # times a computed action was masked and the empty action was used instead

    def sit(self, table: base.Table) -> ZooPolicy:
        """A new game at ``table``; a custom deck's characters valued as the heuristic does
        (``HeuristicPolicy.sit``)."""
        super().sit(table)
        self.heuristic.sit(replace(table, seed=None))  # reset(seed) above has reseeded it
        return self

    def __repr__(self) -> str:
        return f"ZooPolicy({self.style.name!r}, seed={self.seed})"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        mask = observation["action_mask"]
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError(f"{self.style.name} bot: no legal action in this observation's action_mask")
        t = observe(observation["observation"])
        kind = t.decision
        if kind == "bid":
            action = A.encode(self.bid(self, t), 0, t.n)
        elif kind == "tiebreak":
            action = A.encode(tiebreak(self, t), 0, t.n)
        elif (score := for_decision(self.choices, t)) is not None:
            options = [A.decode(int(a), 0, t.n) for a in legal]
            action = int(legal[self.pick([score(self, t, o) for o in options])])
        else:
            action = self.heuristic.decide(t, mask)
        if not mask[action]:
            self.fallbacks += 1
            action = int(legal[0])  # the empty fist, or the first option listed
        return int(action)

    def pick(self, scores: list[float]) -> int:
        """Index of the best score; equal scores broken by the seeded generator."""
        s = np.asarray(scores, dtype=float)
        top = np.flatnonzero(s >= s.max() - 1e-9)
        return int(top[0]) if len(top) == 1 else int(top[self.rng.integers(len(top))])


# ---------------------------------------------------------------------------- prices
def price(bot: ZooPolicy, card: str | None, t: Table) -> float:
    """What winning ``card`` is worth to the bot, in gold: its gain (the best use of the power,
    priced by the heuristic) times the style's weight, plus the style's share of what it denies."""
    if card is None:
        return 0.0
    key = ("zoo-price", card)
    v = t.memo.get(key)
    if v is None:
        style, values = bot.style, bot.values
        util = values.gain(card, t.me, t) * style.card_weight.get(card, 1.0)
        if style.denial:
            util += style.denial * values.threat(card, t)
        v = t.memo[key] = max(0.0, util) / GOLD
    return v


def later_prices(bot: ZooPolicy, t: Table) -> list[float]:
    """Prices of the characters still face down this turn."""
    return [price(bot, c, t) for c in t.face_down]


def points_now(bot: ZooPolicy, card: str | None, seat: Seat, t: Table) -> int:
    """Points ``seat`` would score at once with ``card`` (F20-F22, F29, F37, F38, F40)."""
    return 0 if card is None else bot.values.points_with(card, seat, t)


def wins_now(bot: ZooPolicy, card: str | None, seat: Seat, t: Table) -> bool:
    """Would winning ``card`` win ``seat`` the game at once (F17)?"""
    return seat.score + points_now(bot, card, seat, t) >= 3


def leader(t: Table, rels: list[int] | None = None) -> Seat:
    """The opponent closest to winning: the highest score, then the most stones."""
    seats = [t.seats[r] for r in rels] if rels else t.seats[1:]
    return max(seats, key=lambda s: (s.score, sum(s.stones), -s.rel))


# ---------------------------------------------------------------------------- bids
def ceiling(t: Table) -> int:
    """The least bid value no opponent can match: his fairy gold and common gold, doubled if he
    holds an amulet (F10), plus one. Read exactly in recall mode; in table mode (F43) from the
    estimate of what is behind his screen, with a margin of two coins."""
    top = 0
    for s in t.seats[1:]:
        coins = min(s.fairy, A.FAIRY_CAP) + min(s.common, A.COMMON_CAP) + (0 if s.known else 2)
        top = max(top, coins * (2 if s.amulets else 1))
    return top + 1


def gold_bid(bot: ZooPolicy, t: Table, gold: float, value: float, fairy_cap: int | None = None) -> tuple:
    """A gold bid worth about ``gold`` on a character priced ``value``, within the holdings (F10).

    Never more than it takes to outbid every opponent's whole purse. Fairy gold first, as it
    comes back at the end of the turn (F9), up to ``fairy_cap``; common gold, gone for good
    (F11), only for a price of ``common_from`` or more; an amulet for a price of ``amulet_from``
    or more. A seeded coin more now and then, so that copies rarely tie.
    """
    me, style = t.me, bot.style
    want = math.ceil(gold - 1e-9)
    if want <= 0:
        return NO_BID
    if bot.rng.random() < style.jitter:
        want += 1
    amulet = int(me.amulets > 0 and value >= style.amulet_from)
    want = min(want, math.ceil(ceiling(t) / (2 if amulet else 1)))
    fairy_left = min(me.fairy, A.FAIRY_CAP)
    fairy = min(want, fairy_left if fairy_cap is None else max(0, min(fairy_cap, fairy_left)))
    common = min(want - fairy, me.common, A.COMMON_CAP) if value >= style.common_from else 0
    return ("bid", fairy, common, 0, amulet if fairy + common > 0 else 0)


def fairy_share(bot: ZooPolicy, t: Table, value: float) -> int:
    """This character's share of the fairy gold left this turn, by price against those still face
    down: fairy gold unspent at the end of the turn is wasted, as all of it comes back (F9)."""
    rest = sum(v for v in later_prices(bot, t) if v > 0)
    return int(t.me.fairy * value / (value + rest)) if value > 0 else 0


def priced_bid(bot: ZooPolicy, t: Table) -> tuple:
    """The value bidder's rule: the style's share of the price, or the character's share of the
    fairy gold left if more, keeping back what the dearer characters still face down will want."""
    value = price(bot, t.card, t)
    cap = t.me.fairy - fairy_reserve(bot, t, value)
    gold = max(bot.style.fraction * value, fairy_share(bot, t, value))
    return gold_bid(bot, t, gold, value, fairy_cap=cap)


def all_in(t: Table) -> tuple:
    """Everything behind the screen, doubled if it can be: for a character that wins the game."""
    me = t.me
    fairy, common = min(me.fairy, A.FAIRY_CAP), min(me.common, A.COMMON_CAP)
    return ("bid", fairy, common, 0, int(me.amulets > 0 and fairy + common > 0))


def fairy_reserve(bot: ZooPolicy, t: Table, value: float) -> int:
    """Fairy gold to keep for the dearer characters still face down this turn (F9: the rest comes back)."""
    frac = bot.style.fraction
    return math.ceil(sum(frac * v for v in later_prices(bot, t) if v > value))


def should_curse(bot: ZooPolicy, t: Table) -> bool:
    """Spend the black coin here (F12): an opponent could score with this character, at least as
    much as with any still to come, and the bot itself could not win with it."""
    if not t.me.black or t.card is None or wins_now(bot, t.card, t.me, t):
        return False
    threat = bot.values.threat(t.card, t)
    if threat < bot.style.curse_from or threat <= bot.values.gain(t.card, t.me, t):
        return False
    later = max((bot.values.threat(c, t) for c in t.face_down), default=0.0)
    return threat >= later or not t.face_down


def tiebreak(bot: ZooPolicy, t: Table) -> tuple:
    """Silver in proportion to the price (F14), doubled by an amulet on a dear character."""
    me, style = t.me, bot.style
    value = price(bot, t.card, t)
    silver = min(me.silver, A.SILVER_CAP, math.ceil(style.tie_silver * value - 1e-9))
    if wins_now(bot, t.card, me, t):
        silver = min(me.silver, A.SILVER_CAP)
    if silver <= 0:
        return ("tiebreak", 0, 0)
    return ("tiebreak", silver, int(me.amulets > 0 and value >= style.amulet_from))


# ---------------------------------------------------------------------------- power decisions
def colour_loss(bot: ZooPolicy, seat: Seat, colour: int, k: int | None = None) -> float:
    """What ``seat`` loses by giving up ``k`` stones of ``colour`` (all of them if ``k`` is None)."""
    st = list(seat.stones)
    st[colour] = 0 if k is None else max(0, st[colour] - k)
    return bot.values.potential(seat.stones, seat.score) - bot.values.potential(tuple(st), seat.score)


def colour_of(option: tuple) -> int:
    """The colour index of a ``("colour", name)`` option (Ancient Dragon, Rainbow Dragon, Troll)."""
    return COLOURS.index(option[1])
