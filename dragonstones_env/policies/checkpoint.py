"""A trained checkpoint playing as a policy, with numpy only.

A checkpoint folder holds ``card.json`` (what it is: algorithm, environment, the layout
signature, how it was trained), ``policy.npz`` (the actor network's weights: what plays)
and, for Stable-Baselines3 runs, ``model.zip`` (the whole model, to fine-tune or resume; with
``model.zip.mark``, the keyed hash that lets training unpickle it, :mod:`.marks`) and
``value.npz`` (the critic's weights, in the same format with one output: with the actor, a new
run's ``start`` without unpickling anything, training/start.py; and :meth:`CheckpointPolicy.value`,
what a search with this checkpoint as its rollout policy reads at its horizon).
Playing needs numpy only: no torch, no Ray. The actor is an MLP: hidden layers with one
activation, then a linear layer of action logits; illegal actions are masked out. A card whose
``architecture`` is ``"shaped"`` holds a network shaped like the game instead (:mod:`.shaped`:
:class:`ShapedCheckpointPolicy`, :func:`read_shaped`); a card without the key is an MLP's.

Checkpoints are exchanged between users, so loading one trusts nothing in it:

* only ``policy.npz`` is read, with ``allow_pickle=False``; ``model.zip`` (SB3's format, which
  unpickles and so can run code) is never read here;
* before any array is read, the npz's entry names, dtypes and shapes are checked from the
  headers: float weights, at most :data:`MAX_ENTRY_BYTES` of array data in the entries (in their
  own dtype: float64 weights take twice the bytes of float32 ones) and at most
  :data:`MAX_WEIGHT_BYTES` of float32 weights to hold once loaded;
* then the layer chain (input = the game's observation size, output = its action count, each
  bias the width of its layer) and finite values after the cast to float32, the dtype that plays
  (a float64 of 1e39 is finite, and infinite as a float32);
* ``card.json``: at most :data:`MAX_CARD_BYTES` bytes, nested at most :data:`MAX_CARD_DEPTH`
  deep, a JSON object whose ``algorithm``, ``env`` and ``layout`` are strings naming a known
  game and its current layout (:func:`read_card`, :func:`expected_layout`); its ``env_options``
  (the env options it was trained with), when known to shape what it sees, are checked by the
  game (:func:`card_view`: a policy of Fist's table mode hides the coins a recall table shows).

This module owns the checkpoint file format; :mod:`dragonstones_env.policies.registry` loads through it.
Every failure is a :class:`~dragonstones_env.policies.base.PolicyError` naming the file and the problem.
"""

from __future__ import annotations

import functools
import io
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env import games
from dragonstones_env.bounds import FILE_BYTES, InputError, read_limited

from .base import Capabilities, Policy, PolicyError
from .marks import sha256_bytes, write_mark
from .shaped import GameShape, ShapedNet, game_shape
from .shaped import forward as shaped_forward

CARD_FILE = "card.json"
MODEL_FILE = "model.zip"  # the whole SB3 model (to resume or fine-tune); never read to play
POLICY_FILE = "policy.npz"  # the actor's weights: what plays, with numpy only
VALUE_FILE = "value.npz"  # the critic's weights: to start a run from, and to judge a search's position
# card.json limits: the champion's card is 9 kB and 5 levels deep.
MAX_CARD_BYTES = FILE_BYTES["card"]  # read up to this, whatever the file system says (/dev/zero has size 0)
MAX_CARD_DEPTH = 32

# The networks a card's ``architecture`` may name: "mlp" (the default, and what a card without the key
# holds: every card written before shaped networks) and "shaped" (:mod:`.shaped`).
ARCHITECTURES = ("mlp", "shaped")

ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "identity": lambda x: x,
}
# Limits on what a checkpoint may hold, in bytes (issue #30: a limit on numbers let 49 M float64
# parameters through, 400 MB in memory). The champion has 0.3 M parameters (1.2 MB as float32) in
# 3 layers; these leave room for far bigger networks while refusing files that would exhaust memory.
MAX_WEIGHT_BYTES = 200_000_000  # the float32 weights and biases held to play (50 M parameters)
MAX_ENTRY_BYTES = 200_000_000  # the arrays of the npz's entries as stored (their dtype), read one at a time
MAX_LAYERS = 64
_FLOAT_KINDS = "f"  # float16/32/64; ints, objects (pickles), strings, complex are refused as weights


