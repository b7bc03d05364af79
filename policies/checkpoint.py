"""A trained checkpoint (``card.json`` + ``model.zip``) playing as a policy.

Supported algorithms: ``MaskablePPO`` (sb3-contrib). The card records the observation and
action layout the model was trained for; :func:`policies.load_policy` refuses a mismatch.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .registry import MODEL_FILE, PolicyError


class CheckpointPolicy:
    """Samples from (or, with ``deterministic=True``, takes the argmax of) a trained policy's masked distribution."""

    def __init__(self, model: Any, spec: str, card: dict[str, Any], seed: int | None = None,
                 deterministic: bool = False):
        self.model = model
        self.spec = spec
        self.card = card
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    @classmethod
    def load(cls, path: Path, spec: str, card: dict[str, Any], seed: int | None = None,
             deterministic: bool = False) -> CheckpointPolicy:
        algorithm = card.get("algorithm")
        model_path = path / MODEL_FILE
        if not model_path.is_file():
            raise PolicyError(f"policy {spec!r}: {model_path} is missing")
        if not zipfile.is_zipfile(model_path):
            raise PolicyError(f"policy {spec!r}: {model_path} is not a model archive (corrupt or truncated)")
        if algorithm == "MaskablePPO":
            try:
                from sb3_contrib import MaskablePPO
            except ImportError:
                raise PolicyError(f"policy {spec!r} needs sb3-contrib: pip install 'dragonstones_env[train]'") from None
            try:
                model = MaskablePPO.load(model_path, device="cpu")
            except Exception as err:  # SB3 raises many kinds on a bad archive
                raise PolicyError(f"policy {spec!r}: cannot load {model_path} ({type(err).__name__}: {err})") from None
        else:
            raise PolicyError(f"policy {spec!r}: unknown algorithm {algorithm!r} in its card (known: MaskablePPO)")
        return cls(model, spec, card, seed=seed, deterministic=deterministic)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked action probabilities for a batch of observations."""
        import torch

        policy = self.model.policy
        with torch.no_grad():
            obs_t, _ = policy.obs_to_tensor(observations)
            dist = policy.get_distribution(obs_t, action_masks=masks.astype(bool))
            probs = dist.distribution.probs.cpu().numpy().astype(np.float64)
        probs *= masks > 0  # exact zeros on masked actions, whatever the float rounding
        return probs / probs.sum(axis=1, keepdims=True)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        probs = self.probabilities(np.asarray(observations, np.float32), np.asarray(masks))
        if self.deterministic:
            return probs.argmax(axis=1)
        u = self.rng.random((len(probs), 1))
        return np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), probs.shape[1] - 1)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        mask = observation["action_mask"]
        action = int(self.act_batch(observation["observation"][None], mask[None])[0])
        if not mask[action]:  # rounding at the edge of the cumulative sum: fall back to the mode
            action = int(np.argmax(np.where(mask > 0, self.probabilities(observation["observation"][None],
                                                                         mask[None])[0], -1.0)))
        return action

    def __repr__(self) -> str:
        return f"CheckpointPolicy({self.spec!r}, steps={self.card.get('steps')})"


def save_checkpoint(model: Any, folder: str | Path, card: dict[str, Any], env_name: str = "dragonstones_v0") -> Path:
    """Write ``model.zip`` and ``card.json`` (with the layout signature) into ``folder``."""
    import json

    from .registry import CARD_FILE, expected_layout

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save(folder / MODEL_FILE)
    card = {"algorithm": type(model).__name__, "env": env_name, "layout": expected_layout(env_name), **card}
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")
    return folder
