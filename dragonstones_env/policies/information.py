"""What a seat may use of a game in progress beyond its observation: its *information state*.

A policy's ``act(observation)`` sees one observation. A policy that searches (``ismcts``,
:mod:`.search`) needs the game itself to imagine how it goes on; it overrides
:meth:`~.base.Policy.observe_game` (its ``capabilities.information_state``), and whatever seats it
(the arena, the Gymnasium env's opponents, the app, the RLlib env) calls :func:`decide`, which hands
it the seat's :class:`InformationState` before asking ``act``.

An :class:`InformationState` does not show the engine: it *samples* it. :meth:`InformationState.sample`
returns a determinization, a whole new engine drawn from what the seat knows, by the game's own
``GameSpec.sample_state`` (each game's ``sampler`` module says what it redraws). So a search sees
only games consistent with its seat's view, whatever the real hidden cards and sealed bids are;
tests/test_search.py checks that the samples' distribution does not depend on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dragonstones_env.registry import GameSpec
from dragonstones_env.registry import get as get_game

from .base import Policy, PolicyError, Table, seat, seat_seed


class InformationState:
    """One seat's view of a game in progress, for the decision it must take now.

    ``spec`` is the game's spec, ``seat`` the seat, ``num_players`` the table size and ``options``
    the env's options (an observation mode hides more or less). :meth:`sample` draws a
    determinization; :meth:`simulator` makes an env of the same game and options to play one on.
    Valid until the next action is played.
    """

    __slots__ = ("_engine", "num_players", "options", "seat", "spec")

    def __init__(self, spec: GameSpec, engine: Any, seat: int, options: dict[str, Any]):
        if spec.sample_state is None:
            raise PolicyError(f"{spec.title} supplies no determinization sampler (GameSpec.sample_state): "
                              "a search policy cannot play it")
        self.spec = spec
        self._engine = engine  # read only by the game's sampler, which redraws what the seat does not know
        self.seat = seat
        self.num_players = engine.num_players
        self.options = dict(options)

    def sample(self, rng: np.random.Generator, guess: Callable[[Any, np.random.Generator], tuple] | None = None) -> Any:
        """A determinization: a new engine at this decision, consistent with what the seat has seen and
        drawn with ``rng`` in everything it has not (``guess``: see ``GameSpec.sample_state``)."""
        return self.spec.sample_state(self._engine, self.seat, rng, self.options, guess)

    def simulator(self) -> Any:
        """A raw env of this game, table size and options (illegal actions raise), to play samples on
        with its ``resume``."""
        options = {k: v for k, v in self.options.items() if k not in ("num_players", "illegal_action")}
        return self.spec.raw_env(num_players=self.num_players, illegal_action="raise", **options)

    def __repr__(self) -> str:
        return f"InformationState({self.spec.id}, seat={self.seat}, players={self.num_players})"


def information_state(env: Any, agent: str) -> InformationState:
    """The information state of ``agent`` in the AEC ``env`` (wrapped or not) of a registered game."""
    raw = env.unwrapped
    if raw.game is None or raw.game.decision is None:
        raise ValueError("information_state needs a game in progress: reset() the env first")
    spec = get_game(raw.metadata["name"])
    return InformationState(spec, raw.game, raw.agent_name_mapping[agent], raw.options)


def table_of(env: Any, seat_index: int, seed: int | None = None) -> Table:
    """The :class:`~.base.Table` of seat ``seat_index`` at the AEC ``env`` (wrapped or not) of a registered
    game: its id, size, options and custom deck, with ``seed`` for the seat's policy."""
    raw = env.unwrapped
    return Table(get_game(raw.metadata["name"]).id, raw.num_players, seat_index, seed, raw.options, raw.deck)


def seat_all(env: Any, policies: Sequence[Any], game_seed: int | None) -> list[Any]:
    """Each seat's policy seated at the AEC ``env`` for the game dealt with ``game_seed``, each with its
    seat's seed (:func:`~.base.seat_seed`); a None seat (a person) stays None. Returns what plays each
    seat (a mixture's drawn member, or the policy)."""
    return [None if p is None else seat(p, table_of(env, i, seat_seed(game_seed, i)))
            for i, p in enumerate(policies)]


def decide(policy: Policy, env: Any, agent: str) -> Any:
    """``policy``'s action for ``agent``, the agent to act in the AEC ``env``: a policy that asks for
    the game (``capabilities.information_state``: a search) is first handed the seat's information
    state. What every table that seats policies calls instead of ``policy.act(env.observe(agent))``;
    the action is returned as the policy gave it (the env refuses a bad one)."""
    if policy.capabilities.information_state:
        policy.observe_game(information_state(env, agent))
    return policy.act(env.observe(agent))
