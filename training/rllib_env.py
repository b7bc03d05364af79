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
* ``league``: ``None`` (pure self-play: the shared policy plays every seat), or a mapping with
  ``mix`` (weights of ``"self"``, ``"snapshot"``, ``"heuristic"``, ``"random"``, ``"pool"``,
  drawn per seat and episode; at least one seat is always the learner), ``pool`` (a list of
  policy specs: built-in names, or ``{"spec", "weights", "activation"}`` mappings of a
  checkpoint's actor, loaded by the driver so that remote workers need no files) and
  ``max_snapshots``; ``heuristic`` names the game's rule-based bot;
* ``seed``: the base seed; each env runner and vector slot offsets it.

Frozen snapshots of the learner reach the env runners with :meth:`add_snapshot` (the
driver calls it on every env runner's envs, see :mod:`training.train_rllib`), so no shared
file system is needed on a cluster. Until the first snapshot exists, its weight goes to the
heuristic, as in :class:`training.league.League`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

try:  # RLlib is an optional extra: without it this module still imports (for the docs and tests)
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:  # pragma: no cover - exercised only without ray
    MultiAgentEnv = gym.Env  # type: ignore[misc,assignment]

LEAGUE_KINDS = ("self", "snapshot", "heuristic", "random", "pool")


def _aec_module(game: str) -> Any:
    """The module of a game's AEC env (``env`` and ``raw_env``)."""
    import importlib

    names = {"dragonstones": "dragonstones_env.env", "drachenschatten": "dragonstones_env.drachenschatten.env"}
    if game not in names:
        raise ValueError(f"game must be 'dragonstones' or 'drachenschatten', got {game!r}")
    return importlib.import_module(names[game])


def _build_policy(item: Any, seed: int) -> Any:
    """A playing policy from a pool item: a spec for ``load_policy`` or an actor's weights."""
    if isinstance(item, dict):
        from policies.checkpoint import CheckpointPolicy

        weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in item["weights"]]
        return CheckpointPolicy(weights, item.get("activation", "tanh"), spec=item.get("spec", "snapshot"),
                                card=item.get("card"), seed=seed)
    from policies import load_policy

    return load_policy(item, seed=seed)


class RLlibLeague:
    """Who sits at the table, per seat and episode: the learner (``"self"``) or a frozen policy."""

    def __init__(self, mix: dict[str, float], pool: Sequence[Any] = (), max_snapshots: int = 8,
                 heuristic: str = "heuristic"):
        unknown = set(mix) - set(LEAGUE_KINDS)
        if unknown:
            raise ValueError(f"unknown league kind(s) {sorted(unknown)}; kinds are {list(LEAGUE_KINDS)}")
        if any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
            raise ValueError(f"league weights must be >= 0 with a positive sum, got {mix}")
        if mix.get("pool", 0) > 0 and not pool:
            raise ValueError("league weight 'pool' > 0 but the pool lists no policy")
        self.mix = {k: float(mix.get(k, 0.0)) for k in LEAGUE_KINDS}
        self.pool = list(pool)
        self.max_snapshots = max_snapshots
        self.heuristic = heuristic
        self.snapshots: list[dict[str, Any]] = []  # newest last
        self._cache: dict[Any, Any] = {}

    def add_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.snapshots.append(snapshot)
        del self.snapshots[: -self.max_snapshots]
        live = {self._key(s) for s in self.snapshots} | {self._key(p) for p in self.pool}
        self._cache = {k: v for k, v in self._cache.items() if not isinstance(k, tuple) or k in live}

    @staticmethod
    def _key(item: Any) -> Any:
        return ("weights", item.get("spec") or id(item)) if isinstance(item, dict) else item

    def _policy(self, item: Any, rng: np.random.Generator) -> Any:
        key = self._key(item)
        policy = self._cache.get(key)
        if policy is None:
            policy = self._cache[key] = _build_policy(item, int(rng.integers(2**31)))
        return policy

    def sample_lineup(self, rng: np.random.Generator, seats: int) -> list[Any]:
        """One entry per seat: ``None`` for the learner, else a policy with ``act(observation)``."""
        weights = dict(self.mix)
        if not self.snapshots:
            weights["heuristic"] += weights["snapshot"]
            weights["snapshot"] = 0.0
        kinds = list(weights)
        p = np.array([weights[k] for k in kinds], float)
        p /= p.sum()
        drawn = [kinds[int(i)] for i in rng.choice(len(kinds), size=seats, p=p)]
        if "self" not in drawn:
            drawn[int(rng.integers(seats))] = "self"
        lineup: list[Any] = []
        for kind in drawn:
            if kind == "self":
                lineup.append(None)
            elif kind == "snapshot":
                lineup.append(self._policy(self.snapshots[int(rng.integers(len(self.snapshots)))], rng))
            elif kind == "pool":
                lineup.append(self._policy(self.pool[int(rng.integers(len(self.pool)))], rng))
            elif kind == "heuristic":
                lineup.append(self._policy(self.heuristic, rng))
            else:
                lineup.append(self._policy("random", rng))
        return lineup


class DragonstonesMultiAgentEnv(MultiAgentEnv):
    """The AEC game as an RLlib ``MultiAgentEnv``: only the agent to act is observed."""

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        self.game_name = config.get("game", "dragonstones")
        module = _aec_module(self.game_name)
        sizes = config.get("num_players", 4 if self.game_name == "dragonstones" else 2)
        self.sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
        if not self.sizes:
            raise ValueError("num_players is an empty list")
        options = dict(config.get("env_options", {}))
        # the raw env (no order-enforcing wrapper): this class only ever steps the agent to act
        self.aecs = {n: module.raw_env(num_players=n, **options) for n in self.sizes}
        league = config.get("league")
        self.league = (
            RLlibLeague(league.get("mix", {"self": 1.0}), league.get("pool", ()), league.get("max_snapshots", 8),
                        league.get("heuristic", "heuristic" if self.game_name == "dragonstones" else "ds-heuristic"))
            if league else None
        )
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
            self.league.add_snapshot(snapshot)

    # ------------------------------------------------------------------ RLlib API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        n = self.sizes[int(self._rng.integers(len(self.sizes)))] if len(self.sizes) > 1 else self.sizes[0]
        self.aec = self.aecs[n]
        self.aec.reset(seed=int(self._rng.integers(2**62)))
        if self.league is None:
            self.seat_policies = [None] * n
        else:
            self.seat_policies = self.league.sample_lineup(self._rng, n)
            for policy in self.seat_policies:
                reset = getattr(policy, "reset", None)
                if policy is not None and callable(reset):
                    reset(seed=int(self._rng.integers(2**31)))
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
            done = dict.fromkeys(self._acted, True)
            obs = {a: self._observe(a) for a in self._acted}
            rewards = {a: rewards.get(a, 0.0) for a in self._acted | set(rewards)}
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
            aec.step(int(policy.act(aec.observe(aec.agent_selection))))
            self._collect()
