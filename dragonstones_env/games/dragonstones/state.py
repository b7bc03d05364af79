"""The table of Fist of Dragonstones: players, bank, auctions, and the primitives that move them.

What is on the table (F2-F4, F16) and the moves every rule is made of -- take from the bank,
pay to it, take a stone, pay stones, draw from a bag -- with no turn flow: :mod:`.flow` builds
the game on this, and :mod:`.engine` is the public face of both. Pure Python and numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from dragonstones_env.core.records import KIND_KEY

from .cards import CHARACTER_INDEX, COLOURS, MERCHANT_COINS, SPECIAL_DECK

# F2 stock.
STOCK = {"fairy": 60, "silver": 40, "common": 15, "amulets": 2, "stones": 12}
START = {"fairy": 8, "common": 2, "silver": 5, "stones": 4}  # F3
WIN_SCORE = 3  # F17
DEFAULT_MAX_TURNS = 40  # F18; `python -m tools.random_games` prints the game lengths behind it
MIN_PLAYERS, MAX_PLAYERS = 3, 6  # F1


TOTALS = ("fairy", "common", "silver", "amulets", "red", "blue", "yellow")  # what Table.totals counts


def _counts(holder: Player | Bank) -> dict[str, Any]:
    """A player's or the bank's holdings for ``Game.state_dict``, stones by colour. The keys come
    in the dataclass's field order, which fixes the dict's order: reordering the fields changes it."""
    out = {f.name: getattr(holder, f.name) for f in fields(holder)}
    out["stones"] = dict(zip(COLOURS, holder.stones, strict=True))  # keeps its place in the order
    return out


@dataclass(slots=True)
class Player:
    """One seat. ``fairy`` is behind the screen, ``fairy_spent`` in front of it (F16)."""

    fairy: int = START["fairy"]
    fairy_spent: int = 0
    common: int = START["common"]
    silver: int = START["silver"]
    black: int = 0
    amulets: int = 0
    score: int = 0
    stones: list[int] = field(default_factory=lambda: [0, 0, 0])
    doppelganger: bool = False

    def to_dict(self) -> dict[str, Any]:
        return _counts(self)


@dataclass(slots=True)
class Bank:
    fairy: int
    common: int
    silver: int
    amulets: int
    stones: list[int]

    def to_dict(self) -> dict[str, Any]:
        return _counts(self)


@dataclass(slots=True)
class Auction:
    """One auction of this turn. Bids stay hidden in ``_sealed`` until all are in (F10)."""

    card: str
    bids: list[tuple[int, int, int, int]] | None = None  # revealed (fairy, common, black, amulet)
    values: list[int] | None = None
    tied: list[int] | None = None  # players in the tie-break (F14)
    silver: dict[int, tuple[int, int]] | None = None  # revealed tie-break bids (silver, amulet)
    outcome: str = "open"  # open | tiebreak | won | cursed | passed | tied
    winner: int | None = None
    necromancer_paid: bool = False
    _sealed: dict[int, tuple] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": self.card,
            "bids": self.bids,
            "values": self.values,
            "tied": self.tied,
            "silver": None if self.silver is None else {str(k): list(v) for k, v in self.silver.items()},
            "outcome": self.outcome,
            "winner": self.winner,
        }


@dataclass(slots=True)
class PowerUse:
    """The power being used now, and the public facts its decisions depend on.

    Everything here is announced to the table as it happens, so it is in the observation
    and in :meth:`Game.state_dict`: a policy without memory must not need the history.
    """

    card: str
    player: int
    auction: Auction  # the auction it was won in (through the Ghost, Imp or Goblin: theirs, F31)
    source: str | None = None  # the card it is used through: Ghost, Imp or Goblin (F31, F33, F35)
    uses_left: int = 0  # further uses of this power queued right after it (a played Doppelganger, F28)
    named: int | None = None  # Rainbow Dragon: the colour named (F39)
    bought: list[int] = field(default_factory=lambda: [0, 0, 0])  # Merchant: stones bought this use (F36)
    paid: list[int] = field(default_factory=lambda: [0, 0, 0])  # Merchant: common, fairy, silver paid
    second_bidders: list[int] | None = None  # Thief: the players it may rob (F23)
    price: int | None = None  # Necromancer: the fairy gold it would pay (F37)

    def to_dict(self, auctions: list[Auction]) -> dict[str, Any]:
        slot = next((i for i, a in enumerate(auctions) if a is self.auction), None)
        return {
            "card": self.card,
            "player": self.player,
            "auction": slot,
            "source": self.source,
            "uses_left": self.uses_left,
            "named": None if self.named is None else COLOURS[self.named],
            "bought": dict(zip(COLOURS, self.bought, strict=True)),
            "paid": dict(zip(MERCHANT_COINS, self.paid, strict=True)),
            "second_bidders": self.second_bidders,
            "price": self.price,
        }


def bid_value(fairy: int, common: int, amulet: int) -> int:
    """F10: (fairy + common), doubled by an amulet."""
    return (fairy + common) * (2 if amulet else 1)


class Table:
    """The table of one game: players, bank, the special pile, the record, and the primitives
    (F4 and the stones) that the turn flow and the characters' powers move it with.

    ``deck`` (a ``custom.Deck``, issue #16) changes the special pile: custom characters added,
    standard specials excluded; it brings the layout slot of each card. None is the box's deck.
    """

    def __init__(self, num_players: int, seed: int, deck: Any = None):
        self.num_players = num_players
        self.seed = seed
        self.deck = deck
        # The layout slot of every card that can be in this game (custom cards: custom_1..4).
        self.slots: dict[str, int] = CHARACTER_INDEX if deck is None else deck.slots
        self.special_deck: tuple[str, ...] = SPECIAL_DECK if deck is None else deck.specials
        self.rng = np.random.default_rng(seed)
        self.record: list[dict[str, Any]] = []

        self.players = [Player() for _ in range(num_players)]
        n = num_players
        self.bank = Bank(
            fairy=STOCK["fairy"] - n * START["fairy"],
            common=STOCK["common"] - n * START["common"],
            silver=STOCK["silver"] - n * START["silver"],
            amulets=STOCK["amulets"],
            stones=[STOCK["stones"]] * 3,
        )
        self.pending_stones = [0, 0, 0]  # drawn by a Rainbow Dragon, not yet kept or returned (F39)
        self.special_pile: list[str] = list(self.special_deck)  # top of the pile = end of the list
        self.rng.shuffle(self.special_pile)
        self.special_discards: list[str] = []

    def log(self, kind: str, **fields: Any) -> None:
        self.record.append({KIND_KEY: kind, **fields})

    def gain(self, player: int, coin: str, amount: int) -> int:
        """F4: take up to ``amount`` of ``coin`` from the bank; returns what was taken."""
        have = getattr(self.bank, coin)
        got = min(have, amount)
        setattr(self.bank, coin, have - got)
        pl = self.players[player]
        setattr(pl, coin, getattr(pl, coin) + got)
        return got

    def pay(self, player: int, coin: str, amount: int) -> None:
        """Pay ``amount`` of ``coin`` (which the player holds) to the bank."""
        pl = self.players[player]
        assert getattr(pl, coin) >= amount
        setattr(pl, coin, getattr(pl, coin) - amount)
        setattr(self.bank, coin, getattr(self.bank, coin) + amount)

    def gain_stone(self, player: int, colour: int) -> int:
        if self.bank.stones[colour] == 0:
            return 0
        self.bank.stones[colour] -= 1
        self.players[player].stones[colour] += 1
        return 1

    def pay_stones(self, player: int, stones: tuple[int, int, int] | list[int]) -> None:
        pl = self.players[player]
        for c in range(3):
            assert pl.stones[c] >= stones[c]
            pl.stones[c] -= stones[c]
            self.bank.stones[c] += stones[c]

    def totals(self) -> tuple[int, ...]:
        """Every coin and stone of the game, by kind (F2: never created or destroyed; black coins
        are unlimited, F2, and not counted): fairy, common, silver, amulets, red, blue, yellow."""
        pls, bank = self.players, self.bank
        return (
            bank.fairy + sum(pl.fairy + pl.fairy_spent for pl in pls),
            bank.common + sum(pl.common for pl in pls),
            bank.silver + sum(pl.silver for pl in pls),
            bank.amulets + sum(pl.amulets for pl in pls),
            *(bank.stones[c] + self.pending_stones[c] + sum(pl.stones[c] for pl in pls) for c in range(3)),
        )

    def draw_stone(self, bag: list[int]) -> int:
        """Draw one stone at random from a bag of colour counts; returns its colour."""
        r = int(self.rng.integers(bag[0] + bag[1] + bag[2]))
        colour = 0 if r < bag[0] else (1 if r < bag[0] + bag[1] else 2)
        bag[colour] -= 1
        return colour
