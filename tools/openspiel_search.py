"""OpenSpiel's ISMCTS bot (through dragonstones_env.openspiel) beside this package's ``ismcts`` policy.

    PYTHONPATH=. python -m tools.openspiel_search speed --game dragonstones --players 4 --positions 50 \
        --simulations 10
    PYTHONPATH=. python -m tools.openspiel_search strength --game dragonstones --players 4 --games 40 \
        --simulations 10 openspiel ismcts:simulations=10:rollout=random:horizon=0

``speed``: the same positions (every fifth decision with more than one legal action of games the game's bot
plays in every seat) are decided by each search in turn, position by position (so a busy machine slows them
alike): OpenSpiel's ``ISMCTSBot`` (random rollouts to the end, one per simulation, ``uct_c`` 2, nodes keyed on
the observation string), ``ismcts`` with the same random rollouts to the end, and ``ismcts`` as it ships (the
game's bot as rollout policy, horizon auto), all at ``--simulations`` simulations a decision. Prints the
median, mean and 90th percentile CPU seconds a decision (``time.process_time``).

``strength``: each candidate (``openspiel``, or an ``ismcts`` spec) alone against the game's bot in the
other seats, its seat moving round the table from game to game; wins with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from dragonstones_env import games, openspiel
from dragonstones_env.core.seeding import seat_seed
from dragonstones_env.play.arena import wilson_interval
from dragonstones_env.policies import decide, load_policy

UCT_C = 2.0  # OpenSpiel's ISMCTS examples' exploration constant


def openspiel_bot(game: Any, simulations: int, seed: int) -> Any:
    """OpenSpiel's ISMCTS with random rollouts, deterministic from ``seed``."""
    rs = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), UCT_C, simulations, random_state=rs,
                           use_observation_string=True)
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    return bot


def positions(spec: Any, players: int, count: int, seed: int, every: int = 5) -> list[Any]:
    """Engines at every ``every``-th decision with a choice of games the game's bot plays in every seat."""
    out: list[Any] = []
    g, wide = 0, 0
    while len(out) < count:
        bots = [load_policy(spec.default_bot, seed=seat_seed(seed + g, i)) for i in range(players)]
        env = spec.env(num_players=players)
        env.reset(seed=seed + g)
        while env.unwrapped.game.decision is not None and len(out) < count:
            agent = env.agent_selection
            if np.count_nonzero(env.observe(agent)["action_mask"]) > 1:
                wide += 1
                if wide % every == 0:
                    out.append(copy.deepcopy(env.unwrapped.game))
            env.step(decide(bots[env.unwrapped.agent_name_mapping[agent]], env, agent))
        g += 1
    return out


def speed(args: argparse.Namespace) -> None:
    spec = games.get(args.game)
    game = pyspiel.load_game(openspiel.short_name(spec), {"players": args.players})
    sims = args.simulations

    def os_decide(engine: Any, k: int) -> int:
        return int(openspiel_bot(game, sims, args.seed + k).step(game.new_state_at(engine)))

    def our_decider(search: str) -> Callable[[Any, int], int]:
        def our_decide(engine: Any, k: int) -> int:
            env = spec.raw_env(num_players=args.players)
            env.resume(copy.deepcopy(engine))
            return int(decide(load_policy(search, seed=args.seed + k), env, env.agent_selection))
        return our_decide

    deciders: dict[str, Callable[[Any, int], int]] = {
        f"OpenSpiel ISMCTSBot, {sims} simulations, random rollouts": os_decide}
    for search in (f"ismcts:simulations={sims}:rollout=random:horizon=0", f"ismcts:simulations={sims}"):
        deciders[f"`{search}`"] = our_decider(search)
    times: dict[str, list[float]] = {name: [] for name in deciders}
    for k, engine in enumerate(positions(spec, args.players, args.positions, args.seed)):
        for name, fn in deciders.items():
            start = time.process_time()
            fn(engine, k)
            times[name].append(time.process_time() - start)
    print(f"{spec.title}, {args.players} players, {args.positions} positions: CPU seconds a decision")
    print("| search | decisions | median s | mean s | p90 s |")
    print("|---|---|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {len(t)} | {statistics.median(t):.3f} | {statistics.mean(t):.3f} "
              f"| {float(np.percentile(t, 90)):.3f} |", flush=True)


def strength(args: argparse.Namespace) -> None:
    spec = games.get(args.game)
    n = args.players
    game = pyspiel.load_game(openspiel.short_name(spec), {"players": n})
    print(f"{spec.title}, {n} players: each candidate alone against {n - 1} {spec.default_bot}, "
          f"{args.games} games, seat rotated")
    print("| candidate | games | wins | win rate [95% Wilson] | CPU s |")
    print("|---|---|---|---|---|")
    for candidate in args.candidates:
        wins, start = 0, time.process_time()
        for g in range(args.games):
            seat = g % n
            seed = args.seed + g
            bots = [load_policy(spec.default_bot, seed=seat_seed(seed, i)) for i in range(n)]
            if candidate == "openspiel":
                bot = openspiel_bot(game, args.simulations, seed)
            else:
                search = load_policy(candidate, seed=seed)
            env = spec.env(num_players=n)
            env.reset(seed=seed)
            while env.unwrapped.game.decision is not None:
                agent = env.agent_selection
                i = env.unwrapped.agent_name_mapping[agent]
                if i != seat:
                    env.step(decide(bots[i], env, agent))
                elif candidate == "openspiel":
                    env.step(int(bot.step(game.new_state_at(env.unwrapped.game))))
                else:
                    env.step(decide(search, env, agent))
            wins += env.unwrapped.game.winners == [seat]
        low, high = wilson_interval(wins, args.games)
        name = f"OpenSpiel ISMCTSBot, {args.simulations} simulations" if candidate == "openspiel" else f"`{candidate}`"
        print(f"| {name} | {args.games} | {wins} | {wins / args.games:.3f} [{low:.3f}, {high:.3f}] "
              f"| {time.process_time() - start:.0f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    for name, fn in (("speed", speed), ("strength", strength)):
        q = sub.add_parser(name)
        q.set_defaults(run=fn)
        q.add_argument("--game", default="dragonstones")
        q.add_argument("--players", type=int, default=4)
        q.add_argument("--simulations", type=int, default=10, help="simulations a decision")
        q.add_argument("--seed", type=int, default=0)
    sub.choices["speed"].add_argument("--positions", type=int, default=50)
    sub.choices["strength"].add_argument("--games", type=int, default=40)
    sub.choices["strength"].add_argument("candidates", nargs="+", help="openspiel, or an ismcts spec")
    args = p.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
