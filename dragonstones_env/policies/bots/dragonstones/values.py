"""What things are worth to the heuristic: a position, the stones, and each character.

A player's position is worth ``U[score]`` plus the *potential* of his stones (the best scoring
route among Magician any 4, Wizard one of each, Sorcerer 4 of a colour, discounted by the
stones still missing) plus his coins. A character is worth what winning it adds to that,
with the best use of its power: one small function per character, found in :data:`GAINS`
(or :data:`BANK_GAINS` for the powers that only move coins and stones between the bank and
the winner). What an opponent could score with a character (:data:`POINTS`) makes its
*threat*, which the bot denies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dragonstones_env.games.dragonstones import actions as A

from .params import PARAMS, Params
from .table import Seat, Table

Stones = tuple[int, int, int]
ANY_4 = tuple(p for p in A.PAYMENTS if sum(p) == 4)
ANY_5 = tuple(p for p in A.PAYMENTS if sum(p) == 5)
FOUR_OF_A_COLOUR = ((4, 0, 0), (0, 4, 0), (0, 0, 4))
PAIRS = ((2, 0, 0), (0, 2, 0), (0, 0, 2))
DRAGON_COLOUR = {"Red Dragon": 0, "Blue Dragon": 1, "Yellow Dragon": 2}  # F24
# The chance of winning from a position, what the search policies read at their horizon (docs/search.md):
# a softmax over the seats of these weights times (worth, fairy gold behind and in front of the screen,
# common gold, silver, amulets, Doppelganger held, black coins). Fitted as a conditional logit on 17,546
# positions (every auction's start) of 400 games of heuristic self-play at 3 to 6 players, the games of
# one in five seeds held out: held-out log loss 1.246, against 1.337 for the worth alone and 1.479 for
# even chances.
WIN_WEIGHTS = (0.053, 0.744, 0.226, 0.341, 0.297, 0.203, 0.367)


@dataclass(frozen=True)
class PayOrTake:
    """A "pay stones to score, or take coins" power (F15)."""

    payments: tuple[Stones, ...]  # the stone payments it accepts
    points: int  # scored by paying
    coin: str  # what is taken instead (a bank key) ...
    amount: int  # ... and how many


PAY_OR_TAKE = {
    "Magician": PayOrTake(ANY_4, 1, "silver", 3),  # F20
    "Wizard": PayOrTake(((1, 1, 1),), 1, "silver", 3),  # F21
    "Sorcerer": PayOrTake(FOUR_OF_A_COLOUR, 2, "common", 1),  # F22
    "Enchantress": PayOrTake(ANY_5, 2, "fairy", 1),  # F29
}


# Per parameters, the caches of pure functions every Values of them shares: potentials, gains, threats,
# and the bidding's win curves (bidding.win_curve, kept here as they depend on the parameters too).
_PURE: dict[Params, tuple[dict, dict, dict, dict]] = {}


def _pure_caches(params: Params) -> tuple[dict, dict, dict, dict]:
    caches = _PURE.get(params)
    if caches is None:
        if len(_PURE) >= 64:  # a parameter search makes many: keep the memory bounded
            _PURE.clear()
        caches = _PURE[params] = ({}, {}, {}, {})
    return caches


def pick(scores: list[float] | np.ndarray, rng: np.random.Generator) -> int:
    """Index of the best score; equally good ones broken by the bot's seeded generator."""
    scores = np.asarray(scores, dtype=float)
    best = scores.max()
    top = np.flatnonzero(scores >= best - 1e-9)
    return int(top[0]) if len(top) == 1 else int(top[rng.integers(len(top))])


