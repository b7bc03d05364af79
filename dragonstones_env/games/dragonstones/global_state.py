"""The global state of a Fist of Dragonstones game: every fact the engine holds, one float32 vector.

What PettingZoo's ``state()`` returns (``raw_env.state()``, in ``raw_env.state_space``): the input of
a centralised critic (MAPPO-style value functions, trained with every seat's view at once), never
of a policy, which must act on its own observation. It holds, in absolute seats (seat 0 is
``player_0``, tables of fewer than 6 padded):

* everything public, as the recall-mode observation lays it out (:data:`.observation.LAYOUT`),
  without the viewer's own piece (``own``): every seat's coins behind its screen (F43), the bank,
  the revealed bids of the turn, the power being used, who acts and who has sealed a bid;
* the hidden facts: every sealed bid of the current round (F10, F14), the order of the face-down
  characters of this turn (F8) and the order of the special pile (F7), top first.

What is not yet a fact is not in it: the stones a Rainbow Dragon or the setup will draw and the
order of a reshuffle (F7) come from the engine's random generator when they happen.

Its layout is data, :data:`STATE_LAYOUT` (named pieces with their scales, as the observation's), so
``decode_state`` reads it back and ``state_table()`` documents it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.layout import Piece, build_layout, decode, exact_vector, layout_size, layout_table, scale_vector

from .cards import CARDS_PER_TURN, CHARACTER_SLOTS, NUM_CHARACTER_SLOTS, SPECIAL_DECK
from .custom import MAX_COPIES, MAX_CUSTOM
from .engine import Game
from .observation import LAYOUT, MAX_SEATS, OBS_HIGH, Observer

# The longest special pile: the box's specials and the most custom cards a deck may add (#16).
MAX_PILE = len(SPECIAL_DECK) + MAX_CUSTOM * MAX_COPIES
SEALED_FEATURES = ("fairy", "common", "black", "amulet", "tiebreak_silver", "tiebreak_amulet")
SEALED_SCALE = (10, 10, 1, 1, 20, 1)
STATE_HIGH = OBS_HIGH
_PRIVATE = ("own",)  # the viewer's piece of the observation: every seat's coins are in "seats" already


def _public_rows(layout: dict[str, Piece]) -> list[tuple]:
    """The observation's pieces but the viewer's own, as build_layout rows (same names, shapes, scales)."""
    return [(p.name, p.shape, p.seat_axis, p.help,
             {"scale": p.scale, "labels": p.labels, "onehot": p.onehot, "exact": p.exact})
            for p in layout.values() if p.name not in _PRIVATE]


# (name, shape, seat axis, meaning, extras): the layout, as data. See layout.Piece for the extras.
_HIDDEN_SPEC = [
    ("sealed_bids", (MAX_SEATS, len(SEALED_FEATURES)), 0,
     "per seat, its sealed bid of the current round, not yet revealed (F10, F14): " + ", ".join(SEALED_FEATURES),
     {"labels": SEALED_FEATURES, "scale": SEALED_SCALE}),
    ("face_down_order", (CARDS_PER_TURN, NUM_CHARACTER_SLOTS), None,
     "one-hot: the face-down characters of this turn in the order they will be auctioned, next first (F8)",
     {"onehot": True, "labels": CHARACTER_SLOTS}),
    ("special_pile_order", (MAX_PILE, NUM_CHARACTER_SLOTS), None,
     "one-hot: the special pile from its top card down (F7)",
     {"onehot": True, "labels": CHARACTER_SLOTS}),
]
STATE_LAYOUT: dict[str, Piece] = build_layout(_public_rows(LAYOUT) + _HIDDEN_SPEC)
STATE_SIZE: int = layout_size(STATE_LAYOUT)
_OWN = LAYOUT["own"].slice
_PUBLIC_SIZE = STATE_LAYOUT["sealed_bids"].slice.start
assert layout_size(LAYOUT) - (_OWN.stop - _OWN.start) == _PUBLIC_SIZE  # the viewer's piece only left out
_SEALED = STATE_LAYOUT["sealed_bids"].slice
_FACE_DOWN = STATE_LAYOUT["face_down_order"].slice.start
_PILE = STATE_LAYOUT["special_pile_order"].slice.start
_SEALED_DIV = np.array(SEALED_SCALE, np.float32)
_SCALES = scale_vector(STATE_LAYOUT)
_EXACT = exact_vector(STATE_LAYOUT)


def global_state(game: Game) -> np.ndarray:
    """The global state vector of ``game`` now (see the module's docstring), laid out as :data:`STATE_LAYOUT`."""
    out = np.zeros(STATE_SIZE, np.float32)
    seen = Observer("recall").observe(game, 0)  # seat 0's view: its relative seats are the absolute ones
    out[: _OWN.start] = seen[: _OWN.start]
    out[_OWN.start : _PUBLIC_SIZE] = seen[_OWN.stop :]
    a = game.auction
    if a is not None and a._sealed:
        sealed = out[_SEALED].reshape(MAX_SEATS, len(SEALED_FEATURES))
        for p, bid in a._sealed.items():
            if len(bid) == 4:  # a gold bid (fairy, common, black, amulet)
                sealed[p, :4] = bid
            else:  # a tie-break bid (silver, amulet)
                sealed[p, 4:] = bid
        sealed /= _SEALED_DIV
    slots = game.slots  # a custom deck's cards sit in the reserved slots custom_1..4 (#16)
    width = NUM_CHARACTER_SLOTS
    for k, name in enumerate(reversed(game.face_down)):  # the next one is at the end (F8)
        out[_FACE_DOWN + k * width + slots[name]] = 1.0
    for k, name in enumerate(reversed(game.special_pile)):  # the top of the pile is the end of the list
        out[_PILE + k * width + slots[name]] = 1.0
    return out


def decode_state(state: np.ndarray) -> dict[str, Any]:
    """A structured, unscaled view of a global state vector: piece name -> value (as the
    observation's ``decode``: one-hot pieces as labels, labelled pieces as dicts)."""
    return decode(STATE_LAYOUT, state, _SCALES, _EXACT)


def state_table() -> str:
    """The global state's layout as a Markdown table."""
    return layout_table(STATE_LAYOUT)
