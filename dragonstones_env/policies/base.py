"""What a policy is: the :class:`Policy` protocol, the random bot, and :class:`PolicyError`.

The bottom of the policies package: every other module here imports it, it imports none of them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


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
