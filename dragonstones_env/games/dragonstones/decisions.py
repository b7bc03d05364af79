"""The decisions of Fist of Dragonstones, named by what is chosen (issue #13).

A decision is ``Decision(kind, player, card)``: ``kind`` says what is chosen (a colour, a
seat, yes or no, ...), ``card`` which character asks it. A power asks with
``game.ask(kind, player, card, options, resolve)``; a new character, custom ones included,
picks a kind of :data:`KINDS` and adds none (``ask`` refuses a kind not in it).

Two stored formats speak an older, per-character vocabulary: the observation's ``decision``
piece (layout v1, #9: one slot per name, which the shipped checkpoints read) and the
``decision`` field of the record's ``choice`` and ``auto`` events (the golden streams and
every saved record). Both are frozen, so their name is derived from (kind, card) by
:func:`v1_name`, and :data:`V1_KIND` reads one back as a kind.
"""

from __future__ import annotations

# Every decision kind, with what is chosen. The order is stable (tables and docs list it).
KINDS: dict[str, str] = {
    "bid": "a sealed gold bid: fairy gold, common gold, black coin, amulet (F10)",
    "tiebreak": "a sealed tie-break bid: silver, amulet (F14)",
    "pay_or_take": "stones to pay for points, or the coins instead (F15)",
    "choose_payment": "stones to pay for points, with no alternative (F40)",
    "choose_colour": "a colour of stone (F26, F39, F41)",
    "choose_seat": "another player (F27)",
    "choose_loot": "another player and what to take from him: a colour of stone, or a coin (F23)",
    "choose_card": "a character (F31, F35)",
    "buy_or_stop": "one purchase, a colour paid with a coin, or stop (F36)",
    "draw_or_stop": "draw another stone, or keep those drawn (F39)",
    "yes_no": "yes or no: use an optional power (F28, F37)",
}

# Layout v1's and the record's names: (v1 name, kind, card). A row with a card names that
# character's decisions of that kind; the row without names every other card's (custom cards
# included). The order is the order of the observation's decision slots: never change it.
V1_NAMES_TABLE: tuple[tuple[str, str, str | None], ...] = (
    ("bid", "bid", None),
    ("tiebreak", "tiebreak", None),
    ("doppelganger", "yes_no", "Doppelganger"),
    ("pay_or_take", "pay_or_take", None),
    ("apprentice_pair", "choose_payment", None),
    ("thief_steal", "choose_loot", None),
    ("ancient_colour", "choose_colour", None),
    ("rainbow_colour", "choose_colour", "Rainbow Dragon"),
    ("rainbow_continue", "draw_or_stop", None),
    ("troll_colour", "choose_colour", "Troll"),
    ("brigand_target", "choose_seat", None),
    ("ghost_pick", "choose_card", None),
    ("imp_pick", "choose_card", "Imp"),
    ("merchant_buy", "buy_or_stop", None),
    ("necromancer", "yes_no", None),
)
V1_NAMES: tuple[str, ...] = tuple(name for name, _, _ in V1_NAMES_TABLE)
V1_KIND: dict[str, str] = {name: kind for name, kind, _ in V1_NAMES_TABLE}  # old name -> kind
# The character a v1 name stands for, where it names one (the Doppelganger's offer is about
# the won card, so the observation's card piece shows that card, not the Doppelganger).
V1_CARD: dict[str, str] = {name: card for name, _, card in V1_NAMES_TABLE if card is not None}
_BY_KIND = {kind: name for name, kind, card in V1_NAMES_TABLE if card is None}
_BY_CARD = {(kind, card): name for name, kind, card in V1_NAMES_TABLE if card is not None}
assert set(_BY_KIND) == set(KINDS), "every kind has a v1 name for the cards without their own"


def v1_name(kind: str, card: str | None) -> str:
    """The layout-v1 and record name of a decision of ``kind`` asked by ``card``."""
    return _BY_CARD.get((kind, card)) or _BY_KIND[kind]


def check_kind(kind: str) -> None:
    """Refuse a kind not in :data:`KINDS`, naming the vocabulary (and the new name of an old one)."""
    if kind in KINDS:
        return
    hint = f" (now {V1_KIND[kind]!r} with the asking card)" if kind in V1_KIND else ""
    raise ValueError(f"unknown decision kind {kind!r}{hint}; the kinds are {', '.join(KINDS)}")


def kinds_table() -> str:
    """The vocabulary as a Markdown table (docs/adding-a-game.md shows it)."""
    rows = [f"| `{kind}` | {meaning} |" for kind, meaning in KINDS.items()]
    return "\n".join(["| kind | what is chosen |", "|---|---|", *rows])
