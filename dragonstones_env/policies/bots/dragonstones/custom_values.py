"""What a custom character (issue #16) is worth to the heuristic and the zoo bots.

A data card is valued from its effects, each priced like the box card it copies (``gain`` like
the Alchemist or the Dwarves, a chosen ``take_stone`` like the Ancient Dragon, ``pay_stones`` like
the pay-or-take powers, ...); the effects are priced on the position before the power, one by
one (an approximation: a power that pays and then gains is not followed step by step). A Python
card is worth its ``value_hint`` in points, or nothing without one. A card the bot was not told
about (``use_deck`` not called) is worth nothing: the bot never crashes on an unknown card.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .table import Seat, Table
from .values import Values

CustomGain = Callable[[Values, Seat, Table], float]
COIN_PARAM = {"common": "common", "silver": "silver", "fairy": "fairy", "amulets": "amulet"}


def _mean_stone(v: Values, seat: Seat) -> float:
    return float(np.mean([v.stone_gain(seat.score, seat.stones, c) for c in range(3)]))


def _payments(stones: str, amount: int) -> list[tuple[int, int, int]]:
    if stones == "each":
        return [(1, 1, 1)]
    if stones == "one_colour":
        return [tuple(amount if i == c else 0 for i in range(3)) for c in range(3)]
    return [(r, b, amount - r - b) for r in range(amount + 1) for b in range(amount + 1 - r)]


def effect_gain(v: Values, seat: Seat, t: Table, effect: dict[str, Any]) -> float:
    """One effect's worth to ``seat`` now."""
    (name, args), = effect.items()
    if name == "gain":
        return getattr(v.p, COIN_PARAM[args["coin"]]) * min(args["amount"], t.bank[args["coin"]])
    if name == "take_stone":
        if args["colour"] == "choice":  # like the Ancient Dragon (F26)
            return max((v.stone_gain(seat.score, seat.stones, c) for c in range(3) if t.bank_stones[c]), default=0.0)
        c = ("red", "blue", "yellow").index(args["colour"])
        return v.stone_gain(seat.score, seat.stones, c, args.get("amount", 1)) if t.bank_stones[c] else 0.0
    if name in ("draw_stones", "take_from") and args.get("what", "stone") == "stone":
        return args["amount"] * _mean_stone(v, seat)
    if name == "take_from":  # coins from the richest, like the Brigand (F27)
        richest = max((getattr(s, args["what"], 0) for s in t.seats if s.rel != seat.rel), default=0)
        return getattr(v.p, args["what"]) * min(args["amount"], richest)
    if name == "pay_stones":
        paid = v.pay_best(seat.score, seat.stones, _payments(args["stones"], args.get("amount", 3)), args["points"])
        instead = data_gain(v, seat, t, args["otherwise"]) if "otherwise" in args else 0.0
        return max(paid, instead)
    if name == "pay_coins":
        if getattr(seat, args["coin"], 0) < args["amount"]:
            return 0.0
        points = v.worth(seat.score + args["points"], seat.stones) - v.worth(seat.score, seat.stones)
        return max(0.0, points - getattr(v.p, COIN_PARAM[args["coin"]]) * args["amount"])
    if name == "choose":
        return max(data_gain(v, seat, t, branch) for branch in args)
    return 0.0


def data_gain(v: Values, seat: Seat, t: Table, effects) -> float:
    return sum(effect_gain(v, seat, t, e) for e in effects)


def card_gain(card: Any) -> CustomGain:
    """The gain function of a ``custom.Custom`` card (data: its effects; Python: its hint)."""
    if card.effects is not None:
        effects = list(card.effects)
        return lambda v, seat, t: data_gain(v, seat, t, effects)
    hint = card.value_hint or 0.0
    return lambda v, seat, t: hint * (v.worth(seat.score + 1, seat.stones) - v.worth(seat.score, seat.stones))


def deck_gains(deck: Any) -> dict[str, CustomGain]:
    """The gain of each custom card of ``deck`` by its observation label (``custom_1``...)."""
    if deck is None:
        return {}
    return {deck.slot_name(c.name): card_gain(c) for c in deck.custom}
