"""The heuristic Fist of Dragonstones bot: reads the observation, then bids or chooses.

How it values (:mod:`.values`), bids (:mod:`.bidding`) and uses its powers (:mod:`.choices`),
with the numbers of :mod:`.params`; it plays by rulings F1-F43 of ``shared/RULINGS.md``.
Equally good actions are broken by the bot's seeded ``numpy`` generator.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dragonstones_env.games.dragonstones import actions as A
from dragonstones_env.policies import base

from . import bidding, choices
from .custom_values import deck_gains
from .params import PARAMS, Params
from .table import Table, observe, observe_many
from .values import Values


class HeuristicPolicy(base.Policy):
    """Rule-based player: ``act(observation_dict) -> action``, never a masked action."""

    game = "dragonstones"  # seating it at another game's table is refused

    def __init__(self, seed: int | None = None, params: Params = PARAMS):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.params = params
        self.values = Values(params)
        self.fallbacks = 0  # times a computed action was masked and a legal one was used instead
        self.memory = choices.Memory()

    def __repr__(self) -> str:
        return f"HeuristicPolicy(seed={self.seed})"

    def reset(self, seed: int | None = None) -> None:
        """A new game: as a new instance would play it (the valuation's caches and a deck's
        custom values are kept: they depend on the parameters and the deck, not on the game)."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.memory = choices.Memory()  # a Rainbow Dragon's colour is the last game's (F39)

    def sit(self, table: base.Table) -> HeuristicPolicy:
        """A new game at ``table``: reseeded (when the table gives a seed), and valuing the custom
        characters of its deck (a ``custom.Deck``, issue #16) from their effects or value hints; at a
        table of the box's deck a custom card is worth nothing to the bot."""
        super().sit(table)
        self.values.custom = deck_gains(table.deck)
        return self

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self.decide(observe(observation["observation"]), observation["action_mask"])

    @staticmethod
    def act_each(policies: Sequence[base.Policy], observations: np.ndarray, masks: np.ndarray) -> list[int]:
        """Each bot's action on its row, the observations read together (:func:`.table.observe_many`): the
        same actions as each one's ``act``, in the order given (a subclass with its own ``act`` is asked it)."""
        tables = observe_many(np.asarray(observations))
        return [p.decide(t, m) if type(p).act is HeuristicPolicy.act else int(p.act({"observation": o,
                                                                                       "action_mask": m}))
                for p, t, o, m in zip(policies, tables, observations, masks, strict=True)]

    def win_chance(self, observation: dict[str, np.ndarray]) -> float:
        """The chance that the viewer wins from here, as the bot judges the seats' positions
        (:data:`.values.WIN_WEIGHTS`): what a search (``ismcts``) reads at its horizon."""
        t = observe(observation["observation"])
        z = np.array([self.values.win_logit(s) for s in t.seats])
        z = np.exp(z - z.max())
        return float(z[0] / z.sum())

    def decide(self, t: Table, mask: np.ndarray) -> int:
        """The action for the table ``t`` (the read observation) and its action mask."""
        if t.decision == "bid":
            action = A.encode(bidding.bid(self.values, t, self.rng), 0, t.n)
        elif t.decision == "tiebreak":
            action = A.encode(bidding.tiebreak(self.values, t, self.rng), 0, t.n)
        else:
            action = choices.choose(self.values, t, self._legal(mask), self.rng, self.memory)
        if not (0 <= action < len(mask)) or not mask[action]:
            self.fallbacks += 1
            legal = self._legal(mask)
            action = int(legal[self.rng.integers(len(legal))])
        return int(action)

    @staticmethod
    def _legal(mask: np.ndarray) -> np.ndarray:
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action in this observation's action_mask")
        return legal
