"""Named pieces of a flat vector: the observation layouts of every game here are built with it.

A layout is an ordered mapping name -> :class:`Piece` (shape, slice into the flat vector,
which axis, if any, is indexed by seat relative to the viewer, and a one-line meaning).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Piece:
    """One named piece of a flat vector.

    ``scale``: what the stored values were divided by (a number, or one per entry of the
    last axis), so that ``stored * scale`` gives the counts back; ``labels`` name the
    entries of the last axis (features, or the categories of a one-hot); ``onehot`` says
    that each row holds at most one 1 (decoded to its label or index); ``exact`` that the
    decoded values are whole numbers (rounded on decoding).
    """

    name: str
    shape: tuple[int, ...]
    slice: slice
    seat_axis: int | None  # the axis indexed by relative seat, if any
    help: str
    scale: float | tuple[float, ...] = 1.0
    labels: tuple[str, ...] | None = None
    onehot: bool = False
    exact: bool | tuple[bool, ...] = True


def build_layout(spec: Sequence[tuple]) -> dict[str, Piece]:
    """Lay the pieces ``(name, shape, seat_axis, help, **extras)`` end to end, in order.

    A spec row is ``(name, shape, seat_axis, help)`` optionally followed by a dict of the
    :class:`Piece` extras (``scale``, ``labels``, ``onehot``, ``exact``).
    """
    pieces, start = {}, 0
    for row in spec:
        name, shape, seat_axis, text = row[:4]
        extras = row[4] if len(row) > 4 else {}
        if name in pieces:
            raise ValueError(f"duplicate piece name {name!r}")
        labels = extras.get("labels")
        if labels is not None and len(labels) != shape[-1]:
            raise ValueError(f"piece {name!r}: {len(labels)} labels for a last axis of {shape[-1]}")
        scale = extras.get("scale", 1.0)
        if not isinstance(scale, (int, float)) and len(scale) != shape[-1]:
            raise ValueError(f"piece {name!r}: {len(scale)} scales for a last axis of {shape[-1]}")
        size = math.prod(shape)
        pieces[name] = Piece(name, tuple(shape), slice(start, start + size), seat_axis, text, **extras)
        start += size
    return pieces


def scale_vector(layout: dict[str, Piece]) -> np.ndarray:
    """Per float of the flat vector, what it was divided by (``stored * scale`` = counts)."""
    out = np.ones(layout_size(layout), np.float64)
    for p in layout.values():
        out[p.slice] = np.broadcast_to(np.asarray(p.scale, np.float64), p.shape).ravel()
    return out


def exact_vector(layout: dict[str, Piece]) -> np.ndarray:
    """Per float of the flat vector, whether its decoded value is a whole number."""
    out = np.ones(layout_size(layout), bool)
    for p in layout.values():
        out[p.slice] = np.broadcast_to(np.asarray(p.exact, bool), p.shape).ravel()
    return out


@dataclass(frozen=True)
class _Step:
    """How :func:`decode` reads one piece, worked out once per layout (see :func:`_plan`)."""

    name: str
    kind: str  # "onehot", "labels" (1-D: a dict of scalars), "label_rows" (n-D: a dict of arrays), "counts"
    slice: slice
    shape: tuple[int, ...]
    labels: tuple[str, ...] | None
    exact: tuple[bool, ...] = ()  # per label, for "labels"


@dataclass(frozen=True)
class _Plan:
    """The steps of a layout, and where the pieces read as Python floats lie in one gathered list."""

    steps: tuple[_Step, ...]
    scalar_index: np.ndarray  # the flat indices of the one-hot and labelled pieces, in step order
    offsets: tuple[int, ...]  # per step, where its values start in the gathered list (-1: none)


_PLANS: dict[tuple[int, tuple[str, ...] | None], tuple[dict[str, Piece], _Plan]] = {}


def _plan(layout: dict[str, Piece], pieces: tuple[str, ...] | None = None) -> _Plan:
    """The decoding plan of a layout (of only ``pieces``, in layout order, if given), cached by
    the layout's identity (layouts are module constants; the cache keeps each one alive, so its
    id is never reused)."""
    cached = _PLANS.get((id(layout), pieces))
    if cached is not None and cached[0] is layout:
        return cached[1]
    if pieces is not None:
        unknown = sorted(set(pieces) - set(layout))
        if unknown:
            raise ValueError(f"decode: no piece named {', '.join(map(repr, unknown))}; "
                             f"the pieces are {', '.join(layout)}")
    steps, index, offsets = [], [], []
    for p in layout.values():
        if pieces is not None and p.name not in pieces:
            continue
        if p.onehot:
            step = _Step(p.name, "onehot", p.slice, p.shape, p.labels)
        elif p.labels is not None and len(p.shape) == 1:
            exact = tuple(p.exact if isinstance(p.exact, bool) else p.exact[i] for i in range(len(p.labels)))
            step = _Step(p.name, "labels", p.slice, p.shape, p.labels, exact)
        elif p.labels is not None:
            step = _Step(p.name, "label_rows", p.slice, p.shape, p.labels)
        else:
            step = _Step(p.name, "counts", p.slice, p.shape, None)
        if step.kind in ("onehot", "labels"):
            offsets.append(len(index))
            index.extend(range(p.slice.start, p.slice.stop))
        else:
            offsets.append(-1)
        steps.append(step)
    plan = _Plan(tuple(steps), np.array(index, np.intp), tuple(offsets))
    _PLANS[(id(layout), pieces)] = (layout, plan)
    return plan


def decode(layout: dict[str, Piece], obs: np.ndarray, scales: np.ndarray, exact: np.ndarray,
           pieces: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A structured, unscaled view of a flat vector: piece name -> value.

    * a one-hot piece: its label (or index, without labels), ``None`` where nothing is set;
      a row per leading index when the piece has more than one axis;
    * a piece with ``labels``: a dict label -> counts (an int or float for a 1-D piece,
      an array over the leading axes otherwise);
    * any other piece: its counts, an array in the piece's shape.

    ``scales`` and ``exact`` are :func:`scale_vector` and :func:`exact_vector` of the layout
    (computed once by the caller). Every bot reads its observation through this, so the work per
    piece is planned once per layout (:func:`_plan`): the one-hot and labelled pieces are read as
    Python floats gathered in one call, the rest as views of one array. With ``pieces`` (a tuple
    of names), only those are decoded: a bot that reads a few pieces need not pay for the rest.
    """
    flat = np.asarray(obs, np.float64) * scales
    flat = np.where(exact, np.rint(flat), flat)
    plan = _plan(layout, pieces)
    values = flat[plan.scalar_index].tolist()
    out: dict[str, Any] = {}
    for step, at in zip(plan.steps, plan.offsets, strict=True):
        if step.kind == "onehot":
            width = step.shape[-1]
            if len(step.shape) == 1:
                row = values[at : at + width]
                top = max(row)
                picked = [row.index(top) if top > 0.5 else None]  # the first maximum, as argmax
            else:  # many rows: whole-array maxima and argmaxes
                rows = flat[step.slice].reshape(-1, width)
                hot = (rows.max(axis=1) > 0.5).tolist()
                picked = [i if on else None for i, on in zip(rows.argmax(axis=1).tolist(), hot, strict=True)]
            if step.labels is not None:
                picked = [None if i is None else step.labels[i] for i in picked]
            out[step.name] = picked[0] if len(step.shape) == 1 else picked
        elif step.kind == "labels":
            out[step.name] = {lab: (int(x) if ex else x)
                              for lab, x, ex in zip(step.labels, values[at : at + len(step.labels)], step.exact,
                                                    strict=True)}
        elif step.kind == "label_rows":
            block = flat[step.slice].reshape(step.shape)
            out[step.name] = {lab: block[..., i] for i, lab in enumerate(step.labels)}
        else:
            out[step.name] = flat[step.slice].reshape(step.shape)
    return out


