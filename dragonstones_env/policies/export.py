"""Bring your own learner: export a trained network to a checkpoint folder, or seat a live one.

Four public functions (docs/bring-your-own-learner.md):

* :func:`export_sb3`: a Stable-Baselines3 (Maskable)PPO ``MlpPolicy`` -> a checkpoint folder
  (``card.json`` + ``policy.npz`` + ``value.npz``, what ``load_policy(folder)`` reads with numpy only);
* :func:`export_torch`: a ``torch.nn.Sequential`` MLP (``Linear`` layers with one activation kind between
  them) -> a checkpoint folder; anything else is refused, naming the layer;
* :func:`from_torch`: any torch module (observation batch -> logits) -> a live :class:`~.base.Policy`
  (masked softmax or argmax; a batch in one forward pass), for use in this process;
* :func:`from_callable`: any function of the observation dict -> a live :class:`~.base.Policy`.

The core install has no torch: nothing here imports it at import time. The functions that need it
import :mod:`.torch_policy` when called (an optional dependency, the ``train`` extra; not a cycle dodge).

>>> from dragonstones_env.policies import from_callable
>>> first_legal = from_callable(lambda obs: int(obs["action_mask"].argmax()), game="dragonstones")
>>> first_legal.capabilities.batch
False
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env import games

from .base import ActPolicy, Policy, PolicyError
from .checkpoint import CARD_FILE, POLICY_FILE, VALUE_FILE, save_checkpoint, save_mlp, sb3_weights


def _game(game: str) -> Any:
    """The registered game of a registry id or PettingZoo name, or a PolicyError listing them."""
    try:
        return games.get(game)
    except (KeyError, ValueError) as err:
        raise PolicyError(str(err)) from None


def _check_sizes(weights: list[tuple[np.ndarray, np.ndarray]], spec: Any, outputs: int, what: str) -> None:
    """The network takes the game's observation vector and gives ``outputs`` numbers (its actions, or 1)."""
    obs_size, num_actions = spec.raw_env.OBS_SIZE, spec.raw_env.NUM_ACTIONS
    inputs, got = weights[0][0].shape[0], weights[-1][0].shape[1]
    if inputs != obs_size or got != outputs:
        raise PolicyError(f"{what} takes {inputs} inputs and gives {got} outputs; {spec.id} needs {obs_size} inputs "
                          f"(its observation vector) and {outputs} outputs ({num_actions} action logits, or 1 value)")


def _card(spec: Any, card: Mapping[str, Any] | None, env_options: Mapping[str, Any] | None) -> dict[str, Any]:
    card = dict(card or {})
    if env_options:  # what it was trained with: a card's env_options shape what it sees at a table (card_view)
        unknown = sorted(set(env_options) - set(spec.options))
        if unknown:
            raise PolicyError(f"env_options {unknown} are not options of {spec.id} "
                              f"(its options: {sorted(spec.options)})")
        card["env_options"] = dict(env_options)
    return card


def export_sb3(model: Any, folder: str | Path, *, game: str = "dragonstones", card: Mapping[str, Any] | None = None,
               env_options: Mapping[str, Any] | None = None, with_model: bool = False) -> Path:
    """Write a Stable-Baselines3 PPO or sb3-contrib MaskablePPO ``MlpPolicy`` as a checkpoint folder.

    ``folder`` gets ``card.json`` (the algorithm, the game's env name and layout signature, ``card``'s keys
    and ``env_options``: the env options it was trained with, which decide what it sees at a table),
    ``policy.npz`` (the actor) and ``value.npz`` (the critic); with ``with_model``, also SB3's ``model.zip``
    and its mark (to resume training here; never read to play). ``game`` is a registry id or PettingZoo name.
    Returns the folder; ``load_policy(folder)`` plays it with numpy only.
    """
    spec = _game(game)
    actor, _ = sb3_weights(model, "actor")
    critic, activation = sb3_weights(model, "critic")
    _check_sizes(actor, spec, spec.raw_env.NUM_ACTIONS, f"the model's actor ({type(model).__name__})")
    card = {"activation": activation, **_card(spec, card, env_options)}
    folder = save_checkpoint(model, folder, card, spec.name, with_model=with_model)
    if not with_model:  # save_checkpoint writes the critic beside model.zip; an export keeps it without
        save_mlp(folder / VALUE_FILE, critic, activation)
    return folder


