"""Fist of Dragonstones (and DrachenSchatten) as PettingZoo AEC environments.

>>> from dragonstones_env import env
>>> e = env(num_players=4)
>>> e.reset(seed=0)

The games live in :mod:`dragonstones_env.games` (one package per game, and the registry);
importing this package registers them, with their Gymnasium ids (``Dragonstones-v0``,
``DrachenSchatten-v0``). Fist of Dragonstones' ``env``, ``raw_env``, ``Game`` and ``replay`` are
re-exported here, and ``dragonstones_env.drachenschatten`` is DrachenSchatten's package.
:func:`example_path` finds the shipped examples (``env(characters=example_path("characters.yaml"))``).
"""

from pathlib import Path

from . import drachenschatten, games
from .core import ReplayError
from .games.dragonstones import Game, env, raw_env, replay

__all__ = ["Game", "ReplayError", "drachenschatten", "env", "example_path", "games", "raw_env", "replay"]
__version__ = "0.1.0"


def example_path(name: str) -> str:
    """The path of a shipped example file, such as ``"characters.yaml"`` (the example custom deck):
    inside the installed package (a wheel carries the checkout's ``examples/`` there, pyproject.toml's
    package-dir), else the checkout's ``examples/``. A string, so that env options holding it stay JSON."""
    here = Path(__file__).resolve().parent
    folder = here / "examples" if (here / "examples").is_dir() else here.parent / "examples"
    shipped = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    if name not in shipped:
        raise FileNotFoundError(f"no example {name!r}; the examples are {', '.join(shipped) or 'none'}")
    return str(folder / name)
