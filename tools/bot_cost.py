"""What one decision of each rule bot costs, on the same observations (a benchmark, not a test).

    python -m tools.bot_cost [--game dragonstones] [--players 4] [--decisions 3000] [--rounds 3]

The observations come from seeded random games, new ones each round (the bots remember
valuations across decisions: the same observations again would be decided from memory); every
bot decides on each of them (its own turn's observation, whatever the bot: the cost of reading
and deciding), rounds alternate between the bots and the median microseconds per decision of
each is printed, with the checkpoints' cost alone and in a batch of 64 (what the batched
collector pays per decision).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence

import numpy as np

from dragonstones_env import games
from dragonstones_env.policies import load_policy, zoo
from dragonstones_env.policies.registry import shipped


def observations(game: str, players: int, count: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``count`` observations of seats due to decide, from random games."""
    env = games.get(game).env(num_players=players)
    rng = np.random.default_rng(seed)
    out: list[dict[str, np.ndarray]] = []
    g = seed
    while len(out) < count:
        env.reset(seed=g)
        g += 1
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            out.append(obs)
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
    return out[:count]


def cost_us(policy, obs: Sequence[dict[str, np.ndarray]], batch: int = 1) -> float:
    started = time.perf_counter()
    if batch == 1:
        for o in obs:
            policy.act(o)
    else:
        for i in range(0, len(obs) - batch + 1, batch):
            chunk = obs[i : i + batch]
            policy.act_batch(np.stack([o["observation"] for o in chunk]), np.stack([o["action_mask"] for o in chunk]))
    done = len(obs) if batch == 1 else (len(obs) // batch) * batch
    return 1e6 * (time.perf_counter() - started) / done


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bot_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=games.ids(), default="dragonstones")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    spec = games.get(args.game)
    bots = {name: load_policy(name, seed=0) for name in [spec.default_bot, *zoo(args.game), "random"]}
    rows: dict[str, list[float]] = {name: [] for name in bots}
    # a shipped search decides from the whole information state, not an observation: its cost is
    # tools/search_speed.py's
    checkpoints = [name for name in shipped() if (policy := load_policy(name)).game in (spec.id, spec.name)
                   and not policy.capabilities.information_state]
    for name in checkpoints:
        rows[f"{name} (alone)"] = []
        rows[f"{name} (batch 64)"] = []
    for r in range(args.rounds):
        obs = observations(args.game, args.players, args.decisions, seed=1000 * r)
        for name, bot in bots.items():
            rows[name].append(cost_us(bot, obs))
        for name in checkpoints:
            policy = load_policy(name, seed=0)
            rows[f"{name} (alone)"].append(cost_us(policy, obs))
            rows[f"{name} (batch 64)"].append(cost_us(policy, obs, batch=64))
    print(f"{args.game}, {args.players} players, {len(obs)} decisions, median of {args.rounds} rounds")
    for name, values in rows.items():
        print(f"{name:28s} {statistics.median(values):8.1f} us/decision")
    return 0


if __name__ == "__main__":
    sys.exit(main())
