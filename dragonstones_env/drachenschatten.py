"""``from dragonstones_env import drachenschatten``: the documented path of DrachenSchatten.

The game lives in :mod:`dragonstones_env.games.drachenschatten`; this module re-exports it
(``drachenschatten.env``, ``.raw_env``, ``.DrachenSchattenGame``, ``.replay``, the card tables)
so that the import users were shown keeps working. New code imports the game package.
"""

from dragonstones_env.games.drachenschatten import *  # noqa: F403
from dragonstones_env.games.drachenschatten import (  # noqa: F401
    __all__,
    actions,
    cards,
    env,
    observation,
    rules,
)
