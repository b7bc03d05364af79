"""What one player sees of a Fist of Dragonstones game: one flat float32 vector.

The vector is built from named pieces (name -> slice, see :data:`LAYOUT`), so its layout
documents itself. Seats are relative to the viewer: seat 0 is the viewer, 1 the next
player clockwise, ...; tables of fewer than 6 players are padded with absent seats.

Two modes (F43):

* ``"recall"``: every player's coins, as a player with perfect recall derives them from
  the public gains and payments;
* ``"table"``: only what is on the table now; other players' coins behind their screens
  are zeros (their ``coins_known`` flag is 0).

Nothing here reads a sealed bid (one not yet revealed) other than the viewer's own, nor
the order of the face-down characters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dragonstones_env.layout import Piece, build_layout, layout_size, scale_vector
from dragonstones_env.observer import Observation
from dragonstones_env.observer import Observer as ObserverBase

from .cards import (
    CARDS_PER_TURN,
    CHARACTER_SLOTS,
    COLOURS,
    MERCHANT_COINS,
    NUM_CHARACTER_SLOTS,
)
from .decisions import V1_CARD, V1_KIND, V1_NAMES, v1_name
from .engine import BID, STOCK, TIEBREAK, Game

MAX_SEATS = 6
CARD_STATUS = ("face_down", "won", "passed", "cursed", "imp_goblin")  # per character, this turn
_STATUS_INDEX = {"won": 1, "passed": 2, "tied": 2, "cursed": 3, "imp": 4, "goblin": 4}
SEAT_FEATURES = (
    "score",
    "red",
    "blue",
    "yellow",
    "fairy_spent",
    "amulets",
    "black",
    "doppelganger",
    "fairy",
    "common",
    "silver",
    "coins_known",
    "in_tiebreak",
    "auction_winner",
)
BID_FEATURES = ("fairy", "common", "black", "amulet", "value", "tiebreak_silver", "tiebreak_amulet")
OWN_FEATURES = ("fairy", "common", "silver", "black", "amulets", "bid_fairy", "bid_common", "bid_black", "bid_amulet")
# The decision piece keeps layout v1's slots, one per v1 name (decisions.v1_name of the kind and
# the asking card): the shipped checkpoints read them. decode() gives the kind back.
DECISION_LABELS = (*V1_NAMES, "none")  # "none": the game is over
BANK_FEATURES = ("fairy", "common", "silver", "amulets", *COLOURS)
# Scales: counts are divided so that typical values fall in 0..1 (they may exceed it).
_STONES = STOCK["stones"]
SEAT_SCALE = (3, 12, 12, 12, 10, 2, 2, 1, 10, 10, 20, 1, 1, 1)
BID_SCALE = (10, 10, 1, 1, 20, 20, 1)
OWN_SCALE = (10, 10, 20, 2, 2, 10, 10, 1, 1)
BANK_SCALE = (STOCK["fairy"], STOCK["common"], STOCK["silver"], STOCK["amulets"], _STONES, _STONES, _STONES)
OBS_HIGH = 100.0
_C = NUM_CHARACTER_SLOTS

# (name, shape, seat axis, meaning, extras): the layout, as data. See layout.Piece for the extras.
_SPEC = [
    ("seat_present", (MAX_SEATS,), 0, "1 for each seat at the table"),
    ("acting_seat", (MAX_SEATS,), 0, "one-hot: the seat that must decide now", {"onehot": True}),
    ("has_bid", (MAX_SEATS,), 0, "seats whose bid of the current round is sealed (not its content)"),
    ("decision", (len(DECISION_LABELS),), None,
     "one-hot decision by its v1 name (decisions.v1_name of kind and asking card; last: none, game over)",
     {"onehot": True, "labels": DECISION_LABELS}),
    ("card", (_C,), None, "one-hot: the character being auctioned or resolved",
     {"onehot": True, "labels": CHARACTER_SLOTS}),
    ("progress", (2,), None, "turn / max_turns, auctions held this turn / 10",
     {"labels": ("turn_fraction", "auctions_held"), "scale": (1, CARDS_PER_TURN), "exact": (False, True)}),
    ("bank", (7,), None, "bank: fairy/60, common/15, silver/40, amulets/2, red, blue, yellow stones/12",
     {"labels": BANK_FEATURES, "scale": BANK_SCALE}),
    ("pending_stones", (3,), None, "stones drawn by the Rainbow Dragon, not yet kept or returned /12",
     {"labels": COLOURS, "scale": _STONES}),
    ("turn_cards", (_C, len(CARD_STATUS)), None,
     "per character, this turn: face down, won, passed or tied, cursed, played through Imp/Goblin",
     {"labels": CARD_STATUS}),
    ("special_pile", (_C,), None, "specials known to be in the draw pile (order unknown)"),
    ("special_discards", (_C,), None, "specials in the discard pile"),
    ("seats", (MAX_SEATS, len(SEAT_FEATURES)), 0, "per seat: " + ", ".join(SEAT_FEATURES),
     {"labels": SEAT_FEATURES, "scale": SEAT_SCALE}),
    ("bid_cards", (CARDS_PER_TURN, _C), None, "one-hot character of each auction this turn",
     {"onehot": True, "labels": CHARACTER_SLOTS}),
    ("bids", (CARDS_PER_TURN, MAX_SEATS, len(BID_FEATURES)), 1,
     "revealed bids of each auction this turn, per seat: " + ", ".join(BID_FEATURES),
     {"labels": BID_FEATURES, "scale": BID_SCALE}),
    ("own", (len(OWN_FEATURES),), None, "the viewer's coins and own sealed bid: " + ", ".join(OWN_FEATURES),
     {"labels": OWN_FEATURES, "scale": OWN_SCALE}),
    # The power being used now: what the table has been told since it started (layout v1).
    ("power_source", (_C,), None, "one-hot: the card the power is used through (Ghost, Imp, Goblin; F31-F35)",
     {"onehot": True, "labels": CHARACTER_SLOTS}),
    ("power_auction", (CARDS_PER_TURN,), None, "one-hot: the auction of this turn the power uses (F23, F31, F37)",
     {"onehot": True}),
    ("power_uses_left", (1,), None, "further uses of this power queued after this one (a played Doppelganger, F28)"),
    ("rainbow_named", (3,), None, "one-hot: the colour the Rainbow Dragon named (F39)",
     {"onehot": True, "labels": COLOURS}),
    ("merchant_bought", (3,), None, "stones the Merchant bought this use, by colour /12 (F36)",
     {"labels": COLOURS, "scale": _STONES}),
    ("merchant_paid", (3,), None, "coins the Merchant paid this use: common, fairy, silver /10 (F36)",
     {"labels": MERCHANT_COINS, "scale": 10}),
    ("second_bidders", (MAX_SEATS,), 0, "the seats the Thief may rob (F23)"),
    ("necromancer_price", (1,), None, "fairy gold the Necromancer would pay /10 (F37)", {"scale": 10}),
]
LAYOUT: dict[str, Piece] = build_layout(_SPEC)
OBS_SIZE: int = layout_size(LAYOUT)
_DECISION_INDEX = {k: i for i, k in enumerate(V1_NAMES)}
_COIN_COLS = [SEAT_FEATURES.index(f) for f in ("fairy", "common", "silver", "coins_known")]
OBSERVATION = Observation(LAYOUT, MAX_SEATS)  # permutation, view, decode and table, shared code
_SCALES = scale_vector(LAYOUT)  # the encoder's own scales (the scalars below); bots use decode()
_SEAT_DIV = np.array(SEAT_SCALE, np.float32)
_BID_DIV = np.array(BID_SCALE, np.float32)
_OWN_DIV = np.array(OWN_SCALE, np.float32)


def decode(obs: np.ndarray, pieces: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A structured, unscaled view of an observation vector: piece name -> value.

    One-hot pieces give their label (``decode(obs)["card"] == "Troll"``), labelled pieces a
    dict (``decode(obs)["seats"]["score"]`` is the score of each relative seat, ``[0]`` the
    viewer's), the others their counts. Bots read observations through this, never through
    the scales above.

    ``"decision"`` is the decision's kind (:data:`.decisions.KINDS`, ``"none"`` once the game is
    over) and ``"asks"`` the character that asks it: the ``card`` piece, but for the held
    Doppelganger's offer (F28), which asks about the won card (``card``).

    With ``pieces`` (a tuple of piece names, ``"decision"`` and ``"card"`` among them), only those
    pieces are decoded (and ``"asks"``): what a bot that reads a few pieces pays for.
    """
    if pieces is not None and ("decision" not in pieces or "card" not in pieces):
        raise ValueError(f"decode: pieces must include 'decision' and 'card' (they give the kind and 'asks'), "
                         f"got {pieces}")
    d = OBSERVATION.decode(obs, pieces)
    d["decision"], d["asks"] = decision_of(d["decision"], d["card"])
    return d


