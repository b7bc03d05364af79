"""Fist of Dragonstones as a PettingZoo AEC environment.

| | |
|---|---|
| Import | ``from dragonstones_env import env, raw_env`` |
| Name | ``dragonstones_v0`` |
| Agents | ``player_0`` ... ``player_{n-1}``, n = 3..6 (``num_players``) |
| Actions | ``Discrete(NUM_ACTIONS)``, the same for every agent and table size, masked |
| Observations | ``{"observation": Box(float32, (OBS_SIZE,)), "action_mask": Box(int8, (NUM_ACTIONS,))}`` |
| Rewards | winner +1, every other player -1/(n-1), at the end only; truncation: 0 for all |

A closed-fist blind-bid auction game (Faidutti & Schacht): each turn ten characters are
auctioned one at a time and the winner of each uses its power; the first player to 3
points wins. Every gold bid, tie-break bid and character choice is one discrete action;
the ``action_mask`` allows exactly the legal options of the current decision (see
:mod:`dragonstones_env.actions` for the layout). A blind auction asks every player in turn
for a sealed bid; nothing any other agent observes depends on a sealed bid until all bids
are revealed together.

Options (keyword arguments of :func:`env` / :class:`raw_env`):

* ``num_players`` (4): 3 to 6.
* ``observation_mode`` (``"recall"``): ``"recall"`` shows every player's coins as a player
  with perfect recall derives them from public events (F43); ``"table"`` only what is on
  the table now.
* ``max_turns`` (40): turns before the game is truncated (F18); random play ends in 17
  turns on average, see the README.
* ``illegal_action`` (``"raise"``): ``"raise"`` raises ``ValueError`` and changes nothing;
  ``"penalize"`` ends the game with -1 for the offender and 0 for the others.
* ``reward_shaping`` (0.0): if > 0, each point scored also gives its scorer this reward at
  once (off by default).
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as the current
  agent may see it) or ``"human"`` (prints it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import actions as A
from .cards import COLOURS
from .engine import BID, DEFAULT_MAX_TURNS, MAX_PLAYERS, MIN_PLAYERS, TIEBREAK, Game
from .layout import signature
from .observation import LAYOUT, OBS_HIGH, OBS_SIZE, Observer

# Fingerprint of the observation and action layouts: checkpoints made for another are refused.
LAYOUT_SIGNATURE = signature("dragonstones_v0", LAYOUT, A.NUM_ACTIONS)

OPTIONS = {
    "num_players": 4,
    "observation_mode": "recall",
    "max_turns": DEFAULT_MAX_TURNS,
    "illegal_action": "raise",
    "reward_shaping": 0.0,
}


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's order-enforcing wrapper (what users should use)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # PettingZoo's naming convention
    metadata = {
        "name": "dragonstones_v0",
        "layout": LAYOUT_SIGNATURE,
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
    }

    def __init__(self, render_mode: str | None = None, **options: Any):
        super().__init__()
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown}; allowed options: {sorted(OPTIONS)} and render_mode")
        cfg = {**OPTIONS, **options}
        n = cfg["num_players"]
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"num_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {n!r}")
        if cfg["illegal_action"] not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {cfg['illegal_action']!r}")
        if not isinstance(cfg["max_turns"], int) or cfg["max_turns"] < 1:
            raise ValueError(f"max_turns must be a positive int, got {cfg['max_turns']!r}")
        if not isinstance(cfg["reward_shaping"], (int, float)) or cfg["reward_shaping"] < 0:
            raise ValueError(f"reward_shaping must be a number >= 0, got {cfg['reward_shaping']!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.options = cfg
        self.num_players = n
        self.render_mode = render_mode
        self._observer = Observer(cfg["observation_mode"])
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
            }
        )
        self._act_space = spaces.Discrete(A.NUM_ACTIONS)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self._seeder = np.random.default_rng()
        self.game: Game | None = None

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._seeder = np.random.default_rng(seed)
            game_seed = int(seed)
        else:
            game_seed = int(self._seeder.integers(2**63))
        self.game = Game(self.num_players, seed=game_seed, max_turns=self.options["max_turns"])
        self._observer = Observer(self.options["observation_mode"])
        self._done = False
        self._mask_cache: tuple[Any, np.ndarray] | None = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._scores = [0] * self.num_players
        self._rewarded = False
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        obs = self._observer.observe(self.game, seat)
        d = self.game.decision
        if d is not None and d.player == seat and not self._done:
            mask = self._legal_mask().copy()
        else:
            mask = np.zeros(A.NUM_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        seat = self.agent_name_mapping[agent]
        why = self._why_illegal(action)
        if why is not None:
            if self.options["illegal_action"] == "penalize":
                self._penalize(agent, why)
                return
            d = game.decision
            raise ValueError(
                f"illegal action {action!r} by {agent} at decision {d.kind!r}"
                f"{' (' + d.card + ')' if d.card else ''}: {why}; legal actions: {self.legal_actions()[:20]}"
                f"{'...' if len(self.legal_actions()) > 20 else ''}"
            )
        before = game.decision
        auction = game.auction
        game.apply(A.decode(int(action), seat, self.num_players))
        after = game.decision
        # Sealing a bid changes nothing public: keep the public observation (see Observer).
        if not (after is not None and before.kind in (BID, TIEBREAK) and after.kind == before.kind
                and game.auction is auction):
            self._observer.invalidate()
        self._mask_cache = None
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self.rewards = {a: 0.0 for a in self.agents}
            self._rewarded = False
        if self.options["reward_shaping"]:
            self._reward_points()
        if game.over:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = self.render_text(self.agent_name_mapping[self.agent_selection])
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ extras
    def state_dict(self) -> dict[str, Any]:
        """The engine's JSON snapshot (see :meth:`dragonstones_env.engine.Game.state_dict`)."""
        return self.game.state_dict()

    def state(self) -> np.ndarray:
        """A global view (PettingZoo's optional ``state()``): seat 0's recall observation."""
        return Observer("recall").observe(self.game, 0)

    def describe_action(self, action: int) -> str:
        """A readable description of an action, e.g. ``"bid 3 fairy + 1 common + amulet (value 8)"``."""
        d = self.game.decision if self.game is not None else None
        text = A.describe(int(action))
        if d is not None and d.card and not text.startswith(("bid", "tie-break")):
            text = f"{d.card}: {text}"
        return text

    def legal_actions(self) -> list[int]:
        """The legal action indices of the current decision."""
        if self.game is None or self.game.decision is None:
            return []
        return np.flatnonzero(self._legal_mask()).tolist()

    @staticmethod
    def observation_layout() -> dict[str, slice]:
        """Name -> slice of every piece of the observation vector (see :mod:`.observation`)."""
        return {name: piece.slice for name, piece in LAYOUT.items()}

    # ------------------------------------------------------------------ internals
    def _legal_mask(self) -> np.ndarray:
        game = self.game
        d = game.decision
        pending = game.pending
        if self._mask_cache is not None and self._mask_cache[0] is pending:
            return self._mask_cache[1]
        pl = game.players[d.player]
        if d.kind == BID:
            mask = A.bid_mask(pl.fairy, pl.common, pl.black, pl.amulets)
        elif d.kind == TIEBREAK:
            mask = A.tiebreak_mask(pl.silver, pl.amulets)
        else:
            mask = np.zeros(A.NUM_ACTIONS, np.int8)
            for option in game.legal_options():
                mask[A.encode(option, d.player, self.num_players)] = 1
        self._mask_cache = (pending, mask)
        return mask

    def _why_illegal(self, action: Any) -> str | None:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return f"an action is an int in 0..{A.NUM_ACTIONS - 1}, got {type(action).__name__}"
        if not 0 <= action < A.NUM_ACTIONS:
            return f"actions are 0..{A.NUM_ACTIONS - 1}"
        if not self._legal_mask()[action]:
            return f"{A.describe(int(action))!r} is not legal now"
        return None

    def _penalize(self, agent: str, why: str) -> None:
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.rewards[agent] = -1.0
        self.terminations = {a: True for a in self.agents}
        self._done = True
        self.infos[agent] = {"illegal_action": why}
        self._accumulate_rewards()

    def _reward_points(self) -> None:
        coef = self.options["reward_shaping"]
        for p, pl in enumerate(self.game.players):
            if pl.score != self._scores[p]:
                self.rewards[self.possible_agents[p]] += coef * (pl.score - self._scores[p])
                self._scores[p] = pl.score
                self._rewarded = True

    def _finish(self) -> None:
        game = self.game
        self._done = True
        self._rewarded = True
        if game.winner is not None:
            loss = -1.0 / (self.num_players - 1)
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] += 1.0 if p == game.winner else loss
            self.terminations = {a: True for a in self.agents}
        else:
            self.truncations = {a: True for a in self.agents}

    def render_text(self, viewer: int) -> str:
        """The table as seat ``viewer`` may see it (coins of others only in recall mode)."""
        g = self.game
        recall = self._observer.mode == "recall"
        lines = [f"Fist of Dragonstones - turn {g.turn}/{g.max_turns} - seen by player_{viewer}"]
        b = g.bank
        lines.append(
            f"bank: fairy {b.fairy}, common {b.common}, silver {b.silver}, amulets {b.amulets}, stones "
            + ", ".join(f"{c} {s}" for c, s in zip(COLOURS, b.stones, strict=True))
        )
        lines.append(f"this turn: {', '.join(g.turn_cards)}")
        played = ", ".join(f"{c} ({how})" for c, how in g.played) or "-"
        lines.append(f"auctioned: {played}")
        for p, pl in enumerate(g.players):
            show = recall or p == viewer
            coins = f"fairy {pl.fairy}, common {pl.common}, silver {pl.silver}" if show else "coins hidden"
            extra = (" black" * pl.black) + (" amulet" * pl.amulets) + (" doppelganger" if pl.doppelganger else "")
            stones = "/".join(str(s) for s in pl.stones)
            lines.append(
                f"{'>' if g.current_player == p else ' '} player_{p}: score {pl.score}, stones r/b/y {stones},"
                f" spent fairy {pl.fairy_spent}, {coins}{extra}"
            )
        d = g.decision
        if d is None:
            lines.append("game over: " + (f"player_{g.winner} wins" if g.winner is not None else "truncated"))
        else:
            lines.append(f"decision: {d.kind}{' (' + d.card + ')' if d.card else ''} by player_{d.player}")
        return "\n".join(lines)
