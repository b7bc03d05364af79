"""The masking RLModule for RLlib's PPO (new API stack): a plain MLP actor and a separate critic.

Observations are ``{"observation": (B, OBS_SIZE), "action_mask": (B, NUM_ACTIONS)}`` (see
:mod:`training.rllib_env`). The actor is ``Linear, act, ..., Linear`` on the observation
vector, exactly the network of ``dragonstones_env/policies/checkpoint.py``'s :class:`CheckpointPolicy`; the
action mask then sets every illegal action's logit to ``FLOAT_MIN`` (about -3.4e38, not -inf,
so that the categorical distribution's entropy and log-probabilities stay finite): an
illegal action is never sampled, and its probability is exactly 0. The critic is its own
MLP of the same shape with one output (no shared layers), used by PPO's loss and GAE only;
env runners build the module ``inference_only`` and drop it.

This is RLlib's ``ActionMaskingTorchRLModule`` example rewritten as a self-contained
``TorchRLModule`` + ``ValueFunctionAPI``, so that :func:`actor_weights` can export the actor
exactly (``policy.npz``) and play it later with numpy only.

``model_config``: ``hiddens`` (list of widths, default ``[256, 256]``) and ``activation``
(``"tanh"`` or ``"relu"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

FLOAT_MIN = torch.finfo(torch.float32).min
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(sizes: list[int], activation: type[nn.Module], out_gain: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        linear = nn.Linear(sizes[i], sizes[i + 1])
        last = i == len(sizes) - 2
        nn.init.orthogonal_(linear.weight, gain=out_gain if last else float(np.sqrt(2)))
        nn.init.zeros_(linear.bias)
        layers.append(linear)
        if not last:
            layers.append(activation())
    return nn.Sequential(*layers)


class MaskedMLPModule(TorchRLModule, ValueFunctionAPI, InferenceOnlyAPI):
    """PPO's RLModule for the masked Dict observation: MLP actor + MLP critic."""

    def setup(self) -> None:
        cfg = self.model_config or {}
        hiddens = list(cfg.get("hiddens", [256, 256]))
        self.activation_name = cfg.get("activation", "tanh")
        if self.activation_name not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation_name!r}")
        act = ACTIVATIONS[self.activation_name]
        space = self.observation_space
        obs_size = int(np.prod(space["observation"].shape))
        n_actions = int(self.action_space.n)
        # Like SB3's ActorCriticPolicy: orthogonal init, small policy output, unit value output.
        self.actor = _mlp([obs_size, *hiddens, n_actions], act, out_gain=0.01)
        self.critic = _mlp([obs_size, *hiddens, 1], act, out_gain=1.0)

    # -------------------------------------------------------------- RLModule API
    def get_non_inference_attributes(self) -> list[str]:
        return ["critic"]

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.actor(obs["observation"])
        mask = obs["action_mask"]
        return {Columns.ACTION_DIST_INPUTS: torch.where(mask > 0.5, logits, torch.full_like(logits, FLOAT_MIN))}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.critic(batch[Columns.OBS]["observation"]).squeeze(-1)


def actor_weights(module: MaskedMLPModule) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The actor's ``(w, b)`` layers in ``policy.npz``'s convention (``h @ w + b``) and its activation."""
    linears = [m for m in module.actor if isinstance(m, nn.Linear)]
    weights = [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy()) for m in linears]
    return weights, module.activation_name


def actor_weights_from_state(state: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The same from a module state dict (``actor.0.weight``, ``actor.0.bias``, ``actor.2.weight`` ...),
    e.g. ``algo.learner_group.get_weights(["shared"])["shared"]``: works with remote learners too."""
    indices = sorted({int(k.split(".")[1]) for k in state if k.startswith("actor.") and k.endswith(".weight")})
    out = []
    for i in indices:
        w = np.asarray(state[f"actor.{i}.weight"], np.float32)
        b = np.asarray(state[f"actor.{i}.bias"], np.float32)
        out.append((w.T.copy(), b.copy()))
    return out