def _npy_header(archive: zipfile.ZipFile, name: str, where: str) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of one ``.npy`` entry, read from its header alone (no data)."""
    with archive.open(name) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            elif version in ((2, 0), (3, 0)):
                shape, _, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unknown npy version {version}")
        except ValueError as err:
            raise PolicyError(f"{where}: entry {name!r} is not a valid array ({err})") from None
    return tuple(int(n) for n in shape), np.dtype(dtype)


def _npz_headers(npz: Path, where: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Each ``.npy`` entry's shape and dtype, from the headers alone (no array data read)."""
    if not zipfile.is_zipfile(npz):
        raise PolicyError(f"{where}: not an npz archive (corrupt or truncated)")
    try:
        with zipfile.ZipFile(npz) as archive:
            names = archive.namelist()
            if len(names) > 2 * MAX_LAYERS + 2:
                raise PolicyError(f"{where}: {len(names)} entries; at most {2 * MAX_LAYERS + 2} allowed")
            headers = {}
            for name in names:
                if not name.endswith(".npy"):
                    raise PolicyError(f"{where}: unexpected entry {name!r} (only .npy arrays are allowed)")
                headers[name[:-4]] = _npy_header(archive, name, where)
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as err:
        raise PolicyError(f"{where}: cannot read the archive ({type(err).__name__}: {err})") from None
    return headers


def unpacked_bytes(folder: Path) -> int:
    """The bytes a checkpoint folder's weights take once loaded as float32 (``policy.npz`` and
    ``value.npz``), from the npz headers alone: what a mixture counts against its budget before
    it loads a member."""
    total = 0
    for name in (POLICY_FILE, VALUE_FILE):
        if (folder / name).is_file():
            headers = _npz_headers(folder / name, str(folder / name))
            total += 4 * sum(int(np.prod(shape, dtype=object)) for shape, _ in headers.values())
    return total


