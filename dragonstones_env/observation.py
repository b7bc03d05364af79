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

from dataclasses import dataclass

import numpy as np

from .cards import CARDS_PER_TURN, CHARACTER_INDEX, CHARACTER_NAMES, SPECIAL_DECK
from .engine import BID, DECISION_KINDS, STOCK, TIEBREAK, Game

MAX_SEATS = 6
NUM_CHARACTERS = len(CHARACTER_NAMES)
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
BID_FEATURES = ("fairy", "common", "black", "amulet", "value", "tiebreak_value")
OWN_FEATURES = ("fairy", "common", "silver", "black", "amulets", "bid_fairy", "bid_common", "bid_black", "bid_amulet")
# Scales: counts are divided so that typical values fall in 0..1 (they may exceed it).
_SEAT_SCALE = np.array([3, 12, 12, 12, 10, 2, 2, 1, 10, 10, 20, 1, 1, 1], np.float32)
_BID_SCALE = np.array([10, 10, 1, 1, 20, 20], np.float32)
_OWN_SCALE = np.array([10, 10, 20, 2, 2, 10, 10, 1, 1], np.float32)
OBS_HIGH = 100.0


@dataclass(frozen=True)
class Piece:
    name: str
    shape: tuple[int, ...]
    slice: slice
    seat_axis: int | None  # the axis indexed by relative seat, if any
    help: str


def _build_layout() -> dict[str, Piece]:
    spec = [
        ("seat_present", (MAX_SEATS,), 0, "1 for each seat at the table"),
        ("acting_seat", (MAX_SEATS,), 0, "one-hot: the seat that must decide now"),
        ("has_bid", (MAX_SEATS,), 0, "seats whose bid of the current round is sealed (not its content)"),
        ("decision", (len(DECISION_KINDS) + 1,), None, "one-hot decision kind (last: none, game over)"),
        ("card", (NUM_CHARACTERS,), None, "one-hot: the character being auctioned or resolved"),
        ("progress", (2,), None, "turn / max_turns, auctions held this turn / 10"),
        ("bank", (7,), None, "bank: fairy/60, common/15, silver/40, amulets/2, red, blue, yellow stones/12"),
        ("pending_stones", (3,), None, "stones drawn by the Rainbow Dragon, not yet kept or returned /12"),
        ("turn_cards", (NUM_CHARACTERS, len(CARD_STATUS)), None,
         "per character, this turn: face down, won, passed or tied, cursed, played through Imp/Goblin"),
        ("special_pile", (NUM_CHARACTERS,), None, "specials known to be in the draw pile (order unknown)"),
        ("special_discards", (NUM_CHARACTERS,), None, "specials in the discard pile"),
        ("seats", (MAX_SEATS, len(SEAT_FEATURES)), 0, "per seat: " + ", ".join(SEAT_FEATURES)),
        ("bid_cards", (CARDS_PER_TURN, NUM_CHARACTERS), None, "one-hot character of each auction this turn"),
        ("bids", (CARDS_PER_TURN, MAX_SEATS, len(BID_FEATURES)), 1,
         "revealed bids of each auction this turn, per seat: " + ", ".join(BID_FEATURES)),
        ("own", (len(OWN_FEATURES),), None, "the viewer's coins and own sealed bid: " + ", ".join(OWN_FEATURES)),
    ]
    pieces, start = {}, 0
    for name, shape, seat_axis, text in spec:
        size = int(np.prod(shape))
        pieces[name] = Piece(name, shape, slice(start, start + size), seat_axis, text)
        start += size
    return pieces


LAYOUT: dict[str, Piece] = _build_layout()
OBS_SIZE: int = max(p.slice.stop for p in LAYOUT.values())
_DECISION_INDEX = {k: i for i, k in enumerate(DECISION_KINDS)}
_COIN_COLS = [SEAT_FEATURES.index(f) for f in ("fairy", "common", "silver", "coins_known")]


def view(obs: np.ndarray, name: str) -> np.ndarray:
    """The named piece of an observation, in its shape (a view, not a copy)."""
    piece = LAYOUT[name]
    return obs[piece.slice].reshape(piece.shape)


def _rotation(num_players: int, viewer: int) -> list[int]:
    """Absolute seat of each relative seat; padding seats map to themselves (always empty)."""
    return [(viewer + k) % num_players for k in range(num_players)] + list(range(num_players, MAX_SEATS))


_PERMS: dict[tuple[int, int, bool], np.ndarray] = {}


def permutation(num_players: int, viewer: int) -> np.ndarray:
    """Flat index array taking an absolute-seat vector to the viewer's relative one."""
    key = (num_players, viewer, False)
    perm = _PERMS.get(key)
    if perm is None:
        perm = np.arange(OBS_SIZE)
        rot = _rotation(num_players, viewer)
        for piece in LAYOUT.values():
            if piece.seat_axis is not None:
                idx = np.arange(piece.slice.start, piece.slice.stop).reshape(piece.shape)
                perm[piece.slice] = idx.take(rot, axis=piece.seat_axis).ravel()
        _PERMS[key] = perm
    return perm


_HIDDEN_COINS: np.ndarray = np.array(
    [LAYOUT["seats"].slice.start + s * len(SEAT_FEATURES) + c for s in range(1, MAX_SEATS) for c in _COIN_COLS]
)


