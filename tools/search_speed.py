"""Seconds per decision of the search policy (``ismcts``), on one core (issue #27's figures).

    PYTHONPATH=. python tools/search_speed.py --game dragonstones --players 4 --decisions 30 \
        ismcts:simulations=10 ismcts:simulations=30

Plays games with the search in one seat (it moves round the table from game to game) and the game's
own bot in the others, and times every decision the search takes with more than one legal action
(with one, it answers at once, untimed). Prints per spec the median, mean and 90th percentile of the
CPU seconds per decision (``time.process_time``: on a busy machine, wall time counts other work too)
and the simulated decisions per CPU second.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dragonstones_env import games
from dragonstones_env.core.seeding import seat_seed
from dragonstones_env.policies import decide, load_policy


def time_decisions(game: str, players: int, spec: str, decisions: int, seed: int = 0) -> dict:
    gspec = games.get(game)
    times: list[float] = []
    simulated = 0
    g = 0
    while len(times) < decisions:
        search = load_policy(spec, seed=seed + g)
        seat = g % players
        bots = [load_policy(gspec.default_bot, seed=seat_seed(seed + g, i)) for i in range(players)]
        env = gspec.env(num_players=players)
        env.reset(seed=seed + g)
        while env.unwrapped.game.decision is not None and len(times) < decisions:
            agent = env.agent_selection
            i = env.unwrapped.agent_name_mapping[agent]
            if i != seat:
                env.step(decide(bots[i], env, agent))
                continue
            wide = np.count_nonzero(env.observe(agent)["action_mask"]) > 1
            before, start = search.simulated, time.process_time()
            action = decide(search, env, agent)
            if wide:
                times.append(time.process_time() - start)
                simulated += search.simulated - before
            env.step(action)
        g += 1
    total = sum(times)
    return {"spec": spec, "decisions": len(times), "games": g, "median": statistics.median(times),
            "mean": total / len(times), "p90": float(np.percentile(times, 90)), "steps_per_s": simulated / total}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("specs", nargs="+", help="search specs, e.g. ismcts:simulations=30")
    p.add_argument("--game", default="dragonstones")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--decisions", type=int, default=30, help="timed decisions per spec")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    threadpool_limits(1, user_api="blas")  # one core, as the evaluation's processes play
    print(f"{args.game}, {args.players} players: CPU seconds per decision (decisions with more than one legal action)")
    print("| spec | decisions | median s | mean s | p90 s | simulated decisions/s |")
    print("|---|---|---|---|---|---|")
    for spec in args.specs:
        r = time_decisions(args.game, args.players, spec, args.decisions, args.seed)
        print(f"| `{r['spec']}` | {r['decisions']} | {r['median']:.3f} | {r['mean']:.3f} | {r['p90']:.3f} "
              f"| {r['steps_per_s']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