def export_torch(module: Any, folder: str | Path, *, game: str = "dragonstones",
                 card: Mapping[str, Any] | None = None, env_options: Mapping[str, Any] | None = None,
                 value: Any = None) -> Path:
    """Write a torch MLP as a checkpoint folder (``card.json`` + ``policy.npz`` [+ ``value.npz``]).

    ``module`` must be a ``torch.nn.Sequential`` of ``Linear`` layers with one activation between each two
    (all ``Tanh`` or all ``ReLU``), the first taking the game's observation vector, the last giving its
    action logits; ``value``, optionally, a critic of the same form giving one number. The card names the
    algorithm (``card["algorithm"]``, default ``"torch-mlp"``), the game's env name and layout signature,
    the activation, and ``env_options`` (what it was trained with). Anything else is refused, naming the
    layer and what is allowed. Returns the folder.
    """
    from . import torch_policy  # torch: an optional dependency, imported only when a torch module is given

    spec = _game(game)
    weights, activation = torch_policy.mlp_weights(module, "module")
    _check_sizes(weights, spec, spec.raw_env.NUM_ACTIONS, "module")
    critic = None
    if value is not None:
        critic, value_activation = torch_policy.mlp_weights(value, "value")
        _check_sizes(critic, spec, 1, "value")
        if len(weights) == 1:  # one Linear layer has no activation of its own: the critic's is the card's
            activation = value_activation
        elif value_activation != activation and len(critic) > 1:
            raise PolicyError(f"value uses {value_activation} and module {activation}: a checkpoint has one "
                              "activation for both")
    card = {"algorithm": "torch-mlp", **_card(spec, card, env_options), "activation": activation,
            "env": spec.name, "layout": spec.layout}
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_mlp(folder / POLICY_FILE, weights, activation)
    if critic is not None:
        save_mlp(folder / VALUE_FILE, critic, activation)
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")
    return folder


def from_torch(module: Any, *, game: str | None = "dragonstones", deterministic: bool = False,
               seed: int | None = None, name: str | None = None) -> Policy:
    """A live :class:`~.base.Policy` of any torch module mapping a float32 batch of observation vectors
    ``(batch, obs_size)`` to action logits ``(batch, num_actions)``.

    It samples from the masked softmax of the logits (or, ``deterministic``, takes the most likely legal
    action), acts on a batch in one forward pass (``act_batch``, what a vector env's opponents use) and
    gives ``probabilities``. The module is put in eval mode and run without gradients, on its own device.
    ``game`` (a registry id or PettingZoo name; None for a module that plays any game) is checked with a
    forward pass on a zero observation: a module of the wrong sizes is refused here, not at the table.
    """
    from . import torch_policy  # torch: an optional dependency, imported only when a torch module is given

    return torch_policy.TorchPolicy(module, None if game is None else _game(game).name, deterministic, seed,
                                    name or type(module).__name__)


class CallablePolicy(ActPolicy):
    """A function of the observation dict as a policy of one game (what :func:`from_callable` makes)."""

    def __init__(self, fn: Callable[[dict[str, np.ndarray]], Any], game: str | None, name: str):
        super().__init__(fn, name)
        self.game = game

    def act(self, observation: dict[str, np.ndarray]) -> int:
        action = self._act(observation)
        try:
            index = int(action)
        except (TypeError, ValueError):
            raise PolicyError(f"{self!r} returned {action!r}; a policy returns an action index (int)") from None
        mask = observation["action_mask"]
        if not 0 <= index < len(mask) or not mask[index]:
            raise PolicyError(f"{self!r} returned action {index}, which the action_mask forbids")
        return index

    def __repr__(self) -> str:
        return f"CallablePolicy({self.name})"


def from_callable(fn: Callable[[dict[str, np.ndarray]], Any], *, game: str | None = None,
                  name: str | None = None) -> Policy:
    """A live :class:`~.base.Policy` of a function from the AEC observation dict (``"observation"``,
    ``"action_mask"``) to an action index; an illegal or non-integer answer is an error naming it.
    ``game`` (registry id or PettingZoo name) says which game it plays (None: any)."""
    if not callable(fn):
        raise PolicyError(f"from_callable takes a function of the observation dict, got {type(fn).__name__}")
    return CallablePolicy(fn, None if game is None else _game(game).name,
                          name or getattr(fn, "__name__", repr(fn)))