def _sized_headers(npz: Path, where: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The npz's headers, refused from them alone, before any array is read (a zip bomb stops here)
    when the entries hold more than :data:`MAX_ENTRY_BYTES` in their own dtype or their numbers more
    than :data:`MAX_WEIGHT_BYTES` as float32 weights."""
    headers = _npz_headers(npz, where)
    numbers = sum(int(np.prod(shape, dtype=object)) for shape, _ in headers.values())
    stored = sum(int(np.prod(shape, dtype=object)) * dtype.itemsize for shape, dtype in headers.values())
    if stored > MAX_ENTRY_BYTES:
        raise PolicyError(f"{where}: its arrays hold {stored} bytes; at most {MAX_ENTRY_BYTES} "
                          "(limit MAX_ENTRY_BYTES)")
    if numbers * 4 > MAX_WEIGHT_BYTES:
        raise PolicyError(f"{where}: {numbers} weights are {numbers * 4} bytes as float32; at most "
                          f"{MAX_WEIGHT_BYTES} (limit MAX_WEIGHT_BYTES)")
    return headers


def _check_scalars(headers: dict[str, tuple[tuple[int, ...], np.dtype]], where: str,
                   keys: tuple[tuple[str, str], ...]) -> None:
    """Each of ``keys`` (name, numpy kinds) is a scalar entry of one of those kinds (short strings)."""
    for key, kind in keys:
        if key not in headers:
            raise PolicyError(f"{where}: no {key!r} entry")
        shape, dtype = headers[key]
        if shape != () or dtype.kind not in kind or dtype.itemsize > 64:
            raise PolicyError(f"{where}: {key!r} must be a scalar of kind {kind!r}, got {dtype} {shape}")


def _float_layers(npz: Path, where: str, names: list[tuple[str, str]],
                  labels: list[str] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(w, b)`` entries named, one at a time in their stored dtype, cast at once to the float32
    that plays and checked after the cast: a float64 of 1e39 is finite, and inf as a float32. An
    error names a pair by its ``labels`` entry (e.g. "layer 1 holds"), else by its two names."""
    weights = []
    try:
        with np.load(npz, allow_pickle=False) as data, np.errstate(over="ignore", invalid="ignore"):
            for j, (w_name, b_name) in enumerate(names):
                w = data[w_name].astype(np.float32)
                b = data[b_name].astype(np.float32)
                if not (np.isfinite(w).all() and np.isfinite(b).all()):
                    label = labels[j] if labels else f"{w_name}/{b_name} hold"
                    raise PolicyError(f"{where}: {label} NaN or infinite values (as float32, the "
                                      "dtype that plays)")
                weights.append((w, b))
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        if isinstance(err, PolicyError):
            raise
        raise PolicyError(f"{where}: cannot read the weights ({type(err).__name__}: {err})") from None
    return weights


def read_mlp(npz: Path, obs_size: int, num_actions: int) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The weights and activation of an MLP file, checked (see the module docstring): ``policy.npz``
    (``num_actions`` outputs: the game's action count) or ``value.npz`` (1 output)."""
    where = str(npz)
    headers = _sized_headers(npz, where)
    if "architecture" in headers:
        raise PolicyError(f"{where}: holds a network of another architecture than the card's \"mlp\" "
                          "(a shaped network's card says architecture: \"shaped\")")
    _check_scalars(headers, where, (("layers", "iu"), ("activation", "U")))
    with np.load(npz, allow_pickle=False) as data:
        count = int(data["layers"])
        activation = str(data["activation"])
    if not 1 <= count <= MAX_LAYERS:
        raise PolicyError(f"{where}: layers must be 1..{MAX_LAYERS}, got {count}")
    if activation not in ACTIVATIONS:
        raise PolicyError(f"{where}: unknown activation {activation!r} (known: {sorted(ACTIVATIONS)})")
    want = {"layers", "activation"} | {f"{p}{i}" for i in range(count) for p in "wb"}
    if set(headers) != want:
        extra, missing = sorted(set(headers) - want), sorted(want - set(headers))
        raise PolicyError(f"{where}: entries do not match layers={count}: missing {missing}, unexpected {extra}")
    width = obs_size
    for i in range(count):
        (w_shape, w_dtype), (b_shape, b_dtype) = headers[f"w{i}"], headers[f"b{i}"]
        if w_dtype.kind not in _FLOAT_KINDS or b_dtype.kind not in _FLOAT_KINDS:
            raise PolicyError(f"{where}: layer {i} has dtypes {w_dtype}/{b_dtype}; weights must be floats")
        out = num_actions if i == count - 1 else (w_shape[1] if len(w_shape) == 2 else -1)
        if w_shape != (width, out) or b_shape != (out,) or out < 1:
            raise PolicyError(f"{where}: layer {i} has w{i} {w_shape} and b{i} {b_shape}; expected "
                              f"({width}, {'n' if i < count - 1 else num_actions}) and matching bias "
                              f"(observation size {obs_size}, {num_actions} actions)")
        width = out
    weights = _float_layers(npz, where, [(f"w{i}", f"b{i}") for i in range(count)],
                            [f"layer {i} holds" for i in range(count)])
    return weights, activation


def save_mlp(path: Path | io.BytesIO, weights: list[tuple[np.ndarray, np.ndarray]], activation: str) -> None:
    """Write an MLP's layers as ``policy.npz`` / ``value.npz`` do (what :func:`read_mlp` reads), to a
    file or a buffer."""
    arrays = {f"w{i}": w for i, (w, _) in enumerate(weights)}
    arrays |= {f"b{i}": b for i, (_, b) in enumerate(weights)}
    np.savez_compressed(path, layers=len(weights), activation=activation, **arrays)


def read_shaped(npz: Path, shape: GameShape, num_actions: int, part: str) -> ShapedNet:
    """The checked weights of a shaped network's file (:mod:`.shaped`): ``policy.npz`` (``part``
    "actor": the components' logits of ``shape``, and flat logits if it has them) or ``value.npz``
    ("critic": one output). Checked as :func:`read_mlp` checks an MLP's, and its ``shape`` entry must
    be the game's (:attr:`GameShape.fingerprint`: the same cuts of the observation, the same
    components of the same actions)."""
    where = str(npz)
    headers = _sized_headers(npz, where)
    _check_scalars(headers, where, (("architecture", "U"), ("activation", "U"), ("shape", "U"),
                                    ("seat_layers", "iu"), ("trunk_layers", "iu")))
    with np.load(npz, allow_pickle=False) as data:
        architecture, activation, fingerprint = (str(data[k]) for k in ("architecture", "activation", "shape"))
        seats, trunk = int(data["seat_layers"]), int(data["trunk_layers"])
    if architecture != "shaped":
        raise PolicyError(f"{where}: architecture {architecture!r}, the card says 'shaped'")
    if activation not in ACTIVATIONS:
        raise PolicyError(f"{where}: unknown activation {activation!r} (known: {sorted(ACTIVATIONS)})")
    if fingerprint != shape.fingerprint:
        raise PolicyError(f"{where}: made for the game shape {fingerprint!r} (observation cuts and action "
                          f"components); this version's is {shape.fingerprint!r}: retrain it")
    if not (1 <= seats <= MAX_LAYERS and 0 <= trunk <= MAX_LAYERS):
        raise PolicyError(f"{where}: seat_layers must be 1..{MAX_LAYERS} and trunk_layers 0..{MAX_LAYERS}, "
                          f"got {seats} and {trunk}")
    flat = part == "actor" and "f_w" in headers
    names = ([(f"s_w{i}", f"s_b{i}") for i in range(seats)] + [(f"t_w{i}", f"t_b{i}") for i in range(trunk)]
             + [("h_w", "h_b")] + ([("f_w", "f_b")] if flat else []))
    want = {"architecture", "activation", "shape", "seat_layers", "trunk_layers"} | {n for pair in names for n in pair}
    if set(headers) != want:
        extra, missing = sorted(set(headers) - want), sorted(want - set(headers))
        raise PolicyError(f"{where}: entries do not match seat_layers={seats}, trunk_layers={trunk}: missing "
                          f"{missing}, unexpected {extra}")
    outputs = shape.incidence.shape[0] if part == "actor" else 1
    width = shape.seat_index.shape[1]
    for k, (w_name, b_name) in enumerate(names):
        (w_shape, w_dtype), (b_shape, b_dtype) = headers[w_name], headers[b_name]
        if w_dtype.kind not in _FLOAT_KINDS or b_dtype.kind not in _FLOAT_KINDS:
            raise PolicyError(f"{where}: {w_name}/{b_name} have dtypes {w_dtype}/{b_dtype}; weights must be floats")
        if k == seats:  # the trunk reads the own cut and the pooled seats
            width = len(shape.own_index) + width
        if w_name == "h_w":
            out, head_in = outputs, width
        elif w_name == "f_w":
            out, width = num_actions, head_in
        else:
            out = w_shape[1] if len(w_shape) == 2 else -1
        if w_shape != (width, out) or b_shape != (out,) or out < 1:
            raise PolicyError(f"{where}: {w_name} {w_shape} and {b_name} {b_shape}; expected ({width}, "
                              f"{out if w_name in ('h_w', 'f_w') else 'n'}) and a matching bias")
        width = out
    layers = _float_layers(npz, where, names)
    return ShapedNet(activation, tuple(layers[:seats]), tuple(layers[seats:seats + trunk]), layers[seats + trunk],
                     layers[seats + trunk + 1] if flat else None)


def save_shaped(path: Path | io.BytesIO, net: ShapedNet, shape: GameShape) -> None:
    """Write a shaped network as ``policy.npz`` / ``value.npz`` do (what :func:`read_shaped` reads)."""
    arrays: dict[str, Any] = {}
    for prefix, layers in (("s", net.seat), ("t", net.trunk)):
        for i, (w, b) in enumerate(layers):
            arrays[f"{prefix}_w{i}"], arrays[f"{prefix}_b{i}"] = w, b
    arrays["h_w"], arrays["h_b"] = net.head
    if net.flat is not None:
        arrays["f_w"], arrays["f_b"] = net.flat
    np.savez_compressed(path, architecture="shaped", activation=net.activation, shape=shape.fingerprint,
                        seat_layers=len(net.seat), trunk_layers=len(net.trunk), **arrays)


def sb3_linears(model: Any, part: str) -> list[Any]:
    """The ``torch.nn.Linear`` layers, input first, of a Stable-Baselines3 (Maskable)PPO
    ``MlpPolicy``'s ``"actor"`` (its action logits last) or ``"critic"`` (its value last)."""
    import torch  # only to read an SB3 model; playing needs numpy only

    policy = model.policy
    if hasattr(policy, "shaped_net"):  # its head composes logits: no chain of Linear layers to copy
        raise PolicyError("a shaped network (sb3.architecture: shaped) has no MLP layers to read or set; its "
                          "weights are shaped_net(part)'s")
    body, head = {"actor": (policy.mlp_extractor.policy_net, policy.action_net),
                  "critic": (policy.mlp_extractor.value_net, policy.value_net)}[part]
    return [m for m in body if isinstance(m, torch.nn.Linear)] + [head]


def set_sb3_weights(model: Any, part: str, weights: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Copy ``weights`` (as :func:`sb3_weights` gives them) into an SB3 ``MlpPolicy``'s ``"actor"``
    or ``"critic"``; the shapes must match (checked by the caller, who knows what to name)."""
    for m, (w, b) in zip(sb3_linears(model, part), weights, strict=True):  # .data: a copy, not a step
        m.weight.data.copy_(m.weight.new_tensor(np.ascontiguousarray(w.T)))
        m.bias.data.copy_(m.bias.new_tensor(b))


def sb3_activation(model: Any) -> str:
    """The name (a key of :data:`ACTIVATIONS`) of an SB3 ``MlpPolicy``'s activation."""
    import torch

    activation = model.policy.activation_fn
    name = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}.get(activation)
    if name is None:
        raise PolicyError(f"unsupported activation {activation!r} (supported: Tanh, ReLU)")
    return name


def sb3_weights(model: Any, part: str) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The weights (each ``(w, b)`` with ``w`` of shape (inputs, outputs)) and activation name of
    an SB3 ``MlpPolicy``'s ``"actor"`` or ``"critic"`` (:func:`sb3_linears`)."""
    return [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy())
            for m in sb3_linears(model, part)], sb3_activation(model)


class CheckpointPolicy(Policy):
    """Samples from (or, with ``deterministic=True``, takes the most likely of) a trained actor's
    masked action distribution."""

    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]], activation: str = "tanh",
                 spec: str = "checkpoint", card: dict[str, Any] | None = None, seed: int | None = None,
                 deterministic: bool = False, critic_file: Path | None = None,
                 view: Callable[[np.ndarray], np.ndarray] | None = None):
        if activation not in ACTIVATIONS:
            raise PolicyError(f"policy {spec!r}: unknown activation {activation!r} (known: {sorted(ACTIVATIONS)})")
        self.weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights]
        self.activation = activation
        self._act_fn = ACTIVATIONS[activation]
        self.spec = spec
        self.card = card or {}
        # The game it plays (the card's env), or None when built in memory without a card.
        self.game: str | None = self.card.get("env")
        # A card may ask to play its most likely action (a policy stronger so than sampling: ds-champion);
        # a loader's deterministic=True makes any checkpoint do so.
        self.deterministic = deterministic or card_deterministic(self.card, spec)
        self.rng = np.random.default_rng(seed)
        # What it sees of the table's observations: what it was trained on (card_view), e.g. a policy of
        # Fist's table mode hides the coins an evaluation's recall table shows. None: all of it.
        self.view = view
        # A rule it follows where its game allows a loop (the card's "loop_guard"), or None.
        self.guard = card_guard(self.card, spec)
        # The critic is read at its first use (only a search asks for it): loading the actor to play
        # stays as cheap as it was, and a checkpoint without value.npz plays as before.
        self._critic_file = critic_file
        self._critic: tuple[list[tuple[np.ndarray, np.ndarray]], Any] | None = None

    # ------------------------------------------------------------------ building
    @classmethod
    def from_sb3(cls, model: Any, **kwargs: Any) -> CheckpointPolicy:
        """The actor of a Stable-Baselines3 (Maskable)PPO ``MlpPolicy``, or of a policy that gives its numpy
        network by ``shaped_net(part)`` (training/shaped.py's): then a :class:`ShapedCheckpointPolicy`."""
        if hasattr(model.policy, "shaped_net"):
            return ShapedCheckpointPolicy(model.policy.shaped_net("actor"), shape_of(model.policy.game), **kwargs)
        return cls(*sb3_weights(model, "actor"), **kwargs)

    @classmethod
    def load(cls, path: Path, spec: str, card: dict[str, Any], seed: int | None = None,
             deterministic: bool = False) -> CheckpointPolicy:
        """The actor of ``path/policy.npz``, checked against the card's game (see the module docstring).

        ``model.zip`` is never read here: it is SB3's pickle-based format, and unpickling a file
        from someone else runs whatever code it holds.
        """
        npz = path / POLICY_FILE
        if not npz.is_file():
            extra = (f" ({MODEL_FILE} is never loaded to play: it can run code; "
                     "see docs/training.md, Loading checkpoints from others)") \
                if (path / MODEL_FILE).exists() else ""
            raise PolicyError(f"policy {spec!r}: {path} has no {POLICY_FILE} (missing){extra}")
        obs_size, num_actions = game_spaces(card.get("env", "dragonstones_v0"))
        try:
            weights, activation = read_mlp(npz, obs_size, num_actions)
        except PolicyError as err:
            raise PolicyError(f"policy {spec!r}: {err}") from None
        critic = path / VALUE_FILE
        return cls(weights, activation, spec, card, seed, deterministic, critic if critic.is_file() else None,
                   view=card_view(card, spec))

    def save_npz(self, path: Path) -> None:
        save_mlp(path, self.weights, self.activation)

    # ------------------------------------------------------------------ playing
    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked action probabilities for a batch of the table's observations (without the
        actions its loop guard leaves out, if its card asks for one)."""
        if self.guard is not None:
            masks = self.guard(observations, masks)
        return masked_softmax(self.legal_logits(observations, masks), masks)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """The action logits (before masking) of a batch of the table's observations."""
        return _forward(self.weights, self._act_fn, self._seen(observations))

    def legal_logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`logits` where some row's mask allows the action, 0 elsewhere: the head's columns of
        illegal actions are never computed. The head is most of a forward pass (DrachenSchatten's 3,542
        actions of which a handful are legal), and a search calls one for every rollout step."""
        columns = np.flatnonzero(np.asarray(masks).any(axis=0))
        return _forward(self.weights, self._act_fn, self._seen(observations), columns)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return choose(self.probabilities(observations, masks), self.rng, self.deterministic)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(observation["observation"][None], observation["action_mask"][None])[0])

    @property
    def has_value(self) -> bool:
        """Whether :meth:`value` can judge a position: the checkpoint has its critic (``value.npz``)."""
        return self._critic_file is not None  # the critic is only ever read from this file

    @property
    def capabilities(self) -> Capabilities:
        """As its class says, but ``value`` only with its critic (``value.npz``)."""
        return replace(super().capabilities, value=self.has_value)

    def value(self, observation: dict[str, np.ndarray]) -> float:
        """The critic's estimate of this seat's final reward from here (the game's end pays +1 to a
        winner and -1/(n-1) to the others): what a search whose rollout policy this is reads at its
        horizon. ``value.npz`` is read and checked at the first call, as the actor is at loading."""
        if self._critic is None:
            if self._critic_file is None:
                raise PolicyError(f"policy {self.spec!r}: no {VALUE_FILE} (the critic) to judge a position")
            try:
                weights, activation = read_mlp(self._critic_file, self.weights[0][0].shape[0], 1)
            except PolicyError as err:
                raise PolicyError(f"policy {self.spec!r}: {err}") from None
            self._critic = weights, ACTIVATIONS[activation]
        weights, act_fn = self._critic
        return float(_forward(weights, act_fn, self._seen(observation["observation"][None]))[0, 0])

    def _seen(self, observations: np.ndarray) -> np.ndarray:
        return observations if self.view is None else self.view(observations)

    def __repr__(self) -> str:
        return f"CheckpointPolicy({self.spec!r}, steps={self.card.get('steps')})"


class ShapedCheckpointPolicy(CheckpointPolicy):
    """A trained shaped network (:mod:`.shaped`: a seat encoder shared across the opponents' seats, a
    factorised head) as a policy; it plays, samples and judges positions as :class:`CheckpointPolicy`
    does. ``weights`` is empty: its layers are ``net`` (and its critic's, read at the first use)."""

    def __init__(self, net: ShapedNet, shape: GameShape, spec: str = "checkpoint", card: dict[str, Any] | None = None,
                 seed: int | None = None, deterministic: bool = False, critic_file: Path | None = None,
                 view: Callable[[np.ndarray], np.ndarray] | None = None):
        super().__init__([], net.activation, spec, card, seed, deterministic, critic_file, view)
        self.net, self.shape = net, shape
        self._shaped_critic: ShapedNet | None = None

    @classmethod
    def load(cls, path: Path, spec: str, card: dict[str, Any], seed: int | None = None,
             deterministic: bool = False) -> ShapedCheckpointPolicy:
        """The shaped actor of ``path/policy.npz``, checked against the card's game and its shape."""
        npz = path / POLICY_FILE
        if not npz.is_file():
            raise PolicyError(f"policy {spec!r}: {path} has no {POLICY_FILE} (missing)")
        env_name = card.get("env", "dragonstones_v0")
        try:
            net = read_shaped(npz, shape_of(env_name), game_spaces(env_name)[1], "actor")
        except PolicyError as err:
            raise PolicyError(f"policy {spec!r}: {err}") from None
        critic = path / VALUE_FILE
        return cls(net, shape_of(env_name), spec, card, seed, deterministic, critic if critic.is_file() else None,
                   view=card_view(card, spec))

    def save_npz(self, path: Path) -> None:
        save_shaped(path, self.net, self.shape)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        return shaped_forward(self.net, self.shape, self._act_fn, self._seen(observations))

    def legal_logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.logits(observations)  # a factorised head: its outputs are sums over shared parts

    def value(self, observation: dict[str, np.ndarray]) -> float:
        if self._shaped_critic is None:
            if self._critic_file is None:
                raise PolicyError(f"policy {self.spec!r}: no {VALUE_FILE} (the critic) to judge a position")
            try:
                self._shaped_critic = read_shaped(self._critic_file, self.shape, 1, "critic")
            except PolicyError as err:
                raise PolicyError(f"policy {self.spec!r}: {err}") from None
        critic = self._shaped_critic
        seen = self._seen(observation["observation"][None])
        return float(shaped_forward(critic, self.shape, ACTIVATIONS[critic.activation], seen, incidence=False)[0, 0])

    def __repr__(self) -> str:
        return f"ShapedCheckpointPolicy({self.spec!r}, steps={self.card.get('steps')})"


def shape_of(env_name: str) -> GameShape:
    """The shape (:func:`.shaped.game_shape`) of a game by its current env name (or registry id); a shaped
    network reads its game's current layout only, so an older layout's name is refused."""
    spec = next((g for g in games.all() if env_name in (g.name, g.id)), None)
    if spec is None:
        raise PolicyError(f"a shaped network is made for a game's current layout; {env_name!r} is not one "
                          f"(known: {sorted(g.name for g in games.all())})")
    return game_shape(spec.raw_env)


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The masked action distribution of a batch of logits (rows sum to 1, 0 on masked actions): what
    every network policy here plays from (a checkpoint's, a live torch module's)."""
    logits = np.array(logits, np.float64)
    # finite weights can still overflow float32 (relu): keep every legal logit a number (the check
    # first: nan_to_num costs a search a few percent of its time on logits that are all finite)
    if not np.isfinite(logits).all():
        logits = np.nan_to_num(logits, nan=0.0, posinf=1e300, neginf=-1e300)
    masks = np.asarray(masks)
    if masks.ndim != 2 or not masks.any(axis=1).all():
        raise ValueError("no legal action in this observation's action_mask")
    logits[masks == 0] = -np.inf
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    return probs / probs.sum(axis=1, keepdims=True)


def choose(probs: np.ndarray, rng: np.random.Generator, deterministic: bool) -> np.ndarray:
    """An action per row of ``probs``: the most likely (``deterministic``) or sampled with ``rng``."""
    if deterministic:
        return probs.argmax(axis=1)
    cum = probs.cumsum(axis=1)
    u = rng.random((len(probs), 1)) * cum[:, -1:]
    # the first action whose cumulative probability exceeds u: never a masked one (p = 0)
    return (cum <= u).sum(axis=1)


def _forward(weights: list[tuple[np.ndarray, np.ndarray]], act_fn: Any, inputs: np.ndarray,
             columns: np.ndarray | None = None) -> np.ndarray:
    """An MLP's outputs for a batch: hidden layers with ``act_fn``, then a linear layer; with
    ``columns``, only those outputs of the last layer (the others 0)."""
    h = np.asarray(inputs, np.float32)
    for w, b in weights[:-1]:
        h = act_fn(h @ w + b)
    w, b = weights[-1]
    if columns is None:
        return h @ w + b
    out = np.zeros((len(h), w.shape[1]), np.float32)
    out[:, columns] = h @ w[:, columns] + b[columns]
    return out


def save_model(model: Any, path: str | Path) -> Path:
    """Write an SB3 model's ``model.zip`` at ``path`` and its mark beside it (:mod:`.marks`: the
    keyed hash of the bytes written, which ``--resume`` and ``--finetune`` check before unpickling)."""
    path = Path(path)
    buffer = io.BytesIO()
    model.save(buffer)
    data = buffer.getvalue()
    path.write_bytes(data)
    write_mark(path, sha256_bytes(data))
    return path


def save_checkpoint(model: Any, folder: str | Path, card: dict[str, Any], env_name: str | None = None,
                    with_model: bool = True) -> Path:
    """Write ``policy.npz`` and ``card.json`` (with the layout signature) into ``folder``, and
    ``model.zip`` (marked) and ``value.npz`` unless ``with_model`` is False (league snapshots only
    need to play). ``env_name``: the game's env name (None: the default game's current one)."""
    env_name = env_name or games.get("dragonstones").name  # the version is the registry's, not written here
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    actor = CheckpointPolicy.from_sb3(model)
    shaped = isinstance(actor, ShapedCheckpointPolicy)
    if with_model:
        save_model(model, folder / MODEL_FILE)
        if shaped:
            save_shaped(folder / VALUE_FILE, model.policy.shaped_net("critic"), actor.shape)
        else:
            save_mlp(folder / VALUE_FILE, *sb3_weights(model, "critic"))
    actor.save_npz(folder / POLICY_FILE)
    card = {"algorithm": type(model).__name__, "env": env_name, "layout": expected_layout(env_name),
            **({"architecture": "shaped"} if shaped else {}), **card}
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")
    return folder


# ---------------------------------------------------------------------------- the card
def _games() -> dict[str, tuple[str, int, int]]:
    """The games a checkpoint may be made for, by the name its card gives (``env``): every
    registered game's current and older layouts (read at each call, so a game registered later
    counts), as (layout signature, observation size, action count)."""
    known = {}
    for spec in games.all():
        cls = spec.raw_env
        known[spec.name] = (cls.metadata["layout"], cls.OBS_SIZE, cls.NUM_ACTIONS)
        for v in spec.older:  # e.g. drachenschatten_v0: its checkpoints play through v.view
            known[v.name] = (v.layout, v.obs_size, cls.NUM_ACTIONS)
    return known


def _game_class(env_name: str) -> tuple[str, int, int]:
    known = _games()
    if env_name not in known:
        raise PolicyError(f"unknown env {env_name!r} (known: {sorted(known)})")
    return known[env_name]


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
    """The checked ``card.json`` of a checkpoint folder (schema: see :mod:`dragonstones_env.policies.checkpoint`)."""
    card_path = path / CARD_FILE
    if not path.is_dir() or not card_path.is_file():
        raise PolicyError(f"policy {spec!r}: {path} is not a checkpoint folder (it needs {CARD_FILE} and "
                          f"{POLICY_FILE})")
    try:
        try:
            text = read_limited(card_path, "card").decode("utf-8")
        except InputError as err:
            raise PolicyError(f"policy {spec!r}: {err}") from None
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
    if card["env"] not in _games():
        raise PolicyError(f"policy {spec!r}: {card_path}: unknown env {card['env']!r} (known: {sorted(_games())})")
    architecture = card.get("architecture", "mlp")  # cards without it (every card before shaped networks): an MLP
    if architecture not in ARCHITECTURES:
        raise PolicyError(f"policy {spec!r}: {card_path}: unknown architecture {architecture!r} "
                          f"(known: {', '.join(ARCHITECTURES)})")
    steps = card.get("steps", 0)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise PolicyError(f"policy {spec!r}: {card_path}: 'steps' must be an int >= 0, got {steps!r}")
    return card


def expected_layout(env_name: str) -> str:
    """The layout signature of a game's observations and actions, by its env name."""
    return _game_class(env_name)[0]


