"""The discrete action layout of the DrachenSchatten environment, as data.

One ``Discrete(NUM_ACTIONS)`` space serves every decision, every seat and every table size. It
is the concatenation of the *families* below, in order. Each family maps one-to-one to an engine
option kind (see :mod:`dragonstones_env.drachenschatten.rules`), except that the engine's
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

import numbers

from ..layout import Family, build_families, families_table
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


def _families() -> tuple[Family, ...]:
    spec: list[tuple[str, tuple[int, ...], str]] = [
        ("pick", (8,), "opening pick: village stack 0-7 (D2)"),
        ("turn_over", (NUM_STACKS,), "the mandatory turn-over: stack 0-15 (village 0-7, caves 8-15) (D3)"),
    ]
    for name, _, axes, text in _USE_SPEC:
        spec.append((name, (len(USE_TYPES[name]), *(_AXIS_SIZE[a] for a in axes)), text))
    spec += [
        ("end_turn", (1,), "end the turn, once the mandatory turn-over is done (D3)"),
        ("view", (NUM_STACKS,), "torch: look at the top card of a stack (D4)"),
        ("stop_view", (1,), "torch: look at no more cards (after at least one)"),
        ("protect", (len(PROTECT_TYPES),), "battle: the protecting object to use (D5)"),
        ("forfeit", (NUM_OBJECT_TYPES,), "decay: the own used object to remove (D4)"),
    ]
    return build_families(spec)


FAMILIES: tuple[Family, ...] = _families()
FAMILY: dict[str, Family] = {f.name: f for f in FAMILIES}
NUM_ACTIONS: int = FAMILIES[-1].stop
_USE_FAMILY_OF_TYPE: dict[int, str] = {t: name for name, ts in USE_TYPES.items() for t in ts}
_USE_AXES: dict[str, tuple[str, ...]] = {name: axes for name, _, axes, _ in _USE_SPEC}


def _decode_table() -> tuple[list[tuple], list[int | None], list[str]]:
    """Every action's engine option with seats RELATIVE (and the option index of its seat, if any)."""
    options: list[tuple] = []
    seat_pos: list[int | None] = []
    family_of: list[str] = []
    for fam in FAMILIES:
        for i in range(fam.size):
            family_of.append(fam.name)
            pos = None
            if fam.name in ("pick", "turn_over", "view"):
                opt: tuple = (fam.name, i)
            elif fam.name in ("end_turn", "stop_view"):
                opt = (fam.name,)
            elif fam.name == "protect":
                opt = ("protect", PROTECT_TYPES[i])
            elif fam.name == "forfeit":
                opt = ("forfeit", OBJECT_TYPES[i])
            else:  # a use_* family
                idx = _unravel(i, fam.shape)
                args: list[int] = [USE_TYPES[fam.name][idx[0]]]
                for axis, k in zip(_USE_AXES[fam.name], idx[1:], strict=True):
                    if axis == "seat":
                        pos = 1 + len(args)  # position in the option tuple ("use", t, ...)
                        args.append(k + 1)
                    elif axis == "stack":
                        args.append(k)
                    else:
                        args.append(OBJECT_TYPES[k])
                opt = ("use", *args)
            options.append(opt)
            seat_pos.append(pos)
    return options, seat_pos, family_of


def _unravel(i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for size in reversed(shape):
        out.append(i % size)
        i //= size
    return tuple(reversed(out))


_DECODE, _SEAT_POS, _FAMILY_OF = _decode_table()
_ENCODE: dict[tuple, int] = {opt: a for a, opt in enumerate(_DECODE)}
assert len(_ENCODE) == NUM_ACTIONS, "two actions decode to the same option"


def family_of(action: int) -> Family:
    """The family an action index belongs to."""
    _check(action)
    return FAMILY[_FAMILY_OF[action]]


def _check(action: int) -> None:
    if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"an action is an int in 0..{NUM_ACTIONS - 1}, not {action!r}")


def encode(option: tuple, actor: int, num_players: int) -> int:
    """Action index of the engine option ``option`` chosen by seat ``actor``."""
    if option[0] == "use":
        name = _USE_FAMILY_OF_TYPE[option[1]]
        if "seat" in _USE_AXES[name]:
            pos = 2 + _USE_AXES[name].index("seat")
            rel = (option[pos] - actor) % num_players
            option = (*option[:pos], rel, *option[pos + 1:])
    return _ENCODE[tuple(option)]


def decode(action: int, actor: int, num_players: int) -> tuple:
    """The engine option of an action chosen by seat ``actor`` (not checked for legality).

    Raises ``ValueError`` for an index outside the space or a seat that is not at the table.
    """
    _check(action)
    action = int(action)
    option = _DECODE[action]
    pos = _SEAT_POS[action]
    if pos is not None:
        rel = option[pos]
        if rel >= num_players:
            raise ValueError(f"action {action} names seat +{rel}, not at a {num_players}-player table")
        option = (*option[:pos], (actor + rel) % num_players, *option[pos + 1:])
    return option


def _stack(s: int) -> str:
    return f"stack {s} ({'village' if s < 8 else 'caves'} {s % 8})"


def describe(action: int) -> str:
    """A readable description of an action index, seats relative to the actor (``seat +1``...)."""
    _check(action)
    opt = _DECODE[action]
    kind = opt[0]
    if kind == "pick":
        return f"pick the top card of {_stack(opt[1])}"
    if kind == "turn_over":
        return f"turn over the top card of {_stack(opt[1])}"
    if kind == "end_turn":
        return "end the turn"
    if kind == "view":
        return f"view the top card of {_stack(opt[1])}"
    if kind == "stop_view":
        return "stop viewing"
    if kind == "protect":
        return f"protect with {CARD_NAMES[opt[1]]}"
    if kind == "forfeit":
        return f"forfeit used {CARD_NAMES[opt[1]]}"
    fam, t = _FAMILY_OF[action], opt[1]
    card = f"use {CARD_NAMES[t]}"
    if fam == "use_turn_over":
        return f"{card}: turn over the top card of {_stack(opt[2])}"
    if fam == "use_trade":
        own = "the card itself" if opt[2] == t else f"used {CARD_NAMES[opt[2]]}"
        return f"{card}: give {own} to seat +{opt[3]} for their used {CARD_NAMES[opt[4]]}"
    if fam == "use_steal":
        return f"{card}: take seat +{opt[2]}'s used {CARD_NAMES[opt[3]]}"
    if fam == "use_destroy":
        return f"{card}: destroy seat +{opt[2]}'s used {CARD_NAMES[opt[3]]}"
    if fam == "use_restore":
        return f"{card}: make used {CARD_NAMES[opt[2]]} ready"
    return card  # use_view, use_decay


def layout_table() -> str:
    """The action layout as a Markdown table."""
    return families_table(FAMILIES)
