"""The 64 cards of DrachenSchatten, as ONE replaceable data table (D1).

The rulebook's card distribution is printed on its back, which we do not have: :data:`CARD_TABLE`
is the reconstruction of ruling D1. Replace the table (and nothing else) if the real distribution
turns up; the checks at the bottom of this module keep a replacement consistent.

A *card type* is one printed card face: an object kind with one action symbol, a beast, or a
treasure. Like the physical cards, which print two numbers (copies in the village, copies in the
caves), a type that occurs in both decks is ONE type with two counts: a Torch view-2 from the caves
is interchangeable with one from the village. Each type has a stable index (its position in
:data:`CARDS`), used by the action and observation layouts: append new types at the end only.

Each physical card has an id ``0..63``: village cards first (ids ``0..31``), then caves cards,
in table order. :data:`CARD_TYPE_OF_ID` and :data:`DECK_OF_ID` map an id to its type and deck.
"""

from __future__ import annotations

from dataclasses import dataclass

DECKS: tuple[str, ...] = ("village", "caves")
CATEGORIES: tuple[str, ...] = ("object", "beast", "treasure")
OBJECT_KINDS: tuple[str, ...] = (
    "torch", "boots", "magic wand", "sword", "gem", "spell book", "key", "shield", "helmet", "magic potion",
)
ACTIONS: tuple[str, ...] = (
    "view-1", "view-2", "view-3", "turn-over", "protect-dragon", "protect-hydra",
    "trade", "steal", "destroy", "decay", "restore",
)
BEASTS: tuple[str, ...] = ("dragon", "hydra")

# The rules text of each action symbol, beast and treasure (D4-D6): what the cards say, for people.
SYMBOL_TEXT: dict[str, str] = {
    "view-1": "look in secret at the top card of 1 stack; you remember it while it stays there (D4)",
    "view-2": "look in secret at the top cards of up to 2 stacks; you remember them while they stay there (D4)",
    "view-3": "look in secret at the top cards of up to 3 stacks; you remember them while they stay there (D4)",
    "turn-over": "turn over the top card of a stack once more, with its battle (D4)",
    "protect-dragon": "in a battle with a dragon, use it to keep the dragon (D5)",
    "protect-hydra": "in a battle with a hydra, use it to keep the hydra (D5)",
    "trade": "swap one of your used objects (this card too) for another player's used object (D4)",
    "steal": "take another player's used object (D4)",
    "destroy": "remove another player's used object from the game (D4)",
    "decay": "every other player removes one of his used objects from the game (D4)",
    "restore": "make one of your used objects ready again (not this key itself) (D4)",
    "dragon": "a beast: turned over, it attacks; a ready object that protects against dragons keeps it, else "
              "you lose it and your whole collection (D5)",
    "hydra": "a beast: turned over, it attacks; a ready object that protects against hydras keeps it, else "
             "you lose it and your whole collection (D5)",
    "treasure": "three treasures win at once (D6)",
}

@dataclass(frozen=True)
class CardType:
    """One printed card face and how many copies each deck holds.

    ``kind`` and ``action`` are ``None`` for beasts and treasures; ``beast`` names the beast
    (``"dragon"``/``"hydra"``) and is ``None`` otherwise.
    """

    index: int
    name: str
    category: str
    kind: str | None
    action: str | None
    beast: str | None
    village: int  # copies in the village deck
    caves: int  # copies in the caves deck

    @property
    def count(self) -> int:
        """Copies in the whole game."""
        return self.village + self.caves

    @property
    def view(self) -> int:
        """How many cards a torch of this type lets one look at (0 for other cards)."""
        return int(self.action[-1]) if self.action and self.action.startswith("view-") else 0


# D1: (category, object kind or beast, action, village copies, caves copies). THE table.
CARD_TABLE: tuple[tuple[str, str, str | None, int, int], ...] = (
    ("object", "torch", "view-1", 3, 0),
    ("object", "torch", "view-2", 2, 1),
    ("object", "torch", "view-3", 1, 1),
    ("object", "boots", "turn-over", 4, 1),
    ("object", "magic wand", "turn-over", 1, 1),
    ("object", "magic wand", "trade", 0, 1),
    ("object", "magic wand", "steal", 0, 2),
    ("object", "magic wand", "decay", 0, 1),
    ("object", "sword", "protect-dragon", 3, 1),
    ("object", "sword", "protect-hydra", 1, 0),
    ("object", "sword", "trade", 1, 0),
    ("object", "sword", "destroy", 1, 1),
    ("object", "sword", "decay", 0, 1),
    ("object", "gem", "trade", 2, 1),
    ("object", "spell book", "destroy", 0, 2),
    ("object", "key", "restore", 3, 1),
    ("object", "shield", "protect-dragon", 4, 1),
    ("object", "helmet", "protect-dragon", 3, 1),
    ("object", "magic potion", "protect-hydra", 3, 1),
    ("beast", "dragon", None, 0, 5),
    ("beast", "hydra", None, 0, 2),
    ("treasure", "treasure", None, 0, 7),
)


def _card_type(index: int, row: tuple[str, str, str | None, int, int]) -> CardType:
    category, what, action, village, caves = row
    if category == "object":
        return CardType(index, f"{what} {action}", category, what, action, None, village, caves)
    if category == "beast":
        return CardType(index, what, category, None, None, what, village, caves)
    return CardType(index, what, category, None, None, None, village, caves)


CARDS: tuple[CardType, ...] = tuple(_card_type(i, row) for i, row in enumerate(CARD_TABLE))
NUM_CARD_TYPES: int = len(CARDS)
CARD_NAMES: tuple[str, ...] = tuple(c.name for c in CARDS)
TYPE_INDEX: dict[str, int] = {c.name: c.index for c in CARDS}

# Physical cards: village ids first, then caves ids, each deck in table order.
CARD_TYPE_OF_ID: tuple[int, ...] = tuple(
    [c.index for c in CARDS for _ in range(c.village)] + [c.index for c in CARDS for _ in range(c.caves)]
)
NUM_VILLAGE_CARDS: int = sum(c.village for c in CARDS)
NUM_CAVES_CARDS: int = sum(c.caves for c in CARDS)
NUM_CARDS: int = len(CARD_TYPE_OF_ID)
DECK_OF_ID: tuple[str, ...] = tuple("village" if i < NUM_VILLAGE_CARDS else "caves" for i in range(NUM_CARDS))
VILLAGE_IDS: tuple[int, ...] = tuple(range(NUM_VILLAGE_CARDS))
CAVES_IDS: tuple[int, ...] = tuple(range(NUM_VILLAGE_CARDS, NUM_CARDS))

# Object types that protect against each beast (D5): by action symbol, not by object kind.
PROTECTS: dict[str, tuple[int, ...]] = {
    beast: tuple(c.index for c in CARDS if c.action == f"protect-{beast}") for beast in BEASTS
}


def _check_table() -> None:
    """Keep a replacement table consistent with the rules (D1, D2)."""
    assert len(set(CARD_NAMES)) == NUM_CARD_TYPES, "card type names must be unique"
    for c in CARDS:
        assert c.category in CATEGORIES, c
        if c.category == "object":
            assert c.kind in OBJECT_KINDS and c.action in ACTIONS, c
        assert c.village >= 0 and c.caves >= 0 and c.count > 0, c
    assert {c.kind for c in CARDS if c.kind} == set(OBJECT_KINDS), "every object kind needs a card"
    assert NUM_VILLAGE_CARDS == 32 and NUM_CAVES_CARDS == 32, "D2: 8 stacks of 4 in each deck"


_check_table()
