"""A rule-based Fist of Dragonstones player that acts from the AEC observation dict only.

It never reads the engine: :func:`parse` turns the observation vector back into counts
(with the observation module's names and scales), and every decision is made from those.
So the bot can sit at any seat, in any process, in both observation modes.

How it plays (rulings F1-F43 of ``shared/RULINGS.md``):

* **Values.** A player's position is worth ``U[score]`` plus the *potential* of his stones
  (the best scoring route among Magician 4 any, Wizard one of each, Sorcerer 4 of a colour,
  discounted by the stones still missing) plus his coins. A character is worth what
  winning it adds to that (choosing the best option of its power), plus a *denial* part
  when an opponent could score with it (much more if it would win him the game).
* **Bids.** Each opponent is modelled as bidding nothing with the rate at which he has
  bid nothing so far this turn (from the revealed bids; a prior at the turn's start),
  and otherwise uniformly over what he holds (coins read in recall mode, estimated from
  the start holdings and his spent fairy gold in table mode). That gives the chance of
  winning with each bid value; the Witch's curse held by an opponent lowers it. Fairy
  gold is priced by a per-turn shadow price: the lowest price at which the bids the bot
  would like to make on this character and those still face down fit in the fairy left
  (F9: it comes back, so late in a turn it is nearly free). Common gold and amulets are
  priced as the permanent coins they are; the bid maximises ``P(win) x value - cost``,
  with a little seeded noise so that copies of the bot rarely tie.
* **Black coin.** Cursed (F12) on a character that would let an opponent win, or on the
  most dangerous character of the turn when no worse one is still face down.
* **Powers.** Each choice maximises the bot's value minus a share of the harm it does
  to opponents, weighted towards the leaders (Troll, Thief, Brigand); the Rainbow Dragon
  draws again while the expected stone is worth more than the risk to the stones drawn.

Equally good actions are broken by the bot's seeded ``numpy`` generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dragonstones_env.games.fist import actions as A
from dragonstones_env.games.fist.cards import CHARACTER_SLOTS, COLOURS
from dragonstones_env.games.fist.engine import START
from dragonstones_env.games.fist.observation import CARD_STATUS, decode

# ---------------------------------------------------------------------------- parsing
_FACE_DOWN = CARD_STATUS.index("face_down")


@dataclass(slots=True)
class Seat:
    """One player as the viewer sees him (relative seat ``rel``; 0 is the viewer)."""

    rel: int
    score: int
    stones: tuple[int, int, int]
    fairy: int  # behind the screen (estimated when coins are hidden)
    fairy_spent: int
    common: int
    silver: int
    amulets: int
    black: int
    doppelganger: bool
    known: bool  # coins read from the observation (else estimated)
    in_tiebreak: bool


@dataclass(slots=True)
class Table:
    """The observation turned back into readable numbers."""

    n: int
    decision: str | None
    card: str | None
    auctions_held: int
    bank: dict[str, int]  # fairy, common, silver, amulets
    bank_stones: tuple[int, int, int]
    pending: tuple[int, int, int]
    face_down: list[str]  # characters still to be auctioned this turn (with repeats)
    played: list[str]  # characters already auctioned or played this turn (any status)
    seats: list[Seat]  # relative order; seats[0] is the viewer
    bids: dict[str, np.ndarray]  # this turn's revealed bids: feature -> (auction, relative seat)
    memo: dict = field(default_factory=dict)  # values computed for this decision

    @property
    def me(self) -> Seat:
        return self.seats[0]

    def my_bid(self, slot: int) -> dict[str, int]:
        """The viewer's revealed bid in this turn's auction number ``slot`` (0-based)."""
        return {name: int(v[slot, 0]) for name, v in self.bids.items()}


def parse(obs: np.ndarray) -> Table:
    """Readable numbers from an observation vector, through the observation's own decoder."""
    d = decode(obs)
    n = int(d["seat_present"].sum())
    turn = d["turn_cards"]
    down = turn["face_down"]
    face_down = []
    for i in np.flatnonzero(down).tolist():
        face_down += [CHARACTER_SLOTS[i]] * int(down[i])
    done = sum(turn[status] for status in CARD_STATUS if status != "face_down")
    played = [CHARACTER_SLOTS[i] for i in np.flatnonzero(done).tolist()]
    own, bank, pend, sd = d["own"], d["bank"], d["pending_stones"], d["seats"]
    rows = [sd[f][:n].astype(np.int64).tolist() for f in _SEAT_READ]
    seats = []
    for rel in range(n):
        score, red, blue, yellow, spent, amulets, black, dopp, fairy, common, silver, known, tie = (
            r[rel] for r in rows)
        if rel == 0:
            fairy, common, silver = own["fairy"], own["common"], own["silver"]
            known = 1
        elif not known:  # table mode (F43): estimate from the start holdings (F3) and what is on the table
            fairy, common, silver = max(0, START["fairy"] - spent), 1, START["silver"] - 1
        seats.append(Seat(rel, score, (red, blue, yellow), fairy, spent, common, silver, amulets, black, bool(dopp),
                          bool(known), bool(tie)))
    decision = d["decision"]
    return Table(
        n=n,
        decision=None if decision == "none" else decision,
        card=d["card"],
        auctions_held=d["progress"]["auctions_held"],
        bank={"fairy": bank["fairy"], "common": bank["common"], "silver": bank["silver"], "amulets": bank["amulets"]},
        bank_stones=(bank["red"], bank["blue"], bank["yellow"]),
        pending=(pend["red"], pend["blue"], pend["yellow"]),
        face_down=face_down,
        played=played,
        seats=seats,
        bids=d["bids"],
    )