def trained_options(card: dict[str, Any], spec: str = "checkpoint") -> dict[str, Any]:
    """The options of its game's env a checkpoint was trained with: its card's ``env_options`` (cards
    written before them hold them among their ``config``'s keys; neither: none, the env's defaults, e.g.
    Fist's recall mode). Empty for a card that names no known game."""
    options = card.get("env_options")
    if options is None:
        options = card.get("config") if isinstance(card.get("config"), dict) else {}
    if not isinstance(options, dict):
        raise PolicyError(f"policy {spec!r}: card.json: 'env_options' must be an object, got {type(options).__name__}")
    game = _spec_of(card)
    return {k: v for k, v in options.items() if k in game.options} if game is not None else {}


def card_view(card: dict[str, Any], spec: str = "checkpoint") -> Callable[[np.ndarray], np.ndarray] | None:
    """What a checkpoint sees of a table (:attr:`CheckpointPolicy.view`): its game's ``seat_view`` of the env
    options it was trained with (:func:`trained_options`)."""
    options = trained_options(card, spec)
    game = _spec_of(card)
    if game is None:  # a card built in memory without its game (read_card checks every card read from a file)
        return None
    try:
        view = game.seat_view(options)
    except ValueError as err:
        raise PolicyError(f"policy {spec!r}: card.json: {err}") from None
    older = game.older_version(card.get("env"))
    if older is None:
        return view
    if view is None:
        return older.view
    return _Composed(older.view, view)


