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


def decode(layout: dict[str, Piece], obs: np.ndarray, scales: np.ndarray, exact: np.ndarray) -> dict[str, Any]:
    """A structured, unscaled view of a flat vector: piece name -> value.

    * a one-hot piece: its label (or index, without labels), ``None`` where nothing is set;
      a row per leading index when the piece has more than one axis;
    * a piece with ``labels``: a dict label -> counts (an int or float for a 1-D piece,
      an array over the leading axes otherwise);
    * any other piece: its counts, an array in the piece's shape.

    ``scales`` and ``exact`` are :func:`scale_vector` and :func:`exact_vector` of the layout
    (computed once by the caller).
    """
    flat = np.asarray(obs, np.float64) * scales
    flat = np.where(exact, np.rint(flat), flat)
    out: dict[str, Any] = {}
    for p in layout.values():
        block = flat[p.slice].reshape(p.shape)
        if p.onehot:
            # whole rows at once (the search's rollouts decode an observation at every step)
            rows = block.reshape(-1, p.shape[-1])
            set_ = (rows.max(axis=1) > 0.5).tolist()
            picked = [i if s else None for i, s in zip(rows.argmax(axis=1).tolist(), set_, strict=True)]
            if p.labels is not None:
                picked = [None if i is None else p.labels[i] for i in picked]
            out[p.name] = picked[0] if len(p.shape) == 1 else picked
        elif p.labels is not None:
            if len(p.shape) == 1:
                out[p.name] = {lab: _scalar(x, p, i) for i, (lab, x) in enumerate(zip(p.labels, block.tolist(),
                                                                                      strict=True))}
            else:
                out[p.name] = {lab: block[..., i] for i, lab in enumerate(p.labels)}
        else:
            out[p.name] = block
    return out


def _scalar(x: float, piece: Piece, i: int) -> int | float:
    exact = piece.exact if isinstance(piece.exact, bool) else piece.exact[i]
    return int(x) if exact else float(x)


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
