"""Determinizations of DrachenSchatten: a full game drawn from what one seat knows.

:func:`sample_state` is the game's ``GameSpec.sample_state``, the sampler the search policies
play their simulations on (docs/search.md). Everything on the table is public; what a seat does
not know is the order of the cards in the stacks. The village and the caves were each shuffled
into their 8 stacks (D2), and every card that left a stack was seen (a pick, a turn-over), so the
cards still in a deck's stacks are known as a set and not in their order: they are dealt again
into the same stacks, each keeping its height. The seat's own torch memory is kept (D4: the top
card of a stack it saw stays that card until it leaves). Which stacks another player looked at,
and what he saw, is hidden (the observation shows neither): in a determinization the others
remember nothing (nor, while another player uses a torch, which stacks it has shown him). The
copy's record is empty (the real one is omniscient: it names every viewed card and holds the
seed) and its random generator new. ``game`` is never changed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .rules import CAVES_STACKS, VILLAGE_STACKS, DrachenSchattenGame


def sample_state(game: DrachenSchattenGame, seat: int, rng: np.random.Generator,
                 options: Mapping[str, Any] | None = None,
                 guess: Callable[[DrachenSchattenGame, np.random.Generator], tuple] | None = None,
                 ) -> DrachenSchattenGame:
    """A new game at ``game``'s decision, as ``seat`` may imagine it (see the module's docstring).

    ``options`` and ``guess`` are the sampler protocol's (``GameSpec.sample_state``); DrachenSchatten
    has no hidden choices and no observation mode, so neither changes anything here.
    """
    if game.decision is None:
        raise ValueError("sample_state needs a game in progress")
    if not 0 <= seat < game.num_players:
        raise ValueError(f"seat must be 0..{game.num_players - 1}, got {seat!r}")
    g = copy.deepcopy(game, {id(game.record): [], id(game._rng): None})  # both replaced below
    g.seed = int(rng.integers(2**63))
    g._rng = np.random.default_rng(g.seed)
    known = dict(g._memories[seat])  # stack -> the card id the seat saw on top of it
    for group in (VILLAGE_STACKS, CAVES_STACKS):
        # sorted first: the order drawn depends on which cards are unseen, never on their real order
        unseen = sorted(cid for s in group for i, cid in enumerate(g._stacks[s])
                        if not (s in known and i == len(g._stacks[s]) - 1))
        order = [unseen[i] for i in rng.permutation(len(unseen))]
        for s in group:
            height = len(g._stacks[s])
            top = [known[s]] if s in known else []
            g._stacks[s], order = order[: height - len(top)] + top, order[height - len(top):]
        assert not order
    g._memories = [dict(known) if q == seat else {} for q in range(g.num_players)]
    if g._view is not None and g.current_player != seat:  # another's torch: which stacks it saw is hidden too
        g._view["seen"] = []
    return g