class Values:
    """The valuation with one set of parameters, and its caches (one per bot)."""

    def __init__(self, params: Params = PARAMS, remember: bool = True):
        self.p = params
        self._bank_gain: dict[tuple, float] = {}  # this bot's own: its values depend on when a key was met
        # Across decisions, what a character's power and its threat are worth, by what they read of the
        # table (GAIN_READS, THREAT_READS): at each bid the bot values every character still face down,
        # and most of what they read is unchanged since its last bid. Pure functions of their keys, so
        # remembering them changes no decision; ``remember=False`` computes them afresh (the reference
        # the tests compare with). These caches and the potentials' are shared by every Values of the
        # same parameters in the process (_PURE): a vector env's tables each seat their own bots, which
        # would otherwise each value the same positions again.
        self.remember = remember
        self._potential, self._gains, self._threats, self.curves = _pure_caches(params)
        # Custom characters (#16) by observation label: set by HeuristicPolicy.use_deck.
        self.custom: dict[str, Callable] = {}

    # ------------------------------------------------------------------ a position
    def potential(self, stones: Stones, score: int) -> float:
        """Worth of holding these stones at this score: the best scoring route, discounted."""
        key = (*stones, score)
        v = self._potential.get(key)
        if v is not None:
            return v
        if score >= 3:
            self._potential[key] = 0.0
            return 0.0
        U, D = self.p.U, self.p.D
        r, b, y = stones
        total = r + b + y
        pt1 = U[score + 1] - U[score]
        pt2 = U[min(3, score + 2)] - U[score]
        missing = (r == 0) + (b == 0) + (y == 0)
        routes = sorted(
            (
                pt1 * D[max(0, 4 - total)],  # Magician (F20)
                pt1 * D[missing],  # Wizard (F21)
                pt2 * D[max(0, 4 - max(stones))],  # Sorcerer (F22)
            ),
            reverse=True,
        )
        v = routes[0] + self.p.second_route * routes[1] + self.p.stone_base * total
        self._potential[key] = v
        return v

    def worth(self, score: int, stones: Stones) -> float:
        return self.p.U[min(score, 3)] + self.potential(stones, min(score, 3))

    def win_logit(self, s: Seat) -> float:
        """``s``'s term in the softmax of the chances of winning (:data:`WIN_WEIGHTS`)."""
        w = WIN_WEIGHTS
        return (w[0] * self.worth(s.score, s.stones) + w[1] * (s.fairy + s.fairy_spent) + w[2] * s.common
                + w[3] * s.silver + w[4] * s.amulets + w[5] * s.doppelganger + w[6] * s.black)

    def stone_gain(self, seat_score: int, stones: Stones, colour: int, k: int = 1) -> float:
        s = list(stones)
        s[colour] += k
        return self.potential(tuple(s), seat_score) - self.potential(stones, seat_score)

    def pay_best(self, score: int, stones: Stones, payments, points: int) -> float:
        """Best gain of paying one of ``payments`` (or -inf if none can be paid) to score ``points``."""
        best = -np.inf
        before = self.worth(score, stones)
        for pay in payments:
            if pay[0] <= stones[0] and pay[1] <= stones[1] and pay[2] <= stones[2]:
                rest = (stones[0] - pay[0], stones[1] - pay[1], stones[2] - pay[2])
                best = max(best, self.worth(score + points, rest) - before)
        return best

    def harm(self, s: Seat) -> float:
        """Weight of ``s``'s loss: the more he leads, the more it counts."""
        return self.p.harm * (1 + s.score)

    def harm_share(self, t: Table, seat: Seat) -> float:
        return max((self.harm(s) for s in t.seats if s.rel != seat.rel), default=0.0)

    # ------------------------------------------------------------------ characters
    def gain(self, card: str, seat: Seat, t: Table, depth: int = 0) -> float:
        """What winning ``card`` is worth to ``seat`` (the best use of its power)."""
        bank_gain = BANK_GAINS.get(card)
        if bank_gain is None:
            if card in self.custom:
                return self.custom[card](self, seat, t)
            reads = GAIN_READS.get(card)
            if reads is None or not self.remember:
                return GAINS.get(card, _nothing)(self, seat, t, depth)
            key = (card, depth, reads(seat, t))
            v = self._gains.get(key)
            if v is None:
                v = GAINS[card](self, seat, t, depth)
                if len(self._gains) > 50000:
                    self._gains.clear()
                self._gains[key] = v
            return v
        bank, score, stones = t.bank, seat.score, seat.stones
        # The key holds whether the bank has each coin, not how many: a bank gain of this
        # position is computed once and reused (the shipped bot's behaviour; kept so games replay).
        key = (card, score, stones, t.bank_stones, bank["common"] > 0, bank["silver"] > 0, bank["amulets"] > 0,
               bank["fairy"] > 0)
        v = self._bank_gain.get(key)
        if v is not None:
            return v
        v = bank_gain(self, score, stones, t)
        if len(self._bank_gain) > 50000:
            self._bank_gain.clear()
        self._bank_gain[key] = v
        return v

    def points_with(self, card: str, s: Seat, t: Table, depth: int = 0) -> int:
        """Points ``s`` could score at once with ``card``'s power (for threats)."""
        points = POINTS.get(card)
        return 0 if points is None else points(self, s, t, depth)

    def threat(self, card: str, t: Table, depth: int = 0) -> float:
        """How much an opponent could make of ``card``: a game win counts far more than a point."""
        if card not in POINTS:
            return 0.0
        key = ("threat", card, depth)
        best = t.memo.get(key)
        if best is not None:
            return best
        if self.remember:
            reads = THREAT_READS.get(card)
            known = (card, depth, _others(t), None if reads is None or depth else tuple(getattr(t, reads)))
            best = self._threats.get(known)
            if best is not None:
                t.memo[key] = best
                return best
        best = 0.0
        for s in t.seats[1:]:
            pts = self.points_with(card, s, t, depth)
            if pts:
                v = self.p.threat_win if s.score + pts >= 3 else pts * self.p.threat_point * (1 + 0.5 * s.score)
                best = max(best, v)
        t.memo[key] = best
        if self.remember:
            if len(self._threats) > 50000:
                self._threats.clear()
            self._threats[known] = best
        return best

    def card_value(self, card: str, t: Table) -> float:
        """Worth of winning ``card`` when bidding: its gain plus a share of what it denies."""
        key = ("value", card)
        v = t.memo.get(key)
        if v is None:
            v = t.memo[key] = self.gain(card, t.me, t) + self.p.denial * self.threat(card, t)
        return v

    # ------------------------------------------------------------------ powers with a choice
    def troll(self, t: Table, seat: Seat, colour: int) -> float:
        """Worth to ``seat`` of a Troll on ``colour`` (F41): its own loss, the others' weighted loss."""
        v = 0.0
        for s in t.seats:
            st = list(s.stones)
            st[colour] = 0
            loss = self.potential(s.stones, s.score) - self.potential(tuple(st), s.score)
            v += -loss if s.rel == seat.rel else self.harm(s) * loss
        return v

    def merchant_plan(self, seat: Seat, t: Table, buy: bool = False):
        """Greedy purchases (F36): the total gain, or with ``buy`` the best next (colour, coin) or None."""
        p = self.p
        stones = list(seat.stones)
        bank = list(t.bank_stones)
        coins = {"common": seat.common, "fairy": seat.fairy, "silver": seat.silver}
        price = {"common": p.common, "fairy": p.fairy, "silver": 3 * p.silver}
        unit = {"common": 1, "fairy": 1, "silver": 3}
        total = 0.0
        for _ in range(6):
            pays = [c for c in ("silver", "common", "fairy") if coins[c] >= unit[c]]
            if not pays:
                break
            coin = min(pays, key=lambda c: price[c])
            gains = [self.stone_gain(seat.score, tuple(stones), c) if bank[c] else -np.inf for c in range(3)]
            colour = int(np.argmax(gains))
            net = gains[colour] - price[coin]
            if net <= 0:
                break
            if buy:
                return (colour, coin)
            total += net
            stones[colour] += 1
            bank[colour] -= 1
            coins[coin] -= unit[coin]
        return None if buy else total

    def take_value(self, card: str, t: Table) -> float:
        """Worth of the coins a pay-or-take power gives instead of points (F15); 0 for other powers."""
        power = PAY_OR_TAKE.get(card)
        if power is None:
            return 0.0
        return getattr(self.p, power.coin) * min(power.amount, t.bank[power.coin])


