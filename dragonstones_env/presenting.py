"""Helpers the games' presenters share (``games/*/present.py``): JSON-plain values, seats made
absolute, legal actions grouped as a bid builder or buttons, words joined, an event in plain text.

Nothing here knows a game: a presenter passes its action families and its env. Part of the shared
core (below the games), so that every game's presenter may use it and the games stay independent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays turned into Python numbers and lists (JSON-ready).

    Whole floats become ints so that equal states give equal JSON text.
    """
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return int(x) if x.is_integer() else round(x, 4)
    return value


def absolute(rel: int | None, viewer: int, n: int) -> int | None:
    """The absolute seat of a seat relative to ``viewer`` (observations are seat-relative)."""
    return None if rel is None else (viewer + rel) % n


def family_of(families: Sequence[Any], action: int) -> Any:
    for fam in families:
        if action < fam.stop:
            return fam
    raise ValueError(f"action {action} is outside the action space")


def builder(fam: Any, legal: np.ndarray, fields: Sequence[tuple[str, str]], title: str) -> dict[str, Any] | None:
    """A bid builder for a family whose legal actions form a box (every field from 0 to its maximum).

    The page composes a bid with one stepper per field, each bounded by its maximum, so every
    bid it can send is legal. Returns None when the legal set is not such a box (then buttons).
    """
    idx = np.array([np.unravel_index(a - fam.start, fam.shape) for a in legal])
    maxima = idx.max(axis=0)
    if len(legal) != math.prod(int(m) + 1 for m in maxima) or idx.min() != 0:
        return None
    strides = [int(math.prod(fam.shape[i + 1:])) for i in range(len(fam.shape))]
    return {
        "kind": "builder",
        "title": title,
        "base": fam.start,
        "fields": [{"name": name, "label": label, "max": int(m), "stride": s}
                   for (name, label), m, s in zip(fields, maxima, strides, strict=True)],
    }


def button_groups(env: Any, families: Sequence[Any], legal: Sequence[int], titles: dict[str, str]) -> list[dict]:
    """Legal actions as buttons, one group per action family, described with ``describe_action``."""
    groups: dict[str, dict[str, Any]] = {}
    for a in legal:
        fam = family_of(families, int(a))
        group = groups.setdefault(fam.name, {"kind": "buttons", "family": fam.name,
                                             "title": titles.get(fam.name, fam.name.replace("_", " ")),
                                             "actions": []})
        group["actions"].append({"action": int(a), "text": env.describe_action(int(a))})
    return list(groups.values())


def joined(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    return " and ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " and " + words[-1]


def event_text(event: dict[str, Any], kind_key: str, names: Sequence[str]) -> str:
    """A plain one-line text of an engine event: its kind, then its fields (seats by name)."""
    who = event.get("player")
    head = f"{names[who]}: " if isinstance(who, int) and 0 <= who < len(names) else ""
    fields = ", ".join(f"{k} {_short(v)}" for k, v in event.items() if k not in (kind_key, "player"))
    return f"{head}{str(event.get(kind_key)).replace('_', ' ')}{': ' + fields if fields else ''}"


def _short(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(_short(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + " ".join(f"{k}:{_short(x)}" for k, x in v.items()) + "}"
    return str(v)