def decision_of(slot: str, card: str | None) -> tuple[str, str | None]:
    """The decision's kind and the character that asks it, from the ``decision`` piece's label (the
    layout-v1 name) and the ``card`` piece's: what :func:`decode` gives as ``"decision"`` and ``"asks"``."""
    return V1_KIND.get(slot, slot), (V1_CARD.get(slot, card) if slot != "none" else None)


view = OBSERVATION.view
# The fast accessor of a few pieces (``reader(pieces)(obs)``: one flat list of the counts decode gives),
# for the bots that read an observation at every decision.
reader = OBSERVATION.reader
permutation = OBSERVATION.permutation
layout_table = OBSERVATION.table


_HIDDEN_COINS: np.ndarray = np.array(
    [LAYOUT["seats"].slice.start + s * len(SEAT_FEATURES) + c for s in range(1, MAX_SEATS) for c in _COIN_COLS]
)


MODES = ("recall", "table")


def hide_coins(observations: np.ndarray) -> np.ndarray:
    """Table mode's observation (F43) from recall mode's, for one vector or a batch: the other seats'
    coins behind their screens (and their ``coins_known`` flags) zeroed, in a copy."""
    out = np.array(observations, np.float32)
    out[..., _HIDDEN_COINS] = 0.0
    return out


