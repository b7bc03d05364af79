"""Fist of Dragonstones (and DrachenSchatten) as PettingZoo AEC environments.

>>> from dragonstones_env import env
>>> e = env(num_players=4)
>>> e.reset(seed=0)
"""

from .core import ReplayError
from .engine import Game, replay
from .env import env, raw_env
from .gym_env import register as _register

_register()  # gymnasium.make("Dragonstones-v0") / ("DrachenSchatten-v0")

__all__ = ["Game", "ReplayError", "env", "raw_env", "replay"]
__version__ = "0.1.0"
