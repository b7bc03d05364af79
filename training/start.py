"""A new run's weights from a checkpoint folder, without unpickling anything (the config's ``start``).

``--finetune`` reads SB3's ``model.zip``, which unpickles and so can run code: only for a folder
one made or trusts like code. ``start: FOLDER`` reads what the package reads to play: the actor's
``policy.npz`` and the critic's ``value.npz`` (dragonstones_env/policies/checkpoint.py checks both: names, dtypes,
shapes, finite values; the card: game and layout). A fresh model of the config's PPO settings
gets those weights, so PPO's first advantages come from the start's critic rather than from
noise that would undo the actor. A folder without ``value.npz`` (checkpoints written before it
existed) starts with the start's actor and a fresh critic; the card says which.

The default config (``make train``) starts from ``policies/starts/heuristic-clone``: a clone of
the heuristic bot made by ``training/make_clone`` (its card has the command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env import games
from dragonstones_env.policies import PolicyError
from dragonstones_env.policies.checkpoint import (
    VALUE_FILE,
    game_spaces,
    load_checkpoint,
    read_mlp,
    sb3_activation,
    sb3_linears,
    set_sb3_weights,
    trained_options,
)

from .config import ConfigError


def read_start(folder: str, env_name: str) -> dict[str, Any]:
    """The checked actor (and critic, if the folder has one) of ``folder``, for a model of ``env_name``.
    Raises ConfigError naming ``start`` and what is wrong."""
    path = Path(folder)
    if not path.is_dir():
        raise ConfigError(f"start: {folder!r} is not a folder; it names a checkpoint folder (card.json, "
                          "policy.npz and, for the critic, value.npz), e.g. policies/starts/heuristic-clone")
    try:
        actor = load_checkpoint(path, folder, seed=0, deterministic=False)
        if actor.card.get("architecture", "mlp") != "mlp":  # its layers are not an MLP's to copy
            raise PolicyError(f"{folder} is a {actor.card['architecture']} network; a start gives its layers "
                              "to a new run's MLP (sb3.architecture: mlp)")
        older = games.get(env_name).older_version(actor.game) if actor.game != env_name else None
        if actor.game != env_name and older is None:
            raise PolicyError(f"{folder} plays {actor.game}, this run trains {env_name}")
        critic = None
        if (path / VALUE_FILE).is_file():
            critic = read_mlp(path / VALUE_FILE, game_spaces(actor.game)[0], 1)
    except PolicyError as err:
        raise ConfigError(f"start: {err}") from None
    weights = actor.weights
    if older is not None:  # an older layout's start: the new inputs get zero weights, so it plays as it did
        size = game_spaces(env_name)[0]
        weights = widen(weights, older.columns, size)
        critic = None if critic is None else (widen(critic[0], older.columns, size), critic[1])
    return {"folder": folder, "actor": (weights, actor.activation), "critic": critic, "card": actor.card,
            "widened": older.name if older is not None else None}


def widen(weights: list[tuple[np.ndarray, np.ndarray]], columns: tuple[int, ...],
          size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """An MLP of an older observation layout as one of ``size`` inputs: its first layer's rows go to
    ``columns`` (the current observation's indices of the older inputs), every other row is zero, so
    the widened network computes exactly what the older one did on the older view."""
    (w, b), rest = weights[0], weights[1:]
    if w.shape[0] != len(columns):
        raise ConfigError(f"start: its first layer has {w.shape[0]} inputs, its layout {len(columns)}")
    wide = np.zeros((size, w.shape[1]), w.dtype)
    wide[list(columns)] = w
    return [(wide, b), *rest]


def _copy(model: Any, part: str, weights: list[tuple[np.ndarray, np.ndarray]], folder: str) -> None:
    """``weights`` into the model's ``part``, refused (naming ``ppo.net_arch``) if the shapes differ."""
    want = [tuple(m.weight.shape[::-1]) for m in sb3_linears(model, part)]
    got = [tuple(w.shape) for w, _ in weights]
    if want != got:
        hidden = [shape[1] for shape in got[:-1]]
        raise ConfigError(f"start: the {part} of {folder} has layers {got}, the config's network {want}; "
                          f"a start keeps its shape: set ppo.net_arch={hidden}")
    set_sb3_weights(model, part, weights)


def apply_start(model: Any, start: dict[str, Any]) -> dict[str, Any]:
    """Put ``start`` (from :func:`read_start`) into a new SB3 model; what the run's card records."""
    weights, activation = start["actor"]
    mine = sb3_activation(model)
    if activation != mine:
        raise ConfigError(f"start: {start['folder']} uses {activation}, the model {mine}")
    _copy(model, "actor", weights, start["folder"])
    if start["critic"] is not None:
        critic, critic_activation = start["critic"]
        if critic_activation != mine:
            raise ConfigError(f"start: {start['folder']}/{VALUE_FILE} uses {critic_activation}, the model {mine}")
        _copy(model, "critic", critic, start["folder"])
    card = start["card"]
    return {"folder": start["folder"], "critic": start["critic"] is not None, "name": card.get("name"),
            "steps": card.get("steps", 0), "what": card.get("what"),
            "env_options": trained_options(card, start["folder"]),  # what it learnt to see
            "widened_from": start.get("widened")}  # an older layout's start, zero weights for the new inputs
