"""The global state of a DrachenSchatten game: every fact the engine holds, one float32 vector.

What PettingZoo's ``state()`` returns (``raw_env.state()``, in ``raw_env.state_space``): the input of
a centralised critic (MAPPO-style value functions), never of a policy, which must act on its own
observation. It holds, in absolute seats (seat 0 is ``player_0``, tables of fewer than 4 padded):

* everything public, as the observation lays it out (:data:`.observation.LAYOUT`), without the
  viewer's own torch memory (``memory``);
* the hidden facts: the cards of every stack in order, top first (D2), every seat's torch memory
  (D4) and the stacks the torch being used has shown its user.

Stacks are at most 4 cards high in a dealt game (64 cards in 16 stacks, D2); the cards of a taller
stack (only an arranged test table has one) below the fourth are counted by type, not ordered.
The engine's random generator is not in it: nothing is drawn after the deal.

Its layout is data, :data:`STATE_LAYOUT` (named pieces with their scales, as the observation's), so
``decode_state`` reads it back and ``state_table()`` documents it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.layout import Piece, build_layout, decode, exact_vector, layout_size, layout_table, scale_vector

from .cards import CARD_TYPE_OF_ID, NUM_CARD_TYPES, NUM_CARDS
from .observation import COUNT_SCALE, LAYOUT, MAX_SEATS, Observer
from .rules import NUM_STACKS, DrachenSchattenGame

STACK_DEPTH = NUM_CARDS // NUM_STACKS  # a dealt stack's height (D2)
STATE_HIGH = NUM_CARDS / COUNT_SCALE  # the largest count: every card in one piece (an arranged table)
_PRIVATE = ("memory",)  # the viewer's piece of the observation: every seat's memory is below


def _public_rows(layout: dict[str, Piece]) -> list[tuple]:
    """The observation's pieces but the viewer's own, as build_layout rows (same names, shapes, scales)."""
    return [(p.name, p.shape, p.seat_axis, p.help,
             {"scale": p.scale, "labels": p.labels, "onehot": p.onehot, "exact": p.exact})
            for p in layout.values() if p.name not in _PRIVATE]


# (name, shape, seat axis, meaning, extras): the layout, as data. See layout.Piece for the extras.
_HIDDEN_SPEC = [
    ("stack_cards", (NUM_STACKS, STACK_DEPTH, NUM_CARD_TYPES), None,
     "one-hot: the type of each card of each stack, top first (village 0-7, caves 8-15; D2)", {"onehot": True}),
    ("stack_rest", (NUM_STACKS, NUM_CARD_TYPES), None,
     "cards below the fourth of each stack per type / 4 (only an arranged table has any)", {"scale": COUNT_SCALE}),
    ("memories", (MAX_SEATS, NUM_STACKS, NUM_CARD_TYPES), 0,
     "per seat, its torch memory: one-hot type of the top card of each stack it saw (D4)", {"onehot": True}),
    ("torch_seen", (NUM_STACKS,), None, "the stacks the torch being used has shown its user (D4)"),
]
STATE_LAYOUT: dict[str, Piece] = build_layout(_public_rows(LAYOUT) + _HIDDEN_SPEC)
STATE_SIZE: int = layout_size(STATE_LAYOUT)
_MEMORY = LAYOUT["memory"].slice
_PUBLIC_SIZE = STATE_LAYOUT["stack_cards"].slice.start
assert layout_size(LAYOUT) - (_MEMORY.stop - _MEMORY.start) == _PUBLIC_SIZE  # the viewer's piece only left out
_STACK_CARDS = STATE_LAYOUT["stack_cards"].slice.start
_STACK_REST = STATE_LAYOUT["stack_rest"].slice.start
_MEMORIES = STATE_LAYOUT["memories"].slice.start
_TORCH_SEEN = STATE_LAYOUT["torch_seen"].slice.start
_SCALES = scale_vector(STATE_LAYOUT)
_EXACT = exact_vector(STATE_LAYOUT)
_T = NUM_CARD_TYPES


def global_state(game: DrachenSchattenGame) -> np.ndarray:
    """The global state vector of ``game`` now (see the module's docstring), laid out as :data:`STATE_LAYOUT`."""
    out = np.zeros(STATE_SIZE, np.float32)
    public = Observer().public(game)  # absolute seats, the memory piece zero
    out[: _MEMORY.start] = public[: _MEMORY.start]
    out[_MEMORY.start : _PUBLIC_SIZE] = public[_MEMORY.stop :]
    for s, stack in enumerate(game._stacks):
        for k, cid in enumerate(reversed(stack)):  # the top card is the end of the list
            if k < STACK_DEPTH:
                out[_STACK_CARDS + (s * STACK_DEPTH + k) * _T + CARD_TYPE_OF_ID[cid]] = 1.0
            else:
                out[_STACK_REST + s * _T + CARD_TYPE_OF_ID[cid]] += 1.0 / COUNT_SCALE
    for q, memory in enumerate(game._memories):
        for s, cid in memory.items():
            out[_MEMORIES + (q * NUM_STACKS + s) * _T + CARD_TYPE_OF_ID[cid]] = 1.0
    if game._view is not None:
        for s in game._view["seen"]:
            out[_TORCH_SEEN + s] = 1.0
    return out


def decode_state(state: np.ndarray) -> dict[str, Any]:
    """A structured, unscaled view of a global state vector: piece name -> value (as the
    observation's ``decode``: one-hot pieces as labels or indices, labelled pieces as dicts)."""
    return decode(STATE_LAYOUT, state, _SCALES, _EXACT)


def state_table() -> str:
    """The global state's layout as a Markdown table."""
    return layout_table(STATE_LAYOUT)