def card_deterministic(card: dict[str, Any], spec: str = "checkpoint") -> bool:
    """Whether a card asks its policy to play its most likely legal action (``"deterministic": true``)."""
    value = card.get("deterministic", False)
    if not isinstance(value, bool):
        raise PolicyError(f"policy {spec!r}: card.json: 'deterministic' must be true or false, got {value!r}")
    return value


Guard = Callable[[np.ndarray, np.ndarray], np.ndarray]


def card_guard(card: dict[str, Any], spec: str = "checkpoint") -> Guard | None:
    """The loop guard a card asks for (``"loop_guard": limit``; its game's
    :class:`~dragonstones_env.registry.LoopGuard`) as ``f(observations, masks) -> masks``, or None."""
    limit = card.get("loop_guard")
    if limit is None:
        return None
    return game_guard(_spec_of(card), limit, f"policy {spec!r}: card.json", card.get("env"))


def game_guard(game: Any, limit: Any, where: str, env: Any = None) -> Guard:
    """``game``'s loop guard at ``limit`` as ``f(observations, masks) -> masks``; a :class:`PolicyError`
    starting with ``where`` if the game has no loop to guard or the limit is not one of its limits."""
    guard = None if game is None else game.loop_guard
    if guard is None:
        raise PolicyError(f"{where} asks for a loop_guard, but {env if game is None else game.name!r} has no loop "
                          f"to guard (games that have one: {sorted(g.name for g in games.all() if g.loop_guard)})")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit not in guard.limits:
        raise PolicyError(f"{where}: 'loop_guard' must be an int in "
                          f"{guard.limits.start}..{guard.limits.stop - 1}, got {limit!r}")
    return functools.partial(guard.apply, limit=limit)


