"""The torch side of :mod:`.export`: a live torch module as a policy, and a torch MLP's weights.

This module imports torch, an optional dependency (the ``train`` extra): :mod:`.export` imports it only
when a torch module is handed to it, so ``import dragonstones_env.policies`` needs no torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .base import Policy, PolicyError
from .checkpoint import choose, game_spaces, masked_softmax

# The activations a checkpoint can play with numpy (checkpoint.ACTIVATIONS), by torch class.
ACTIVATION_NAMES = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}


def mlp_weights(module: Any, what: str) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The ``(w, b)`` layers (``w`` of shape (inputs, outputs)) and activation name of a plain MLP:
    a ``torch.nn.Sequential`` of ``Linear`` layers with one activation (all ``Tanh`` or all ``ReLU``)
    between each two and none after the last. Anything else is a PolicyError naming the layer."""
    allowed = "a torch.nn.Sequential of Linear layers with one Tanh or ReLU between each two, none after the last"
    if not isinstance(module, torch.nn.Sequential):
        raise PolicyError(f"{what} is a {type(module).__name__}, not a plain MLP: export_torch takes {allowed} "
                          "(seat any other module live with from_torch)")
    layers = list(module)
    kinds = set()
    for i, layer in enumerate(layers):
        linear_here = i % 2 == 0
        if linear_here and type(layer) is not torch.nn.Linear:
            raise PolicyError(f"{what}[{i}] is {type(layer).__name__}, where a Linear layer belongs: export_torch "
                              f"takes {allowed}")
        if not linear_here:
            if type(layer) not in ACTIVATION_NAMES:
                raise PolicyError(f"{what}[{i}] is {type(layer).__name__}, where an activation belongs (Tanh or "
                                  f"ReLU): export_torch takes {allowed}")
            kinds.add(ACTIVATION_NAMES[type(layer)])
    if not layers or len(layers) % 2 == 0:
        raise PolicyError(f"{what} must end with a Linear layer (its outputs): export_torch takes {allowed}")
    if len(kinds) > 1:
        raise PolicyError(f"{what} mixes activations {sorted(kinds)}: a checkpoint has one kind")
    weights = []
    for layer in layers[::2]:
        if layer.bias is None:
            raise PolicyError(f"{what}: a Linear layer without bias ({layer}); export_torch needs bias=True")
        weights.append((layer.weight.detach().cpu().numpy().T.astype(np.float32),
                        layer.bias.detach().cpu().numpy().astype(np.float32)))
    return weights, kinds.pop() if kinds else "identity"


class TorchPolicy(Policy):
    """A torch module of observation batches to logits, playing its masked distribution (:func:`.export.from_torch`)."""

    def __init__(self, module: Any, game: str | None, deterministic: bool, seed: int | None, name: str):
        if not isinstance(module, torch.nn.Module):
            raise PolicyError(f"from_torch takes a torch.nn.Module, got {type(module).__name__} (a plain function: "
                              "from_callable)")
        self.module = module.eval()
        self.game = game
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.name = name
        parameter = next(module.parameters(), None)
        self.device = parameter.device if parameter is not None else torch.device("cpu")
        if game is not None:  # wrong sizes fail here, naming them, not in the middle of a game
            obs_size, num_actions = game_spaces(game)
            try:
                logits = self._logits(np.zeros((1, obs_size), np.float32))
            except RuntimeError as err:
                raise PolicyError(f"from_torch: {name} cannot take a batch of {game}'s observations "
                                  f"(shape (batch, {obs_size})): {err}") from None
            if logits.shape != (1, num_actions):
                raise PolicyError(f"from_torch: {name} gives logits of shape {tuple(logits.shape)} for one "
                                  f"observation; {game} needs (1, {num_actions})")

    def _logits(self, observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            batch = torch.as_tensor(np.asarray(observations, np.float32), device=self.device)
            return self.module(batch).detach().cpu().numpy()

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masked_softmax(self._logits(observations), masks)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return choose(self.probabilities(observations, masks), self.rng, self.deterministic)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(observation["observation"][None], observation["action_mask"][None])[0])

    def __repr__(self) -> str:
        return f"TorchPolicy({self.name})"
