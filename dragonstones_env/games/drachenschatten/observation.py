"""What one player sees of a DrachenSchatten game: one flat float32 vector.

The vector is built from named pieces (name -> slice, see :data:`LAYOUT`, built with
:func:`dragonstones_env.layout.build_layout`), so its layout documents itself. Seats are relative
to the viewer: seat 0 is the viewer, 1 the next player clockwise, ...; tables of fewer than 4
players are padded with absent seats (all zeros).

Everything on the table is public: stack sizes, every collection with each object's ready/used
state, the cards out of the game. The only private piece is ``memory``: the cards the VIEWER has
looked at with a torch and that are still on their stack (D4). Nobody sees another player's
memory, nor which stacks another player looked at. The contents of the stacks are never read.

Every value lies in ``[0, OBS_HIGH]``; counts are scaled so typical values fall in 0..1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.layout import Piece, build_layout, layout_size
from dragonstones_env.observer import Observation
from dragonstones_env.observer import Observer as ObserverBase

from .cards import CARD_TYPE_OF_ID, CARDS, NUM_CARD_TYPES, NUM_CARDS, TYPE_INDEX
from .rules import NUM_STACKS, DrachenSchattenGame

MAX_SEATS = 4
DECISION_KINDS: tuple[str, ...] = ("pick", "turn", "view", "protect", "forfeit")
SEAT_TOTALS: tuple[str, ...] = ("cards", "kinds", "beasts", "treasures", "ready")
_TOTALS_SCALE = np.array([16, 7, 3, 3, 16], np.float32)
COUNT_SCALE = 4.0  # per-type counts are divided by this (at most 7 copies of a type: 1.75)
OBS_HIGH = 4.0
MAX_OBJECT_USES = int(OBS_HIGH * COUNT_SCALE)  # object_uses saturates here: 16 uses of a type in a turn
_MAX_TURNS_SCALE = 64.0  # every turn but the last turns a card over: turn <= 65 in practice

_SPEC = [  # (name, shape, seat axis, meaning, extras: scale, labels, one-hot; see layout.Piece)
    ("seat_present", (MAX_SEATS,), 0, "1 for each seat at the table"),
    ("acting_seat", (MAX_SEATS,), 0, "one-hot: the seat to decide now (for a forfeit: not the active seat)",
     {"onehot": True}),
    ("active_seat", (MAX_SEATS,), 0, "one-hot: whose turn it is (zeros during the opening picks)",
     {"onehot": True}),
    ("first_player", (MAX_SEATS,), 0, "one-hot: the first player (D2)", {"onehot": True}),
    ("decision", (len(DECISION_KINDS) + 1,), None,
     "one-hot decision kind: " + ", ".join(DECISION_KINDS) + ", none (game over)",
     {"onehot": True, "labels": (*DECISION_KINDS, "none")}),
    ("card", (NUM_CARD_TYPES,), None,
     "one-hot: the card the decision is about: torch (view), beast (protect), decay object (forfeit)",
     {"onehot": True}),
    ("turned_over", (1,), None, "1 once this turn's mandatory turn-over is done (D3)"),
    ("view_left", (1,), None, "cards the torch being used may still view / 3", {"scale": 3.0}),
    ("progress", (2,), None, "turn / 64, steps / max_steps (truncation at 1)",
     {"labels": ("turn", "steps_fraction"), "scale": (_MAX_TURNS_SCALE, 1.0), "exact": (True, False)}),
    ("stacks", (NUM_STACKS,), None, "cards left in each stack / 4 (village 0-7, caves 8-15)", {"scale": 4.0}),
    ("removed", (1,), None, "cards out of the game / 64", {"scale": 64.0}),
    ("removed_cards", (NUM_CARD_TYPES,), None, "cards out of the game per card type / 4", {"scale": COUNT_SCALE}),
    ("forfeits", (MAX_SEATS,), 0, "seats still to forfeit a used object to a decay (D4)"),
    ("collection", (MAX_SEATS, NUM_CARD_TYPES, 2), 0,
     "per seat and card type / 4: ready objects, other cards (used objects, beasts, treasures)",
     {"labels": ("ready", "other"), "scale": COUNT_SCALE}),
    ("totals", (MAX_SEATS, len(SEAT_TOTALS)), 0,
     "per seat: cards / 16, object kinds / 7, beasts / 3, treasures / 3, ready objects / 16",
     {"labels": SEAT_TOTALS, "scale": tuple(float(x) for x in _TOTALS_SCALE)}),
    ("memory", (NUM_STACKS, NUM_CARD_TYPES), None,
     "the viewer's torch memory: one-hot type of the top card of each stack it saw (D4), else zeros",
     {"onehot": True}),
]
# v1 (issue 52): a key may restore another key for ever (D4), and v0 saw every state of that loop
# alike but for the step fraction, so a policy could not tell its 900th restore from its first.
# The turn's object uses make the repetition visible. Appended last, so v0 is v1's prefix.
_SPEC_V1 = [
    ("object_uses", (NUM_CARD_TYPES,), None,
     "objects the active seat used this turn, per card type / 4 (capped at 4: 16 uses)",
     {"scale": COUNT_SCALE}),
]
LAYOUT_V0: dict[str, Piece] = build_layout(_SPEC)  # drachenschatten_v0, what older checkpoints see
OBS_SIZE_V0: int = layout_size(LAYOUT_V0)
LAYOUT: dict[str, Piece] = build_layout(_SPEC + _SPEC_V1)
OBS_SIZE: int = layout_size(LAYOUT)
_DECISION_INDEX = {k: i for i, k in enumerate(DECISION_KINDS)}


OBSERVATION = Observation(LAYOUT, MAX_SEATS)  # permutation, view, decode and table, shared code


def decode(obs: np.ndarray, pieces: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A structured, unscaled view of an observation vector: piece name -> value (one-hot
    pieces as their label or index, labelled pieces as dicts, the rest as counts). Bots read
    observations through this, never through the scales above. With ``pieces`` (a tuple of
    names), only those pieces are decoded."""
    return OBSERVATION.decode(obs, pieces)


