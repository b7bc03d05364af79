"""The discrete action layout of the Fist of Dragonstones environment, as data.

One ``Discrete(NUM_ACTIONS)`` space serves every decision, every seat and every table
size. It is the concatenation of the *families* below, in order; each family maps
one-to-one to an engine option kind (see :mod:`dragonstones_env.engine`). Seats in
actions are relative to the acting player: 1 is the next player clockwise, and so on.

Caps: a gold bid holds at most :data:`FAIRY_CAP` fairy gold and :data:`COMMON_CAP` common
gold (all 15 common gold of the game, so that cap never binds); a tie-break bid at most
:data:`SILVER_CAP` silver (all 40). See the README for how often the fairy cap binds.
"""

from __future__ import annotations

import itertools

import numpy as np

from .cards import CHARACTER_INDEX, CHARACTER_SLOTS, COLOURS, MERCHANT_COINS, NUM_CHARACTER_SLOTS
from .layout import Family, build_families, families_table

FAIRY_CAP = 20
COMMON_CAP = 15
SILVER_CAP = 40
MAX_SEATS = 6
COINS = MERCHANT_COINS
STEAL_WHAT = (*COLOURS, "coin")
# Every stone payment a power can ask for: 2 of a colour (Apprentice), one of each
# (Wizard), any 4 (Magician, Sorcerer) and any 5 (Enchantress).
PAYMENTS: tuple[tuple[int, int, int], ...] = tuple(
    v for total in (2, 3, 4, 5) for v in itertools.product(range(total + 1), repeat=3) if sum(v) == total
)


def _families() -> tuple[Family, ...]:
    spec = [
        ("bid", (FAIRY_CAP + 1, COMMON_CAP + 1, 2, 2), "gold bid: fairy x common x black coin x amulet (F10)"),
        ("tiebreak", (SILVER_CAP + 1, 2), "tie-break bid: silver x amulet (F14)"),
        ("pay", (len(PAYMENTS),), "pay stones (red, blue, yellow) for a power"),
        ("take", (1,), "take the alternative of a pay-or-take power (F15)"),
        ("colour", (3,), "colour: red, blue, yellow (Ancient Dragon, Rainbow Dragon, Troll)"),
        ("target", (MAX_SEATS - 1,), "Brigand's victim, relative seat 1-5"),
        ("steal", (MAX_SEATS - 1, 4), "Thief: relative seat 1-5 x red, blue, yellow, coin (F23)"),
        ("character", (NUM_CHARACTER_SLOTS,), "Ghost's or Imp's pick, by character (last 4: custom)"),
        ("buy", (3, 3), "Merchant: colour x paid with common, fairy, silver (F36)"),
        ("draw", (1,), "Rainbow Dragon: draw again"),
        ("stop", (1,), "Rainbow Dragon: keep the stones; Merchant: stop buying"),
        ("yes", (1,), "Necromancer: pay and score; Doppelganger: play it"),
        ("no", (1,), "Necromancer: decline; Doppelganger: keep it"),
    ]
    return build_families(spec)


FAMILIES: tuple[Family, ...] = _families()
FAMILY: dict[str, Family] = {f.name: f for f in FAMILIES}
NUM_ACTIONS: int = FAMILIES[-1].stop
_PAYMENT_INDEX = {v: i for i, v in enumerate(PAYMENTS)}


def encode(option: tuple, actor: int, num_players: int) -> int:
    """Action index of an engine option chosen by seat ``actor``."""
    kind = option[0]
    fam = FAMILY[kind]
    if kind == "bid":
        _, f, c, b, a = option
        return fam.start + ((min(f, FAIRY_CAP) * (COMMON_CAP + 1) + min(c, COMMON_CAP)) * 2 + b) * 2 + a
    if kind == "tiebreak":
        return fam.start + min(option[1], SILVER_CAP) * 2 + option[2]
    if kind == "pay":
        return fam.start + _PAYMENT_INDEX[option[1:]]
    if kind == "colour":
        return fam.start + COLOURS.index(option[1])
    if kind == "target":
        return fam.start + (option[1] - actor) % num_players - 1
    if kind == "steal":
        rel = (option[1] - actor) % num_players - 1
        return fam.start + rel * 4 + STEAL_WHAT.index(option[2])
    if kind == "character":
        return fam.start + CHARACTER_INDEX[option[1]]
    if kind == "buy":
        return fam.start + COLOURS.index(option[1]) * 3 + COINS.index(option[2])
    return fam.start  # take, draw, stop, yes, no


def _family_of(action: int) -> Family:
    for fam in FAMILIES:
        if action < fam.stop:
            return fam
    raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")


