"""DrachenSchatten as a PettingZoo AEC environment.

| | |
|---|---|
| Import | ``from dragonstones_env import drachenschatten``; ``drachenschatten.env``, ``.raw_env`` |
| Name | ``drachenschatten_v0`` |
| Agents | ``player_0`` ... ``player_{n-1}``, n = 2..4 (``num_players``) |
| Actions | ``Discrete(NUM_ACTIONS)``, 3542, the same for every agent and table size, masked |
| Observations | ``{"observation": Box(0, 4, (OBS_SIZE,), float32), "action_mask": Box(int8)}``, 639 |
| Rewards | zero-sum, at the end: k winners +1/k each, the others -1/(n-k); all win or truncated: 0 |

A push-your-luck card collecting game (rulebook ``seeds/002_868a28ab297ac500.txt``, rulings
D1-D7 in ``RULINGS.md``): on his turn a player turns over the top card of one of 16 face-down
stacks (8 village, 8 caves) and uses the objects of his collection -- torches to peek at stacks,
boots to turn over more, weapons to trade, steal and destroy other players' used objects, keys to
restore them -- while dragons and hydras take everything from a player who has no protection.
Seven different object kinds, three beasts or three treasures win at once (D6); when the stacks
run out, the most cards win (D7).

Every decision is one masked action (see :mod:`.actions` for the layout): the opening village
pick; the mandatory turn-over (which stack); using a ready object with its whole target; each
stack a torch looks at (or stopping); the object protecting in a battle; and, after a decay, each
OTHER player's forfeit -- those players act during the active player's turn (``agent_selection``
is always the player who must decide). Protect and forfeit decisions with a single legal choice
are applied by the engine itself. Seats in actions are relative to the acting player (1 = next
clockwise), so one policy plays any seat.

Observations (see :mod:`.observation`) are seat-relative and padded to 4 seats: everything on the
table (stack sizes, every collection with ready/used state, cards out of the game, the decision
and the card it is about) plus the viewer's OWN torch memory: the cards it looked at that are
still on their stack (D4). Nobody observes another player's memory or which stacks he looked at.

Options (keyword arguments of :func:`env` / :class:`raw_env`):

* ``num_players`` (2): 2 to 4 (D2).
* ``max_steps`` (1000, ``rules.DEFAULT_MAX_STEPS``): actions applied (auto-applied forced choices
  not counted) before the game is truncated; nobody wins, every reward is 0. Uniformly random play
  takes about 55 (2 players) to 90 (4 players) actions per game.
* ``illegal_action`` (``"raise"``): ``"raise"`` raises ``ValueError`` naming the agent, the
  decision and the action, and changes nothing; ``"penalize"`` ends the game with -1 for the
  offender and 0 for the others.
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as the agent to act sees
  it) or ``"human"`` (prints it after every step).

Extras on the raw env: ``state_dict()`` (JSON: stacks' remaining counts, each collection with
ready/used state, turn, whose turn, decision, ...; never stack contents or memories),
``describe_action(a)``, ``legal_actions()``, ``observation_layout()``, ``game`` (the engine).
``copy.deepcopy`` of the env (wrapped or not) continues identically.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..layout import signature
from . import actions as A
from .cards import CARD_NAMES, CARD_TYPE_OF_ID, CARDS
from .observation import LAYOUT, OBS_HIGH, OBS_SIZE, Observer
from .rules import DEFAULT_MAX_STEPS, MAX_PLAYERS, MIN_PLAYERS, DrachenSchattenGame

# Fingerprint of the observation and action layouts: checkpoints made for another are refused.
LAYOUT_SIGNATURE = signature("drachenschatten_v0", LAYOUT, A.NUM_ACTIONS)

_CARD_FAMILIES = ("view", "stop_view", "protect", "forfeit")  # decisions about a card (Decision.card)

OPTIONS = {
    "num_players": 2,
    "max_steps": DEFAULT_MAX_STEPS,
    "illegal_action": "raise",
}


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's order-enforcing wrapper (what users should use)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # PettingZoo's naming convention
    metadata = {
        "name": "drachenschatten_v0",
        "layout": LAYOUT_SIGNATURE,
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
    }

    def __init__(self, render_mode: str | None = None, **options: Any):
        super().__init__()
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(
                f"unknown option(s) {unknown}; allowed options: {sorted(OPTIONS)} and render_mode")
        cfg = {**OPTIONS, **options}
        n = cfg["num_players"]
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"num_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {n!r}")
        if cfg["illegal_action"] not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {cfg['illegal_action']!r}")
        m = cfg["max_steps"]
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"max_steps must be a positive int, got {m!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.options = cfg
        self.num_players = n
        self.render_mode = render_mode
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
        self._observer = Observer()
        self.game: DrachenSchattenGame | None = None

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
        self.game = DrachenSchattenGame(self.num_players, seed=game_seed, max_steps=self.options["max_steps"])
        self._observer = Observer()
        self._done = False
        self._penalized: str | None = None
        self._mask_cache: tuple[int, np.ndarray] | None = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.decision.player]

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
            legal = self.legal_actions()
            raise ValueError(
                f"illegal action {action!r} by {agent} at decision {d.kind!r}"
                f"{' (' + d.card + ')' if d.card else ''}: {why}; legal actions: {legal[:20]}"
                f"{'...' if len(legal) > 20 else ''}"
            )
        game.apply(A.decode(int(action), seat, self.num_players))
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if game.over:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[game.decision.player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None or self.game is None:
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
        """JSON snapshot: the engine's public :meth:`~.rules.DrachenSchattenGame.state_dict`
        (stacks' remaining counts, collections with ready state, turn, whose turn, decision, ...)
        plus ``agent_selection`` and ``penalized`` (the agent whose illegal action ended the game)."""
        d = self.game.state_dict()
        d["agent_selection"] = self.agent_selection
        d["penalized"] = self._penalized
        return d

    def describe_action(self, action: int) -> str:
        """A readable description of an action, seats relative to the actor, e.g.
        ``"use gem trade: give used key restore to seat +1 for their used shield protect-dragon"``."""
        text = A.describe(action)
        d = self.game.decision if self.game is not None else None
        if d is not None and d.card and A.family_of(action).name in _CARD_FAMILIES:
            text = f"{d.card}: {text}"
        return text

    def legal_actions(self) -> list[int]:
        """The legal action indices of the current decision."""
        if self.game is None or self.game.decision is None or self._done:
            return []
        return np.flatnonzero(self._legal_mask()).tolist()

    @staticmethod
    def observation_layout() -> dict[str, slice]:
        """Name -> slice of every piece of the observation vector (see :mod:`.observation`)."""
        return {name: piece.slice for name, piece in LAYOUT.items()}

    # ------------------------------------------------------------------ internals
    def _legal_mask(self) -> np.ndarray:
        game = self.game
        key = len(game.record)  # append-only: a new entry for every change of state
        if self._mask_cache is not None and self._mask_cache[0] == key:
            return self._mask_cache[1]
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        actor = game.decision.player
        for option in game.legal_options():
            mask[A.encode(option, actor, self.num_players)] = 1
        self._mask_cache = (key, mask)
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
        self._penalized = agent
        self.infos[agent] = {"illegal_action": why}
        self._accumulate_rewards()

    def _finish(self) -> None:
        """D6/D7 end: each of k winners +1/k, each other player -1/(n-k); all winners: 0 for all."""
        game = self.game
        self._done = True
        if game.truncated:
            self.truncations = {a: True for a in self.agents}
            return
        n, winners = self.num_players, set(game.winners)
        k = len(winners)
        if k < n:
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] = 1.0 / k if p in winners else -1.0 / (n - k)
        self.terminations = {a: True for a in self.agents}
        for a in self.agents:
            self.infos[a] = {"winners": [self.possible_agents[p] for p in game.winners],
                             "end_reason": game.end_reason}

    def render_text(self, viewer: int) -> str:
        """The table as seat ``viewer`` may see it: public cards plus the viewer's own torch memory."""
        g = self.game
        lines = [f"DrachenSchatten - turn {g.turn}, step {g.steps}/{g.max_steps} - seen by player_{viewer}"]
        sizes = [len(s) for s in g._stacks]
        lines.append("village stacks: " + " ".join(map(str, sizes[:8])) + " | caves stacks: "
                     + " ".join(map(str, sizes[8:])))
        memory = g.memory(viewer)
        if memory:
            lines.append("you saw: " + ", ".join(f"stack {s}: {CARD_NAMES[t]}" for s, t in memory.items()))
        for q, coll in enumerate(g._collections):
            cards = sorted(coll, key=lambda c: (CARD_TYPE_OF_ID[c], not g._ready[c]))
            shown = ", ".join(CARD_NAMES[CARD_TYPE_OF_ID[c]] + _state(g, c) for c in cards) or "-"
            mark = ">" if g.decision is not None and g.current_player == q and g.turn else " "
            lines.append(f"{mark} player_{q}: {shown}")
        lines.append(f"out of the game: {len(g._removed)} cards")
        d = g.decision
        if d is None:
            who = ", ".join(f"player_{p}" for p in g.winners)
            lines.append(f"game over ({g.end_reason}): " + (f"{who} win" if who else "nobody wins"))
        else:
            lines.append(f"decision: {d.kind}{' (' + d.card + ')' if d.card else ''} by player_{d.player}"
                         + (" - turn-over done" if g.turned_over and d.kind == "turn" else ""))
        return "\n".join(lines)



def _state(g: DrachenSchattenGame, cid: int) -> str:
    if CARDS[CARD_TYPE_OF_ID[cid]].category != "object":
        return ""
    return " (ready)" if g._ready[cid] else " (used)"