def seat_view(options: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray] | None:
    """What a policy trained with these env options sees of a recall-mode table: ``None`` (all of it)
    for ``observation_mode: "recall"``, :func:`hide_coins` for ``"table"``. Evaluations play at recall
    tables, so a table-mode policy must hide the coins itself to see what it learnt from."""
    mode = options.get("observation_mode", "recall")
    if mode not in MODES:
        raise ValueError(f"observation_mode must be 'recall' or 'table', got {mode!r}")
    return hide_coins if mode == "table" else None


class Observer(ObserverBase):
    """Builds observations of one game for any viewer, reusing what has not changed.

    The public part (everything but the acting seat, the sealed flags and the viewer's
    own piece) is rebuilt only after :meth:`invalidate`, i.e. when something public
    changed: sealing a bid changes nothing public. Within it, the revealed bids of the
    turn and the special piles are kept between rebuilds, as they change far less often.
    """

    observation = OBSERVATION

    def __init__(self, mode: str = "recall"):
        if mode not in MODES:
            raise ValueError(f"observation_mode must be 'recall' or 'table', got {mode!r}")
        self.mode = mode
        self._public: np.ndarray | None = None
        self._turn_key: tuple | None = None  # (game, turn) the bid history below belongs to
        self._bids = np.zeros(LAYOUT["bid_cards"].slice.stop - LAYOUT["bid_cards"].slice.start
                              + LAYOUT["bids"].slice.stop - LAYOUT["bids"].slice.start, np.float32)
        self._bids_done = 0  # auctions of this turn whose bids are final in self._bids
        self._piles_key: tuple | None = None
        self._piles = np.zeros(2 * _C, np.float32)

    def invalidate(self) -> None:
        self._public = None

    def public(self, game: Game) -> np.ndarray:
        if self._public is None:
            self._public = self._public_vector(game)
        return self._public

    def private(self, obs: np.ndarray, game: Game, viewer: int) -> None:
        """Coins hidden in table mode (F43), who acts, who has sealed, the viewer's own piece."""
        if self.mode == "table":
            obs[_HIDDEN_COINS] = 0.0
        n = game.num_players
        d = game.decision
        a = game.auction
        if d is not None:
            obs[_ACTING + (d.player - viewer) % n] = 1.0
            if a is not None and a._sealed and d.kind in (BID, TIEBREAK):
                for p in a._sealed:
                    obs[_HAS_BID + (p - viewer) % n] = 1.0
        pl = game.players[viewer]
        own = [pl.fairy, pl.common, pl.silver, pl.black, pl.amulets, 0, 0, 0, 0]
        if a is not None and viewer in a._sealed:  # the viewer's own sealed bid only
            sealed = a._sealed[viewer]
            if len(sealed) == 4:
                own[5:9] = sealed
            else:  # a tie-break bid: silver in the fairy slot, amulet in the amulet slot
                own[5], own[8] = sealed
        obs[_OWN] = np.array(own, np.float32) / _OWN_DIV

    def _public_vector(self, game: Game) -> np.ndarray:
        out = public_vector(game)
        # Revealed bids of this turn: an auction's row is final once it is settled.
        key = (id(game), game.turn)
        if key != self._turn_key:
            self._turn_key, self._bids_done = key, 0
            self._bids[:] = 0.0
        auctions = game.auctions
        if len(auctions) > self._bids_done:
            hist = self._bids
            cards = hist[: _BID_CARDS_SIZE].reshape(LAYOUT["bid_cards"].shape)
            bids = hist[_BID_CARDS_SIZE:].reshape(LAYOUT["bids"].shape)
            for slot in range(self._bids_done, len(auctions)):
                _fill_slot(cards, bids, slot, auctions[slot], game.slots)
            while self._bids_done < len(auctions) and auctions[self._bids_done].outcome not in ("open", "tiebreak"):
                self._bids_done += 1
        out[_HISTORY] = self._bids
        held = any(pl.doppelganger for pl in game.players)
        key = (id(game), game.turn, len(game.special_discards), held)
        if key != self._piles_key:
            self._piles_key = key
            self._piles[:] = _piles(game)
        out[_PILES] = self._piles
        return out