def _decode_table() -> list[tuple]:
    """Every action's option, with seats relative to the actor (resolved by :func:`decode`)."""
    table: list[tuple] = []
    for fam in FAMILIES:
        for i in range(fam.size):
            if fam.name == "bid":
                table.append(("bid", *(int(x) for x in np.unravel_index(i, fam.shape))))
            elif fam.name == "tiebreak":
                table.append(("tiebreak", i // 2, i % 2))
            elif fam.name == "pay":
                table.append(("pay", *PAYMENTS[i]))
            elif fam.name == "colour":
                table.append(("colour", COLOURS[i]))
            elif fam.name == "target":
                table.append(("target", i + 1))
            elif fam.name == "steal":
                table.append(("steal", i // 4 + 1, STEAL_WHAT[i % 4]))
            elif fam.name == "character":
                table.append(("character", CHARACTER_SLOTS[i]))
            elif fam.name == "buy":
                table.append(("buy", COLOURS[i // 3], COINS[i % 3]))
            else:
                table.append((fam.name,))
    return table


_DECODE: list[tuple] = _decode_table()


def decode(action: int, actor: int, num_players: int) -> tuple:
    """The engine option of an action index chosen by seat ``actor`` (not checked for legality)."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
    option = _DECODE[action]
    if option[0] in ("target", "steal"):  # relative seat -> absolute seat
        return (option[0], (actor + option[1]) % num_players, *option[2:])
    return option


def describe(action: int) -> str:
    """A readable description of an action index, seats given relative to the actor."""
    fam = _family_of(action) if 0 <= action < NUM_ACTIONS else None
    if fam is None:
        raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
    i = action - fam.start
    if fam.name == "bid":
        f, c, b, a = (int(x) for x in np.unravel_index(i, fam.shape))
        parts = [f"{f} fairy", f"{c} common"] + (["black coin"] if b else []) + (["amulet"] if a else [])
        return f"bid {' + '.join(parts)} (value {(f + c) * (2 if a else 1)})"
    if fam.name == "tiebreak":
        s, a = i // 2, i % 2
        return f"tie-break bid {s} silver{' + amulet' if a else ''} (value {s * (2 if a else 1)})"
    if fam.name == "pay":
        r, b, y = PAYMENTS[i]
        return f"pay stones: {r} red, {b} blue, {y} yellow"
    if fam.name == "colour":
        return f"colour {COLOURS[i]}"
    if fam.name == "target":
        return f"target: seat +{i + 1}"
    if fam.name == "steal":
        return f"steal from seat +{i // 4 + 1}: {STEAL_WHAT[i % 4]}"
    if fam.name == "character":
        return f"pick character: {CHARACTER_SLOTS[i]}"
    if fam.name == "buy":
        return f"buy a {COLOURS[i // 3]} stone with {'3 silver' if i % 3 == 2 else '1 ' + COINS[i % 3] + ' gold'}"
    return {"take": "take the coins instead", "draw": "draw again", "stop": "stop",
            "yes": "yes", "no": "no"}[fam.name]


def layout_table() -> str:
    """The action layout as a Markdown table (the README's copy is generated from this)."""
    return families_table(FAMILIES)


_BID_MASKS: dict[tuple[int, int, int, int], np.ndarray] = {}


def bid_mask(fairy: int, common: int, black: int, amulet: int) -> np.ndarray:
    """The (cached, read-only) mask of legal gold bids for these holdings (F10)."""
    key = (min(fairy, FAIRY_CAP), min(common, COMMON_CAP), min(black, 1), min(amulet, 1))
    mask = _BID_MASKS.get(key)
    if mask is None:
        mask = np.zeros(NUM_ACTIONS, np.int8)
        fam = FAMILY["bid"]
        block = mask[fam.start : fam.stop].reshape(fam.shape)
        block[: key[0] + 1, : key[1] + 1, : key[2] + 1, : key[3] + 1] = 1
        mask.flags.writeable = False
        _BID_MASKS[key] = mask
    return mask


_TIE_MASKS: dict[tuple[int, int], np.ndarray] = {}


def tiebreak_mask(silver: int, amulet: int) -> np.ndarray:
    """The (cached, read-only) mask of legal tie-break bids (F14)."""
    key = (min(silver, SILVER_CAP), min(amulet, 1))
    mask = _TIE_MASKS.get(key)
    if mask is None:
        mask = np.zeros(NUM_ACTIONS, np.int8)
        fam = FAMILY["tiebreak"]
        block = mask[fam.start : fam.stop].reshape(fam.shape)
        block[: key[0] + 1, : key[1] + 1] = 1
        mask.flags.writeable = False
        _TIE_MASKS[key] = mask
    return mask
