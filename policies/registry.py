"""The policy interface, the random bot, and ``load_policy`` (RLCard's "load by name")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .zoo import BOTS as ZOO_BOTS

HERE = Path(__file__).resolve().parent
CARD_FILE = "card.json"
MODEL_FILE = "model.zip"  # the whole SB3 model (to resume or fine-tune)
POLICY_FILE = "policy.npz"  # the actor's weights: what plays, with numpy only


class PolicyError(ValueError):
    """A policy spec that cannot be loaded; the message names the spec and why."""


@runtime_checkable
class Policy(Protocol):
    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action (``observation["action_mask"][a] == 1``)."""
        ...


class RandomPolicy:
    """Uniform over the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action in this observation's action_mask")
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        # Sample uniformly among legal actions: argmax of random keys on the legal set.
        keys = self.rng.random(masks.shape)
        keys[masks == 0] = -1.0
        return keys.argmax(axis=1)

    def __repr__(self) -> str:
        return f"RandomPolicy(seed={self.seed})"


def _heuristic(seed: int | None) -> Policy:
    from .heuristic import HeuristicPolicy

    return HeuristicPolicy(seed=seed)


def _ds_heuristic(seed: int | None) -> Policy:
    from .ds_heuristic import DrachenSchattenHeuristic

    return DrachenSchattenHeuristic(seed=seed)


BUILTIN: dict[str, Callable[[int | None], Policy]] = {
    "random": lambda seed: RandomPolicy(seed),
    "heuristic": _heuristic,
    "ds-heuristic": _ds_heuristic,
    **ZOO_BOTS,
}
# The zoo: rule-based bots of distinct styles, by game, for panels that mix them (issue #10).
ZOO: dict[str, tuple[str, ...]] = {"dragonstones": ("value", "aggressor", "miser", "collector"), "drachenschatten": ()}


def zoo(game: str) -> list[str]:
    """The names of the zoo bots of ``game`` ("dragonstones" or "drachenschatten"), for ``load_policy``."""
    if game not in ZOO:
        raise PolicyError(f"unknown game {game!r}: the zoo has {', '.join(ZOO)}")
    return list(ZOO[game])


def shipped() -> list[str]:
    """Names of the checkpoints shipped in ``policies/`` (folders with a card)."""
    return sorted(p.name for p in HERE.iterdir() if (p / CARD_FILE).is_file())


def available() -> list[str]:
    """Every name ``load_policy`` accepts besides a path: built-in bots and shipped checkpoints."""
    return sorted(BUILTIN) + shipped()


def load_policy(spec: Any, seed: int | None = None, deterministic: bool = False) -> Policy:
    """A policy from a spec.

    ``spec`` is a built-in name (``"random"``, ``"heuristic"``, ``"ds-heuristic"``, a zoo bot), the name
    of a checkpoint shipped in ``policies/`` (see :func:`available`), the path of a
    checkpoint folder (``card.json`` + ``policy.npz`` and/or ``model.zip``) or of a file in it, or a policy
    object (returned as is). ``seed`` seeds the policy's own sampling.
    """
    if isinstance(spec, Policy) and not isinstance(spec, (str, Path)):
        return spec
    if not isinstance(spec, (str, Path)):
        raise PolicyError(f"a policy spec is a name, a path or an object with act(); got {type(spec).__name__}")
    text = str(spec)
    if text in BUILTIN:
        return BUILTIN[text](seed)
    if text in shipped():
        return _load_checkpoint(HERE / text, text, seed, deterministic)
    path = Path(text)
    if path.name in (MODEL_FILE, POLICY_FILE, CARD_FILE):
        path = path.parent
    if path.exists():
        return _load_checkpoint(path, text, seed, deterministic)
    raise PolicyError(
        f"unknown policy spec {text!r}: not a built-in or shipped name ({', '.join(available())}) "
        "and no such file or folder"
    )


def read_card(path: Path, spec: str) -> dict[str, Any]:
    card_path = path / CARD_FILE
    if not path.is_dir() or not card_path.is_file():
        raise PolicyError(f"policy {spec!r}: {path} is not a checkpoint folder (it needs {CARD_FILE} and "
                          f"{POLICY_FILE} or {MODEL_FILE})")
    try:
        card = json.loads(card_path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise PolicyError(f"policy {spec!r}: {card_path} is not readable JSON ({err})") from None
    if not isinstance(card, dict) or "layout" not in card or "algorithm" not in card:
        raise PolicyError(f"policy {spec!r}: {card_path} lacks 'layout' or 'algorithm'")
    return card


def expected_layout(env_name: str) -> str:
    if env_name.startswith("drachenschatten"):
        from dragonstones_env.drachenschatten.env import LAYOUT_SIGNATURE
    else:
        from dragonstones_env.env import LAYOUT_SIGNATURE
    return LAYOUT_SIGNATURE


def _load_checkpoint(path: Path, spec: str, seed: int | None, deterministic: bool) -> Policy:
    card = read_card(path, spec)
    env_name = card.get("env", "dragonstones_v0")
    want = expected_layout(env_name)
    if card["layout"] != want:
        raise PolicyError(
            f"policy {spec!r} was made for observation/action layout {card['layout']!r}; "
            f"this version of {env_name} has {want!r}: retrain it or use a matching package version"
        )
    from .checkpoint import CheckpointPolicy

    return CheckpointPolicy.load(path, spec, card, seed=seed, deterministic=deterministic)