class _Composed:
    """An older layout's view of the table, then the game's seat view of that (its options')."""

    def __init__(self, older: Callable[[np.ndarray], np.ndarray], seat: Callable[[np.ndarray], np.ndarray]):
        self.older, self.seat = older, seat

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return self.seat(self.older(observations))


def _spec_of(card: dict[str, Any]) -> Any:
    """The registered game a card names (``env``, its current or an older layout), or None."""
    return next((g for g in games.all() if g.plays(card.get("env")) and card.get("env") != g.id), None)


def game_spaces(env_name: str) -> tuple[int, int]:
    """(observation size, action count) of a game, by its env name."""
    _, obs_size, num_actions = _game_class(env_name)
    return obs_size, num_actions


def load_checkpoint(path: Path, spec: str, seed: int | None, deterministic: bool) -> CheckpointPolicy:
    card = read_card(path, spec)
    env_name = card["env"]
    want = expected_layout(env_name)
    if card["layout"] != want:
        raise PolicyError(
            f"policy {spec!r} was made for observation/action layout {card['layout']!r}; "
            f"this version of {env_name} has {want!r}: retrain it or use a matching package version"
        )
    kind = ShapedCheckpointPolicy if card.get("architecture", "mlp") == "shaped" else CheckpointPolicy
    return kind.load(path, spec, card, seed=seed, deterministic=deterministic)
