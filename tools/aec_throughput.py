#!/usr/bin/env python3
# Vendored from the project's shared benchmark (shared/bench/aec_throughput.py), unchanged but for this line.
"""Random-play throughput of PettingZoo AEC environments, side by side in one run.

Each environment plays games with a uniformly random legal action (from the
observation's "action_mask") for a fixed wall-clock slice; slices alternate
between the environments over several rounds and the median steps/s of each is
reported, with each one's ratio to connect_four and to the floor.

References always measured:
  floor          a zero-logic AEC env (400-float observation, 1500-action mask,
                 the standard PettingZoo wrappers): the cost of the API itself
  connect_four   pettingzoo.classic.connect_four_v3
  texas_holdem   pettingzoo.classic.texas_holdem_v4 (needs rlcard; skipped if absent)

Needs pettingzoo with its classic extras (pygame; rlcard for texas_holdem).

Usage:
  python aec_throughput.py [MODULE:FACTORY[:KEY=VAL,...]] ... [--seconds S] [--rounds R]
  e.g. python aec_throughput.py dragonstones_env:env:num_players=4

Prints one line per environment and, last, the candidate's ratio to connect_four.
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import time

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.agent_selector import AgentSelector


class _Floor(AECEnv):
    """Zero-logic AEC env: what the API costs when the game costs nothing."""

    metadata = {"name": "floor_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_players: int = 4, obs_size: int = 400, num_actions: int = 1500):
        super().__init__()
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 100, (obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
            }
        )
        self._act_space = spaces.Discrete(num_actions)
        self._obs_size = obs_size
        self._mask = np.zeros(num_actions, np.int8)
        self._mask[:40] = 1

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def observe(self, agent):
        obs = np.zeros(self._obs_size, np.float32)
        obs[:8] = self._t % 100
        return {"observation": obs, "action_mask": self._mask.copy()}

    def reset(self, seed=None, options=None):
        self.agents = self.possible_agents[:]
        self._t = 0
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._t += 1
        self._cumulative_rewards[agent] = 0.0
        if self._t >= 300:
            self.terminations = {a: True for a in self.agents}
            self.rewards = {a: 0.0 for a in self.agents}
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()


def floor_env(**kwargs):
    env = _Floor(**kwargs)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def _load(spec: str):
    parts = spec.split(":")
    module, factory = parts[0], parts[1]
    kwargs = {}
    if len(parts) > 2 and parts[2]:
        for item in parts[2].split(","):
            key, value = item.split("=")
            kwargs[key] = int(value) if value.lstrip("-").isdigit() else value
    fn = getattr(importlib.import_module(module), factory)
    return lambda: fn(**kwargs)


def play(make, seconds: float, seed: int) -> tuple[float, float]:
    """Random legal play for `seconds`; returns (steps/s, finished games/s)."""
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            steps += 1
            if steps % 256 == 0 and time.perf_counter() >= deadline:
                break
        else:
            games += 1
            seed += 1
            env.reset(seed=seed)
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", nargs="*", help="MODULE:FACTORY[:KEY=VAL,...]")
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one slice")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    envs = {"floor": floor_env}
    from pettingzoo.classic import connect_four_v3

    envs["connect_four"] = connect_four_v3.env
    try:
        from pettingzoo.classic import texas_holdem_v4

        texas_holdem_v4.env()
        envs["texas_holdem"] = texas_holdem_v4.env
    except Exception:  # rlcard missing
        pass
    for spec in args.candidates:
        envs[spec] = _load(spec)

    results = {name: [] for name in envs}
    games = {name: [] for name in envs}
    for r in range(args.rounds):
        for name, make in envs.items():
            sps, gps = play(make, args.seconds, seed=1000 * r)
            results[name].append(sps)
            games[name].append(gps)
    base = statistics.median(results["connect_four"])
    floor = statistics.median(results["floor"])
    for name in envs:
        med = statistics.median(results[name])
        print(
            f"{name:40s} {med:12,.0f} steps/s  {statistics.median(games[name]):10,.1f} games/s"
            f"  x{med / base:5.2f} connect_four  x{med / floor:5.2f} floor"
        )
    if args.candidates:
        cand = statistics.median(results[args.candidates[-1]])
        print(f"ratio to connect_four: {cand / base:.2f}")


if __name__ == "__main__":
    main()
