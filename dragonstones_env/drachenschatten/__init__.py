"""DrachenSchatten: the rules engine (pure Python) and its PettingZoo AEC environment.

>>> from dragonstones_env import drachenschatten
>>> e = drachenschatten.env(num_players=3)
>>> e.reset(seed=0)
"""

from .cards import (
    CARD_NAMES,
    CARD_TYPE_OF_ID,
    CARDS,
    DECK_OF_ID,
    NUM_CARD_TYPES,
    NUM_CARDS,
    TYPE_INDEX,
    CardType,
)
from .env import env, raw_env
from .rules import DEFAULT_MAX_STEPS, NUM_STACKS, DrachenSchattenGame, replay

__all__ = [
    "CARDS",
    "CARD_NAMES",
    "CARD_TYPE_OF_ID",
    "DECK_OF_ID",
    "DEFAULT_MAX_STEPS",
    "NUM_CARDS",
    "NUM_CARD_TYPES",
    "NUM_STACKS",
    "TYPE_INDEX",
    "CardType",
    "DrachenSchattenGame",
    "env",
    "raw_env",
    "replay",
]
