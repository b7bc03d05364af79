"""What a policy is: the :class:`Policy` base, the :class:`Table` it sits at, :func:`seat`, the random bot.

The policy contract, in one place. A policy is a :class:`Policy` subclass that implements :meth:`Policy.act`;
everything else it may offer is a named method with a default here, and a table finds out what a policy
offers from :attr:`Policy.capabilities` (which methods its class overrides), never by probing attributes:

========================  =======================================================  ===========================
method                    what it is for                                           default
========================  =======================================================  ===========================
``act(observation)``      a legal action for the AEC observation dict              (required)
``sit(table)``            told the table before each game (game, seat, seed,       ``reset(table.seed)``;
                          options, custom deck); returns who plays the seat         returns ``self``
``reset(seed)``           a new game: reseed its own sampling, forget the last     nothing
``act_batch(obs, masks)``  many decisions in one call (a vector env's opponents)    ``act`` row by row
``act_each(ps, o, m)``    one decision by each of many instances of a class, in    each one's ``act``
                          one call (a vector env's rule bots, one a table)
``probabilities(...)``    its masked action distribution for a batch               refuses (``NotImplemented``)
``value(observation)``    a critic's estimate of the seat's final reward           refuses
``win_chance(obs)``       a rule bot's estimate of the seat's chance to win        refuses
``observe_game(info)``    the seat's information state before each ``act`` (a     nothing; asked only of a
                          search that imagines the game going on)                   policy that overrides it
========================  =======================================================  ===========================

``game`` (a registry id or PettingZoo name, or None for any game) says which game it plays; :func:`seat`
refuses it at another game's table. Any object with an ``act`` method, or a plain function from the
observation dict to an action, is taken too: :func:`as_policy` wraps it (it then offers ``act`` alone).

Every place that seats policies (the arena, the tournament, the Gymnasium and vector envs, the league,
the app, the RLlib env) calls :func:`seat` before each game with a :class:`Table`, and asks for actions
through :func:`decide` (:mod:`.information`). The seed a seat is handed follows one rule,
:func:`seat_seed`, everywhere (it lives with the other seeds in ``core/seeding.py``; re-exported here).

The bottom of the policies package: every other module here imports it, it imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from dragonstones_env.core import same_game
from dragonstones_env.core.seeding import seat_seed as seat_seed
from dragonstones_env.registry import game_id


class PolicyError(ValueError):
    """A policy spec that cannot be loaded or seated; the message names the spec and why."""


@dataclass(frozen=True)
class Capabilities:
    """What a policy offers beyond ``act``: read from which of :class:`Policy`'s methods its class overrides."""

    batch: bool = False  # act_batch is its own (faster than act row by row)
    batch_each: bool = False  # act_each is its class's own (its instances decide together, faster)
    probabilities: bool = False  # probabilities() gives its masked action distribution
    value: bool = False  # value() judges a position (a checkpoint's critic)
    win_chance: bool = False  # win_chance() judges a position (a rule bot)
    information_state: bool = False  # observe_game(info) is handed the seat's information state before act

    @property
    def judges(self) -> bool:
        """Whether it can judge a position (what a search needs at a horizon)."""
        return self.value or self.win_chance


@dataclass(frozen=True)
class Table:
    """What a policy is told when it sits down for one game (:meth:`Policy.sit`).

    ``game`` is the registry id; ``seat`` its seat in ``0..num_players-1``; ``seed`` the seed of its own
    sampling for this game (:func:`seat_seed`), or None to keep its generator going; ``options`` the
    env's options (an observation mode, a custom deck's lists); ``deck`` the custom deck (Fist's
    ``characters``/``exclude``) the env built, or None for the box's.
    """

    game: str
    num_players: int
    seat: int = 0
    seed: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    deck: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))