_SEAT_READ = ("score", "red", "blue", "yellow", "fairy_spent", "amulets", "black", "doppelganger",
              "fairy", "common", "silver", "coins_known", "in_tiebreak")


# ---------------------------------------------------------------------------- parameters
PARAMS: dict[str, Any] = {
    "U": (0.0, 12.0, 28.0, 80.0),  # worth of a score of 0..3 (3 wins, F17)
    "D": (0.55, 0.33, 0.18, 0.09, 0.04, 0.02),  # stone routes: discount by stones still missing
    "second_route": 0.25,  # share of the second best scoring route in the stones' potential
    "stone_base": 0.3,  # every stone, for flexibility (Quack, Merchant, Troll...)
    "common": 1.5,  # worth of one common gold (permanent)
    "silver": 0.4,
    "fairy": 2.5,  # one fairy gold for good (Fairy, Enchantress, Merchant, Necromancer)
    "amulet": 4.0,
    "black": 2.0,  # the black coin before its threats are counted
    "doppelganger": 3.0,
    "threat_point": 4.0,  # denial worth of a point an opponent could score with a character
    "threat_win": 25.0,  # ... of a character that would win him the game
    "denial": 0.5,  # share of the threat added to a character's worth when bidding
    "harm": 0.15,  # weight of an opponent's loss: harm * (1 + his score)
    "tie_share": 0.4,  # share of a gold tie counted as a win (F14)
    "opp_black_use": 0.5,  # chance an opponent holding a black coin curses this auction
    "curse_min": 8.0,  # least threat worth a curse
    "zero_prior": 0.9,  # prior chance an opponent bids nothing...
    "zero_weight": 2.0,  # ... worth this many auctions of this turn's evidence
    "zero_if_scoring": 1.0,  # factor on that chance when he could score with the character
    "tie_zero": 0.3,  # chance an opponent bids no silver in a tie-break
    "jitter": 0.1,  # random spread of bid utilities (share of the value), against ties
}
_LAMBDAS = np.array([0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.7, 2.2, 3.0, 4.0, 6.0])
_VMAX = 2 * max(A.FAIRY_CAP + A.COMMON_CAP, A.SILVER_CAP)  # the highest bid value (F10, F14)
_POSITIVE = (np.arange(_VMAX + 1) > 0).astype(float)  # P(a bid of nothing < v)
_ALL_PAYMENTS: dict[int, list[tuple[int, int, int]]] = {
    t: [p for p in A.PAYMENTS if sum(p) == t] for t in (2, 3, 4, 5)
}
_SIMPLE = {  # characters whose power only moves coins or stones between the bank and the winner
    "Magician", "Wizard", "Sorcerer", "Enchantress", "Red Dragon", "Blue Dragon", "Yellow Dragon",
    "Alchemist", "Ancient Dragon", "Dwarf (4)", "Dwarf (5)", "Fairy", "Gnome", "Goldsmith", "Quack Wizard",
    "Sorcerer's Apprentice",
}
_SCORING = {"Magician", "Wizard", "Sorcerer", "Enchantress", "Sorcerer's Apprentice", "Quack Wizard", "Necromancer"}
_THREATS = _SCORING | {"Ghost", "Imp"}  # characters an opponent may score with