class Reader:
    """A fast accessor of a few pieces' unscaled counts, as one flat list (what a bot reads at every decision).

    ``reader(obs)`` gives the entries of ``pieces`` (in the order given, each piece's entries in its flat
    order) with the values :func:`decode` gives them: the stored value times its scale, rounded where the
    layout says the count is exact, as a Python ``int`` there and a ``float`` elsewhere; one gather and one
    conversion for them all, where :func:`decode` builds a dict per piece. ``at[name]`` is where a piece
    starts in that list and ``shape[name]`` its shape; a one-hot piece's entries are 0/1 (its label is
    ``labels[name][i]`` of the entry at 1, as :func:`decode` reads it: the first maximum if above 0.5).
    The pieces named in ``arrays`` are left out of that list: ``reader.array(obs, name)`` gives one as the
    array of counts in its shape (float64, as :func:`decode`'s arrays), cheaper than a long list.
    """

    def __init__(self, layout: dict[str, Piece], scales: np.ndarray, exact: np.ndarray, pieces: tuple[str, ...],
                 arrays: tuple[str, ...] = ()):
        if isinstance(pieces, str) or isinstance(arrays, str):
            raise ValueError(f"reader: pieces and arrays are tuples of piece names, got {pieces!r}, {arrays!r}")
        unknown = sorted((set(pieces) | set(arrays)) - set(layout))
        if unknown:
            raise ValueError(f"reader: no piece named {', '.join(map(repr, unknown))}; "
                             f"the pieces are {', '.join(layout)}")
        index: list[int] = []
        self.at: dict[str, int] = {}
        self.shape: dict[str, tuple[int, ...]] = {}
        self.labels: dict[str, tuple[str, ...] | None] = {}
        for name in pieces:
            p = layout[name]
            self.at[name] = len(index)
            self.shape[name] = p.shape
            self.labels[name] = p.labels
            index.extend(range(p.slice.start, p.slice.stop))
        self.pieces = tuple(pieces)
        self._index = np.array(index, np.intp)
        self._scales = scales[self._index]
        # The entries decoded as floats (not exact): written over the rounded ints, few or none.
        self._inexact = np.flatnonzero(~exact[self._index]).tolist()
        # per array: where, shape, scales, which entries are exact (None: all, then no np.where to pay)
        self._arrays = {name: (layout[name].slice, layout[name].shape, scales[layout[name].slice],
                               None if exact[layout[name].slice].all() else exact[layout[name].slice])
                        for name in arrays}
        self.shape.update({name: layout[name].shape for name in arrays})
        self.labels.update({name: layout[name].labels for name in arrays})

    def __call__(self, obs: np.ndarray) -> list:
        flat = obs[self._index] * self._scales  # float64, as decode computes it
        out = np.rint(flat).astype(np.int64).tolist()
        for i in self._inexact:
            out[i] = float(flat[i])
        return out

    def rows(self, obs: np.ndarray) -> list[list]:
        """``reader(o)`` of each row ``o`` of a batch ``obs``, in one gather and one conversion for them all."""
        flat = obs[:, self._index] * self._scales
        out = np.rint(flat).astype(np.int64).tolist()
        if self._inexact:
            for row, values in zip(out, flat, strict=True):
                for i in self._inexact:
                    row[i] = float(values[i])
        return out

    def arrays(self, obs: np.ndarray, name: str) -> np.ndarray:
        """``reader.array(o, name)`` of each row ``o`` of a batch ``obs``, stacked: ``(len(obs), *shape)``."""
        where, shape, scales, exact = self._arrays[name]
        flat = obs[:, where] * scales
        return (np.rint(flat) if exact is None else np.where(exact, np.rint(flat), flat)).reshape(len(obs), *shape)

    def array(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The counts of the piece ``name`` (one of ``arrays``), in its shape, as :func:`decode` computes them."""
        where, shape, scales, exact = self._arrays[name]
        flat = obs[where] * scales
        return (np.rint(flat) if exact is None else np.where(exact, np.rint(flat), flat)).reshape(shape)


def layout_size(layout: dict[str, Piece]) -> int:
    return max(p.slice.stop for p in layout.values())


def view(layout: dict[str, Piece], obs: np.ndarray, name: str) -> np.ndarray:
    """The named piece of a flat vector, in its shape (a view, not a copy)."""
    piece = layout[name]
    return obs[piece.slice].reshape(piece.shape)


def seat_permutation(layout: dict[str, Piece], num_players: int, viewer: int, max_seats: int) -> np.ndarray:
    """Flat index array taking an absolute-seat vector to the viewer's relative one.

    Relative seat k is absolute seat (viewer + k) mod n; padding seats (k >= n) map to
    themselves, and are always empty.
    """
    rot = [(viewer + k) % num_players for k in range(num_players)] + list(range(num_players, max_seats))
    perm = np.arange(layout_size(layout))
    for piece in layout.values():
        if piece.seat_axis is not None:
            idx = np.arange(piece.slice.start, piece.slice.stop).reshape(piece.shape)
            perm[piece.slice] = idx.take(rot, axis=piece.seat_axis).ravel()
    return perm


def layout_table(layout: dict[str, Piece], unit: str = "floats") -> str:
    """The layout as a Markdown table."""
    rows = ["| slice | piece | shape | meaning |", "|---|---|---|---|"]
    for p in layout.values():
        shape = " x ".join(map(str, p.shape))
        rows.append(f"| {p.slice.start}-{p.slice.stop - 1} | `{p.name}` | {shape} | {p.help} |")
    rows.append(f"\n{layout_size(layout)} {unit} in all.")
    return "\n".join(rows)


def signature(game: str, layout: dict[str, Piece], num_actions: int) -> str:
    """A short fingerprint of an observation and action layout.

    Checkpoints store it, so that a policy trained for one layout is refused by another.
    """
    text = game + "|" + ";".join(f"{p.name}:{p.shape}" for p in layout.values()) + f"|{num_actions}"
    return f"{game}:{hashlib.sha1(text.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class Family:
    """One family of a discrete action layout: a block of ``shape`` actions from ``start``."""

    name: str
    shape: tuple[int, ...]
    start: int
    help: str

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def stop(self) -> int:
        return self.start + self.size


def build_families(spec: Sequence[tuple[str, tuple[int, ...], str]]) -> tuple[Family, ...]:
    """Lay the action families ``(name, shape, help)`` end to end, in order."""
    out, start = [], 0
    for name, shape, text in spec:
        fam = Family(name, tuple(shape), start, text)
        out.append(fam)
        start = fam.stop
    return tuple(out)


def families_table(families: Sequence[Family]) -> str:
    """An action layout as a Markdown table."""
    rows = ["| actions | family | shape | meaning |", "|---|---|---|---|"]
    for f in families:
        shape = " x ".join(map(str, f.shape))
        rows.append(f"| {f.start}-{f.stop - 1} | `{f.name}` | {shape} | {f.help} |")
    rows.append(f"\n{families[-1].stop} actions in all.")
    return "\n".join(rows)
