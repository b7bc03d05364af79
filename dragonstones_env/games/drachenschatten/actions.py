"""The discrete action layout of the DrachenSchatten environment, as data.

One ``Discrete(NUM_ACTIONS)`` space serves every decision, every seat and every table size. It
is the concatenation of the *families* below, in order. Each family maps one-to-one to an engine
option kind (see :mod:`dragonstones_env.games.drachenschatten.rules`), except that the engine's
``("use", card_type, *target)`` is split by the object's action symbol (D4) into ``use_view``,
``use_turn_over``, ``use_trade``, ``use_steal``, ``use_destroy``, ``use_decay`` and ``use_restore``.

Axes:

* *stack*: 0..15, village 0..7 then caves 8..15 (the engine's stack numbers);
* *seat*: relative to the acting player, 1 = the next player clockwise, up to 3 (4 seats at most);
  an action naming a seat that is not at the table is never legal;
* *object type*: one of the object card types (:data:`OBJECT_TYPES`, ``CARDS`` order);
* the first axis of a ``use_*`` family: which ready object is used, one of the card types with
  that action symbol (:data:`USE_TYPES`).

The whole target of an object is part of its action (a trade names the trading card, the own used
object given, the seat and their used object); a torch's stacks are the following ``view``
decisions, one per card looked at (D4). :func:`layout_table` prints the table.
"""

from __future__ import annotations

from dragonstones_env.codec import ActionFamily, Codec

from .cards import CARD_NAMES, CARDS, PROTECTS
from .rules import NUM_STACKS

MAX_SEATS = 4  # D2
OBJECT_TYPES: tuple[int, ...] = tuple(c.index for c in CARDS if c.category == "object")
NUM_OBJECT_TYPES = len(OBJECT_TYPES)
_OBJECT_POS: dict[int, int] = {t: i for i, t in enumerate(OBJECT_TYPES)}
PROTECT_TYPES: tuple[int, ...] = tuple(sorted({t for ts in PROTECTS.values() for t in ts}))

# family -> (action symbols, target axes after the card type); axes: "stack", "own", "seat", "theirs".
_USE_SPEC: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...] = (
    ("use_view", ("view-1", "view-2", "view-3"), (), "use a torch; its stacks follow as view decisions (D4)"),
    ("use_turn_over", ("turn-over",), ("stack",), "boots / wand: an extra turn-over of a stack (D4)"),
    ("use_trade", ("trade",), ("own", "seat", "theirs"),
     "trade: trading card x own used object (may be the card itself) x seat x their used object"),
    ("use_steal", ("steal",), ("seat", "theirs"), "steal: card x seat x their used object"),
    ("use_destroy", ("destroy",), ("seat", "theirs"), "destroy: card x seat x their used object"),
    ("use_decay", ("decay",), (), "decay: the other players then forfeit a used object each (D4)"),
    ("use_restore", ("restore",), ("own",), "key: card x own used object to make ready (not itself)"),
)
USE_TYPES: dict[str, tuple[int, ...]] = {
    name: tuple(c.index for c in CARDS if c.action in symbols) for name, symbols, _, _ in _USE_SPEC
}
_AXIS_SIZE = {"stack": NUM_STACKS, "own": NUM_OBJECT_TYPES, "seat": MAX_SEATS - 1, "theirs": NUM_OBJECT_TYPES}


def _stack(s: int) -> str:
    return f"stack {s} ({'village' if s < 8 else 'caves'} {s % 8})"


def _use_option(name: str, axes: tuple[str, ...]):
    def option(idx: tuple[int, ...]) -> tuple:
        args: list[int] = [USE_TYPES[name][idx[0]]]
        for axis, k in zip(axes, idx[1:], strict=True):
            args.append(k + 1 if axis == "seat" else k if axis == "stack" else OBJECT_TYPES[k])
        return ("use", *args)
    return option


def _use_text(name: str):
    def text(opt: tuple) -> str:
        t = opt[1]
        card = f"use {CARD_NAMES[t]}"
        if name == "use_turn_over":
            return f"{card}: turn over the top card of {_stack(opt[2])}"
        if name == "use_trade":
            own = "the card itself" if opt[2] == t else f"used {CARD_NAMES[opt[2]]}"
            return f"{card}: give {own} to seat +{opt[3]} for their used {CARD_NAMES[opt[4]]}"
        if name == "use_steal":
            return f"{card}: take seat +{opt[2]}'s used {CARD_NAMES[opt[3]]}"
        if name == "use_destroy":
            return f"{card}: destroy seat +{opt[2]}'s used {CARD_NAMES[opt[3]]}"
        if name == "use_restore":
            return f"{card}: make used {CARD_NAMES[opt[2]]} ready"
        return card  # use_view, use_decay
    return text


# The action families, in layout order; seats in options are relative to the actor (1 = next
# clockwise), the codec makes them absolute. A use_* option is ("use", card type, *target).
FAMILY_TABLE: tuple[ActionFamily, ...] = (
    ActionFamily("pick", (8,), "opening pick: village stack 0-7 (D2)", lambda i: ("pick", i[0]),
                 describe=lambda o: f"pick the top card of {_stack(o[1])}"),
    ActionFamily("turn_over", (NUM_STACKS,), "the mandatory turn-over: stack 0-15 (village 0-7, caves 8-15) (D3)",
                 lambda i: ("turn_over", i[0]), describe=lambda o: f"turn over the top card of {_stack(o[1])}"),
    *(ActionFamily(name, (len(USE_TYPES[name]), *(_AXIS_SIZE[a] for a in axes)), text, _use_option(name, axes),
                   seat=2 + axes.index("seat") if "seat" in axes else None, describe=_use_text(name))
      for name, _, axes, text in _USE_SPEC),
    ActionFamily("end_turn", (1,), "end the turn, once the mandatory turn-over is done (D3)",
                 lambda i: ("end_turn",), describe=lambda o: "end the turn"),
    ActionFamily("view", (NUM_STACKS,), "torch: look at the top card of a stack (D4)", lambda i: ("view", i[0]),
                 describe=lambda o: f"view the top card of {_stack(o[1])}"),
    ActionFamily("stop_view", (1,), "torch: look at no more cards (after at least one)", lambda i: ("stop_view",),
                 describe=lambda o: "stop viewing"),
    ActionFamily("protect", (len(PROTECT_TYPES),), "battle: the protecting object to use (D5)",
                 lambda i: ("protect", PROTECT_TYPES[i[0]]), describe=lambda o: f"protect with {CARD_NAMES[o[1]]}"),
    ActionFamily("forfeit", (NUM_OBJECT_TYPES,), "decay: the own used object to remove (D4)",
                 lambda i: ("forfeit", OBJECT_TYPES[i[0]]), describe=lambda o: f"forfeit used {CARD_NAMES[o[1]]}"),
)

CODEC = Codec(FAMILY_TABLE)
FAMILIES, FAMILY, NUM_ACTIONS, encode, decode, describe, family_of, layout_table = CODEC.exports()
