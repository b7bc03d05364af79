"""Random games at 3-6 players in both observation modes: every observation inside its space.

    python -m tools.check_observations --games 2000
"""

from __future__ import annotations

import argparse

import numpy as np

from dragonstones_env import env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    checked = 0
    high_seen = 0.0
    for g in range(args.games):
        mode = ("recall", "table")[g % 2]
        e = env(num_players=3 + g % 4, observation_mode=mode)
        e.reset(seed=args.seed + g)
        space = e.observation_space("player_0")
        low, high = space["observation"].low, space["observation"].high
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            o = obs["observation"]
            if o.dtype != np.float32 or not ((o >= low).all() and (o <= high).all()):
                raise SystemExit(f"game {g} ({mode}): observation outside the space")
            mask = obs["action_mask"]
            if mask.dtype != np.int8 or not ((mask == 0) | (mask == 1)).all():
                raise SystemExit(f"game {g} ({mode}): bad action mask")
            high_seen = max(high_seen, float(o.max()))
            checked += 1
            if term or trunc:
                e.step(None)
            else:
                e.step(int(rng.choice(np.flatnonzero(mask))))
    print(f"{args.games} games, {checked} observations, all inside the space; largest value {high_seen:.2f}")


if __name__ == "__main__":
    main()
