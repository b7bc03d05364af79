"""A policy network shaped like the game, played with numpy only (issue 52).

The flat MLP of :mod:`.checkpoint` reads one vector and writes one logit per action: what it learns
about the opponent in relative seat 1 does not carry to seat 2, and a bid of 7 fairy gold is as
unrelated to a bid of 8 as to a Thief's theft. The shaped network gives both their structure:

* **a seat encoder shared across the opponents' seats**: every piece of the observation layout
  indexed by relative seat (its ``seat_axis``) is cut per seat; each opponent's cut goes through the
  same small MLP, and their encodings are averaged over the seats at the table (an absent seat is
  all zeros, :func:`dragonstones_env.layout.seat_permutation`), so the result does not depend on
  which opponent sits where. The viewer's own cut and every other piece are concatenated to it,
  then a trunk MLP reads the whole;
* **a factorised head**: the trunk writes one logit per *component* of an action and an action's
  logit is the sum of its components' (:attr:`GameShape.incidence`, a fixed 0/1 matrix), plus a
  flat logit per action when the network has one. The components come from the game's own action
  decoding (its codec: :meth:`~dragonstones_env.codec.Codec.family_of` and
  :meth:`~dragonstones_env.codec.Codec.relative`): one per action family, and one per value of each
  field of a family's options (a gold bid ``("bid", fairy, common, black, amulet)`` has a logit per
  amount of fairy gold, per amount of common gold, ...). The distribution is still a masked
  categorical over the same actions, so masks and the trainers work unchanged.

This module is the numpy side: what a game's shape is (:func:`game_shape`) and the forward pass
(:func:`forward`); :mod:`.checkpoint` reads and writes the weights (``architecture: "shaped"`` on the
card) and training/shaped.py is the same network in torch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dragonstones_env.codec import Codec
from dragonstones_env.layout import Piece

Layer = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class GameShape:
    """How the shaped network cuts a game's observation and composes its actions.

    ``own_index``: the flat indices the trunk reads as they are (every piece without a seat axis,
    and the viewer's own seat of those with one); ``seat_index``: per opponent seat (relative seats
    1, 2, ...), the flat indices of its cut, the same features in the same order for each;
    ``incidence``: (components, actions) float32, 1 where the action has the component;
    ``components``: each component's name; ``fingerprint``: a hash of all of it, which a checkpoint
    stores so that one made for another action table or layout is refused.
    """

    own_index: np.ndarray
    seat_index: np.ndarray
    incidence: np.ndarray
    components: tuple[str, ...]
    fingerprint: str


def seat_cuts(layout: dict[str, Piece]) -> tuple[np.ndarray, np.ndarray]:
    """``(own_index, seat_index)`` of :class:`GameShape` from a layout's seat axes."""
    seated = [p for p in layout.values() if p.seat_axis is not None]
    seats = {p.shape[p.seat_axis] for p in seated}
    if len(seats) != 1:
        raise ValueError(f"the pieces indexed by seat must agree on the seat count, got {sorted(seats)}")
    (num_seats,) = seats
    per_seat = [[] for _ in range(num_seats)]
    own: list[int] = []
    for p in layout.values():  # layout order: the trunk's inputs follow the observation's
        idx = np.arange(p.slice.start, p.slice.stop).reshape(p.shape)
        if p.seat_axis is None:
            own.extend(idx.ravel().tolist())
            continue
        for k in range(num_seats):
            cut = idx.take(k, axis=p.seat_axis).ravel().tolist()
            (own if k == 0 else per_seat[k]).extend(cut)
    return np.array(own, np.intp), np.array(per_seat[1:], np.intp)


def action_components(codec: Codec) -> tuple[tuple[str, ...], np.ndarray]:
    """Component names and the (components, actions) incidence, from the codec's own decoding: each
    action has its family's component and one per field of its option (seats relative to the actor)."""
    names: dict[str, int] = {}
    rows: list[list[int]] = []
    for action in range(codec.num_actions):
        family = codec.family_of(action).name
        option = codec.relative(action)
        keys = [family] + [f"{family}[{i}]={value!r}" for i, value in enumerate(option[1:], start=1)]
        rows.append([names.setdefault(k, len(names)) for k in keys])
    incidence = np.zeros((len(names), codec.num_actions), np.float32)
    for action, row in enumerate(rows):
        incidence[row, action] = 1.0
    return tuple(names), incidence


_SHAPES: dict[int, tuple[object, GameShape]] = {}


def game_shape(raw_env: type) -> GameShape:
    """The shape of a game, from its raw env class (its ``LAYOUT`` and ``CODEC``), built once per class."""
    cached = _SHAPES.get(id(raw_env))
    if cached is not None and cached[0] is raw_env:
        return cached[1]
    own, seats = seat_cuts(raw_env.LAYOUT)
    components, incidence = action_components(raw_env.CODEC)
    text = "|".join([",".join(map(str, own)), ";".join(",".join(map(str, s)) for s in seats), *components,
                     ",".join(map(str, np.flatnonzero(incidence.T.ravel())))])
    shape = GameShape(own, seats, incidence, components, hashlib.sha1(text.encode()).hexdigest()[:12])
    _SHAPES[id(raw_env)] = (raw_env, shape)
    return shape


@dataclass(frozen=True)
class ShapedNet:
    """The weights of one shaped network (an actor or a critic), each layer ``(w, b)`` with ``w`` of
    shape (inputs, outputs): ``seat`` (the shared seat encoder), ``trunk`` (its hidden layers),
    ``head`` (the components' logits of an actor, with ``incidence``; a critic's value, without) and
    ``flat`` (an actor's flat logits, added to the composed ones; None: none)."""

    activation: str
    seat: tuple[Layer, ...]
    trunk: tuple[Layer, ...]
    head: Layer
    flat: Layer | None = None

    @property
    def parameters(self) -> int:
        layers = (*self.seat, *self.trunk, self.head, *(() if self.flat is None else (self.flat,)))
        return sum(w.size + b.size for w, b in layers)


def features(net: ShapedNet, shape: GameShape, act_fn: Callable[[np.ndarray], np.ndarray],
             inputs: np.ndarray) -> np.ndarray:
    """What the trunk reads for a batch: the own cut, then the mean encoding of the seats at the table."""
    x = np.asarray(inputs, np.float32)
    seats = x[:, shape.seat_index]  # (batch, opponent seats, features per seat)
    h = seats
    for w, b in net.seat:
        h = act_fn(h @ w + b)
    present = (seats != 0).any(axis=2).astype(np.float32)  # an absent seat is all zeros
    pooled = (h * present[..., None]).sum(axis=1) / np.maximum(present.sum(axis=1, keepdims=True), 1.0)
    return np.concatenate([x[:, shape.own_index], pooled.astype(np.float32)], axis=1)


def forward(net: ShapedNet, shape: GameShape, act_fn: Callable[[np.ndarray], np.ndarray],
            inputs: np.ndarray, incidence: bool = True) -> np.ndarray:
    """The outputs for a batch of observations: action logits (``incidence``: an actor) or values."""
    z = features(net, shape, act_fn, inputs)
    for w, b in net.trunk:
        z = act_fn(z @ w + b)
    out = z @ net.head[0] + net.head[1]
    if incidence:
        out = out @ shape.incidence
    if net.flat is not None:
        out = out + (z @ net.flat[0] + net.flat[1])
    return out
