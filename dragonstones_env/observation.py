"""``dragonstones_env.observation``: the documented path of Fist of Dragonstones' observation.

The module lives in :mod:`dragonstones_env.games.dragonstones.observation` (``decode``, ``view``,
``LAYOUT``, ...); this alias keeps the path the README showed. New code imports the game package.
"""

from dragonstones_env.games.dragonstones.observation import *  # noqa: F403
from dragonstones_env.games.dragonstones.observation import LAYOUT, OBS_HIGH, OBS_SIZE, decode, layout_table, view  # noqa: F401
