"""A checkpoint folder of random weights for Fist of Dragonstones: what a run writes, as the tests need it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dragonstones_env import raw_env
from dragonstones_env.policies.checkpoint import CheckpointPolicy, expected_layout


def random_actor(seed: int, hidden: int = 16) -> list[tuple[np.ndarray, np.ndarray]]:
    """An MLP actor of one hidden layer, float32, from the game's observation to its actions."""
    rng = np.random.default_rng(seed)
    obs, actions = raw_env.OBS_SIZE, raw_env.NUM_ACTIONS
    return [(rng.normal(size=(obs, hidden)).astype(np.float32), np.zeros(hidden, np.float32)),
            (rng.normal(size=(hidden, actions)).astype(np.float32), np.zeros(actions, np.float32))]


def write_checkpoint(folder: Path, seed: int, hidden: int = 16) -> Path:
    """``card.json`` and ``policy.npz`` of a random actor in ``folder`` (what ``load_policy`` reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    CheckpointPolicy(random_actor(seed, hidden)).save_npz(folder / "policy.npz")
    card = {"algorithm": "test", "env": "dragonstones_v1", "layout": expected_layout("dragonstones_v1"),
            "steps": seed}
    (folder / "card.json").write_text(json.dumps(card))
    return folder