_ACTING = LAYOUT["acting_seat"].slice.start
_HAS_BID = LAYOUT["has_bid"].slice.start
_OWN = LAYOUT["own"].slice
_BID_CARDS_SIZE = LAYOUT["bid_cards"].slice.stop - LAYOUT["bid_cards"].slice.start
_HISTORY = slice(LAYOUT["bid_cards"].slice.start, LAYOUT["bids"].slice.stop)
_PILES = slice(LAYOUT["special_pile"].slice.start, LAYOUT["special_discards"].slice.stop)
assert LAYOUT["bid_cards"].slice.stop == LAYOUT["bids"].slice.start
assert LAYOUT["special_pile"].slice.stop == LAYOUT["special_discards"].slice.start


def _fill_slot(cards: np.ndarray, bids: np.ndarray, slot: int, auc, slots: dict[str, int]) -> None:
    cards[slot] = 0.0
    cards[slot, slots[auc.card]] = 1.0
    bids[slot] = 0.0
    if auc.bids is None:
        return
    for p, (f, c, blk, am) in enumerate(auc.bids):
        silver, silver_amulet = auc.silver[p] if auc.silver and p in auc.silver else (0, 0)
        bids[slot, p] = (f, c, blk, am, auc.values[p], silver, silver_amulet)
    bids[slot] /= _BID_DIV


def _piles(game: Game) -> np.ndarray:
    """Specials known to be in the draw pile, then those in the discards (F7, F43)."""
    pile = np.zeros(_C, np.float32)
    discards = np.zeros(_C, np.float32)
    slots = game.slots  # a custom deck's cards sit in the reserved slots custom_1..4 (#16)
    for name in game.special_deck:
        pile[slots[name]] += 1
    for name in game.special_discards:
        discards[slots[name]] += 1
    pile -= discards
    for name in game.turn_specials:
        pile[slots[name]] -= 1
    if any(pl.doppelganger for pl in game.players):  # the held card is in neither pile (F7)
        pile[slots["Doppelganger"]] -= 1
    np.maximum(pile, 0.0, out=pile)
    return np.concatenate([pile, discards])