# ---------------------------------------------------------------------------- bank gains
# (v, score, stones, table) -> worth: powers that only move coins or stones from the bank.
BankGain = Callable[[Values, int, Stones, Table], float]


def _pay_or_take(card: str) -> BankGain:
    power = PAY_OR_TAKE[card]

    def gain(v: Values, score: int, stones: Stones, t: Table) -> float:
        return max(v.pay_best(score, stones, power.payments, power.points), v.take_value(card, t))

    return gain


def _apprentice(v: Values, score: int, stones: Stones, t: Table) -> float:
    """F40: a pair pays for a point; no pair, nothing."""
    gain = v.pay_best(score, stones, PAIRS, 1)
    return 0.0 if gain == -np.inf else gain


def _quack_wizard(v: Values, score: int, stones: Stones, t: Table) -> float:
    """F38: every stone for a point."""
    return v.worth(score + 1, (0, 0, 0)) - v.worth(score, stones)


def _dragon(colour: int) -> BankGain:
    def gain(v: Values, score: int, stones: Stones, t: Table) -> float:  # F24, F4: if the bank has one
        return v.stone_gain(score, stones, colour) if t.bank_stones[colour] else 0.0

    return gain


def _ancient_dragon(v: Values, score: int, stones: Stones, t: Table) -> float:
    """F26: the best colour the bank has."""
    return max((v.stone_gain(score, stones, c) for c in range(3) if t.bank_stones[c]), default=0.0)


