"""One action codec for every game, built from the game's table of action families.

A game's ``actions`` module lists its families -- name, shape, help text, and how the index
within the family becomes an engine option -- and builds a :class:`Codec` from them; the codec
does the rest: the flat ``Discrete`` layout, ``encode`` (option -> index), ``decode`` (index ->
option), ``describe``, ``family_of``, ``mask`` and the README's table. Seats in actions are
relative to the acting player (1 = next clockwise), so one policy plays every seat: a family
says where in its options the relative seat sits, and the codec turns it into an absolute one.

Encoding and decoding are table look-ups: one table of options with relative seats, and per
(actor, table size) the options with absolute seats, built on first use.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .layout import Family, build_families, families_table

Option = tuple


def unravel(i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The multi-index of flat index ``i`` in ``shape`` (row-major, as ``numpy.unravel_index``)."""
    out = []
    for size in reversed(shape):
        out.append(i % size)
        i //= size
    return tuple(reversed(out))


@dataclass(frozen=True)
class ActionFamily:
    """One family of a game's action table.

    ``option(index)`` is the engine option of the action at multi-index ``index`` of ``shape``,
    with any seat RELATIVE to the actor (1..); ``seat`` is that seat's position in the option
    tuple (``None``: no seat, or a function of the option for families whose options differ);
    ``describe(option)`` reads the relative option for people (default: the option itself).
    """

    name: str
    shape: tuple[int, ...]
    help: str
    option: Callable[[tuple[int, ...]], Option]
    seat: int | Callable[[Option], int | None] | None = None
    describe: Callable[[Option], str] | None = None


class Codec:
    """The flat action layout of a list of :class:`ActionFamily` (laid end to end, in order)."""

    def __init__(self, families: Sequence[ActionFamily], normalise: Callable[[Option], Option] | None = None):
        """``normalise``, if given, maps an engine option to the one its action stands for before
        encoding (Fist clamps bids above the layout's caps to the caps, F10)."""
        self.specs = tuple(families)
        self.families: tuple[Family, ...] = build_families([(f.name, f.shape, f.help) for f in self.specs])
        self.family: dict[str, Family] = {f.name: f for f in self.families}
        self.num_actions: int = self.families[-1].stop
        self._normalise = normalise
        self._relative: list[Option] = []  # every action's option, seats relative
        self._seat: list[int | None] = []  # where its seat is, if it has one
        self._family_index: list[int] = []
        for k, spec in enumerate(self.specs):
            fam = self.families[k]
            for i in range(fam.size):
                opt = tuple(spec.option(unravel(i, fam.shape)))
                self._relative.append(opt)
                self._seat.append(spec.seat(opt) if callable(spec.seat) else spec.seat)
                self._family_index.append(k)
        self._tables: dict[tuple[int, int], tuple[list[Option | None], dict[Option, int]]] = {}

    # ------------------------------------------------------------------ the tables
    def _table(self, actor: int, num_players: int) -> tuple[list[Option | None], dict[Option, int]]:
        """Per seat and table size: every action's absolute option (None: a seat not at the
        table), and the index of every option."""
        key = (actor, num_players)
        table = self._tables.get(key)
        if table is None:
            options: list[Option | None] = []
            for opt, pos in zip(self._relative, self._seat, strict=True):
                if pos is not None:
                    rel = opt[pos]
                    opt = None if rel >= num_players else (*opt[:pos], (actor + rel) % num_players, *opt[pos + 1:])
                options.append(opt)
            index = {opt: a for a, opt in enumerate(options) if opt is not None}
            if len(index) != sum(opt is not None for opt in options):
                raise ValueError("two actions stand for the same option")
            table = self._tables[key] = (options, index)
        return table

    def _check(self, action: int) -> None:
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not 0 <= action < self.num_actions:
            last = self.num_actions - 1
            raise ValueError(f"action {action!r} is outside the action space: an action is an int in 0..{last}")

    # ------------------------------------------------------------------ the codec
    def encode(self, option: Option, actor: int, num_players: int) -> int:
        """The action index of engine option ``option`` chosen by seat ``actor``."""
        if self._normalise is not None:
            option = self._normalise(option)
        try:
            return self._table(actor, num_players)[1][tuple(option)]
        except KeyError:
            raise ValueError(f"option {option!r} has no action at a {num_players}-player table") from None

    def decode(self, action: int, actor: int, num_players: int) -> Option:
        """The engine option of an action chosen by seat ``actor`` (not checked for legality).

        Raises ``ValueError`` for an index outside the space or a seat that is not at the table.
        """
        self._check(action)
        option = self._table(actor, num_players)[0][int(action)]
        if option is None:
            rel = self._relative[int(action)][self._seat[int(action)]]
            raise ValueError(f"action {action} names seat +{rel}, not at a {num_players}-player table")
        return option

    def family_of(self, action: int) -> Family:
        """The family an action index belongs to."""
        self._check(action)
        return self.families[self._family_index[int(action)]]

    def relative(self, action: int) -> Option:
        """An action's option with its seat relative to the actor (as :meth:`describe` shows it)."""
        self._check(action)
        return self._relative[int(action)]

    def describe(self, action: int) -> str:
        """A readable description of an action index, seats relative to the actor (``seat +1``...)."""
        self._check(action)
        spec = self.specs[self._family_index[int(action)]]
        opt = self._relative[int(action)]
        return spec.describe(opt) if spec.describe is not None else " ".join(map(str, opt))

    def mask(self, options: Iterable[Option], actor: int, num_players: int) -> np.ndarray:
        """The int8 mask of the actions of ``options`` (the legal options of a decision)."""
        mask = np.zeros(self.num_actions, np.int8)
        index = self._table(actor, num_players)[1]
        normalise = self._normalise
        for option in options:
            mask[index[normalise(option) if normalise is not None else tuple(option)]] = 1
        return mask

    def layout_table(self) -> str:
        """The action layout as a Markdown table (the README's copies are generated from this)."""
        return families_table(self.families)

    def exports(self) -> Exports:
        """The names a game's ``actions`` module offers its users (``A.encode``, ``A.FAMILY``, ...),
        in one unpacking: ``FAMILIES, FAMILY, NUM_ACTIONS, encode, ... = CODEC.exports()``."""
        return Exports(self.families, self.family, self.num_actions, self.encode, self.decode, self.describe,
                       self.family_of, self.layout_table)


class Exports(NamedTuple):
    """What :meth:`Codec.exports` gives, in order."""

    families: tuple[Family, ...]
    family: dict[str, Family]
    num_actions: int
    encode: Callable[[Option, int, int], int]
    decode: Callable[[int, int, int], Option]
    describe: Callable[[int], str]
    family_of: Callable[[int], Family]
    layout_table: Callable[[], str]
