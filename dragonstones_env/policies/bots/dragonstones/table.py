"""What the bot sees: the game's ``decode(obs)`` turned into a :class:`Table` of plain numbers.

The bot never reads the engine nor the encoder's scales: :func:`read` takes the structured view
that :func:`dragonstones_env.games.dragonstones.observation.decode` gives, so it can sit at any seat, in any
process, in both observation modes (F43). :func:`observe`, what the bots call at every decision, reads
the same counts through the game's fast accessor (``observation.reader``: one flat list, not a dict
per piece) and builds the same :class:`Table` as ``read(decode(obs))`` for about two thirds of the cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter
from typing import Any

import numpy as np

from dragonstones_env.games.dragonstones.cards import CHARACTER_SLOTS
from dragonstones_env.games.dragonstones.engine import START
from dragonstones_env.games.dragonstones.observation import (
    BANK_FEATURES,
    BID_FEATURES,
    CARD_STATUS,
    OWN_FEATURES,
    SEAT_FEATURES,
    decision_of,
    reader,
)


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
    decision: str | None  # the decision's kind (decisions.KINDS), None once the game is over
    card: str | None  # the character auctioned or resolved
    asks: str | None  # the character asking the decision (the Doppelganger for its offer, F28)
    auctions_held: int
    bank: dict[str, int]  # fairy, common, silver, amulets
    bank_stones: tuple[int, int, int]
    pending: tuple[int, int, int]
    face_down: list[str]  # characters still to be auctioned this turn (with repeats)
    played: list[str]  # characters already auctioned or played this turn (any status)
    seats: list[Seat]  # relative order; seats[0] is the viewer
    bids: dict[str, np.ndarray]  # this turn's revealed bids: feature -> (auction, relative seat)
    # Decoded pieces for what the fields above leave out (a power's state): read() keeps the whole decode,
    # observe() decodes only what a bot reads there (EXTRA_PIECES).
    decoded: dict[str, Any]
    memo: dict = field(default_factory=dict)  # values computed for this decision

    @property
    def me(self) -> Seat:
        return self.seats[0]

    def my_bid(self, slot: int) -> dict[str, int]:
        """The viewer's revealed bid in this turn's auction number ``slot`` (0-based)."""
        return {name: int(v[slot, 0]) for name, v in self.bids.items()}


def for_decision(table: dict, t: Table):
    """The entry of a per-decision table for ``t``'s decision: the row of (kind, asking card) if
    the table has one, else the row of the kind (None if neither). Kinds are named by what is
    chosen, so one row serves every card asking that kind, custom cards included."""
    return table.get((t.decision, t.asks), table.get(t.decision))


_SEAT_READ = ("score", "red", "blue", "yellow", "fairy_spent", "amulets", "black", "doppelganger",
              "fairy", "common", "silver", "coins_known", "in_tiebreak")
# The pieces :func:`read` uses (and the collector's ``rainbow_named``): a bot decodes only these,
# as the bid history's cards, the special piles and most of the power's state are never read.
PIECES = ("seat_present", "decision", "card", "progress", "bank", "pending_stones", "turn_cards", "seats", "bids",
          "own", "rainbow_named")
_DONE = tuple(status for status in CARD_STATUS if status != "face_down")


# What the bots read of ``Table.decoded``: observe() decodes these (one-hot pieces) and no more.
EXTRA_PIECES = ("rainbow_named",)
_READER = reader(tuple(p for p in PIECES if p != "bids"), arrays=("bids",))  # 420 bid counts: an array
_AT = _READER.at
_seat_cols = itemgetter(*(SEAT_FEATURES.index(f) for f in _SEAT_READ))  # a seat's row -> the features read
_SEATS = _AT["seats"]
_SEAT_WIDTH = len(SEAT_FEATURES)
_STATUS_WIDTH = len(CARD_STATUS)
_bank = itemgetter(*(_AT["bank"] + BANK_FEATURES.index(f) for f in ("fairy", "common", "silver", "amulets", "red",
                                                                      "blue", "yellow")))
_own = itemgetter(*(_AT["own"] + OWN_FEATURES.index(f) for f in ("fairy", "common", "silver")))
_PROGRESS_HELD = _AT["progress"] + 1  # ("turn_fraction", "auctions_held")
assert _READER.labels["progress"][1] == "auctions_held"
_TURN_CARDS = len(CHARACTER_SLOTS) * len(CARD_STATUS)
assert _READER.shape["turn_cards"] == (len(CHARACTER_SLOTS), len(CARD_STATUS))
# Where each character's row of turn_cards starts in the reader's list: observe() reads the face-down
# count and the four other statuses by index (cheaper than slicing the block per status).
_TURN_AT = tuple(range(_AT["turn_cards"], _AT["turn_cards"] + _TURN_CARDS, _STATUS_WIDTH))
_TURN_ROWS = tuple(zip(CHARACTER_SLOTS, _TURN_AT, strict=True))
assert CARD_STATUS[0] == "face_down" and _STATUS_WIDTH == 5, "observe() reads a face-down count and 4 others"


def _label(values: list, name: str) -> str | None:
    """A one-hot piece's label, as decode reads it (the first maximum, if above 0.5)."""
    at, labels = _AT[name], _READER.labels[name]
    row = values[at : at + len(labels)]
    top = max(row)
    return labels[row.index(top)] if top > 0.5 else None


