"""Fist of Dragonstones (and DrachenSchatten) as PettingZoo AEC environments.

>>> from dragonstones_env import env
>>> e = env(num_players=4)
>>> e.reset(seed=0)

The games live in :mod:`dragonstones_env.games` (one package per game, and the registry);
importing this package registers them, with their Gymnasium ids (``Dragonstones-v0``,
``DrachenSchatten-v0``). Fist of Dragonstones' ``env``, ``raw_env``, ``Game`` and ``replay`` are
re-exported here, and ``dragonstones_env.drachenschatten`` is DrachenSchatten's package.
"""

from . import drachenschatten, games
from .core import ReplayError
from .games.fist import Game, env, raw_env, replay

__all__ = ["Game", "ReplayError", "drachenschatten", "env", "games", "raw_env", "replay"]
__version__ = "0.1.0"