class Policy:
    """The base of every policy here; subclass it and implement :meth:`act` (see the module's table)."""

    game: str | None = None  # the game it plays (registry id or PettingZoo name); None: any game

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action (``observation["action_mask"][a] == 1``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement act(observation)")

    # ------------------------------------------------------------------ a game's lifecycle
    def sit(self, table: Table) -> Policy:
        """Sit down at ``table`` for one game; returns the policy that plays the seat (``self``, or a
        mixture's member). The default resets with the table's seed when it has one."""
        if table.seed is not None:
            self.reset(table.seed)
        return self

    def reset(self, seed: int | None = None) -> None:
        """A new game, its own sampling seeded with ``seed``. The default does nothing: a policy
        with no randomness of its own and no memory of the last game needs nothing here."""

    def observe_game(self, info: Any) -> None:
        """The seat's :class:`~.information.InformationState` for the next :meth:`act`. Override it only
        if the policy needs more than the observation (a search); tables then hand it before each act."""

    # ------------------------------------------------------------------ optional capabilities
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch of observation vectors and their masks (one row a decision)."""
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks,
                                                                                         strict=True)], np.int64)

    @staticmethod
    def act_each(policies: Sequence[Policy], observations: np.ndarray, masks: np.ndarray) -> list[int]:
        """One action by each of ``policies`` (row ``k`` decided by ``policies[k]``, with its own generator
        and memory, in the order given), in one call: what a vector env asks of a class whose instances
        each play one table's seats (a rule bot), when several wait at once. ``policies`` are instances of
        the class that defines it (or its subclasses); the default asks each one's ``act``."""
        return [int(p.act({"observation": o, "action_mask": m}))
                for p, o, m in zip(policies, observations, masks, strict=True)]

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked action distribution for a batch (rows sum to 1, 0 on masked actions)."""
        raise PolicyError(f"{self!r} gives no action probabilities")

    def value(self, observation: dict[str, np.ndarray]) -> float:
        """An estimate of this seat's final reward from here (+1 a win, -1/(n-1) a loss)."""
        raise PolicyError(f"{self!r} has no critic to judge a position")

    def win_chance(self, observation: dict[str, np.ndarray]) -> float:
        """An estimate of the chance that this seat wins from here, in [0, 1]."""
        raise PolicyError(f"{self!r} has no win_chance to judge a position")

    @property
    def capabilities(self) -> Capabilities:
        """What it offers beyond ``act``: the methods its class overrides."""
        return _capabilities(type(self))


_OPTIONAL = {"batch": "act_batch", "batch_each": "act_each", "probabilities": "probabilities", "value": "value",
             "win_chance": "win_chance", "information_state": "observe_game"}


@cache
def _capabilities(cls: type) -> Capabilities:
    return Capabilities(**{cap: getattr(cls, method) is not getattr(Policy, method)
                           for cap, method in _OPTIONAL.items()})


class ActPolicy(Policy):
    """Any object with ``act(observation)``, or a function of the observation dict, as a :class:`Policy`
    that offers ``act`` alone (what :func:`as_policy` makes of it)."""

    def __init__(self, act: Callable[[dict[str, np.ndarray]], Any], name: str):
        self._act = act
        self.name = name

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self._act(observation)

    def __repr__(self) -> str:
        return f"ActPolicy({self.name})"


def as_policy(obj: Any) -> Policy:
    """``obj`` as a :class:`Policy`: itself if it is one; an object with an ``act`` method or a function
    of the observation dict, wrapped (offering ``act`` alone); anything else a :class:`PolicyError`."""
    if isinstance(obj, Policy):
        return obj
    method = getattr(obj, "act", None)  # the one place a foreign object's shape is read
    if callable(method):
        return ActPolicy(method, repr(obj))
    if callable(obj) and not isinstance(obj, type):
        return ActPolicy(obj, getattr(obj, "__name__", repr(obj)))
    raise PolicyError(f"a policy spec is a name, a path, a Policy, an object with act(observation) or a function "
                      f"of the observation; got {type(obj).__name__}")


def check_game(policy: Policy, game: str, what: str | None = None) -> None:
    """A policy that says which game it plays must play ``game`` (a registry id or PettingZoo name);
    ``what`` names it in the error (default: its repr)."""
    if policy.game is not None and not same_game(policy.game, game):
        raise PolicyError(f"{what or repr(policy)} plays {game_id(policy.game)}, not {game_id(game)}: seat a "
                          "policy of this game")


def seat(policy: Any, table: Table) -> Policy:
    """Seat ``policy`` at ``table`` for one game: checked to play the table's game, told the table
    (:meth:`Policy.sit`), and returned as what plays the seat (a mixture's member, or itself)."""
    policy = as_policy(policy)
    check_game(policy, table.game)
    return policy.sit(table)


class RandomPolicy(Policy):
    """Uniform over the legal actions, from its own seeded generator."""

    game: ClassVar[None] = None  # plays any game

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action in this observation's action_mask")
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        # Sample uniformly among legal actions: argmax of random keys on the legal set.
        if not np.asarray(masks).any(axis=1).all():
            raise ValueError("no legal action in this observation's action_mask")
        keys = self.rng.random(masks.shape)
        keys[masks == 0] = -1.0
        return keys.argmax(axis=1)

    def __repr__(self) -> str:
        return f"RandomPolicy(seed={self.seed})"