def v0_view(observations: np.ndarray) -> np.ndarray:
    """A v0 observation (one vector or a batch) from a v1 one: v0's pieces are v1's first
    :data:`OBS_SIZE_V0` floats, unchanged, so a v0 checkpoint sees at a v1 table what it learnt from."""
    return np.asarray(observations, np.float32)[..., :OBS_SIZE_V0]


view = OBSERVATION.view
permutation = OBSERVATION.permutation
layout_table = OBSERVATION.table
# The fast accessor of a few pieces (``reader(pieces, arrays)``: what decode gives, as one flat list
# and arrays), for the bots that read an observation at every decision.
reader = OBSERVATION.reader


def _start(name: str) -> int:
    return LAYOUT[name].slice.start


_MEMORY = _start("memory")
_COLLECTION = _start("collection")


def public_vector(game: DrachenSchattenGame) -> np.ndarray:
    """Everything every player may see, in ABSOLUTE seat order, memory piece zero."""
    out = np.zeros(OBS_SIZE, np.float32)
    n = game.num_players
    out[_SEAT_PRESENT: _SEAT_PRESENT + n] = 1.0
    out[_FIRST_PLAYER + game.first_player] = 1.0
    d = game.decision
    if d is None:
        out[_DECISION + len(DECISION_KINDS)] = 1.0
    else:
        out[_ACTING + d.player] = 1.0
        out[_DECISION + _DECISION_INDEX[d.kind]] = 1.0
        if d.card is not None:
            out[_CARD + TYPE_INDEX[d.card]] = 1.0
        if d.kind != "pick":
            out[_ACTIVE + game.current_player] = 1.0
    out[_TURNED_OVER] = float(game.turned_over)
    if game._view is not None:
        out[_VIEW_LEFT] = game._view["left"] / 3.0
    out[_PROGRESS] = game.turn / _MAX_TURNS_SCALE
    out[_PROGRESS + 1] = game.steps / game.max_steps
    out[_STACKS] = [len(st) / 4.0 for st in game._stacks]
    out[_REMOVED] = len(game._removed) / NUM_CARDS
    for cid in game._removed:
        out[_REMOVED_CARDS + CARD_TYPE_OF_ID[cid]] += _Q
    for q in game._forfeits:
        out[_FORFEITS + q] = 1.0
    ready = game._ready
    tot = view(out, "totals")
    for q, coll in enumerate(game._collections):
        base = _COLLECTION + q * NUM_CARD_TYPES * 2
        kinds = set()
        beasts = treasures = nready = 0
        for cid in coll:
            t = CARD_TYPE_OF_ID[cid]
            rd = ready[cid]
            out[base + 2 * t + (0 if rd else 1)] += _Q
            cat = _CATEGORY_OF_TYPE[t]
            if cat == "object":
                kinds.add(_KIND_OF_TYPE[t])
                nready += rd
            elif cat == "beast":
                beasts += 1
            else:
                treasures += 1
        tot[q] = (len(coll), len(kinds), beasts, treasures, nready)
    tot[:n] /= _TOTALS_SCALE
    if d is not None:  # D4: every use is seen; a finished game has no turn going on
        out[_OBJECT_USES: _OBJECT_USES + NUM_CARD_TYPES] = np.minimum(
            np.asarray(game.turn_uses, np.float32) * _Q, OBS_HIGH)
    return out


_SEAT_PRESENT, _FIRST_PLAYER = _start("seat_present"), _start("first_player")
_ACTING, _ACTIVE = _start("acting_seat"), _start("active_seat")
_DECISION, _CARD = _start("decision"), _start("card")
_TURNED_OVER, _VIEW_LEFT, _PROGRESS = _start("turned_over"), _start("view_left"), _start("progress")
_FORFEITS, _REMOVED, _REMOVED_CARDS = _start("forfeits"), _start("removed"), _start("removed_cards")
_OBJECT_USES = _start("object_uses")
_STACKS = LAYOUT["stacks"].slice
_Q = 1.0 / COUNT_SCALE
_KIND_OF_TYPE = tuple(c.kind for c in CARDS)
_CATEGORY_OF_TYPE = tuple(c.category for c in CARDS)


class Observer(ObserverBase):
    """Builds observations of one game for any viewer, reusing the public part until the game moves.

    The public vector is cached by the length of the game's (append-only) record, so every viewer
    of one state shares it; the viewer's torch memory is written on top of the permuted copy.
    """

    observation = OBSERVATION

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._public: np.ndarray | None = None

    def public(self, game: DrachenSchattenGame) -> np.ndarray:
        key = (id(game), len(game.record))
        if key != self._key or self._public is None:
            self._public, self._key = public_vector(game), key
        return self._public

    def private(self, obs: np.ndarray, game: DrachenSchattenGame, viewer: int) -> None:
        for stack, cid in game._memories[viewer].items():  # D4: the viewer's own memory only
            obs[_MEMORY + stack * NUM_CARD_TYPES + CARD_TYPE_OF_ID[cid]] = 1.0

    def __deepcopy__(self, memo: dict) -> Observer:
        return Observer()  # a cache only: a copy rebuilds it
