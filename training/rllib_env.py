"""The multi-agent form of the game for Ray RLlib: one agent per learning seat, turn by turn.

>>> env = DragonstonesMultiAgentEnv({"num_players": 4})
>>> obs, infos = env.reset(seed=0)          # {"player_2": {"observation": ..., "action_mask": ...}}
>>> obs, rewards, terminateds, truncateds, infos = env.step({"player_2": action})

An RLlib ``MultiAgentEnv`` over the PettingZoo AEC game: each ``step`` takes the action of
the one agent that was asked, plays the frozen opponents' turns (if any) inside the env,
and returns the observation of the next learning agent to act only. The rewards are the AEC
game's (+1 for the winner, -1/(n-1) for the others, at the end; plus reward shaping if
set), given to every learning agent as soon as they occur; RLlib adds up the rewards an
agent gets between two of its own turns. At the end every learning agent that has acted
gets its last observation and reward, with ``terminated`` (a won game) or ``truncated``
(``max_turns`` reached) for all.

Observations are ``{"observation": Box(float32, (OBS_SIZE,)), "action_mask":
Box(float32, (NUM_ACTIONS,))}`` (the mask as 0./1. floats): the masking RLModule
(:mod:`training.rllib_module`) reads both. Agent ids are the AEC env's, ``player_0`` ...
``player_{n-1}``; every one maps to the same shared policy.

``env_config`` keys:

* ``game``: ``"dragonstones"`` (default) or ``"drachenschatten"``;
* ``num_players``: an int or a list of table sizes, one drawn per episode;
* ``env_options``: keyword arguments of the AEC env (``observation_mode``,
  ``reward_shaping``, ``max_turns`` ...);
* ``league``: ``None`` (pure self-play: the shared policy plays every seat), or the mapping of
  the config's ``league`` section (:class:`training.config.LeagueConfig`: ``mix``, ``table``,
  ``pfsp_power``, ``pool``, ``max_snapshots``; other keys are ignored) plus ``weights``: the
  actors of the pool's checkpoints, ``{spec: {"weights", "activation"}}``, read by the driver
  so that remote workers need no files;
* ``truncation_reward``: in -1..0 (default 0), added to every learning agent's last reward when
  the game is cut off at its step limit, as the single-agent env's option of that name: the AEC
  game pays 0 then, more than a loss, so without it a losing seat gains by stalling;
* ``seed``: the base seed; each env runner and vector slot offsets it.

The league is :class:`training.league.League`, the one the SB3 trainer uses, with
:class:`training.league.PushedVersions` as the source of the learner's versions: one seat
per game is the learner, the others are drawn by the league, and a ``latest`` seat is one
more seat of the learning policy (RLlib trains on every learner seat). Frozen snapshots
reach the env runners with :meth:`add_snapshot` (the driver calls it on every env runner's
envs, see :mod:`training.train_rllib`), so no shared file system is needed on a cluster. At
the end of each game the env reports to its league whether a learner seat won: each env
keeps its own PFSP statistics, as each SB3 worker does.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dragonstones_env import games
from dragonstones_env.bounds import check as check_bound
from dragonstones_env.policies import decide, seat_all, zoo
from training.league import League, PushedVersions

try:  # RLlib is an optional extra: without it this module still imports (for the docs and tests)
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:  # pragma: no cover - exercised only without ray
    MultiAgentEnv = gym.Env  # type: ignore[misc,assignment]



def make_league(game: str, section: dict[str, Any]) -> League:
    """The league of one env from the config's ``league`` section (see the module docstring)."""
    versions = PushedVersions(int(section.get("max_snapshots", 8)), provided=dict(section.get("weights", {})))
    return League(None, section.get("mix", {"latest": 1.0}), section.get("pool", ()), zoo=zoo(game),
                  heuristic=games.get(game).default_bot, table=float(section.get("table", 0.0)),
                  mixed=float(section.get("mixed", 0.0)),
                  pfsp_power=float(section.get("pfsp_power", 2.0)), versions=versions,
                  max_snapshots=versions.max_snapshots)