def _uniform_cdfs(coins: int, common: int, amulet: bool) -> tuple[np.ndarray, np.ndarray]:
    """P(value < v) and P(value <= v), v = 0.._VMAX, of a bid uniform over the holdings:
    ``coins`` fairy gold (or silver, in a tie-break) and ``common`` gold, doubled by an amulet half the time."""
    f = np.full(coins + 1, 1.0 / (coins + 1))
    c = np.full(common + 1, 1.0 / (common + 1))
    s = np.convolve(f, c)
    pmf = np.zeros(_VMAX + 1)
    if amulet:
        pmf[: len(s)] += 0.5 * s
        pmf[0 : 2 * len(s) - 1 : 2] += 0.5 * s
    else:
        pmf[: len(s)] = s
    le = np.minimum(np.cumsum(pmf), 1.0)
    lt = le - pmf
    return lt, le


class HeuristicPolicy:
    """Rule-based player: ``act(observation_dict) -> action``, never a masked action."""

    game = "dragonstones"  # seating it at another game's table is refused

    def __init__(self, seed: int | None = None, params: dict[str, Any] | None = None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.p = {**PARAMS, **(params or {})}
        self.fallbacks = 0  # times a computed action was masked and a legal one was used instead
        self._rainbow_named: int | None = None
        self._pot: dict[tuple, float] = {}
        self._cdf: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._gain_cache: dict[tuple, float] = {}
        self._curves: dict[tuple, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"HeuristicPolicy(seed={self.seed})"

    # ------------------------------------------------------------------ entry point
    def act(self, observation: dict[str, np.ndarray]) -> int:
        mask = observation["action_mask"]
        t = parse(observation["observation"])
        kind = t.decision
        if kind == "bid":
            action = self._bid(t)
        elif kind == "tiebreak":
            action = self._tiebreak(t)
        else:
            legal = np.flatnonzero(mask)
            if len(legal) == 0:
                raise ValueError("no legal action in this observation's action_mask")
            action = self._choose(t, kind, legal)
        if not (0 <= action < len(mask)) or not mask[action]:
            self.fallbacks += 1
            legal = np.flatnonzero(mask)
            if len(legal) == 0:
                raise ValueError("no legal action in this observation's action_mask")
            action = int(legal[self.rng.integers(len(legal))])
        return int(action)

    def _pick(self, scores: list[float] | np.ndarray) -> int:
        """Index of the best score; ties broken by the seeded generator."""
        scores = np.asarray(scores, dtype=float)
        best = scores.max()
        top = np.flatnonzero(scores >= best - 1e-9)
        return int(top[0]) if len(top) == 1 else int(top[self.rng.integers(len(top))])

    # ------------------------------------------------------------------ values
    def potential(self, stones: tuple[int, int, int], score: int) -> float:
        """Worth of holding these stones at this score: the best scoring route, discounted."""
        key = (*stones, score)
        v = self._pot.get(key)
        if v is not None:
            return v
        if score >= 3:
            self._pot[key] = 0.0
            return 0.0
        U, D = self.p["U"], self.p["D"]
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
        v = routes[0] + self.p["second_route"] * routes[1] + self.p["stone_base"] * total
        self._pot[key] = v
        return v

    def worth(self, score: int, stones: tuple[int, int, int]) -> float:
        return self.p["U"][min(score, 3)] + self.potential(stones, min(score, 3))

    def stone_gain(self, seat_score: int, stones: tuple[int, int, int], colour: int, k: int = 1) -> float:
        s = list(stones)
        s[colour] += k
        return self.potential(tuple(s), seat_score) - self.potential(stones, seat_score)

    def _pay_best(self, score: int, stones, payments, points: int) -> float:
        """Best gain of paying one of ``payments`` (or -inf if none can be paid) to score ``points``."""
        best = -np.inf
        before = self.worth(score, stones)
        for pay in payments:
            if pay[0] <= stones[0] and pay[1] <= stones[1] and pay[2] <= stones[2]:
                rest = (stones[0] - pay[0], stones[1] - pay[1], stones[2] - pay[2])
                best = max(best, self.worth(score + points, rest) - before)
        return best

    def gain(self, card: str, seat: Seat, t: Table, depth: int = 0) -> float:
        """What winning ``card`` is worth to ``seat`` (the best use of its power)."""
        p = self.p
        score, stones = seat.score, seat.stones
        bank = t.bank
        bs = t.bank_stones
        if card in _SIMPLE:
            key = (card, score, stones, bs, bank["common"] > 0, bank["silver"] > 0, bank["amulets"] > 0,
                   bank["fairy"] > 0)
            v = self._gain_cache.get(key)
            if v is not None:
                return v
            v = self._simple_gain(card, score, stones, t)
            if len(self._gain_cache) > 50000:
                self._gain_cache.clear()
            self._gain_cache[key] = v
            return v
        if card == "Witch":
            threats = [self.threat(c, t, depth + 1) for c in t.face_down] if depth == 0 else []
            return p["black"] + 0.3 * max(threats, default=0.0)
        if card == "Thief":
            gains = [self.stone_gain(score, stones, c) for c in range(3)]
            return 0.8 * max(gains) + self._harm_share(t, seat) * 2.0
        if card == "Brigand":
            best = 0.0
            for s in t.seats:
                if s.rel != seat.rel:
                    loot = p["common"] * s.common + p["silver"] * s.silver
                    best = max(best, loot * (1.0 + self._harm(s)))
            return best
        if card == "Troll":
            return max(self._troll(t, seat, c) for c in range(3))
        if card == "Doppelganger":
            return 0.0 if seat.doppelganger else p["doppelganger"]
        if card == "Merchant":
            return self._merchant_plan(seat, t)
        if card == "Necromancer":
            return self.worth(score + 1, stones) - self.worth(score, stones)
        if card == "Rainbow Dragon":
            total = sum(bs)
            if total == 0:
                return 0.0
            avg = sum(bs[c] / total * self.stone_gain(score, stones, c) for c in range(3))
            return 1.2 * avg
        if card == "Two-headed Dragon":
            return self._two_headed(score, stones, bs)
        if depth >= 2:
            return 0.0
        if card == "Ghost":  # F31: any character already auctioned this turn, but a Ghost
            options = [self.gain(c, seat, t, depth + 1) for c in t.played if c != "Ghost"]
            return max(options, default=0.0)
        if card == "Imp":  # F35: a chosen face-down character (and it leaves the turn)
            options = [self.gain(c, seat, t, depth + 1) for c in t.face_down]
            return max(options, default=0.0)
        if card == "Goblin":  # F33: a random face-down character
            options = [self.gain(c, seat, t, depth + 1) for c in t.face_down]
            return float(np.mean(options)) if options else 0.0
        return 0.0

    def _simple_gain(self, card: str, score: int, stones, t: Table) -> float:
        p = self.p
        bank = t.bank
        bs = t.bank_stones
        if card == "Magician":
            return max(self._pay_best(score, stones, _ALL_PAYMENTS[4], 1), p["silver"] * min(3, bank["silver"]))
        if card == "Wizard":
            return max(self._pay_best(score, stones, [(1, 1, 1)], 1), p["silver"] * min(3, bank["silver"]))
        if card == "Sorcerer":
            pays = [(4, 0, 0), (0, 4, 0), (0, 0, 4)]
            return max(self._pay_best(score, stones, pays, 2), p["common"] * (bank["common"] > 0))
        if card == "Enchantress":
            return max(self._pay_best(score, stones, _ALL_PAYMENTS[5], 2), p["fairy"] * (bank["fairy"] > 0))
        if card == "Sorcerer's Apprentice":
            v = self._pay_best(score, stones, [(2, 0, 0), (0, 2, 0), (0, 0, 2)], 1)
            return 0.0 if v == -np.inf else v
        if card == "Quack Wizard":
            return self.worth(score + 1, (0, 0, 0)) - self.worth(score, stones)
        if card in ("Red Dragon", "Blue Dragon", "Yellow Dragon"):
            c = ("Red Dragon", "Blue Dragon", "Yellow Dragon").index(card)
            return self.stone_gain(score, stones, c) if bs[c] else 0.0
        if card == "Ancient Dragon":
            return max((self.stone_gain(score, stones, c) for c in range(3) if bs[c]), default=0.0)
        if card == "Alchemist":
            return p["common"] * min(3, bank["common"])
        if card == "Dwarf (4)":
            return p["silver"] * min(4, bank["silver"])
        if card == "Dwarf (5)":
            return p["silver"] * min(5, bank["silver"])
        if card == "Gnome":
            return p["common"] * min(2, bank["common"]) + p["silver"] * min(2, bank["silver"])
        if card == "Fairy":
            return p["fairy"] if bank["fairy"] else 0.0
        if card == "Goldsmith":
            return p["amulet"] if bank["amulets"] else 0.0
        raise AssertionError(card)

    def _two_headed(self, score: int, stones, bs) -> float:
        bag = [min(2, s) for s in bs]
        total = sum(bag)
        if total == 0:
            return 0.0
        if total == 1:
            return self.stone_gain(score, stones, bag.index(1))
        before = self.potential(stones, score)
        v = 0.0
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
                    v += pa * bag[b] / (total - 1) * (self.potential(tuple(s), score) - before)
            bag[a] += 1
        return v

    def _harm(self, s: Seat) -> float:
        return self.p["harm"] * (1 + s.score)

    def _harm_share(self, t: Table, seat: Seat) -> float:
        return max((self._harm(s) for s in t.seats if s.rel != seat.rel), default=0.0)

    def _troll(self, t: Table, seat: Seat, colour: int) -> float:
        """Worth to ``seat`` of a Troll on ``colour`` (F41): its own loss, the others' weighted loss."""
        v = 0.0
        for s in t.seats:
            st = list(s.stones)
            st[colour] = 0
            loss = self.potential(s.stones, s.score) - self.potential(tuple(st), s.score)
            v += -loss if s.rel == seat.rel else self._harm(s) * loss
        return v

    def _merchant_plan(self, seat: Seat, t: Table, buy: bool = False) -> float | None:
        """Greedy purchases (F36): the total gain, or with ``buy`` the best next (colour, coin) or None."""
        p = self.p
        stones = list(seat.stones)
        bank = list(t.bank_stones)
        coins = {"common": seat.common, "fairy": seat.fairy, "silver": seat.silver}
        price = {"common": p["common"], "fairy": p["fairy"], "silver": 3 * p["silver"]}
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

    def points_with(self, card: str, s: Seat, t: Table, depth: int = 0) -> int:
        """Points ``s`` could score at once with ``card``'s power (for threats)."""
        r, b, y = s.stones
        if card == "Magician":
            return int(r + b + y >= 4)
        if card == "Wizard":
            return int(min(s.stones) >= 1)
        if card == "Sorcerer":
            return 2 * int(max(s.stones) >= 4)
        if card == "Enchantress":
            return 2 * int(r + b + y >= 5)
        if card == "Sorcerer's Apprentice":
            return int(max(s.stones) >= 2)
        if card in ("Quack Wizard", "Necromancer"):
            return 1
        if depth >= 1:
            return 0
        if card == "Ghost":
            return max((self.points_with(c, s, t, depth + 1) for c in t.played if c != "Ghost"), default=0)
        if card == "Imp":
            return max((self.points_with(c, s, t, depth + 1) for c in t.face_down), default=0)
        return 0

    def threat(self, card: str, t: Table, depth: int = 0) -> float:
        """How much an opponent could make of ``card``: a game win counts far more than a point."""
        if card not in _THREATS:
            return 0.0
        key = ("threat", card, depth)
        best = t.memo.get(key)
        if best is not None:
            return best
        best = 0.0
        for s in t.seats[1:]:
            pts = self.points_with(card, s, t, depth)
            if pts:
                v = self.p["threat_win"] if s.score + pts >= 3 else pts * self.p["threat_point"] * (1 + 0.5 * s.score)
                best = max(best, v)
        t.memo[key] = best
        return best

    # ------------------------------------------------------------------ bids
    def _cdf_of(self, coins: int, common: int, amulet: bool) -> tuple[np.ndarray, np.ndarray]:
        key = (coins, common, amulet)
        cdf = self._cdf.get(key)
        if cdf is None:
            cdf = self._cdf[key] = _uniform_cdfs(*key)
        return cdf

    def win_curve(self, t: Table) -> np.ndarray:
        """P(winning the auction) for each bid value 0.._VMAX against the opponents' bids.

        Each opponent bids nothing with some chance (how often he has bid nothing this turn,
        less when he could score with this character), else uniformly over his coins.
        """
        done = max(0, t.auctions_held - 1)  # this turn's auctions with revealed bids
        zeros = (t.bids["value"][:done, : t.n] == 0).sum(axis=0).tolist() if done else None
        scoring = self.p["zero_if_scoring"] != 1.0 and t.card is not None
        opponents = tuple(
            (s.fairy, s.common, s.amulets > 0, s.black > 0, zeros[s.rel] if zeros else 0,
             scoring and self.points_with(t.card, s, t) > 0)
            for s in t.seats[1:]
        )
        key = (*opponents, done)
        win = self._curves.get(key)
        if win is not None:
            return win
        prior, weight = self.p["zero_prior"], self.p["zero_weight"]
        lt = np.ones(_VMAX + 1)
        le = np.ones(_VMAX + 1)
        clean = 1.0
        for fairy, common, amulet, black, zero, scores in key[:-1]:
            a, b = self._cdf_of(min(fairy, A.FAIRY_CAP), min(common, A.COMMON_CAP), amulet)
            z = (prior * weight + zero) / (weight + done)
            if scores:
                z *= self.p["zero_if_scoring"]
            if z > 0:
                a = (1 - z) * a + z * _POSITIVE
                b = (1 - z) * b + z
            lt = lt * a
            le = le * b
            if black:
                clean *= 1.0 - self.p["opp_black_use"]
        win = (lt + self.p["tie_share"] * (le - lt)) * clean
        win[0] = 0.0
        if len(self._curves) > 20000:
            self._curves.clear()
        self._curves[key] = win
        return win

    def card_value(self, card: str, t: Table) -> float:
        """Worth of winning ``card`` when bidding: its gain plus a share of what it denies."""
        key = ("value", card)
        v = t.memo.get(key)
        if v is None:
            v = t.memo[key] = self.gain(card, t.me, t) + self.p["denial"] * self.threat(card, t)
        return v

    def _fairy_price(self, t: Table, win: np.ndarray, current: float) -> float:
        """The per-turn shadow price of fairy gold: the lowest price at which the bids wanted on
        this character and the face-down ones fit in the fairy left (F9, F16)."""
        fairy = min(t.me.fairy, A.FAIRY_CAP)
        values = [current] + [self.card_value(c, t) for c in t.face_down]
        vals = np.array([v for v in values if v > 0])
        if fairy == 0 or len(vals) == 0:
            return 0.0
        curve = win[: fairy + 1]
        bids = np.arange(fairy + 1)
        # (lambda, card, bid): utility of each bid at each price
        util = vals[None, :, None] * curve[None, None, :] - _LAMBDAS[:, None, None] * bids[None, None, :]
        spend = util.argmax(axis=2).sum(axis=1)
        ok = np.flatnonzero(spend <= fairy)
        return float(_LAMBDAS[ok[0]]) if len(ok) else float(_LAMBDAS[-1])

    def _bid(self, t: Table) -> int:
        me = t.me
        card = t.card
        fairy, common = min(me.fairy, A.FAIRY_CAP), min(me.common, A.COMMON_CAP)
        amulet = 1 if me.amulets else 0
        # F12: the black coin, on a character an opponent could win the game with, or the worst left.
        if me.black and card is not None:
            mine = self.gain(card, me, t)
            threat = self.threat(card, t)
            later = max((self.threat(c, t) for c in t.face_down), default=0.0)
            wins_me = me.score + self.points_with(card, me, t) >= 3
            if not wins_me and threat >= self.p["curse_min"] and threat >= later and threat > mine:
                return A.encode(("bid", 0, 0, 1, 0), 0, t.n)
            if not wins_me and not t.face_down and threat > mine and threat > 0:
                return A.encode(("bid", 0, 0, 1, 0), 0, t.n)  # last chance this turn (F9)
        if card is None:
            return A.encode(("bid", 0, 0, 0, 0), 0, t.n)
        value = self.card_value(card, t)
        if value <= 0:
            return A.encode(("bid", 0, 0, 0, 0), 0, t.n)
        win = self.win_curve(t)
        lam = self._fairy_price(t, win, value)
        cc = self.p["common"]
        sums = np.arange(fairy + common + 1)
        if lam <= cc:  # the cheaper coin first
            f_used = np.minimum(sums, fairy)
            c_used = sums - f_used
        else:
            c_used = np.minimum(sums, common)
            f_used = sums - c_used
        cost = lam * f_used + cc * c_used
        gain = np.full(len(sums), value)
        if card == "Necromancer":  # F37: the fairy bid is paid for good when scoring
            gain = gain - self.p["fairy"] * f_used
        candidates = []
        for a in range(amulet + 1):
            vals = sums * (2 if a else 1)
            eu = win[np.minimum(vals, _VMAX)] * gain - cost - a * self.p["amulet"]
            if a:
                eu[0] = -np.inf  # an amulet on an empty fist is wasted
            candidates.append(eu)
        eu_all = np.concatenate(candidates)
        if self.p["jitter"]:  # near-equal bids: pick one at random, so that copies of the bot rarely tie
            i = int((eu_all + self.rng.random(len(eu_all)) * (self.p["jitter"] * value)).argmax())
        else:
            i = self._pick(eu_all)
        a, s = divmod(i, len(sums))
        return A.encode(("bid", int(f_used[s]), int(c_used[s]), 0, a), 0, t.n)

    def _tiebreak(self, t: Table) -> int:
        me = t.me
        silver = min(me.silver, A.SILVER_CAP)
        amulet = 1 if me.amulets else 0
        card = t.card
        value = self.card_value(card, t) if card is not None else 0.0
        if value <= 0 or silver == 0:
            return A.encode(("tiebreak", 0, 0), 0, t.n)
        lt = np.ones(_VMAX + 1)
        z = self.p["tie_zero"]
        for s in t.seats[1:]:
            if s.in_tiebreak:  # silver bid: nothing with some chance, else uniform over his silver (F14)
                a, _ = self._cdf_of(min(s.silver, A.SILVER_CAP), 0, s.amulets > 0)
                lt = lt * ((1 - z) * a + z * _POSITIVE)
        lt[0] = 0.0
        sums = np.arange(silver + 1)
        cands = []
        for a in range(amulet + 1):
            eu = lt[np.minimum(sums * (2 if a else 1), _VMAX)] * value - self.p["silver"] * sums - a * self.p["amulet"]
            if a:
                eu[0] = -np.inf
            cands.append(eu)
        eu_all = np.concatenate(cands)
        if self.p["jitter"]:
            i = int((eu_all + self.rng.random(len(eu_all)) * (self.p["jitter"] * value)).argmax())
        else:
            i = self._pick(eu_all)
        a, s = divmod(i, len(sums))
        return A.encode(("tiebreak", int(s), a), 0, t.n)

    # ------------------------------------------------------------------ other decisions
    def _choose(self, t: Table, kind: str | None, legal: np.ndarray) -> int:
        options = [A.decode(int(a), 0, t.n) for a in legal]
        me = t.me
        if kind in ("pay_or_take", "apprentice_pair"):
            scores = [self._pay_or_take_score(t, o) for o in options]
        elif kind == "thief_steal":
            scores = [self._steal_score(t, o) for o in options]
        elif kind == "ancient_colour":
            scores = [self.stone_gain(me.score, me.stones, COLOURS.index(o[1])) for o in options]
        elif kind == "rainbow_colour":
            scores = [self._rainbow_colour_score(t, COLOURS.index(o[1])) for o in options]
        elif kind == "rainbow_continue":
            go = self._rainbow_draw_again(t)
            scores = [float(go) if o[0] == "draw" else float(not go) for o in options]
        elif kind == "troll_colour":
            scores = [self._troll(t, me, COLOURS.index(o[1])) for o in options]
        elif kind == "brigand_target":
            scores = [self._brigand_score(t, o[1]) for o in options]
        elif kind == "ghost_pick":
            scores = [self.gain(o[1], me, t, 1) for o in options]
        elif kind == "imp_pick":  # the pick also leaves the turn: deny it (F35)
            scores = [self.gain(o[1], me, t, 1) + self.p["denial"] * self.threat(o[1], t, 1) for o in options]
        elif kind == "merchant_buy":
            plan = self._merchant_plan(me, t, buy=True)
            scores = [float(plan is not None and o[0] == "buy" and (COLOURS.index(o[1]), o[2]) == plan)
                      + 0.5 * (plan is None and o[0] == "stop") for o in options]
        elif kind == "necromancer":
            yes = self._necromancer_yes(t)
            scores = [float(yes) if o[0] == "yes" else float(not yes) for o in options]
        elif kind == "doppelganger":
            yes = self._doppelganger_yes(t)
            scores = [float(yes) if o[0] == "yes" else float(not yes) for o in options]
        else:
            scores = [0.0] * len(options)
        i = self._pick(scores)
        if kind == "rainbow_colour":
            self._rainbow_named = COLOURS.index(options[i][1])
        return int(legal[i])

    def _pay_or_take_score(self, t: Table, option: tuple) -> float:
        me = t.me
        card = t.card
        before = self.worth(me.score, me.stones)
        if option[0] == "pay":
            pay = option[1:]
            points = 2 if card in ("Sorcerer", "Enchantress") else 1
            rest = (me.stones[0] - pay[0], me.stones[1] - pay[1], me.stones[2] - pay[2])
            return self.worth(me.score + points, rest) - before
        p, bank = self.p, t.bank
        return {
            "Magician": p["silver"] * min(3, bank["silver"]),
            "Wizard": p["silver"] * min(3, bank["silver"]),
            "Sorcerer": p["common"] * min(1, bank["common"]),
            "Enchantress": p["fairy"] * min(1, bank["fairy"]),
        }.get(card, 0.0)

    def _steal_score(self, t: Table, option: tuple) -> float:
        _, rel, what = option
        me, victim = t.me, t.seats[rel]
        if what == "coin":
            return self.p["common"] * (1 + self._harm(victim)) + 0.01 * victim.score
        c = COLOURS.index(what)
        st = list(victim.stones)
        st[c] -= 1
        loss = self.potential(victim.stones, victim.score) - self.potential(tuple(st), victim.score)
        return self.stone_gain(me.score, me.stones, c) + self._harm(victim) * loss

    def _brigand_score(self, t: Table, rel: int) -> float:
        s = t.seats[rel]
        loot = self.p["common"] * s.common + self.p["silver"] * s.silver
        return loot * (1 + self._harm(s)) + 0.01 * s.score

    def _rainbow_colour_score(self, t: Table, named: int) -> float:
        """Expected worth of one draw after naming ``named`` (F39): the others' stones, weighted."""
        me, bs = t.me, t.bank_stones
        total = sum(bs)
        return sum(bs[c] / total * self.stone_gain(me.score, me.stones, c) for c in range(3) if c != named)

    def _rainbow_draw_again(self, t: Table) -> bool:
        me, bs, pend = t.me, t.bank_stones, t.pending
        total = sum(bs)
        if total == 0:
            return False
        named = self._rainbow_named
        if named is None or pend[named] > 0:  # not remembered: the likeliest named colour that was not drawn
            candidates = [c for c in range(3) if pend[c] == 0] or [0]
            named = max(candidates, key=lambda c: bs[c])
        p_bust = bs[named] / total
        held = tuple(me.stones[c] + pend[c] for c in range(3))
        at_risk = self.potential(held, me.score) - self.potential(me.stones, me.score)
        more = sum(bs[c] / total * self.stone_gain(me.score, held, c) for c in range(3) if c != named)
        return more > p_bust * at_risk + 1e-9

    def _necromancer_yes(self, t: Table) -> bool:
        me = t.me
        slot = max(0, t.auctions_held - 1)
        fairy = min(t.my_bid(slot)["fairy"], me.fairy_spent)
        point = self.worth(me.score + 1, me.stones) - self.worth(me.score, me.stones)
        return point > self.p["fairy"] * fairy

    def _doppelganger_yes(self, t: Table) -> bool:
        card, me = t.card, t.me
        if card is None:
            return False
        first = self.gain(card, me, t)
        if card in _SIMPLE and card not in ("Magician", "Wizard", "Sorcerer", "Enchantress"):
            second = first
        elif card in ("Magician", "Wizard", "Sorcerer", "Enchantress"):
            second = self._second_scoring(card, me, t)
        else:
            second = 0.6 * first
        return second >= self.p["doppelganger"]

    def _second_scoring(self, card: str, me: Seat, t: Table) -> float:
        """Gain of a second use of a pay-or-take power, after the best first use."""
        pays = {
            "Magician": (_ALL_PAYMENTS[4], 1),
            "Wizard": ([(1, 1, 1)], 1),
            "Sorcerer": ([(4, 0, 0), (0, 4, 0), (0, 0, 4)], 2),
            "Enchantress": (_ALL_PAYMENTS[5], 2),
        }[card]
        best, after = -np.inf, None
        before = self.worth(me.score, me.stones)
        for pay in pays[0]:
            if all(pay[i] <= me.stones[i] for i in range(3)):
                rest = tuple(me.stones[i] - pay[i] for i in range(3))
                v = self.worth(me.score + pays[1], rest) - before
                if v > best:
                    best, after = v, rest
        if after is None:
            return self.gain(card, me, t)  # the coins again
        return self._pay_best(me.score + pays[1], after, pays[0], pays[1]) if me.score + pays[1] < 3 else 0.0
