"""How the heuristic bids (F10-F14), given what characters are worth to it and what it sees.

* **Opponents.** Each is modelled as bidding nothing with the rate at which he has bid nothing
  so far this turn (from the revealed bids; a prior at the turn's start), and otherwise
  uniformly over what he holds (coins read in recall mode, estimated in table mode, F43).
  That gives the chance of winning with each bid value; an opponent's black coin lowers it.
* **Fairy gold** is priced by a per-turn shadow price: the lowest price at which the bids the
  bot would like to make on this character and those still face down fit in the fairy gold
  left (F9: it comes back, so late in a turn it is nearly free). Common gold and amulets are
  priced as the permanent coins they are; the bid maximises ``P(win) x value - cost``, with a
  little seeded noise so that copies of the bot rarely tie.
* **Black coin.** Cursed (F12) on a character that would let an opponent win, or on the most
  dangerous character of the turn when no worse one is still face down.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dragonstones_env.games.dragonstones import actions as A

from .params import Params
from .table import Table
from .values import Values, pick

LAMBDAS = np.array([0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.7, 2.2, 3.0, 4.0, 6.0])  # fairy prices tried
VMAX = 2 * max(A.FAIRY_CAP + A.COMMON_CAP, A.SILVER_CAP)  # the highest bid value (F10, F14)
_POSITIVE = (np.arange(VMAX + 1) > 0).astype(float)  # P(a bid of nothing < v)
_ONES = np.ones(VMAX + 1)  # the win curve's factors before any opponent
_ONES.flags.writeable = False
NO_BID = ("bid", 0, 0, 0, 0)
CURSE = ("bid", 0, 0, 1, 0)  # the black coin alone: cursed whatever the others bid (F12)


@lru_cache(maxsize=4096)
def uniform_cdfs(coins: int, common: int, amulet: bool) -> tuple[np.ndarray, np.ndarray]:
    """P(value < v) and P(value <= v), v = 0..VMAX, of a bid uniform over the holdings:
    ``coins`` fairy gold (or silver, in a tie-break) and ``common`` gold, doubled by an amulet half the time."""
    f = np.full(coins + 1, 1.0 / (coins + 1))
    c = np.full(common + 1, 1.0 / (common + 1))
    s = np.convolve(f, c)
    pmf = np.zeros(VMAX + 1)
    if amulet:
        pmf[: len(s)] += 0.5 * s
        pmf[0 : 2 * len(s) - 1 : 2] += 0.5 * s
    else:
        pmf[: len(s)] = s
    le = np.minimum(np.cumsum(pmf), 1.0)
    lt = le - pmf
    return lt, le


def win_curve(values: Values, t: Table) -> np.ndarray:
    """P(winning the auction) for each bid value 0..VMAX against the opponents' bids."""
    p = values.p
    done = max(0, t.auctions_held - 1)  # this turn's auctions with revealed bids
    # each seat's bids of nothing this turn (Python lists: a few numbers, cheaper than numpy calls)
    zeros = [col.count(0.0) for col in zip(*t.bids["value"][:done, : t.n].tolist(), strict=True)] if done else None
    scoring = p.zero_if_scoring != 1.0 and t.card is not None
    opponents = tuple(
        (s.fairy, s.common, s.amulets > 0, s.black > 0, zeros[s.rel] if zeros else 0,
         scoring and values.points_with(t.card, s, t) > 0)
        for s in t.seats[1:]
    )
    curves = values.curves  # by (opponents, done): shared by the bots of these parameters (Values)
    win = curves.get((opponents, done))
    if win is None:
        if len(curves) >= 20000:
            curves.clear()
        win = curves[(opponents, done)] = _win_curve(p, opponents, done)
    return win


def _win_curve(p: Params, opponents: tuple, done: int) -> np.ndarray:
    """The win curve against ``opponents`` (fairy, common, amulet, black coin, bids of nothing this
    turn, could score with the character) after ``done`` auctions. Read only: it is shared
    (:attr:`.values.Values.curves`)."""
    lt = le = _ONES  # 1 x a is a, bit for bit: the first opponent's factors are taken as they are
    clean = 1.0
    for fairy, common, amulet, black, zero, scores in opponents:
        a, b = _opponent_cdfs(p.zero_prior, p.zero_weight, p.zero_if_scoring, fairy, common, amulet, zero, scores,
                              done)
        lt, le = (a, b) if lt is _ONES else (lt * a, le * b)
        if black:
            clean *= 1.0 - p.opp_black_use
    win = (lt + p.tie_share * (le - lt)) * clean
    win[0] = 0.0
    return win


@lru_cache(maxsize=8192)
def _opponent_cdfs(prior: float, weight: float, if_scoring: float, fairy: int, common: int, amulet: bool, zero: int,
                   scores: bool, done: int) -> tuple[np.ndarray, np.ndarray]:
    """One opponent's P(bid < v) and P(bid <= v): nothing with the rate at which he has bid nothing
    (``prior`` worth ``weight`` auctions, ``zero`` of ``done``), else uniform over his holdings.
    Cached apart from the whole curve: a curve changes with any opponent, each one's factor
    seldom does. Read only: it is shared."""
    a, b = uniform_cdfs(min(fairy, A.FAIRY_CAP), min(common, A.COMMON_CAP), amulet)
    z = (prior * weight + zero) / (weight + done)
    if scores:
        z *= if_scoring
    if z > 0:
        a = (1 - z) * a + z * _POSITIVE
        b = (1 - z) * b + z
    return a, b


