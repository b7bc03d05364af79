"""The games: one :class:`GameSpec` per game, and the one registry that knows which games exist.

Everything that must tell games apart -- the trainers' configs, evaluation, the Gymnasium ids,
the policy registry, the tools -- looks a game up here (``games.get("drachenschatten")``) rather
than comparing its name. A game is a package beside ``dragonstones/`` and ``drachenschatten/`` that ends
by calling :func:`register` with its spec; ``docs/adding-a-game.md`` walks through one.

>>> from dragonstones_env import games
>>> [g.id for g in games.all()]
['dragonstones', 'drachenschatten']
>>> games.get("drachenschatten_v0").players
range(2, 5)
"""

from dragonstones_env.registry import (
    PLUGIN_GROUP,
    GameSpec,
    Presenter,
    TableSizeError,
    UnknownGameError,
    all,
    game_id,
    get,
    ids,
    load_plugins,
    register,
    unregister,
)

# The built-in games register themselves when imported (each package's last lines). Fist first:
# games.all() is in registration order, and Fist of Dragonstones is the default game.
# isort: off
from . import dragonstones
from . import drachenschatten
# isort: on

__all__ = ["PLUGIN_GROUP", "GameSpec", "Presenter", "TableSizeError", "UnknownGameError", "all", "drachenschatten",
           "dragonstones", "game_id", "get", "ids", "load_plugins", "register", "unregister"]
