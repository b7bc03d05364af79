"""The optional extras (pyproject.toml's ``[project.optional-dependencies]``) as the commands need them.

A command checks its extra before doing any work, so that on the core install it says in one line
which extra to install instead of failing halfway with a traceback (``dragonstones evaluate`` would
otherwise play every game, then fail on the ratings and leave a journal behind).
"""

from __future__ import annotations

import importlib.util

# The import names each extra brings (pyproject.toml lists the distributions: pillow is PIL).
EXTRAS: dict[str, tuple[str, ...]] = {
    "app": ("starlette", "uvicorn", "rich", "PIL"),
    "eval": ("openskill", "matplotlib", "tqdm"),
}


def missing(extra: str) -> list[str]:
    """The import names of ``extra`` that cannot be imported here (none when it is installed)."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def missing_message(extra: str, command: str) -> str | None:
    """One line naming the extra ``command`` needs and how to install it, or None when it is installed."""
    absent = missing(extra)
    if not absent:
        return None
    return (f"{command} needs the [{extra}] extra ({', '.join(absent)} missing): "
            f"pip install 'dragonstones_env[{extra}]' (from a checkout: pip install -e '.[{extra}]')")
