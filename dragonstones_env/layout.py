"""Named pieces of a flat vector: the observation layouts of every game here are built with it.

A layout is an ordered mapping name -> :class:`Piece` (shape, slice into the flat vector,
which axis, if any, is indexed by seat relative to the viewer, and a one-line meaning).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Piece:
    name: str
    shape: tuple[int, ...]
    slice: slice
    seat_axis: int | None  # the axis indexed by relative seat, if any
    help: str


def build_layout(spec: Sequence[tuple[str, tuple[int, ...], int | None, str]]) -> dict[str, Piece]:
    """Lay the pieces ``(name, shape, seat_axis, help)`` end to end, in order."""
    pieces, start = {}, 0
    for name, shape, seat_axis, text in spec:
        if name in pieces:
            raise ValueError(f"duplicate piece name {name!r}")
        size = math.prod(shape)
        pieces[name] = Piece(name, tuple(shape), slice(start, start + size), seat_axis, text)
        start += size
    return pieces


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
    import hashlib

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
