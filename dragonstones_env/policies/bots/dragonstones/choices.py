"""Every decision of the heuristic but the bids: what it does with the powers it wins.

Each decision kind (or kind and asking card) has a scorer in :data:`CHOOSERS` that scores every
legal option; the bot
takes the best (ties broken by its seeded generator). A choice maximises the bot's value minus
a share of the harm it does to opponents, weighted towards the leaders (Troll, Thief, Brigand);
the Rainbow Dragon draws again while the expected stone is worth more than the risk to the
stones drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dragonstones_env.games.dragonstones import actions as A
from dragonstones_env.games.dragonstones.cards import COLOURS

from .table import Table, for_decision
from .values import BANK_GAINS, PAY_OR_TAKE, Values, pick


@dataclass
class Memory:
    """What the bot remembers between decisions."""

    rainbow_named: int | None = None  # the colour it named at its last Rainbow Dragon (F39)


# (values, table, options, memory) -> a score per option
Chooser = Callable[[Values, Table, list[tuple], Memory], list[float]]


def choose(values: Values, t: Table, legal: np.ndarray, rng: np.random.Generator, memory: Memory) -> int:
    """The best legal action of a non-bid decision; equally good ones drawn with ``rng``."""
    options = [A.decode(int(a), 0, t.n) for a in legal]
    chooser = for_decision(CHOOSERS, t)
    scores = [0.0] * len(options) if chooser is None else chooser(values, t, options, memory)
    i = pick(scores, rng)
    if chooser is _rainbow_colour:  # remembered for the draws that follow (F39)
        memory.rainbow_named = COLOURS.index(options[i][1])
    return int(legal[i])


def _yes_if(yes: bool, options: list[tuple], word: str = "yes") -> list[float]:
    """1 for the option named ``word`` if ``yes``, else for the others."""
    return [float(yes) if o[0] == word else float(not yes) for o in options]


# ---------------------------------------------------------------------------- paying for points
def _pay_or_take(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F15, F40: a payment by the position it leaves; taking by the coins."""
    me, card = t.me, t.card
    before = v.worth(me.score, me.stones)
    points = PAY_OR_TAKE[card].points if card in PAY_OR_TAKE else 1  # else the Apprentice's point (F40)
    out = []
    for option in options:
        if option[0] == "pay":
            pay = option[1:]
            rest = (me.stones[0] - pay[0], me.stones[1] - pay[1], me.stones[2] - pay[2])
            out.append(v.worth(me.score + points, rest) - before)
        else:
            out.append(v.take_value(card, t))
    return out


