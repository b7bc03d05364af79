"""The shared observer base: a game's named observation pieces, seat permutation, views, decode.

Every game lays its observation out as named pieces (:mod:`dragonstones_env.layout`), seat-relative:
relative seat k is absolute seat (viewer + k) mod n. :class:`Observation` holds what each game
needs once, whatever its pieces: the permutation from absolute to relative seats (cached per
table size and viewer), ``view(obs, name)``, ``decode(obs)`` (names and unscaled counts, what the
bots read instead of the encoder's scales) and the layout's table. :class:`Observer` is the
template every game's observer follows: a public vector in absolute seat order, built once per
state and shared by every viewer, permuted for the viewer, then the viewer's own private facts
written on top.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import Piece, Reader, exact_vector, layout_size, layout_table, scale_vector, seat_permutation
from .layout import decode as decode_layout
from .layout import view as view_piece


class Observation:
    """A game's observation layout, padded to ``max_seats`` seats."""

    def __init__(self, layout: dict[str, Piece], max_seats: int):
        self.layout = layout
        self.max_seats = max_seats
        self.size = layout_size(layout)
        self._scales = scale_vector(layout)
        self._exact = exact_vector(layout)
        self._perms: dict[tuple[int, int], np.ndarray] = {}
        self._readers: dict[tuple[tuple[str, ...], tuple[str, ...]], Reader] = {}

    def permutation(self, num_players: int, viewer: int) -> np.ndarray:
        """Flat index array taking an absolute-seat vector to the viewer's relative one."""
        perm = self._perms.get((num_players, viewer))
        if perm is None:
            perm = self._perms[(num_players, viewer)] = seat_permutation(
                self.layout, num_players, viewer, self.max_seats)
        return perm

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The named piece of an observation, in its shape (a view, not a copy)."""
        return view_piece(self.layout, obs, name)

    def decode(self, obs: np.ndarray, pieces: tuple[str, ...] | None = None) -> dict[str, Any]:
        """A structured, unscaled view of an observation vector: piece name -> value (one-hot
        pieces as their label, labelled pieces as dicts, the rest as counts); only ``pieces``
        (a tuple of names) if given."""
        return decode_layout(self.layout, obs, self._scales, self._exact, pieces)

    def reader(self, pieces: tuple[str, ...], arrays: tuple[str, ...] = ()) -> Reader:
        """The fast accessor of ``pieces`` (a tuple of names): ``reader(obs)`` is one flat list of their
        unscaled counts, the values :meth:`decode` gives, and ``reader.array(obs, name)`` the counts of one
        of ``arrays`` as an array (:class:`~dragonstones_env.layout.Reader`)."""
        key = tuple(names if isinstance(names, str) else tuple(names) for names in (pieces, arrays))  # str: refused
        reader = self._readers.get(key)
        if reader is None:
            reader = self._readers[key] = Reader(self.layout, self._scales, self._exact, *key)
        return reader

    def table(self) -> str:
        """The observation layout as a Markdown table (the README's copies are generated from this)."""
        return layout_table(self.layout)


class Observer:
    """Builds one game's observations for any viewer (the template of every game's observer).

    Subclasses set :attr:`observation` and implement :meth:`public` (the public vector of the
    current state, absolute seats, cached as the game sees fit) and :meth:`private` (what only
    ``viewer`` may see, written into its relative-seat copy).
    """

    observation: Observation

    def observe(self, game: Any, viewer: int) -> np.ndarray:
        obs = self.public(game)[self.observation.permutation(game.num_players, viewer)]
        self.private(obs, game, viewer)
        return obs

    def public(self, game: Any) -> np.ndarray:
        raise NotImplementedError

    def private(self, obs: np.ndarray, game: Any, viewer: int) -> None:
        """Write the viewer's own facts into ``obs`` (relative seats); nothing by default."""
