"""Determinizations of Fist of Dragonstones: a full game drawn from what one seat knows (F43).

:func:`sample_state` is the game's ``GameSpec.sample_state``, the sampler the search policies
play their simulations on (docs/search.md). What a seat does not know, and what is drawn afresh:

* the order of the face-down characters (F8) and of the special pile (F7): their identities are
  public, so the same cards are shuffled;
* the other players' sealed bids of the auction in progress (F10, F14): rebuilt by replaying those
  hidden decisions through the engine, each drawn by ``guess`` (or uniformly among its legal bids);
* in table mode, the other players' coins behind their screens (fairy, common, silver): only their
  totals are public (the stock, F2, less the bank, the spent fairy gold and the seat's own), so the
  totals are dealt out again among the others;
* everything left to chance (stone draws, reshuffles, the Goblin's pick): a new random generator.

Everything else of the engine is public (F43) and copied. The copy's record is empty: the real one
holds every sealed choice and the seed. Nothing here reads a hidden fact except to replace it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dragonstones_env.core import Decision

from .flow import BID, TIEBREAK, Game, _Pending
from .state import STOCK

HIDDEN_COINS = ("fairy", "common", "silver")  # behind the screens; hidden in table mode (F43)


def sample_state(game: Game, seat: int, rng: np.random.Generator, options: Mapping[str, Any] | None = None,
                 guess: Callable[[Game, np.random.Generator], tuple] | None = None) -> Game:
    """A new game at ``game``'s decision, as ``seat`` may imagine it: see the module's docstring.

    ``options`` are the env's (``observation_mode``: ``"table"`` hides the others' coins);
    ``guess(game, rng)`` draws the sealed bid of the game's current decision (another player's),
    else a legal bid is drawn uniformly. ``game`` is never changed.
    """
    if game.decision is None:
        raise ValueError("sample_state needs a game in progress")
    if not 0 <= seat < game.num_players:
        raise ValueError(f"seat must be 0..{game.num_players - 1}, got {seat!r}")
    # The record (sealed choices, the seed) is not copied; the rules tables and the deck are shared.
    memo: dict[int, Any] = {id(game.record): [], id(game.powers): game.powers}
    if game.deck is not None:
        memo[id(game.deck)] = game.deck
    g = copy.deepcopy(game, memo)
    g.seed = int(rng.integers(2**63))
    g.rng = np.random.default_rng(g.seed)
    _shuffle_face_down(g, rng)
    g.special_pile = _shuffled(g.special_pile, rng)
    if (options or {}).get("observation_mode", "recall") == "table":
        _deal_hidden_coins(g, seat, rng)
    _redraw_sealed(g, game.decision, seat, rng, guess)
    return g


def _shuffled(cards: list[str], rng: np.random.Generator) -> list[str]:
    """The cards in a random order drawn from which cards they are, never from their real order (sorted
    first: the same cards and the same ``rng`` give the same order, whatever order they were in)."""
    cards = sorted(cards)
    return [cards[i] for i in rng.permutation(len(cards))]


def _shuffle_face_down(g: Game, rng: np.random.Generator) -> None:
    """F8: the Witch is auctioned first (the end of the list); the other face-down cards, hidden order."""
    witch_first = bool(g.face_down) and g.face_down[-1] == "Witch"
    rest = _shuffled(g.face_down[:-1] if witch_first else g.face_down, rng)
    g.face_down = [*rest, "Witch"] if witch_first else rest


def _deal_hidden_coins(g: Game, seat: int, rng: np.random.Generator) -> None:
    """Table mode (F43): the others' coins behind their screens, dealt out again from their public
    totals, each coin to one of the others at random."""
    others = [p for p in range(g.num_players) if p != seat]
    for coin in HIDDEN_COINS:
        total = STOCK[coin] - getattr(g.bank, coin) - getattr(g.players[seat], coin)
        if coin == "fairy":
            total -= sum(pl.fairy_spent for pl in g.players)
        counts = rng.multinomial(total, [1.0 / len(others)] * len(others))
        for p, k in zip(others, counts, strict=True):
            setattr(g.players[p], coin, int(k))


def _redraw_sealed(g: Game, decision: Decision, seat: int, rng: np.random.Generator,
                   guess: Callable[[Game, np.random.Generator], tuple] | None) -> None:
    """F10, F14: replay the sealed bids of this round through the engine, the seat's own as it is and
    every other player's drawn afresh, so that the round reaches the same decision."""
    a = g.auction
    if a is None or not a._sealed or decision.kind not in (BID, TIEBREAK):
        return
    sealed = dict(a._sealed)  # in the order they were sealed
    a._sealed = {}
    g.pending = None
    for p, bid in sealed.items():
        g.pending = _Pending(Decision(decision.kind, p, decision.card), None, None, {})
        if p == seat:
            option = (decision.kind, *bid)
        else:
            option = guess(g, rng) if guess is not None else None
            if option is None or not g.is_legal(option):
                legal = g.legal_options()
                option = legal[int(rng.integers(len(legal)))]
        g.apply(option)
    if g.decision != decision:  # the replayed round must reach the decision it was sampled at
        raise AssertionError(f"redrawn sealed bids led to {g.decision}, not {decision}")
