"""The discrete action layout of the Fist of Dragonstones environment, as data.

One ``Discrete(NUM_ACTIONS)`` space serves every decision, every seat and every table
size. It is the concatenation of the *families* below, in order; each family maps
one-to-one to an engine option kind (see :mod:`dragonstones_env.games.dragonstones.engine`). Seats in
actions are relative to the acting player: 1 is the next player clockwise, and so on.

Caps: a gold bid holds at most :data:`FAIRY_CAP` fairy gold and :data:`COMMON_CAP` common
gold (all 15 common gold of the game, so that cap never binds); a tie-break bid at most
:data:`SILVER_CAP` silver (all 40). See the README for how often the fairy cap binds.
"""

from __future__ import annotations

import itertools

import numpy as np

from dragonstones_env.codec import ActionFamily, Codec

from .cards import CHARACTER_SLOTS, COLOURS, MERCHANT_COINS, NUM_CHARACTER_SLOTS

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


def _bid_text(o: tuple) -> str:
    _, f, c, b, a = o
    parts = [f"{f} fairy", f"{c} common"] + (["black coin"] if b else []) + (["amulet"] if a else [])
    return f"bid {' + '.join(parts)} (value {(f + c) * (2 if a else 1)})"


def _buy_text(o: tuple) -> str:
    return f"buy a {o[1]} stone with {'3 silver' if o[2] == 'silver' else '1 ' + o[2] + ' gold'}"


_WORDS = {"take": "take the coins instead", "draw": "draw again", "stop": "stop", "yes": "yes", "no": "no"}

# The action families, in layout order: (name, shape, help, option of the index, seat position, text).
# Seats in options are relative to the actor here (1 = next clockwise); the codec makes them absolute.
FAMILY_TABLE: tuple[ActionFamily, ...] = (
    ActionFamily("bid", (FAIRY_CAP + 1, COMMON_CAP + 1, 2, 2), "gold bid: fairy x common x black coin x amulet (F10)",
                 lambda i: ("bid", *i), describe=_bid_text),
    ActionFamily("tiebreak", (SILVER_CAP + 1, 2), "tie-break bid: silver x amulet (F14)",
                 lambda i: ("tiebreak", *i),
                 describe=lambda o: f"tie-break bid {o[1]} silver{' + amulet' if o[2] else ''} "
                                    f"(value {o[1] * (2 if o[2] else 1)})"),
    ActionFamily("pay", (len(PAYMENTS),), "pay stones (red, blue, yellow) for a power",
                 lambda i: ("pay", *PAYMENTS[i[0]]),
                 describe=lambda o: f"pay stones: {o[1]} red, {o[2]} blue, {o[3]} yellow"),
    ActionFamily("take", (1,), "take the alternative of a pay-or-take power (F15)", lambda i: ("take",),
                 describe=lambda o: _WORDS["take"]),
    ActionFamily("colour", (3,), "colour: red, blue, yellow (Ancient Dragon, Rainbow Dragon, Troll)",
                 lambda i: ("colour", COLOURS[i[0]]), describe=lambda o: f"colour {o[1]}"),
    ActionFamily("target", (MAX_SEATS - 1,), "Brigand's victim, relative seat 1-5",
                 lambda i: ("target", i[0] + 1), seat=1, describe=lambda o: f"target: seat +{o[1]}"),
    ActionFamily("steal", (MAX_SEATS - 1, 4), "Thief: relative seat 1-5 x red, blue, yellow, coin (F23)",
                 lambda i: ("steal", i[0] + 1, STEAL_WHAT[i[1]]), seat=1,
                 describe=lambda o: f"steal from seat +{o[1]}: {o[2]}"),
    ActionFamily("character", (NUM_CHARACTER_SLOTS,), "Ghost's or Imp's pick, by character (last 4: custom)",
                 lambda i: ("character", CHARACTER_SLOTS[i[0]]), describe=lambda o: f"pick character: {o[1]}"),
    ActionFamily("buy", (3, 3), "Merchant: colour x paid with common, fairy, silver (F36)",
                 lambda i: ("buy", COLOURS[i[0]], COINS[i[1]]), describe=_buy_text),
    *(ActionFamily(name, (1,), text, lambda i, name=name: (name,), describe=lambda o: _WORDS[o[0]]) for name, text in (
        ("draw", "Rainbow Dragon: draw again"),
        ("stop", "Rainbow Dragon: keep the stones; Merchant: stop buying"),
        ("yes", "Necromancer: pay and score; Doppelganger: play it"),
        ("no", "Necromancer: decline; Doppelganger: keep it"),
    )),
)


def _clamp(option: tuple) -> tuple:
    """A bid's coins above the layout's caps bid the caps (F10: more is never needed to win)."""
    kind = option[0]
    if kind == "bid":
        return ("bid", min(option[1], FAIRY_CAP), min(option[2], COMMON_CAP), option[3], option[4])
    if kind == "tiebreak":
        return ("tiebreak", min(option[1], SILVER_CAP), option[2])
    return tuple(option)


CODEC = Codec(FAMILY_TABLE, normalise=_clamp)
FAMILIES, FAMILY, NUM_ACTIONS, encode, decode, describe, family_of, layout_table = CODEC.exports()


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
