"""The AEC plumbing shared by every game here: one player decides at a time, masked actions.

A game's environment subclasses :class:`TurnBasedEnv` and fills in what is its own: the
engine it builds (:meth:`_new_game`), how it observes (:meth:`_new_observer`), the legal mask
of the current decision (:meth:`_compute_mask`), how an action becomes an engine option
(:meth:`_decode`), the final rewards (:meth:`_final_rewards`) and its table in text
(:meth:`render_text`); optionally its global state (:attr:`TurnBasedEnv.STATE_LAYOUT` and
:meth:`_global_state`) and info keys of its own (:meth:`_end_info`). Options, spaces, seeding,
illegal actions (raise or penalize), reward bookkeeping, infos and rendering are here, once.

Infos: every agent's info dict holds the same keys, with values of one type and shape, at every
step of every game, from ``reset()`` on (replay buffers such as Tianshou's and TorchRL's specs
are built from the first step's infos, and refuse a key that turns up later or a value that is
not a number). The keys of every game (:meth:`TurnBasedEnv._new_info`):

* ``winners``: int8 array of ``MAX_PLAYERS`` entries, 1 for each seat (``player_i`` is entry i)
  that won; all 0 until the game ends, and when it is truncated or penalised;
* ``illegal_action``: bool, True only in the info of the agent whose illegal action ended the
  game (``illegal_action="penalize"``); why it was illegal is :attr:`TurnBasedEnv.penalty`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .core import check_seed
from .layout import Piece, layout_size, signature


def env_metadata(name: str, layout: dict[str, Piece], num_actions: int) -> dict[str, Any]:
    """A game env's PettingZoo metadata: its name, the fingerprint of its observation and action
    layouts (checkpoints made for another are refused) and the render modes of a game that draws
    pictures (``rgb_array``) as well as text."""
    return {
        "name": name,
        "layout": signature(name, layout, num_actions),
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 2,
        "is_parallelizable": False,
    }


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, whose ``last()`` asks the game once.

    The inherited ``last()`` reads the agent, its observation, reward, termination, truncation
    and info through the wrapper's attribute forwarding, eight look-ups through two wrapper
    classes a step (a tenth of a random game's time); this asks the wrapped env, after the
    same check: before ``reset()`` it raises the AttributeError the first look-up would.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    # ``agent_iter()`` reads these two at every step; as properties they skip the two classes'
    # ``__getattr__`` forwarding, with the same check before reset.
    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise AttributeError("agents cannot be accessed before reset")
        return self.env.agents

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.agent_selection


def ordered_env(raw: type[AECEnv]) -> Callable[..., AECEnv]:
    """A game's ``env(**kwargs)``: its raw env in PettingZoo's order-enforcing wrapper."""

    def env(**kwargs: Any) -> AECEnv:
        """The environment with PettingZoo's order-enforcing wrapper (what users should use)."""
        return OrderEnforcing(raw(**kwargs))

    return env


