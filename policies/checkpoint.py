"""A trained checkpoint playing as a policy, with numpy only.

A checkpoint folder holds ``card.json`` (what it is: algorithm, environment, the layout
signature, how it was trained), ``policy.npz`` (the actor network's weights: what plays)
and, for Stable-Baselines3 runs, ``model.zip`` (the whole model, to fine-tune or resume).
Playing needs numpy only: no torch, no Ray. The actor is an MLP: hidden layers with one
activation, then a linear layer of action logits; illegal actions are masked out.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .registry import CARD_FILE, MODEL_FILE, POLICY_FILE, PolicyError

ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "identity": lambda x: x,
}


class CheckpointPolicy:
    """Samples from (or, with ``deterministic=True``, takes the most likely of) a trained actor's
    masked action distribution."""

    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]], activation: str = "tanh",
                 spec: str = "checkpoint", card: dict[str, Any] | None = None, seed: int | None = None,
                 deterministic: bool = False):
        if activation not in ACTIVATIONS:
            raise PolicyError(f"policy {spec!r}: unknown activation {activation!r} (known: {sorted(ACTIVATIONS)})")
        self.weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights]
        self.activation = activation
        self._act_fn = ACTIVATIONS[activation]
        self.spec = spec
        self.card = card or {}
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_sb3(cls, model: Any, **kwargs: Any) -> CheckpointPolicy:
        """The actor of a Stable-Baselines3 (Maskable)PPO ``MlpPolicy``."""
        import torch

        policy = model.policy
        layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
        layers.append(policy.action_net)
        weights = [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy()) for m in layers]
        name = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}.get(policy.activation_fn)
        if name is None:
            raise PolicyError(f"unsupported activation {policy.activation_fn!r} (supported: Tanh, ReLU)")
        return cls(weights, name, **kwargs)

    @classmethod
    def load(cls, path: Path, spec: str, card: dict[str, Any], seed: int | None = None,
             deterministic: bool = False) -> CheckpointPolicy:
        npz = path / POLICY_FILE
        if npz.is_file():
            try:
                with np.load(npz) as data:
                    count = int(data["layers"])
                    weights = [(data[f"w{i}"], data[f"b{i}"]) for i in range(count)]
                    activation = str(data["activation"])
            except Exception as err:  # numpy raises several kinds on a damaged file
                raise PolicyError(f"policy {spec!r}: cannot read {npz} ({type(err).__name__}: {err})") from None
            return cls(weights, activation, spec, card, seed, deterministic)
        model_path = path / MODEL_FILE
        if not model_path.is_file():
            raise PolicyError(f"policy {spec!r}: {path} has neither {POLICY_FILE} nor {MODEL_FILE} (missing)")
        if not zipfile.is_zipfile(model_path):
            raise PolicyError(f"policy {spec!r}: {model_path} is not a model archive (corrupt or truncated)")
        if card.get("algorithm") != "MaskablePPO":
            raise PolicyError(
                f"policy {spec!r}: cannot read a {card.get('algorithm')!r} model.zip (known: MaskablePPO)"
            )
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise PolicyError(
                f"policy {spec!r} has no {POLICY_FILE}; reading its model.zip needs sb3-contrib"
            ) from None
        try:
            model = MaskablePPO.load(model_path, device="cpu")
        except Exception as err:  # SB3 raises many kinds on a bad archive
            raise PolicyError(f"policy {spec!r}: cannot load {model_path} ({type(err).__name__}: {err})") from None
        return cls.from_sb3(model, spec=spec, card=card, seed=seed, deterministic=deterministic)

    def save_npz(self, path: Path) -> None:
        arrays = {f"w{i}": w for i, (w, _) in enumerate(self.weights)}
        arrays |= {f"b{i}": b for i, (_, b) in enumerate(self.weights)}
        np.savez_compressed(path, layers=len(self.weights), activation=self.activation, **arrays)

    # ------------------------------------------------------------------ playing
    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked action probabilities for a batch of observations."""
        h = np.asarray(observations, np.float32)
        for w, b in self.weights[:-1]:
            h = self._act_fn(h @ w + b)
        w, b = self.weights[-1]
        logits = (h @ w + b).astype(np.float64)
        logits[np.asarray(masks) == 0] = -np.inf
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        return probs / probs.sum(axis=1, keepdims=True)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        probs = self.probabilities(observations, masks)
        if self.deterministic:
            return probs.argmax(axis=1)
        cum = probs.cumsum(axis=1)
        u = self.rng.random((len(probs), 1)) * cum[:, -1:]
        # the first action whose cumulative probability exceeds u: never a masked one (p = 0)
        return (cum <= u).sum(axis=1)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(observation["observation"][None], observation["action_mask"][None])[0])

    def __repr__(self) -> str:
        return f"CheckpointPolicy({self.spec!r}, steps={self.card.get('steps')})"


def save_checkpoint(model: Any, folder: str | Path, card: dict[str, Any], env_name: str = "dragonstones_v1") -> Path:
    """Write ``model.zip``, ``policy.npz`` and ``card.json`` (with the layout signature) into ``folder``."""
    from .registry import expected_layout

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save(folder / MODEL_FILE)
    CheckpointPolicy.from_sb3(model).save_npz(folder / POLICY_FILE)
    card = {"algorithm": type(model).__name__, "env": env_name, "layout": expected_layout(env_name), **card}
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")
    return folder