class Observer:
    """Builds observations of one game for any viewer, reusing the public part.

    The public part (everything but the acting seat, the sealed flags and the viewer's
    own piece) is rebuilt only when :meth:`invalidate` is called, i.e. when something
    public changed: sealing a bid changes nothing public.
    """

    def __init__(self, mode: str = "recall"):
        if mode not in ("recall", "table"):
            raise ValueError(f"observation_mode must be 'recall' or 'table', got {mode!r}")
        self.mode = mode
        self._public: np.ndarray | None = None

    def invalidate(self) -> None:
        self._public = None

    def observe(self, game: Game, viewer: int) -> np.ndarray:
        if self._public is None:
            self._public = public_vector(game)
        obs = self._public[permutation(game.num_players, viewer)]
        if self.mode == "table":
            obs[_HIDDEN_COINS] = 0.0
        n = game.num_players
        d = game.decision
        if d is not None:
            obs[LAYOUT["acting_seat"].slice.start + (d.player - viewer) % n] = 1.0
            a = game.auction
            if d.kind in (BID, TIEBREAK) and a is not None:
                start = LAYOUT["has_bid"].slice.start
                for p in a._sealed:
                    obs[start + (p - viewer) % n] = 1.0
        pl = game.players[viewer]
        own = [pl.fairy, pl.common, pl.silver, pl.black, pl.amulets, 0, 0, 0, 0]
        a = game.auction
        if a is not None and viewer in a._sealed:  # the viewer's own sealed bid only
            sealed = a._sealed[viewer]
            if len(sealed) == 4:
                own[5:9] = sealed
            else:  # a tie-break bid: silver in the fairy slot, amulet in the amulet slot
                own[5], own[8] = sealed
        obs[LAYOUT["own"].slice] = np.array(own, np.float32) / _OWN_SCALE
        return obs


def public_vector(game: Game) -> np.ndarray:
    """Everything every player may see, in absolute seat order (see :data:`LAYOUT`)."""
    out = np.zeros(OBS_SIZE, np.float32)
    n = game.num_players
    out[LAYOUT["seat_present"].slice.start : LAYOUT["seat_present"].slice.start + n] = 1.0

    d = game.decision
    out[LAYOUT["decision"].slice.start + (_DECISION_INDEX[d.kind] if d else len(DECISION_KINDS))] = 1.0
    card = d.card if d is not None and d.card else (game.auction.card if game.auction else None)
    if card is not None:
        out[LAYOUT["card"].slice.start + CHARACTER_INDEX[card]] = 1.0
    out[LAYOUT["progress"].slice] = (game.turn / game.max_turns, len(game.auctions) / CARDS_PER_TURN)
    b = game.bank
    out[LAYOUT["bank"].slice] = np.array(
        [b.fairy / STOCK["fairy"], b.common / STOCK["common"], b.silver / STOCK["silver"],
         b.amulets / STOCK["amulets"], *(s / STOCK["stones"] for s in b.stones)], np.float32)
    out[LAYOUT["pending_stones"].slice] = np.array(game.pending_stones, np.float32) / STOCK["stones"]

    status = view(out, "turn_cards")
    for name in game.face_down:
        status[CHARACTER_INDEX[name], 0] += 1
    for name, how in game.played:
        status[CHARACTER_INDEX[name], _STATUS_INDEX[how]] += 1
    discards = view(out, "special_discards")
    for name in game.special_discards:
        discards[CHARACTER_INDEX[name]] += 1
    pile = view(out, "special_pile")
    for name in SPECIAL_DECK:
        pile[CHARACTER_INDEX[name]] += 1
    pile -= discards
    for name in game.turn_specials:
        pile[CHARACTER_INDEX[name]] -= 1
    if any(pl.doppelganger for pl in game.players):  # the held card is in neither pile (F7)
        pile[CHARACTER_INDEX["Doppelganger"]] -= 1
    np.maximum(pile, 0.0, out=pile)

    a = game.auction
    seats = np.zeros((MAX_SEATS, len(SEAT_FEATURES)), np.float32)
    for p, pl in enumerate(game.players):
        seats[p] = (pl.score, *pl.stones, pl.fairy_spent, pl.amulets, pl.black, pl.doppelganger,
                    pl.fairy, pl.common, pl.silver, 1.0,
                    a is not None and a.tied is not None and p in a.tied,
                    a is not None and a.winner == p)
    out[LAYOUT["seats"].slice] = (seats / _SEAT_SCALE).ravel()

    bid_cards = view(out, "bid_cards")
    bids = view(out, "bids")
    for slot, auc in enumerate(game.auctions):
        bid_cards[slot, CHARACTER_INDEX[auc.card]] = 1.0
        if auc.bids is None:
            continue
        for p, (f, c, blk, am) in enumerate(auc.bids):
            tb = 0
            if auc.silver and p in auc.silver:
                s, sa = auc.silver[p]
                tb = s * (2 if sa else 1)
            bids[slot, p] = (f, c, blk, am, auc.values[p], tb)
    bids /= _BID_SCALE
    return out


def layout_table() -> str:
    """The observation layout as a Markdown table."""
    rows = ["| slice | piece | shape | meaning |", "|---|---|---|---|"]
    for p in LAYOUT.values():
        shape = " x ".join(map(str, p.shape))
        rows.append(f"| {p.slice.start}-{p.slice.stop - 1} | `{p.name}` | {shape} | {p.help} |")
    rows.append(f"\n{OBS_SIZE} floats in all.")
    return "\n".join(rows)