class TurnBasedEnv(AECEnv):
    OPTIONS: ClassVar[dict[str, Any]] = {}  # the game's options and their defaults ("num_players" first)
    # the custom deck the env plays with (Fist's characters, issue #16), told to seated policies; None: the box's
    deck: Any = None
    MIN_PLAYERS: ClassVar[int]
    MAX_PLAYERS: ClassVar[int]
    NUM_ACTIONS: ClassVar[int]
    OBS_SIZE: ClassVar[int]
    OBS_HIGH: ClassVar[float]
    LAYOUT: ClassVar[dict]
    # The action codec (dragonstones_env/codec.py) whose layout NUM_ACTIONS counts: what reads the actions'
    # structure (the shaped network's factorised head, dragonstones_env/policies/shaped.py) reads it here.
    CODEC: ClassVar[Any]
    # The global state (state(), state_space): a game that has one names its pieces here and
    # fills them in _global_state; None: state() is PettingZoo's NotImplementedError.
    STATE_LAYOUT: ClassVar[dict[str, Piece] | None] = None
    STATE_HIGH: ClassVar[float] = 1.0

    def __init__(self, render_mode: str | None = None, **options: Any):
        super().__init__()
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown}; allowed options: {sorted(self.OPTIONS)} and render_mode")
        cfg = {**self.OPTIONS, **options}
        n = cfg["num_players"]
        if isinstance(n, bool) or not isinstance(n, int) or not self.MIN_PLAYERS <= n <= self.MAX_PLAYERS:
            raise ValueError(f"num_players must be an int from {self.MIN_PLAYERS} to {self.MAX_PLAYERS}, got {n!r}")
        if cfg["illegal_action"] not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {cfg['illegal_action']!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self._validate(cfg)
        self.options = cfg
        self.num_players = n
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, self.OBS_HIGH, (self.OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.NUM_ACTIONS,), np.int8),
            }
        )
        self._act_space = spaces.Discrete(self.NUM_ACTIONS)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        if self.STATE_LAYOUT is not None:
            self.state_space = spaces.Box(0.0, self.STATE_HIGH, (layout_size(self.STATE_LAYOUT),), np.float32)
        self._seeder = np.random.default_rng()
        self.game: Any = None
        self.penalty: str | None = None  # why the illegal action that ended the game was illegal

    # ------------------------------------------------------------------ what a game fills in
    def _validate(self, cfg: dict[str, Any]) -> None:
        """Raise ValueError naming a bad game-specific option."""

    def _new_game(self, seed: int) -> Any:
        raise NotImplementedError

    def _new_observer(self) -> Any:
        """An object with ``observe(game, seat) -> np.ndarray``."""
        raise NotImplementedError

    def _compute_mask(self) -> np.ndarray:
        """The int8 mask of the current decision's legal actions (may be a shared read-only array)."""
        raise NotImplementedError

    def _decode(self, action: int, seat: int) -> tuple:
        raise NotImplementedError

    def _describe(self, action: int) -> str:
        raise NotImplementedError

    def _final_rewards(self) -> list[float] | None:
        """Each seat's reward at the end of the game, or None when it was truncated."""
        raise NotImplementedError

    def _winners(self) -> list[int]:
        """The winning seats: the engine's ``winners`` (the protocol of dragonstones_env.core)."""
        return list(self.game.winners)

    def _card_prefix(self, action: int) -> bool:
        """Whether :meth:`describe_action` names the card of the current decision before the action."""
        return self.game.decision.kind not in ("bid", "tiebreak")

    def _end_info(self) -> dict[str, Any]:
        """The game's own info keys and their values now (the same keys and shapes before, during
        and after the game: zeros until it ends); merged into every agent's info."""
        return {}

    def _global_state(self) -> np.ndarray:
        """The global state vector of the game now, laid out as :attr:`STATE_LAYOUT`."""
        raise NotImplementedError

    def _adopt(self, game: Any) -> None:
        """Called when the env starts playing ``game`` (a new one or a resumed one): what the env keeps
        about it beside the engine."""

    def _before_apply(self) -> Any:
        """Called before every applied action; what it returns is passed to :meth:`_after_apply`."""
        return None

    def _after_apply(self, agent: str, before: Any) -> None:
        """Called after every applied action (rewards of this step may be added here)."""

    def render_text(self, viewer: int) -> str:
        raise NotImplementedError

    def picture(self, seat: int) -> Any:
        """The table as seat ``seat`` sees it, an H x W x 3 uint8 array (``rgb_array``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            game_seed = check_seed(seed)  # before anything changes: a refused seed leaves the env as it was
            self._seeder = np.random.default_rng(game_seed)
        else:
            game_seed = int(self._seeder.integers(2**63))
        self._start(self._new_game(game_seed))

    def resume(self, game: Any) -> None:
        """Seat the env at ``game``, an engine of this env's game and table size with a decision
        pending (a copy, a replayed record, a determinization), instead of a new game: what
        :meth:`reset` does once it has made its engine. The env plays ``game`` itself, not a copy.
        The search policies play their simulations through this (:mod:`dragonstones_env.policies.search`)."""
        players = getattr(game, "num_players", None)
        if players != self.num_players or getattr(game, "decision", None) is None:
            raise ValueError(f"resume takes an engine of a {self.num_players}-player game in progress, got a "
                             f"{type(game).__name__} of {players} players, decision "
                             f"{getattr(game, 'decision', None)!r}")
        self._start(game)

    def _start(self, game: Any) -> None:
        self.game = game
        self._adopt(game)
        self._observer = self._new_observer()
        self._done = False
        self._penalized: str | None = None
        self._rewarded = False
        self._mask: np.ndarray | None = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.penalty = None
        self.infos = {a: self._new_info() for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.decision.player]

    def _new_info(self, winners: Sequence[int] = ()) -> dict[str, Any]:
        """One agent's info, a new dict: every key, with ``winners`` (the winning seats) flagged and the
        game's own keys as they are now (all zero while the game runs)."""
        flags = np.zeros(self.MAX_PLAYERS, np.int8)
        flags[list(winners)] = 1
        return {"winners": flags, "illegal_action": False, **self._end_info()}

    def state(self) -> np.ndarray:
        """The global state (PettingZoo's optional ``state()``, in :attr:`state_space`): every fact of
        the game the engine holds, hidden ones included, laid out as :attr:`STATE_LAYOUT`. The input
        of a centralised critic (MAPPO-style) in training, never of a policy: no seat may see it."""
        if self.STATE_LAYOUT is None:
            raise NotImplementedError(f"{self.metadata['name']} has no global state")
        if self.game is None:
            raise RuntimeError("state() needs a game: call reset() first")
        return self._global_state()

    @classmethod
    def state_layout(cls) -> dict[str, slice]:
        """Name -> slice of every piece of the global state vector (:meth:`state`)."""
        if cls.STATE_LAYOUT is None:
            raise NotImplementedError(f"{cls.metadata['name']} has no global state")
        return {name: piece.slice for name, piece in cls.STATE_LAYOUT.items()}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        obs = self._observer.observe(self.game, seat)
        d = self.game.decision
        if d is not None and d.player == seat and not self._done:
            mask = self._legal_mask().copy()
        else:
            mask = np.zeros(self.NUM_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        why = self._why_illegal(action)
        if why is not None:
            if self.options["illegal_action"] == "penalize":
                self._penalize(agent, why)
                return
            d = self.game.decision
            legal = self.legal_actions()
            raise ValueError(
                f"illegal action {action!r} by {agent} at decision {d.kind!r}"
                f"{' (' + d.card + ')' if d.card else ''}: {why}; legal actions: {legal[:20]}"
                f"{'...' if len(legal) > 20 else ''}"
            )
        before = self._before_apply()
        self.game.apply(self._decode(int(action), self.agent_name_mapping[agent]))
        self._mask = None
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self.rewards = {a: 0.0 for a in self.agents}
            self._rewarded = False
        self._after_apply(agent, before)
        if self.game.over:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[self.game.decision.player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> Any:
        """``rgb_array``: the current agent's view as a picture; ``ansi``: its text; ``human``: prints it."""
        if self.render_mode is None or self.game is None:
            return None
        if self.render_mode == "rgb_array":
            return self.picture(self.agent_name_mapping[self.agent_selection])
        text = self.render_text(self.agent_name_mapping[self.agent_selection])
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ extras
    def state_dict(self) -> dict[str, Any]:
        """The engine's JSON snapshot, plus ``penalized`` (the agent whose illegal action ended the game)."""
        if self.game is None:
            raise RuntimeError("state_dict() needs a game: call reset() first")
        return {**self.game.state_dict(), "penalized": self._penalized}

    def describe_action(self, action: int) -> str:
        """A readable description of an action (seats relative to the actor), prefixed with the
        card the current decision is about when there is one."""
        text = self._describe(int(action))
        d = self.game.decision if self.game is not None else None
        if d is not None and d.card and self._card_prefix(int(action)):
            text = f"{d.card}: {text}"
        return text

    def option(self, action: int) -> tuple:
        """The engine option that ``action`` of the current agent stands for (the action must be legal)."""
        why = self._why_illegal(action)
        if why is not None:
            raise ValueError(f"action {action!r} of {self.agent_selection}: {why}")
        return self._decode(int(action), self.agent_name_mapping[self.agent_selection])

    def outcome(self) -> list[float]:
        """Each seat's final reward of the finished game (the game's zero-sum end; 0 for every seat when
        it was truncated), without reward shaping."""
        if self.game is None or self.game.decision is not None:
            raise RuntimeError("outcome() needs a finished game")
        rewards = self._final_rewards()
        return [0.0] * self.num_players if rewards is None else list(rewards)

    def legal_actions(self) -> list[int]:
        """The legal action indices of the current decision."""
        if self.game is None or self.game.decision is None or self._done:
            return []
        return np.flatnonzero(self._legal_mask()).tolist()

    @classmethod
    def observation_layout(cls) -> dict[str, slice]:
        """Name -> slice of every piece of the observation vector."""
        return {name: piece.slice for name, piece in cls.LAYOUT.items()}

    # ------------------------------------------------------------------ internals
    def _legal_mask(self) -> np.ndarray:
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask

    def _why_illegal(self, action: Any) -> str | None:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return f"an action is an int in 0..{self.NUM_ACTIONS - 1}, got {type(action).__name__}"
        if not 0 <= action < self.NUM_ACTIONS:
            return f"actions are 0..{self.NUM_ACTIONS - 1}"
        if not self._legal_mask()[action]:
            return f"{self._describe(int(action))!r} is not legal now"
        return None

    def _penalize(self, agent: str, why: str) -> None:
        """``illegal_action="penalize"``: the game ends, -1 for the offender, 0 for the others."""
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.rewards[agent] = -1.0
        self.terminations = {a: True for a in self.agents}
        self._done = True
        self._penalized = agent
        self.penalty = why
        self.infos = {a: self._new_info() for a in self.agents}
        self.infos[agent]["illegal_action"] = True
        self._accumulate_rewards()

    def _finish(self) -> None:
        self._done = True
        self._rewarded = True
        rewards = self._final_rewards()
        winners: list[int] = []
        if rewards is None:
            self.truncations = {a: True for a in self.agents}
        else:
            for a, r in zip(self.possible_agents, rewards, strict=True):
                self.rewards[a] += r
            self.terminations = {a: True for a in self.agents}
            winners = self._winners()
        self.infos = {a: self._new_info(winners) for a in self.agents}