def fairy_price(values: Values, t: Table, win: np.ndarray, current: float) -> float:
    """The per-turn shadow price of fairy gold: the lowest price at which the bids wanted on
    this character and the face-down ones fit in the fairy left (F9, F16)."""
    fairy = min(t.me.fairy, A.FAIRY_CAP)
    worths = [current] + [values.card_value(c, t) for c in t.face_down]
    vals = np.array([v for v in worths if v > 0])
    if fairy == 0 or len(vals) == 0:
        return 0.0
    curve = win[: fairy + 1]
    # (lambda, card, bid): utility of each bid at each price
    util = vals[None, :, None] * curve[None, None, :] - _fairy_costs(fairy)
    spend = util.argmax(axis=2).sum(axis=1)
    ok = np.flatnonzero(spend <= fairy)
    return float(LAMBDAS[ok[0]]) if len(ok) else float(LAMBDAS[-1])


def curses(values: Values, t: Table) -> bool:
    """Put the black coin alone on this character (F12)? On one an opponent could win the game
    with or that threatens more than any still face down, and never on one that wins the bot the game."""
    me, card = t.me, t.card
    mine = values.gain(card, me, t)
    threat = values.threat(card, t)
    later = max((values.threat(c, t) for c in t.face_down), default=0.0)
    if me.score + values.points_with(card, me, t) >= 3:
        return False
    if threat >= values.p.curse_min and threat >= later and threat > mine:
        return True
    return not t.face_down and threat > mine and threat > 0  # the last chance this turn (F9)


def _choose(eu: np.ndarray, value: float, p: Params, rng: np.random.Generator) -> int:
    """The best of the expected utilities; with jitter, a seeded spread among the near-equal."""
    if p.jitter:
        return int((eu + rng.random(len(eu)) * (p.jitter * value)).argmax())
    return pick(eu, rng)


def bid(values: Values, t: Table, rng: np.random.Generator) -> tuple:
    """The gold bid (F10) maximising ``P(win) x value - cost``."""
    me, card, p = t.me, t.card, values.p
    fairy, common = min(me.fairy, A.FAIRY_CAP), min(me.common, A.COMMON_CAP)
    amulet = 1 if me.amulets else 0
    if me.black and card is not None and curses(values, t):
        return CURSE
    if card is None:
        return NO_BID
    value = values.card_value(card, t)
    if value <= 0:
        return NO_BID
    win = win_curve(values, t)
    lam = fairy_price(values, t, win, value)
    cc = p.common
    f_used, c_used, values_bid = _bids(fairy, common, lam <= cc)  # the cheaper coin first
    cost = lam * f_used + cc * c_used
    gain = value
    if card == "Necromancer":  # F37: the fairy bid is paid for good when scoring
        gain = np.full(len(f_used), value) - p.fairy * f_used
    candidates = []
    for a in range(amulet + 1):
        eu = win[values_bid[a]] * gain - cost - a * p.amulet
        if a:
            eu[0] = -np.inf  # an amulet on an empty fist is wasted
        candidates.append(eu)
    a, s = divmod(_choose(np.concatenate(candidates), value, p, rng), len(f_used))
    return ("bid", int(f_used[s]), int(c_used[s]), 0, a)


@lru_cache(maxsize=1024)
def _bids(fairy: int, common: int, fairy_first: bool) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """Every bid of 0..fairy+common coins, the coin paid first taken first: the fairy and common gold
    of each, and its value without and with an amulet (F11, at most VMAX). Read only: it is shared."""
    sums = np.arange(fairy + common + 1)
    if fairy_first:
        f_used = np.minimum(sums, fairy)
        c_used = sums - f_used
    else:
        c_used = np.minimum(sums, common)
        f_used = sums - c_used
    out = f_used, c_used, (np.minimum(sums, VMAX), np.minimum(sums * 2, VMAX))
    for array in (*out[:2], *out[2]):
        array.flags.writeable = False
    return out


@lru_cache(maxsize=64)
def _fairy_costs(fairy: int) -> np.ndarray:
    """(lambda, 1, bid): each fairy price of LAMBDAS times each bid of 0..fairy. Read only: it is shared."""
    bids = np.arange(fairy + 1)
    costs = LAMBDAS[:, None, None] * bids[None, None, :]
    costs.flags.writeable = False
    return costs


def tiebreak(values: Values, t: Table, rng: np.random.Generator) -> tuple:
    """The silver bid of a tie-break (F14), against the others' silver."""
    me, card, p = t.me, t.card, values.p
    silver = min(me.silver, A.SILVER_CAP)
    amulet = 1 if me.amulets else 0
    value = values.card_value(card, t) if card is not None else 0.0
    if value <= 0 or silver == 0:
        return ("tiebreak", 0, 0)
    lt = np.ones(VMAX + 1)
    z = p.tie_zero
    for s in t.seats[1:]:
        if s.in_tiebreak:  # nothing with some chance, else uniform over his silver
            a, _ = uniform_cdfs(min(s.silver, A.SILVER_CAP), 0, s.amulets > 0)
            lt = lt * ((1 - z) * a + z * _POSITIVE)
    lt[0] = 0.0
    sums = np.arange(silver + 1)
    candidates = []
    for a in range(amulet + 1):
        eu = lt[np.minimum(sums * (2 if a else 1), VMAX)] * value - p.silver * sums - a * p.amulet
        if a:
            eu[0] = -np.inf
        candidates.append(eu)
    a, s = divmod(_choose(np.concatenate(candidates), value, p, rng), len(sums))
    return ("tiebreak", int(s), a)
