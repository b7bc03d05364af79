"""The policy interface, the random bot, and ``load_policy`` (RLCard's "load by name")."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dragonstones_env.drachenschatten.env import raw_env as _ds_env
from dragonstones_env.env import raw_env as _fist_env

from .bots import BOTS

HERE = Path(__file__).resolve().parent
CARD_FILE = "card.json"
MODEL_FILE = "model.zip"  # the whole SB3 model (to resume or fine-tune); never read to play
POLICY_FILE = "policy.npz"  # the actor's weights: what plays, with numpy only
# The games a checkpoint may be made for, by the name its card gives (``env``).
GAMES = {cls.metadata["name"]: cls for cls in (_fist_env, _ds_env)}
# card.json limits: the champion's card is 9 kB and 5 levels deep.
MAX_CARD_BYTES = 1_000_000
MAX_CARD_DEPTH = 32


class PolicyError(ValueError):
    """A policy spec that cannot be loaded; the message names the spec and why."""


@runtime_checkable
class Policy(Protocol):
    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action (``observation["action_mask"][a] == 1``)."""
        ...


class RandomPolicy:
    """Uniform over the legal actions, from its own seeded generator."""

    game = None  # plays any game

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
        if not np.asarray(masks).any(axis=1).all():
            raise ValueError("no legal action in this observation's action_mask")
        keys = self.rng.random(masks.shape)
        keys[masks == 0] = -1.0
        return keys.argmax(axis=1)

    def __repr__(self) -> str:
        return f"RandomPolicy(seed={self.seed})"


BUILTIN: dict[str, Callable[[int | None], Policy]] = {
    "random": lambda seed: RandomPolicy(seed),
    **BOTS,  # the rule-based bots (policies/bots): heuristic, ds-heuristic, the zoo
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
    checkpoint folder (``card.json`` + ``policy.npz``) or of a file in it, or a policy object
    (returned as is). ``seed`` seeds the policy's own sampling. A checkpoint is checked before
    it plays (see :mod:`policies.checkpoint`); ``model.zip`` is never read. Raises
    :class:`PolicyError` naming the spec and the problem.
    """
    if isinstance(spec, Policy) and not isinstance(spec, (str, Path)):
        return spec
    if not isinstance(spec, (str, Path)):
        raise PolicyError(f"a policy spec is a name, a path or an object with act(); got {type(spec).__name__}")
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise PolicyError(f"policy {str(spec)!r}: seed must be a non-negative integer or None, got {seed!r}")
    text = str(spec)
    if text in BUILTIN:
        return BUILTIN[text](seed)
    if text in shipped():
        return _load_checkpoint(HERE / text, text, seed, deterministic)
    try:
        path = Path(text)
        if path.name in (MODEL_FILE, POLICY_FILE, CARD_FILE):
            path = path.parent
        exists = path.exists()
    except (OSError, ValueError) as err:  # a NUL byte, a name too long, ...
        raise PolicyError(f"policy spec {text[:200]!r} is not a usable path ({err})") from None
    if exists:
        return _load_checkpoint(path, text, seed, deterministic)
    raise PolicyError(
        f"unknown policy spec {text[:200]!r}: not a built-in or shipped name ({', '.join(available())}) "
        "and no such file or folder"
    )


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _depth(text: str) -> int:
    """How deep the brackets of a JSON text nest (strings skipped), without parsing it: a
    parser would recurse that deep first."""
    brackets = np.frombuffer(_STRING.sub("", text).encode(), np.uint8)
    step = (np.isin(brackets, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(brackets, (ord("]"), ord("}"))).astype(np.int64))
    return int(step.cumsum().max(initial=0))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_card(path: Path, spec: str) -> dict[str, Any]:
    """The checked ``card.json`` of a checkpoint folder (schema: see :mod:`policies.checkpoint`)."""
    card_path = path / CARD_FILE
    if not path.is_dir() or not card_path.is_file():
        raise PolicyError(f"policy {spec!r}: {path} is not a checkpoint folder (it needs {CARD_FILE} and "
                          f"{POLICY_FILE})")
    try:
        size = card_path.stat().st_size
        if size > MAX_CARD_BYTES:
            raise PolicyError(f"policy {spec!r}: {card_path} has {size} bytes; at most {MAX_CARD_BYTES} allowed")
        text = card_path.read_text(encoding="utf-8")
        if _depth(text) > MAX_CARD_DEPTH:
            raise PolicyError(f"policy {spec!r}: {card_path} nests deeper than {MAX_CARD_DEPTH} levels")
        card = json.loads(text, parse_constant=_refuse_constant)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        if isinstance(err, PolicyError):
            raise
        raise PolicyError(f"policy {spec!r}: {card_path} is not readable JSON ({err})") from None
    if not isinstance(card, dict):
        raise PolicyError(f"policy {spec!r}: {card_path} must hold a JSON object, not {type(card).__name__}")
    card.setdefault("env", "dragonstones_v0")  # cards older than DrachenSchatten have no env
    for key in ("algorithm", "layout", "env"):
        if key not in card:
            raise PolicyError(f"policy {spec!r}: {card_path} lacks {key!r}")
        if not isinstance(card[key], str):
            raise PolicyError(f"policy {spec!r}: {card_path}: {key!r} must be a string, "
                              f"got {type(card[key]).__name__}")
    if card["env"] not in GAMES:
        raise PolicyError(f"policy {spec!r}: {card_path}: unknown env {card['env']!r} (known: {sorted(GAMES)})")
    steps = card.get("steps", 0)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise PolicyError(f"policy {spec!r}: {card_path}: 'steps' must be an int >= 0, got {steps!r}")
    return card


def expected_layout(env_name: str) -> str:
    """The layout signature of a game's observations and actions, by its env name."""
    if env_name not in GAMES:
        raise PolicyError(f"unknown env {env_name!r} (known: {sorted(GAMES)})")
    return GAMES[env_name].metadata["layout"]


def game_spaces(env_name: str) -> tuple[int, int]:
    """(observation size, action count) of a game, by its env name."""
    if env_name not in GAMES:
        raise PolicyError(f"unknown env {env_name!r} (known: {sorted(GAMES)})")
    cls = GAMES[env_name]
    return cls.OBS_SIZE, cls.NUM_ACTIONS


def _load_checkpoint(path: Path, spec: str, seed: int | None, deterministic: bool) -> Policy:
    card = read_card(path, spec)
    env_name = card["env"]
    want = expected_layout(env_name)
    if card["layout"] != want:
        raise PolicyError(
            f"policy {spec!r} was made for observation/action layout {card['layout']!r}; "
            f"this version of {env_name} has {want!r}: retrain it or use a matching package version"
        )
    from .checkpoint import CheckpointPolicy

    return CheckpointPolicy.load(path, spec, card, seed=seed, deterministic=deterministic)