def _coins(**amounts: int) -> BankGain:
    """A power that takes up to these amounts of coins, what the bank has (F4)."""

    def gain(v: Values, score: int, stones: Stones, t: Table) -> float:
        return sum(getattr(v.p, coin) * min(k, t.bank[coin]) for coin, k in amounts.items())

    return gain


def _fairy(v: Values, score: int, stones: Stones, t: Table) -> float:
    """F30: one fairy gold for good."""
    return v.p.fairy if t.bank["fairy"] else 0.0


def _goldsmith(v: Values, score: int, stones: Stones, t: Table) -> float:
    """F34: an amulet, if the bank has one."""
    return v.p.amulet if t.bank["amulets"] else 0.0


BANK_GAINS: dict[str, BankGain] = {
    **{card: _pay_or_take(card) for card in PAY_OR_TAKE},
    "Sorcerer's Apprentice": _apprentice,
    "Quack Wizard": _quack_wizard,
    **{card: _dragon(colour) for card, colour in DRAGON_COLOUR.items()},
    "Ancient Dragon": _ancient_dragon,
    "Alchemist": _coins(common=3),  # F25
    "Dwarf (4)": _coins(silver=4),  # F6
    "Dwarf (5)": _coins(silver=5),
    "Gnome": _coins(common=2, silver=2),  # F32
    "Fairy": _fairy,
    "Goldsmith": _goldsmith,
}


# ---------------------------------------------------------------------------- other gains
# (v, seat, table, depth) -> worth; ``depth`` counts the powers used through another (Ghost, Imp, Goblin).
Gain = Callable[[Values, Seat, Table, int], float]


def _nothing(v: Values, seat: Seat, t: Table, depth: int) -> float:
    return 0.0