def public_vector(game: Game) -> np.ndarray:
    """What every player may see, in absolute seat order (see :data:`LAYOUT`), but for the bid
    history and the special piles, which :class:`Observer` keeps up to date incrementally."""
    out = np.zeros(OBS_SIZE, np.float32)
    n = game.num_players
    out[LAYOUT["seat_present"].slice.start : LAYOUT["seat_present"].slice.start + n] = 1.0

    d = game.decision
    out[LAYOUT["decision"].slice.start + (_DECISION_INDEX[v1_name(d.kind, d.card)] if d else len(V1_NAMES))] = 1.0
    card = _resolved_card(game)
    if card is not None:
        out[LAYOUT["card"].slice.start + game.slots[card]] = 1.0
    b = game.bank
    out[_SCALARS] = np.array(
        [game.turn / game.max_turns, len(game.auctions),
         b.fairy, b.common, b.silver, b.amulets, *b.stones, *game.pending_stones], np.float32) / _SCALAR_SCALE

    status = out[LAYOUT["turn_cards"].slice]
    width = len(CARD_STATUS)
    for name in game.face_down:
        status[game.slots[name] * width] += 1
    for name, how in game.played:
        status[game.slots[name] * width + _STATUS_INDEX[how]] += 1

    a = game.auction
    tied = a.tied if a is not None and a.tied is not None else ()
    winner = a.winner if a is not None else None
    rows = [
        [pl.score, *pl.stones, pl.fairy_spent, pl.amulets, pl.black, pl.doppelganger,
         pl.fairy, pl.common, pl.silver, 1.0, p in tied, winner == p]
        for p, pl in enumerate(game.players)
    ]
    seats = out[LAYOUT["seats"].slice].reshape(LAYOUT["seats"].shape)
    seats[:n] = np.array(rows, np.float32) / _SEAT_DIV
    if game.power is not None:
        _fill_power(out, game)
    return out


def _resolved_card(game: Game) -> str | None:
    """The card piece: the character being resolved or auctioned. While a power asks, the power's
    card (the decision's asker); otherwise the auction's (bids, the held Doppelganger's offer
    about the won card, F28, and the end of the game)."""
    if game.decision is not None and game.power is not None:
        return game.power.card
    return game.auction.card if game.auction is not None else None


_SCALARS = slice(LAYOUT["progress"].slice.start, LAYOUT["pending_stones"].slice.stop)
assert LAYOUT["progress"].slice.stop == LAYOUT["bank"].slice.start
assert LAYOUT["bank"].slice.stop == LAYOUT["pending_stones"].slice.start
_SCALAR_SCALE = _SCALES[_SCALARS].astype(np.float32)


def _fill_power(out: np.ndarray, game: Game) -> None:
    """The power being used now (absolute seats; the observer rotates them)."""
    pw = game.power
    if pw.source is not None:
        out[LAYOUT["power_source"].slice.start + game.slots[pw.source]] = 1.0
    slot = next((i for i, a in enumerate(game.auctions) if a is pw.auction), None)
    if slot is not None:
        out[LAYOUT["power_auction"].slice.start + slot] = 1.0
    out[LAYOUT["power_uses_left"].slice.start] = pw.uses_left
    if pw.named is not None:
        out[LAYOUT["rainbow_named"].slice.start + pw.named] = 1.0
    out[LAYOUT["merchant_bought"].slice] = np.array(pw.bought, np.float32) / _STONES
    out[LAYOUT["merchant_paid"].slice] = np.array(pw.paid, np.float32) / 10
    if pw.second_bidders is not None:
        for q in pw.second_bidders:
            out[LAYOUT["second_bidders"].slice.start + q] = 1.0
    if pw.price is not None:
        out[LAYOUT["necromancer_price"].slice.start] = pw.price / 10