def _necromancer(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F37: pay the coins bid for a point when the point is worth the fairy gold lost for good."""
    me = t.me
    slot = max(0, t.auctions_held - 1)
    fairy = min(t.my_bid(slot)["fairy"], me.fairy_spent)
    point = v.worth(me.score + 1, me.stones) - v.worth(me.score, me.stones)
    return _yes_if(point > v.p.fairy * fairy, options)


def _doppelganger(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F28: play it when a second use of the power is worth more than keeping it."""
    card, me = t.card, t.me
    if card is None:
        return _yes_if(False, options)
    first = v.gain(card, me, t)
    if card in PAY_OR_TAKE:
        second = _second_scoring(v, card, t)
    elif card in BANK_GAINS:  # the bank pays again
        second = first
    else:
        second = 0.6 * first
    return _yes_if(second >= v.p.doppelganger, options)


def _second_scoring(v: Values, card: str, t: Table) -> float:
    """Gain of a second use of a pay-or-take power, after the best first use."""
    me = t.me
    power = PAY_OR_TAKE[card]
    best, after = -np.inf, None
    before = v.worth(me.score, me.stones)
    for pay in power.payments:
        if all(pay[i] <= me.stones[i] for i in range(3)):
            rest = tuple(me.stones[i] - pay[i] for i in range(3))
            gain = v.worth(me.score + power.points, rest) - before
            if gain > best:
                best, after = gain, rest
    if after is None:
        return v.gain(card, me, t)  # the coins again
    if me.score + power.points >= 3:
        return 0.0
    return v.pay_best(me.score + power.points, after, power.payments, power.points)


# ---------------------------------------------------------------------------- taking from others
def _thief(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F23: the stone it needs most, from the victim whose loss counts most."""
    me = t.me
    out = []
    for _, rel, what in options:
        victim = t.seats[rel]
        if what == "coin":
            out.append(v.p.common * (1 + v.harm(victim)) + 0.01 * victim.score)
            continue
        c = COLOURS.index(what)
        st = list(victim.stones)
        st[c] -= 1
        loss = v.potential(victim.stones, victim.score) - v.potential(tuple(st), victim.score)
        out.append(v.stone_gain(me.score, me.stones, c) + v.harm(victim) * loss)
    return out


def _brigand(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F27: the richest in common gold and silver, the leaders' loss weighted up."""
    out = []
    for option in options:
        s = t.seats[option[1]]
        loot = v.p.common * s.common + v.p.silver * s.silver
        out.append(loot * (1 + v.harm(s)) + 0.01 * s.score)
    return out


def _troll(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F41: the colour whose loss hurts the others most and the bot least."""
    return [v.troll(t, t.me, COLOURS.index(o[1])) for o in options]


# ---------------------------------------------------------------------------- stones
def _take_colour(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F26 (and a custom card's stone of a chosen colour): the colour it needs most."""
    me = t.me
    return [v.stone_gain(me.score, me.stones, COLOURS.index(o[1])) for o in options]


def _rainbow_colour(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F39: the name that makes one draw worth most (the other colours' stones, weighted)."""
    me, bs = t.me, t.bank_stones
    total = sum(bs)

    def one_draw(named: int) -> float:
        return sum(bs[c] / total * v.stone_gain(me.score, me.stones, c) for c in range(3) if c != named)

    return [one_draw(COLOURS.index(o[1])) for o in options]


def _rainbow_continue(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F39: draw again while the expected stone is worth more than the risk to the stones drawn."""
    me, bs, pend = t.me, t.bank_stones, t.pending
    total = sum(bs)
    go = False
    if total:
        named = memory.rainbow_named
        if named is None or pend[named] > 0:  # not remembered: the likeliest named colour that was not drawn
            candidates = [c for c in range(3) if pend[c] == 0] or [0]
            named = max(candidates, key=lambda c: bs[c])
        p_bust = bs[named] / total
        held = tuple(me.stones[c] + pend[c] for c in range(3))
        at_risk = v.potential(held, me.score) - v.potential(me.stones, me.score)
        more = sum(bs[c] / total * v.stone_gain(me.score, held, c) for c in range(3) if c != named)
        go = more > p_bust * at_risk + 1e-9
    return _yes_if(go, options, "draw")


def _merchant(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F36: the next purchase of the greedy plan, or stop when it buys nothing more."""
    plan = v.merchant_plan(t.me, t, buy=True)
    return [float(plan is not None and o[0] == "buy" and (COLOURS.index(o[1]), o[2]) == plan)
            + 0.5 * (plan is None and o[0] == "stop") for o in options]


# ---------------------------------------------------------------------------- characters through others
def _ghost(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F31: the character whose power is worth most now."""
    return [v.gain(o[1], t.me, t, 1) for o in options]


def _imp(v: Values, t: Table, options: list[tuple], memory: Memory) -> list[float]:
    """F35: the pick also leaves the turn, so what it denies counts too."""
    return [v.gain(o[1], t.me, t, 1) + v.p.denial * v.threat(o[1], t, 1) for o in options]


# By decision kind; a (kind, card) row where one character's choice of that kind means something
# else (the Troll's colour is a curse, the Rainbow Dragon's a name). Custom cards use the kind rows.
CHOOSERS: dict[str | tuple[str, str], Chooser] = {
    "pay_or_take": _pay_or_take,
    "choose_payment": _pay_or_take,
    "choose_loot": _thief,
    "choose_colour": _take_colour,
    ("choose_colour", "Rainbow Dragon"): _rainbow_colour,
    ("choose_colour", "Troll"): _troll,
    "draw_or_stop": _rainbow_continue,
    "choose_seat": _brigand,
    "choose_card": _ghost,
    ("choose_card", "Imp"): _imp,
    "buy_or_stop": _merchant,
    "yes_no": _necromancer,
    ("yes_no", "Doppelganger"): _doppelganger,
}
