"""The shaped network in torch, for Stable-Baselines3's MaskablePPO (``sb3.architecture: shaped``).

The same network as dragonstones_env/policies/shaped.py plays with numpy (which says why it is shaped
so): :class:`SeatEncoder` is SB3's features extractor (the opponents' seats through one shared MLP,
averaged over the seats at the table, beside the rest of the observation), shared by the actor and
the critic; the trunks are SB3's ``net_arch`` MLPs; :class:`FactorisedHead` replaces the actor's
flat linear head. The distribution stays SB3's masked categorical over the game's actions.
:meth:`ShapedPolicy.shaped_net` gives the numpy weights that checkpoints store.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from dragonstones_env import games
from dragonstones_env.policies.shaped import ShapedNet, game_shape

ACTIVATION_NAMES = {nn.Tanh: "tanh", nn.ReLU: "relu"}  # the activations the numpy forward has


def _linears(module: nn.Module) -> list[nn.Linear]:
    return [m for m in module.modules() if isinstance(m, nn.Linear)]


def _layer(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
    """A Linear layer as the numpy forward's ``(w, b)``, ``w`` of shape (inputs, outputs)."""
    return m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy()


class SeatEncoder(BaseFeaturesExtractor):
    """The observation's own cut, then the mean over the seats at the table of each opponent seat's
    encoding by one shared MLP (:func:`dragonstones_env.policies.shaped.features`)."""

    def __init__(self, observation_space: Any, game: str, seat_arch: list[int],
                 activation_fn: type[nn.Module] = nn.Tanh):
        shape = game_shape(games.get(game).raw_env)
        if observation_space.shape != (games.get(game).raw_env.OBS_SIZE,):
            raise ValueError(f"the shaped network of {game} reads observations of shape "
                             f"({games.get(game).raw_env.OBS_SIZE},), got {observation_space.shape}")
        super().__init__(observation_space, len(shape.own_index) + seat_arch[-1])
        self.register_buffer("own_index", torch.as_tensor(shape.own_index, dtype=torch.long), persistent=False)
        self.register_buffer("seat_index", torch.as_tensor(shape.seat_index, dtype=torch.long), persistent=False)
        layers: list[nn.Module] = []
        width = shape.seat_index.shape[1]
        for out in seat_arch:
            layers += [nn.Linear(width, out), activation_fn()]
            width = out
        self.seat = nn.Sequential(*layers)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        seats = observations[:, self.seat_index]  # (batch, opponent seats, features per seat)
        present = (seats != 0).any(dim=2).to(observations.dtype)  # an absent seat is all zeros
        h = self.seat(seats)
        pooled = (h * present.unsqueeze(-1)).sum(dim=1) / present.sum(dim=1, keepdim=True).clamp(min=1.0)
        return torch.cat([observations[:, self.own_index], pooled], dim=1)


class FactorisedHead(nn.Module):
    """Action logits = the components' logits times the game's incidence matrix, plus flat logits."""

    def __init__(self, latent: int, incidence: np.ndarray, flat: bool):
        super().__init__()
        self.register_buffer("incidence", torch.as_tensor(incidence, dtype=torch.float32), persistent=False)
        self.components = nn.Linear(latent, incidence.shape[0])
        self.flat = nn.Linear(latent, incidence.shape[1]) if flat else None

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        logits = self.components(latent) @ self.incidence
        return logits if self.flat is None else logits + self.flat(latent)


class ShapedPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's actor-critic with :class:`SeatEncoder` and :class:`FactorisedHead`."""

    def __init__(self, observation_space: Any, action_space: Any, lr_schedule: Any, *args: Any, game: str,
                 seat_arch: list[int], flat_logits: bool = True, **kwargs: Any):
        self.game, self.seat_arch, self.flat_logits = game, list(seat_arch), flat_logits
        kwargs["features_extractor_class"] = SeatEncoder
        kwargs["features_extractor_kwargs"] = {"game": game, "seat_arch": list(seat_arch),
                                               "activation_fn": kwargs.get("activation_fn", nn.Tanh)}
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        # what model.zip keeps to build the policy again (SB3 saves these, then the weights)
        return {**super()._get_constructor_parameters(), "game": self.game, "seat_arch": self.seat_arch,
                "flat_logits": self.flat_logits}

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        shape = game_shape(games.get(self.game).raw_env)
        self.action_net = FactorisedHead(self.mlp_extractor.latent_dim_pi, shape.incidence, self.flat_logits)
        if self.ortho_init:  # as SB3 starts its flat head: small logits, a near-uniform first policy
            self.action_net.apply(lambda m: self.init_weights(m, gain=0.01))
        # the optimizer again: SB3's holds the flat head that was replaced
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def shaped_net(self, part: str) -> ShapedNet:
        """The numpy weights of the ``"actor"`` or the ``"critic"`` (what checkpoints store)."""
        activation = ACTIVATION_NAMES.get(self.activation_fn)
        if activation is None:
            raise ValueError(f"unsupported activation {self.activation_fn!r} (supported: Tanh, ReLU)")
        seat = tuple(_layer(m) for m in _linears(self.features_extractor.seat))
        if part == "actor":
            head = self.action_net
            return ShapedNet(activation, seat, tuple(_layer(m) for m in _linears(self.mlp_extractor.policy_net)),
                             _layer(head.components), None if head.flat is None else _layer(head.flat))
        if part == "critic":
            return ShapedNet(activation, seat, tuple(_layer(m) for m in _linears(self.mlp_extractor.value_net)),
                             _layer(self.value_net))
        raise ValueError(f"part must be 'actor' or 'critic', got {part!r}")


def policy_kwargs(game: str, net_arch: list[int], seat_arch: list[int], flat_logits: bool) -> dict[str, Any]:
    """MaskablePPO's ``policy_kwargs`` for :class:`ShapedPolicy` (the policy argument is the class)."""
    return {"net_arch": list(net_arch), "game": game, "seat_arch": list(seat_arch), "flat_logits": flat_logits}
