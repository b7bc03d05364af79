"""The character cards of Fist of Dragonstones, as data (F5, F6).

Each kind of character has a stable index (its position in :data:`CHARACTERS`): the
observation and action layouts use it, so append new kinds at the end only.
"""

from __future__ import annotations

from dataclasses import dataclass

COLOURS: tuple[str, ...] = ("red", "blue", "yellow")
MERCHANT_COINS: tuple[str, ...] = ("common", "fairy", "silver")  # what the Merchant takes (F36)


@dataclass(frozen=True)
class Character:
    name: str
    standard: bool
    copies: int  # cards of this kind in the game (standard cards: 1 each)
    power: str  # the card text, shortened; the rulings F19-F42 are authoritative


CHARACTERS: tuple[Character, ...] = (
    # Standard (F19-F24); the Witch is always auctioned first (F8).
    Character("Witch", True, 1, "take a black coin, usable in a later auction this turn (F19)"),
    Character("Magician", True, 1, "pay any 4 stones: +1 point; or take 3 silver (F20)"),
    Character("Wizard", True, 1, "pay 3 stones, one of each colour: +1 point; or take 3 silver (F21)"),
    Character("Sorcerer", True, 1, "pay 4 stones of one colour: +2 points; or take 1 common gold (F22)"),
    Character("Thief", True, 1, "take a stone (or a coin) from the second bidder (F23)"),
    Character("Red Dragon", True, 1, "take a red stone (F24)"),
    Character("Blue Dragon", True, 1, "take a blue stone (F24)"),
    Character("Yellow Dragon", True, 1, "take a yellow stone (F24)"),
    # Special (F25-F42): 25 cards in 20 kinds; the two Dwarves are distinct cards (F6).
    Character("Alchemist", False, 1, "take 3 common gold (F25)"),
    Character("Ancient Dragon", False, 2, "take 1 stone of a colour of your choice (F26)"),
    Character("Brigand", False, 1, "take all common gold and silver of another player (F27)"),
    Character("Doppelganger", False, 1, "keep; later play it to use a won power twice (F28)"),
    Character("Dwarf (4)", False, 1, "take 4 silver (F6)"),
    Character("Dwarf (5)", False, 1, "take 5 silver (F6)"),
    Character("Enchantress", False, 1, "pay any 5 stones: +2 points; or take 1 fairy gold (F29)"),
    Character("Fairy", False, 2, "take 1 fairy gold for good (F30)"),
    Character("Ghost", False, 1, "use the power of a character already auctioned this turn (F31)"),
    Character("Gnome", False, 1, "take 2 common gold and 2 silver (F32)"),
    Character("Goblin", False, 1, "use the power of a random character not yet auctioned (F33)"),
    Character("Goldsmith", False, 1, "take 1 amulet (F34)"),
    Character("Imp", False, 1, "use the power of a chosen character not yet auctioned (F35)"),
    Character("Merchant", False, 1, "buy stones: 1 common, 1 fairy or 3 silver each (F36)"),
    Character("Necromancer", False, 1, "may pay the coins bid in this auction: +1 point (F37)"),
    Character("Quack Wizard", False, 2, "pay all your stones: +1 point (F38)"),
    Character("Rainbow Dragon", False, 1, "name a colour, draw bank stones until you stop or bust (F39)"),
    Character("Sorcerer's Apprentice", False, 2, "pay 2 stones of one colour: +1 point (F40)"),
    Character("Troll", False, 1, "everyone returns all stones of a colour you pick (F41)"),
    Character("Two-headed Dragon", False, 2, "draw 2 of up to 2 bank stones of each colour (F42)"),
)

CHARACTER_NAMES: tuple[str, ...] = tuple(c.name for c in CHARACTERS)
CHARACTER_INDEX: dict[str, int] = {name: i for i, name in enumerate(CHARACTER_NAMES)}
BY_NAME: dict[str, Character] = {c.name: c for c in CHARACTERS}
STANDARD: tuple[str, ...] = tuple(c.name for c in CHARACTERS if c.standard)
SPECIAL_DECK: tuple[str, ...] = tuple(c.name for c in CHARACTERS if not c.standard for _ in range(c.copies))
CARDS_PER_TURN = len(STANDARD) + 2  # F7, F8: ten characters a turn

# The box has three blank cards for players' own characters: layout v1 has a fixed number of
# character slots, the real characters first and "custom_*" padding after them (padded like
# absent seats), so that appending a character above fills a slot and needs no new observation
# or action layout (docs/adding-a-game.md).
NUM_CHARACTER_SLOTS = 32  # layout v1: the 28 characters of the box + 4 free slots
RESERVED_CHARACTER_SLOTS = NUM_CHARACTER_SLOTS - len(CHARACTER_NAMES)  # slots still free
assert RESERVED_CHARACTER_SLOTS >= 0, "more characters than layout v1 has slots"
CHARACTER_SLOTS: tuple[str, ...] = CHARACTER_NAMES + tuple(
    f"custom_{i + 1}" for i in range(RESERVED_CHARACTER_SLOTS)
)

assert len(STANDARD) == 8 and len(SPECIAL_DECK) == 25  # F5