def _witch(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F19: a black coin, worth more with a dangerous character still face down to curse (F12)."""
    threats = [v.threat(c, t, depth + 1) for c in t.face_down] if depth == 0 else []
    return v.p.black + 0.3 * max(threats, default=0.0)


def _thief(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F23: the best stone, taken from someone."""
    gains = [v.stone_gain(seat.score, seat.stones, c) for c in range(3)]
    return 0.8 * max(gains) + v.harm_share(t, seat) * 2.0


def _brigand(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F27: the common gold and silver of the best victim."""
    best = 0.0
    for s in t.seats:
        if s.rel != seat.rel:
            loot = v.p.common * s.common + v.p.silver * s.silver
            best = max(best, loot * (1.0 + v.harm(s)))
    return best


def _troll(v: Values, seat: Seat, t: Table, depth: int) -> float:
    return max(v.troll(t, seat, c) for c in range(3))


def _doppelganger(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F28: worth holding once."""
    return 0.0 if seat.doppelganger else v.p.doppelganger


def _merchant(v: Values, seat: Seat, t: Table, depth: int) -> float:
    return v.merchant_plan(seat, t)


def _necromancer(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F37: a point (its price, the fairy gold bid, is counted when bidding)."""
    return v.worth(seat.score + 1, seat.stones) - v.worth(seat.score, seat.stones)


def _rainbow_dragon(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F39: about one stone of the bank's mix, and a little more for drawing on."""
    bs = t.bank_stones
    total = sum(bs)
    if total == 0:
        return 0.0
    avg = sum(bs[c] / total * v.stone_gain(seat.score, seat.stones, c) for c in range(3))
    return 1.2 * avg


def _two_headed_dragon(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F42: the expected gain of two stones drawn from up to 2 of each colour."""
    score, stones = seat.score, seat.stones
    bag = [min(2, s) for s in t.bank_stones]
    total = sum(bag)
    if total == 0:
        return 0.0
    if total == 1:
        return v.stone_gain(score, stones, bag.index(1))
    before = v.potential(stones, score)
    gain = 0.0
    for a in range(3):
        if not bag[a]:
            continue
        pa = bag[a] / total
        bag[a] -= 1
        for b in range(3):
            if bag[b]:
                s = list(stones)
                s[a] += 1
                s[b] += 1
                gain += pa * bag[b] / (total - 1) * (v.potential(tuple(s), score) - before)
        bag[a] += 1
    return gain


def _ghost(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F31: the best character already auctioned this turn, but a Ghost."""
    if depth >= 2:
        return 0.0
    return max((v.gain(c, seat, t, depth + 1) for c in t.played if c != "Ghost"), default=0.0)


def _imp(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F35: the best character still face down."""
    if depth >= 2:
        return 0.0
    return max((v.gain(c, seat, t, depth + 1) for c in t.face_down), default=0.0)


def _goblin(v: Values, seat: Seat, t: Table, depth: int) -> float:
    """F33: a random character still face down."""
    if depth >= 2:
        return 0.0
    options = [v.gain(c, seat, t, depth + 1) for c in t.face_down]
    return float(np.mean(options)) if options else 0.0


GAINS: dict[str, Gain] = {
    "Witch": _witch,
    "Thief": _thief,
    "Brigand": _brigand,
    "Troll": _troll,
    "Doppelganger": _doppelganger,
    "Merchant": _merchant,
    "Necromancer": _necromancer,
    "Rainbow Dragon": _rainbow_dragon,
    "Two-headed Dragon": _two_headed_dragon,
    "Ghost": _ghost,
    "Imp": _imp,
    "Goblin": _goblin,
}


# What each gain of GAINS reads of the table, as a key: ``Values.gain`` remembers a gain by it across
# decisions. Keys name every input the function reads (beside the parameters, fixed per Values, and the
# depth, in the key); a gain that reads other characters' gains (Ghost, Imp, Goblin) has none, as
# those read the bank gains' cache, whose values depend on when a key was first met.
def _seat_key(seat: Seat, t: Table) -> tuple:
    return (seat.score, seat.stones)


GAIN_READS: dict[str, Callable[[Seat, Table], tuple]] = {
    "Witch": lambda seat, t: (tuple(t.face_down), _others(t)),  # threats at depth 1 (Ghost, Imp: none)
    "Thief": lambda seat, t: (seat.rel, seat.score, seat.stones, tuple(s.score for s in t.seats)),
    "Brigand": lambda seat, t: (seat.rel, tuple((s.common, s.silver, s.score) for s in t.seats)),
    "Troll": lambda seat, t: (seat.rel, tuple((s.score, s.stones) for s in t.seats)),
    "Merchant": lambda seat, t: (seat.score, seat.stones, seat.common, seat.fairy, seat.silver, t.bank_stones),
    "Rainbow Dragon": lambda seat, t: (seat.score, seat.stones, t.bank_stones),
    "Two-headed Dragon": lambda seat, t: (seat.score, seat.stones, t.bank_stones),
    "Necromancer": _seat_key,
}


def _others(t: Table) -> tuple:
    """What a threat reads of the opponents: their scores and stones (once per decision)."""
    key = t.memo.get("others")
    if key is None:
        key = t.memo["others"] = tuple((s.score, s.stones) for s in t.seats[1:])
    return key


# ---------------------------------------------------------------------------- points an opponent could score
# (v, seat, table, depth) -> points ``seat`` scores at once with the power; missing: none.
Points = Callable[[Values, Seat, Table, int], int]
POINTS: dict[str, Points] = {
    "Magician": lambda v, s, t, depth: int(sum(s.stones) >= 4),  # F20
    "Wizard": lambda v, s, t, depth: int(min(s.stones) >= 1),  # F21
    "Sorcerer": lambda v, s, t, depth: 2 * int(max(s.stones) >= 4),  # F22
    "Enchantress": lambda v, s, t, depth: 2 * int(sum(s.stones) >= 5),  # F29
    "Sorcerer's Apprentice": lambda v, s, t, depth: int(max(s.stones) >= 2),  # F40
    "Quack Wizard": lambda v, s, t, depth: 1,  # F38: even with no stones
    "Necromancer": lambda v, s, t, depth: 1,  # F37
    # F31, F35: what the character it copies scores (one level deep)
    "Ghost": lambda v, s, t, depth: 0 if depth >= 1 else max(
        (v.points_with(c, s, t, depth + 1) for c in t.played if c != "Ghost"), default=0),
    "Imp": lambda v, s, t, depth: 0 if depth >= 1 else max(
        (v.points_with(c, s, t, depth + 1) for c in t.face_down), default=0),
}
# The Table field a threat also reads at depth 0 (the characters it copies), beside the opponents.
THREAT_READS = {"Ghost": "played", "Imp": "face_down"}
