"""``load_policy`` (RLCard's "load by name"): built-in bots, the zoo, shipped and saved checkpoints.

The policy interface and the random bot are in :mod:`dragonstones_env.policies.base`; the checkpoint file
format (card, weights, checks) in :mod:`dragonstones_env.policies.checkpoint`, which this module imports one way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env.registry import ByGame

from . import mixture, search
from .base import Policy, PolicyError, RandomPolicy, as_policy
from .bots import BOTS
from .checkpoint import CARD_FILE, MODEL_FILE, POLICY_FILE, expected_layout, game_spaces, load_checkpoint, read_card

HERE = Path(__file__).resolve().parent


def shipped_dir() -> Path:
    """The folder of the shipped checkpoints: inside the installed package (a wheel carries the
    checkout's ``policies/`` there, pyproject.toml's package-dir), else the checkout's ``policies/``
    (an editable install, or the source tree on ``sys.path``)."""
    installed = HERE / "shipped"
    return installed if installed.is_dir() else HERE.parents[1] / "policies"
# Names other modules and older code import from here; the file format's names live in .checkpoint.
__all__ = ["BUILTIN", "CARD_FILE", "MODEL_FILE", "POLICY_FILE", "WITH_OPTIONS", "ZOO", "Policy", "PolicyError",
           "RandomPolicy", "available", "expected_layout", "game_spaces", "load_policy", "read_card", "shipped",
           "shipped_dir", "zoo"]


BUILTIN: dict[str, Callable[[int | None], Policy]] = {
    "random": lambda seed: RandomPolicy(seed),
    **BOTS,  # the rule-based bots (policies/bots): heuristic, ds-heuristic, the zoo
    search.NAME: lambda seed: search.make(seed, None, _load_rollout),  # ismcts at its defaults
}
# Built-ins that take options in their spec, ``name:key=value:key=value`` (``ismcts:simulations=400``):
# name -> factory(seed, the text after "name:", the whole spec).
WITH_OPTIONS: dict[str, Callable[[int | None, str, str], Policy]] = {
    search.NAME: lambda seed, text, spec: search.make(seed, text, _load_rollout, spec),
}


def _load_folder(path: Path, spec: str, seed: int | None, deterministic: bool) -> Policy:
    """A checkpoint folder's policy: a network, a mixture of members, or a search by name (its card's
    ``algorithm``)."""
    card = read_card(path, spec)
    if card.get("algorithm") == mixture.ALGORITHM:
        return mixture.load(path, spec, card, seed, deterministic, _load_member)
    if card.get("algorithm") == search.ALGORITHM:
        return search.load_card(spec, card, seed, _load_named_rollout)
    return load_checkpoint(path, spec, seed, deterministic)


def _load_member(target: str | Path, seed: int | None, deterministic: bool) -> Policy:
    """One member of a mixture: a folder inside the mixture's (a Path, already checked), or a built-in or
    shipped name; never a path relative to wherever the process runs. (mixture.load refuses a member
    that is itself a mixture.)"""
    if isinstance(target, Path):
        return _load_folder(target, str(target), seed, deterministic)
    if target not in available():
        raise PolicyError(f"mixture member {target[:200]!r} is neither a built-in or shipped name "
                          f"({', '.join(available())}) nor a folder inside the mixture's")
    return load_policy(target, seed, deterministic)


def _load_rollout(spec: str, seed: int) -> Policy:
    """A search's rollout policy (checked by the search: never another search)."""
    return load_policy(spec, seed=seed)


def _load_named_rollout(spec: str, seed: int) -> Policy:
    """The rollout policy of a search a card names: a built-in or shipped name only (a card is not
    trusted to point at files)."""
    if spec not in available():
        raise PolicyError(f"{spec[:200]!r} is not a built-in or shipped name ({', '.join(available())}): a search "
                          "named by a card rolls out with one of those")
    return load_policy(spec, seed=seed)


# The zoo: rule-based bots of distinct styles, by game id, for panels that mix them (issue #10);
# each game's spec lists its own (``GameSpec.zoo``).
ZOO: Mapping[str, tuple[str, ...]] = ByGame(lambda spec: spec.zoo)


def zoo(game: str) -> list[str]:
    """The names of the zoo bots of ``game`` (a registered game id), for ``load_policy``."""
    if game not in ZOO:
        raise PolicyError(f"unknown game {game!r}: the zoo has {', '.join(ZOO)}")
    return list(ZOO[game])


def shipped() -> list[str]:
    """Names of the shipped checkpoints (the folders of :func:`shipped_dir` with a card)."""
    folder = shipped_dir()
    return sorted(p.name for p in folder.iterdir() if (p / CARD_FILE).is_file()) if folder.is_dir() else []


def available() -> list[str]:
    """Every name ``load_policy`` accepts besides a path: built-in bots and shipped checkpoints."""
    return sorted(BUILTIN) + shipped()


def load_policy(spec: Any, seed: int | None = None, deterministic: bool = False) -> Policy:
    """A policy from a spec.

    ``spec`` is a built-in name (``"random"``, ``"heuristic"``, ``"ds-heuristic"``, a zoo bot, ``"ismcts"``),
    a built-in with options (``"ismcts:simulations=400:rollout=random"``, docs/search.md), the name
    of a checkpoint shipped in ``policies/`` (see :func:`available`), the path of a
    checkpoint folder (``card.json`` + ``policy.npz``) or of a file in it, or a policy object
    (a :class:`Policy` returned as is; an object with ``act`` or a function of the observation
    wrapped by :func:`~.base.as_policy`). ``seed`` seeds the policy's own sampling. A checkpoint is checked before
    it plays (see :mod:`dragonstones_env.policies.checkpoint`); ``model.zip`` is never read. Raises
    :class:`PolicyError` naming the spec and the problem.
    """
    if not isinstance(spec, (str, Path)):
        return as_policy(spec)
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise PolicyError(f"policy {str(spec)!r}: seed must be a non-negative integer or None, got {seed!r}")
    text = str(spec)
    if text in BUILTIN:
        return BUILTIN[text](seed)
    name, sep, options = text.partition(":")
    if sep and name in WITH_OPTIONS:
        return WITH_OPTIONS[name](seed, options, text)
    if text in shipped():
        return _load_folder(shipped_dir() / text, text, seed, deterministic)
    try:
        path = Path(text)
        if path.name in (MODEL_FILE, POLICY_FILE, CARD_FILE):
            path = path.parent
        exists = path.exists()
    except (OSError, ValueError) as err:  # a NUL byte, a name too long, ...
        raise PolicyError(f"policy spec {text[:200]!r} is not a usable path ({err})") from None
    if exists:
        return _load_folder(path, text, seed, deterministic)
    raise PolicyError(
        f"unknown policy spec {text[:200]!r}: not a built-in or shipped name ({', '.join(available())}) "
        "and no such file or folder"
    )