class DragonstonesMultiAgentEnv(MultiAgentEnv):
    """The AEC game as an RLlib ``MultiAgentEnv``: only the agent to act is observed."""

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        self.game_name = config.get("game", "dragonstones")
        spec = games.get(self.game_name)  # an unknown game: a ValueError naming the known ones
        sizes = config.get("num_players", spec.default_players)
        self.sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
        if not self.sizes:
            raise ValueError("num_players is an empty list")
        for n in self.sizes:
            spec.check_players(n, "num_players")
        options = dict(config.get("env_options", {}))
        self.truncation_reward = check_bound("truncation_reward", config.get("truncation_reward", 0.0))
        # the raw env (no order-enforcing wrapper): this class only ever steps the agent to act
        self.aecs = {n: spec.raw_env(num_players=n, **options) for n in self.sizes}
        league = config.get("league")
        self.league = make_league(self.game_name, league) if league else None
        # each env runner (worker_index) and vector slot (vector_index) gets its own seed stream
        base = int(config.get("seed", 0) or 0)
        worker = int(getattr(config, "worker_index", 0))
        slot = int(getattr(config, "vector_index", 0))
        self._rng = np.random.default_rng([base, worker, slot])

        largest = self.aecs[max(self.sizes)]
        agent0 = largest.possible_agents[0]
        inner = largest.observation_space(agent0)
        n_actions = largest.action_space(agent0).n
        self._space = gym.spaces.Dict({
            "observation": inner["observation"],
            "action_mask": gym.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
        })
        self._act_space = largest.action_space(agent0)
        self.possible_agents = list(largest.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: self._space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        # the old API stack reads these two; harmless on the new one
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        self.action_space = gym.spaces.Dict(self.action_spaces)
        self.aec = largest
        self.seat_policies: list[Any] = [None] * len(self.possible_agents)
        self._pending: dict[str, float] = {}
        self._acted: set[str] = set()

    # ------------------------------------------------------------------ league
    def add_snapshot(self, snapshot: dict[str, Any]) -> None:
        """A frozen copy of the learner joins the league: ``{"spec", "weights", "activation"}``."""
        if self.league is not None:
            self.league.versions.add(snapshot)

    # ------------------------------------------------------------------ RLlib API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        n = self.sizes[int(self._rng.integers(len(self.sizes)))] if len(self.sizes) > 1 else self.sizes[0]
        self.aec = self.aecs[n]
        self.aec.reset(seed=int(self._rng.integers(2**62)))
        if self.league is None:
            self.seat_policies = [None] * n
        else:  # one seat is the learner's, as in the SB3 env; the league fills the others
            seat = int(self._rng.integers(n))
            others = self.league.sample_lineup(self._rng, n - 1)
            # seated for this game (told the table, reseeded by the one rule; a mixture draws its member)
            self.seat_policies = seat_all(self.aec, [*others[:seat], None, *others[seat:]],
                                          int(self._rng.integers(2**31)))
        self.agents = [a for a, p in zip(self.aec.possible_agents, self.seat_policies, strict=True) if p is None]
        self._pending = dict.fromkeys(self.agents, 0.0)
        self._acted = set()
        self._play_opponents()
        if self._over():  # the opponents ended the game before any learner acted (never in practice)
            return self.reset(options=options)
        agent = self.aec.agent_selection
        return {agent: self._observe(agent)}, {}

    def step(self, action_dict: dict[str, Any]):
        aec = self.aec
        agent = aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"it is {agent}'s turn; got actions for {sorted(action_dict)}")
        self._acted.add(agent)
        aec.step(int(action_dict[agent]))
        self._collect()
        self._play_opponents()
        rewards = {agent: 0.0}
        for a, r in self._pending.items():
            if r:
                rewards[a] = rewards.get(a, 0.0) + r
        self._pending = dict.fromkeys(self.agents, 0.0)
        if self._over():
            terminated = any(aec.terminations.values())
            if self.league is not None:  # PFSP statistics: did one of the learner's seats win?
                self.league.report(any(self.seat_policies[s] is None for s in aec._winners()))
            done = dict.fromkeys(self._acted, True)
            obs = {a: self._observe(a) for a in self._acted}
            rewards = {a: rewards.get(a, 0.0) for a in self._acted | set(rewards)}
            if not terminated:
                for a in self._acted:
                    rewards[a] += self.truncation_reward
            terminateds = {**(done if terminated else {}), "__all__": terminated}
            truncateds = {**({} if terminated else done), "__all__": not terminated}
            return obs, rewards, terminateds, truncateds, {}
        nxt = aec.agent_selection
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str | None:
        return self.aec.render_text(self.aec.agent_name_mapping[self.aec.agent_selection])

    def close(self) -> None:
        for aec in self.aecs.values():
            aec.close()

    # ------------------------------------------------------------------ internals
    def _over(self) -> bool:
        aec = self.aec
        return any(aec.terminations.values()) or any(aec.truncations.values())

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        o = self.aec.observe(agent)
        return {"observation": o["observation"], "action_mask": o["action_mask"].astype(np.float32)}

    def _collect(self) -> None:
        for a in self.agents:
            r = self.aec.rewards.get(a, 0.0)
            if r:
                self._pending[a] += r

    def _play_opponents(self) -> None:
        aec = self.aec
        while not self._over():
            seat = aec.agent_name_mapping[aec.agent_selection]
            policy = self.seat_policies[seat]
            if policy is None:
                return
            aec.step(int(decide(policy, aec, aec.agent_selection)))
            self._collect()