def observe(obs: np.ndarray) -> Table:
    """The :class:`Table` of an observation vector: ``read(decode(obs))``, field for field, from one flat
    list of the counts of the pieces the bots read (the game's ``observation.reader``)."""
    return _table(_READER(obs), _READER.array(obs, "bids"))


def observe_many(obs: np.ndarray) -> list[Table]:
    """``[observe(o) for o in obs]`` for a batch of observation vectors (one a row), each piece gathered
    for all the rows at once (what a vector env's tables ask of their bots together)."""
    return [_table(v, block) for v, block in zip(_READER.rows(obs), _READER.arrays(obs, "bids"), strict=True)]


def _table(v: list, block: np.ndarray) -> Table:
    """The :class:`Table` of the reader's list ``v`` and the bids' counts ``block`` of one observation."""
    at = _AT["seat_present"]
    n = sum(v[at : at + _READER.shape["seat_present"][0]])
    card = _label(v, "card")
    decision, asks = decision_of(_label(v, "decision"), card)
    face_down = []
    for name, at in _TURN_ROWS:  # a row of CARD_STATUS counts per character, face down first
        k = v[at]
        if k:
            face_down += [name] * k
    # auctioned or played: any status but face down (counts are never negative)
    played = list(compress(CHARACTER_SLOTS, [v[at + 1] or v[at + 2] or v[at + 3] or v[at + 4] for at in _TURN_AT]))
    fairy, common, silver = _own(v)
    seats = [Seat(0, *_seat_fields(v, 0, fairy, common, silver, 1))]
    for rel in range(1, n):
        seats.append(Seat(rel, *_seat_fields(v, rel)))
    at = _AT["pending_stones"]
    bank = _bank(v)
    return Table(
        n=n,
        decision=None if decision == "none" else decision,
        card=card,
        asks=asks,
        auctions_held=v[_PROGRESS_HELD],
        bank={"fairy": bank[0], "common": bank[1], "silver": bank[2], "amulets": bank[3]},
        bank_stones=(bank[4], bank[5], bank[6]),
        pending=(v[at], v[at + 1], v[at + 2]),
        face_down=face_down,
        played=played,
        seats=seats,
        bids={name: block[..., i] for i, name in enumerate(BID_FEATURES)},
        decoded={name: _label(v, name) for name in EXTRA_PIECES},
    )


def _seat_fields(v: list, rel: int, *own: int) -> tuple:
    """The :class:`Seat` fields after ``rel`` of relative seat ``rel``, as :func:`read` makes them."""
    base = _SEATS + rel * _SEAT_WIDTH
    score, red, blue, yellow, spent, amulets, black, dopp, fairy, common, silver, known, tie = _seat_cols(
        v[base : base + _SEAT_WIDTH])
    if own:
        fairy, common, silver, known = own
    elif not known:  # table mode (F43): estimate from the start holdings (F3) and what is on the table
        fairy, common, silver = max(0, START["fairy"] - spent), 1, START["silver"] - 1
    return (score, (red, blue, yellow), fairy, spent, common, silver, amulets, black, bool(dopp), bool(known),
            bool(tie))


def read(d: dict[str, Any]) -> Table:
    """The :class:`Table` of a decoded observation (``d = decode(obs)`` or ``decode(obs, PIECES)``)."""
    n = int(d["seat_present"].sum())
    turn = d["turn_cards"]
    down = turn["face_down"]
    face_down = []
    for i in np.flatnonzero(down).tolist():
        face_down += [CHARACTER_SLOTS[i]] * int(down[i])
    done = sum(turn[status] for status in _DONE)
    played = [CHARACTER_SLOTS[i] for i in np.flatnonzero(done).tolist()]
    own, bank, pend, sd = d["own"], d["bank"], d["pending_stones"], d["seats"]
    # One array of the features read, one conversion: a row per seat.
    rows = np.array([sd[f] for f in _SEAT_READ])[:, :n].T.astype(np.int64).tolist()
    seats = []
    for rel, (score, red, blue, yellow, spent, amulets, black, dopp, fairy, common, silver, known, tie) in enumerate(
            rows):
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
        asks=d["asks"],
        auctions_held=d["progress"]["auctions_held"],
        bank={"fairy": bank["fairy"], "common": bank["common"], "silver": bank["silver"], "amulets": bank["amulets"]},
        bank_stones=(bank["red"], bank["blue"], bank["yellow"]),
        pending=(pend["red"], pend["blue"], pend["yellow"]),
        face_down=face_down,
        played=played,
        seats=seats,
        bids=d["bids"],
        decoded=d,
    )
