"""Single-agent Gymnasium view of a multi-player AEC game: one learner, the other seats bots.

``gymnasium.make("Dragonstones-v0", num_players=4, opponents="heuristic")`` (every game's id is
registered, by the entry-point string of :func:`make`, when :mod:`dragonstones_env` is imported).
This module was ``dragonstones_env.gym_env``: it seats policies by name, so it sits in the play
layer, above the policies, and the env package never imports it. The learner sees the AEC observation's
``"observation"`` vector; ``action_masks()`` gives its legal actions (what sb3-contrib's
``MaskablePPO`` reads). The opponents act inside :meth:`step`, and the reward is the
learner's.

``opponents`` may be:

* one spec (``"random"``, ``"heuristic"``, a checkpoint path or name, or a policy object),
  for every other seat;
* a list with one spec per other seat;
* a list whose items are lists: each such item is a pool, and one of its specs is drawn for
  that seat every episode (a list holding a single pool shares it among all other seats).

* an :class:`OpponentSampler`, whose ``sample_lineup(rng, seats) -> list[policy]`` is asked every
  episode and whose ``report(won)`` is told at the end of each episode whether the learner won (the
  training league, :class:`training.league.League`, is one).

Every spec is loaded when the env is made: an unknown spec, a checkpoint that fails its checks, or
a policy whose ``game`` names another game (:class:`policies.PolicyError`, a ``ValueError``) stops
``make()``. A policy whose ``game`` is None is trusted to play this one. Every episode seats each
opponent (:func:`policies.seat`: told the table, its custom deck, and reseeded from the episode's
seed by the one rule, :func:`policies.seat_seed`).
An action may be an int, a numpy integer, or a numpy scalar or 0-d array holding an integral
value (as ``Discrete.sample`` and most agents give them); anything else is illegal.

``num_players`` may be a list of table sizes: one is drawn every episode (the observation
and action spaces are the same at every size). The learner's seat is drawn every episode
unless ``seat`` fixes it. Illegal actions end the
episode with -1 by default here (``illegal_action="penalize"``), so that libraries which
sample without masks, and Gymnasium's and SB3's env checkers, can run; pass
``illegal_action="raise"`` to get the AEC env's ``ValueError`` instead.

A game cut off at its step limit (the AEC env's ``truncation``) pays every seat 0, more than a
loss: a learner that is losing gains by putting the end off, and in DrachenSchatten two keys can
restore each other until the limit (D4). ``truncation_reward`` (in -1..0, default 0: the AEC
env's reward) is added to the learner's reward when its game is truncated, so that with -1/3 a
game put off at 4 players pays what a loss does, and stalling buys nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from dragonstones_env import games
from dragonstones_env.bounds import check as check_bound
from dragonstones_env.core import same_game
from dragonstones_env.policies import Policy, decide, load_policy, seat_all
from dragonstones_env.policies.base import check_game


def _as_action(action: Any) -> Any:
    """An int for an integral action given as an int, a numpy scalar or a 0-d array (what
    agents and Gymnasium's ``Discrete.sample`` produce); anything else unchanged, for the AEC
    env to refuse (``raise``) or punish (``penalize``)."""
    if isinstance(action, (bool, np.bool_)):
        return action
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, (np.generic, np.ndarray)) and np.shape(action) == () and action.dtype.kind in "iuf":
        value = action.item()
        if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            return int(value)
    return action


class OpponentSampler:
    """Draws the opponents of each episode (the training league is one): subclass it and pass it as
    ``opponents``."""

    game: str | None = None  # the game its policies play; None: any

    def sample_lineup(self, rng: np.random.Generator, seats: int) -> list[Any]:
        """The policies of the ``seats`` other seats for one episode, drawn with ``rng``."""
        raise NotImplementedError(f"{type(self).__name__} must implement sample_lineup(rng, seats)")

    def report(self, won: bool) -> None:
        """Told at the end of each episode whether the learner won (default: nothing)."""


class SingleAgentEnv(gym.Env):
    """One learner against policies in the other seats of an AEC game."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        make_aec: Callable[..., Any],
        num_players: int | list[int],
        opponents: Any = "random",
        seat: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "penalize",
        loaded: dict[Any, Any] | None = None,
        truncation_reward: float = 0.0,
        **env_options: Any,
    ):
        self.truncation_reward = check_bound("truncation_reward", truncation_reward)
        sizes = list(num_players) if isinstance(num_players, (list, tuple)) else [num_players]
        if not sizes:
            raise ValueError("num_players is an empty list")
        # One AEC env per table size; they share their spaces, so one policy plays them all.
        self.aecs = {n: make_aec(num_players=n, illegal_action=illegal_action, **env_options) for n in sizes}
        self.sizes = sizes
        self.aec = self.aecs[sizes[0]]
        self.num_players = sizes[0]
        if seat is not None and (isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer))
                                 or not all(0 <= seat < n for n in sizes)):
            raise ValueError(f"seat must be None or an int in 0..{min(sizes) - 1}, got {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.fixed_seat = None if seat is None else int(seat)
        agent0 = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent0)["observation"]
        self.action_space = self.aec.action_space(agent0)
        self.game_name = self.aec.metadata["name"]
        self._opponents = opponents
        self._pools = {n: self._parse_opponents(opponents, n) for n in sizes}
        # Loaded opponents by spec: one instance per spec. Tables that share the dict share the
        # instances, so that a collector playing them in lockstep batches each one's decisions.
        self._loaded: dict[Any, Any] = {} if loaded is None else loaded
        # Load every spec now: an unknown spec, a bad checkpoint or a policy of another game
        # fails at make(), not at the first reset() (perhaps hours into training).
        if isinstance(opponents, OpponentSampler):
            self._check_game(opponents, "the opponent sampler")
        for pools in self._pools.values():
            for pool in pools or ():
                for spec in pool:
                    self._policy(spec)
        self.seat = 0
        self.seat_policies: list[Any] = []
        self._last_obs: dict[str, np.ndarray] | None = None

    # ------------------------------------------------------------------ opponents
    def _parse_opponents(self, opponents: Any, num_players: int) -> list[list[Any]] | None:
        """One pool (list of specs) per other seat; None for an :class:`OpponentSampler`."""
        if isinstance(opponents, OpponentSampler):
            return None
        others = num_players - 1
        if isinstance(opponents, (list, tuple)):
            if len(opponents) == 0:
                raise ValueError("opponents is an empty list; give one spec, one per other seat, or pools")
            if len(opponents) == 1 and isinstance(opponents[0], (list, tuple)):
                pools = [list(opponents[0])] * others
            elif len(opponents) == others:
                pools = [list(o) if isinstance(o, (list, tuple)) else [o] for o in opponents]
            else:
                raise ValueError(
                    f"opponents lists {len(opponents)} specs; a {num_players}-player table has {others} "
                    "other seats (or give one spec, or a list holding one pool)"
                )
        else:
            pools = [[opponents]] * others
        for pool in pools:
            if not pool:
                raise ValueError("an opponent pool is empty")
        return pools

    def _policy(self, spec: Any) -> Policy:
        """The loaded policy of a spec; one instance per distinct spec, loaded on first use."""
        key = str(spec) if isinstance(spec, (str, Path)) else id(spec)
        if key not in self._loaded:
            policy = load_policy(spec, seed=len(self._loaded))
            self._check_game(policy, f"opponent {spec!r}")
            self._loaded[key] = policy
        return self._loaded[key]

    def _check_game(self, policy: Policy | OpponentSampler, what: str) -> None:
        """A policy (or sampler) that says which game it plays must play this one."""
        if isinstance(policy, OpponentSampler):
            if policy.game is not None and not same_game(policy.game, self.game_name):
                raise ValueError(f"{what} plays {games.game_id(policy.game)}, not {games.game_id(self.game_name)}: "
                                 "seat a policy of this game")
        else:
            check_game(policy, self.game_name, what)

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        self.start_episode(seed)
        self._play_opponents()
        obs = self._observe()
        return obs["observation"], self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.learner_step(action)
        self._play_opponents()
        return self.outcome()

    # ------------------------------------------------------------------ the parts of reset() and step()
    # reset() is start_episode() then the opponents' moves; step() is learner_step(), the opponents'
    # moves, then outcome(). A collector that plays many tables in lockstep calls the parts itself,
    # asking each table which opponent is due (due()) and playing its move (play()), so that one
    # policy decides for all the tables that wait on it at once (training/collector.py).
    def start_episode(self, seed: int | None = None) -> None:
        """A new episode up to the first move: the table size, the learner's seat, the line-up, the deal."""
        super().reset(seed=seed)
        rng = self.np_random
        n = self.sizes[int(rng.integers(len(self.sizes)))] if len(self.sizes) > 1 else self.sizes[0]
        self.aec, self.num_players = self.aecs[n], n
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(n))
        if self._pools[n] is None:
            others = list(self._opponents.sample_lineup(rng, n - 1))
        else:
            others = [self._policy(pool[int(rng.integers(len(pool)))]) for pool in self._pools[n]]
        game_seed = int(rng.integers(2**63))
        # each opponent seated for this game: told the table and its deck, reseeded from the game's seed
        # (a mixture draws the member that plays the seat)
        self.seat_policies = seat_all(self.aec, [*others[: self.seat], None, *others[self.seat :]], game_seed)
        self.aec.reset(seed=game_seed)
        self._learner = self.aec.possible_agents[self.seat]

    def learner_step(self, action: Any) -> None:
        """The learner's move alone (an illegal one is refused or punished as the options say)."""
        if self._done():
            raise RuntimeError("the episode is over: call reset()")
        self.aec.step(_as_action(action))

    def due(self) -> tuple[Any, str] | None:
        """The opponent policy whose move it is and its agent (``decide(policy, self.aec, agent)``
        asks it); None when the learner is to move or the episode is over."""
        aec = self.aec
        if self._done() or aec.agent_selection == self._learner:
            return None
        agent = aec.agent_selection
        return self.seat_policies[aec.agent_name_mapping[agent]], agent

    def play(self, action: int) -> None:
        """The due opponent's move."""
        self.aec.step(action)

    def learner_observation(self) -> dict[str, np.ndarray]:
        """The learner's observation (``"observation"``, ``"action_mask"``) now."""
        return self._observe()

    def outcome(self) -> tuple[np.ndarray, float, bool, bool, dict]:
        """What step() returns once the opponents have moved: the learner's observation and reward."""
        aec = self.aec
        obs = self._observe()
        reward = float(aec._cumulative_rewards[self._learner])
        aec._cumulative_rewards[self._learner] = 0.0
        terminated = bool(aec.terminations[self._learner])
        truncated = bool(aec.truncations[self._learner])
        if truncated and not terminated:
            reward += self.truncation_reward
        if (terminated or truncated) and isinstance(self._opponents, OpponentSampler):
            self._opponents.report(self.seat in aec._winners())
        if self.render_mode == "human":
            self.render()
        return obs["observation"], reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, as booleans (for ``MaskablePPO``)."""
        return self._last_obs["action_mask"].astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":  # the learner's view (gymnasium.wrappers.RecordVideo)
            return self.aec.picture(self.seat)
        text = self.aec.render_text(self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ internals
    def _done(self) -> bool:
        return bool(self.aec.terminations[self._learner] or self.aec.truncations[self._learner])

    def _play_opponents(self) -> None:
        while (due := self.due()) is not None:
            policy, agent = due
            self.play(decide(policy, self.aec, agent))

    def _observe(self) -> dict[str, np.ndarray]:
        self._last_obs = self.aec.observe(self._learner)
        return self._last_obs

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"seat": self.seat, "num_players": self.num_players}
        extra = self.aec.infos.get(self._learner)
        if extra:  # copies: a step's info is the caller's to keep (Gymnasium's checker asks it)
            info.update({k: v.copy() if isinstance(v, np.ndarray) else v for k, v in extra.items()})
        return info


def make(game: str = "dragonstones", num_players: int | list[int] | None = None, opponents: Any = "random",
         seat: int | None = None, render_mode: str | None = None, loaded: dict[Any, Any] | None = None,
         **options: Any) -> SingleAgentEnv:
    """The Gymnasium entry point of every game (``Dragonstones-v0``, ``DrachenSchatten-v0``, ...):
    ``game`` is the registry's id, put in the id's kwargs when the game registered itself."""
    spec = games.get(game)
    players = spec.default_players if num_players is None else num_players
    return SingleAgentEnv(spec.raw_env, players, opponents, seat, render_mode, loaded=loaded, **options)
