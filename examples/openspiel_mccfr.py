"""OpenSpiel's outcome-sampling MCCFR on a dragonstones_env game, its average policy seated at the AEC table.

    python examples/openspiel_mccfr.py                   # DrachenSchatten, 2 players, 300 iterations
    python examples/openspiel_mccfr.py --tiny            # a smoke run (a few seconds)
    python examples/openspiel_mccfr.py --game dragonstones --players 3 --param max_turns=2

Needs the openspiel extra (``pip install "dragonstones_env[openspiel]"``). Read top to bottom:

1. load the game in OpenSpiel (``import dragonstones_env.openspiel`` registers ``python_<game id>``);
2. run MCCFR: a table of regrets keyed by each seat's information-state string (its whole history);
3. seat the learnt average policy at the package's PettingZoo table against ``random`` and count wins.

Why the seat plays alongside an OpenSpiel state: MCCFR's policy is a function of the seat's information
state, its whole action-observation history, and an AEC observation is only the table now. So the
evaluation drives the AEC env and an OpenSpiel state of the same game side by side (same seed, same
actions: the wrapper's k-th game with ``seed=s`` is the env's after ``reset(seed=s)``), and the seat reads its
information state from the OpenSpiel state. Its ``act(observation)`` checks that both agree on the legal
actions. The game trees are astronomically large: a few hundred iterations learn little beyond random play;
this shows the plumbing, not a strong bot.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import outcome_sampling_mccfr

from dragonstones_env import games, openspiel  # importing openspiel registers the games with OpenSpiel
from dragonstones_env.policies import Policy, RandomPolicy

# ------------------------------------------------------------------ hyperparameters
GAME = "drachenschatten"  # a registry id: drachenschatten, dragonstones
PLAYERS = 2
ITERATIONS = 300  # MCCFR iterations (each plays one sampled game per seat)
EXPLORATION = 0.6  # outcome sampling's epsilon: the updating seat's sampling policy mixes in uniform play
EVAL_GAMES = 40  # evaluation games against random, the learnt seat rotated through the seats
SEED = 0
TINY = {"iterations": 4, "eval_games": 2}  # --tiny: a smoke run


class AveragePolicySeat(Policy):
    """An MCCFR average policy at one seat: a dragonstones_env ``Policy`` for the AEC env.

    The policy is keyed by OpenSpiel's information-state string: the seat's whole history, which the
    observation alone does not hold, nor the package's ``observe_game`` hook (its information state
    samples the hidden facts; it does not replay the seat's past). So the table hands the seat the
    OpenSpiel state it plays alongside (:meth:`observe_state`) before each ``act``.
    """

    def __init__(self, average_policy, seat: int, seed: int):
        self.policy = average_policy
        self.seat = seat
        self.rng = np.random.default_rng(seed)
        self.state = None

    def observe_state(self, state) -> None:
        self.state = state

    def act(self, observation: dict) -> int:
        if self.state is None or self.state.current_player() != self.seat:
            raise ValueError(f"seat {self.seat}: act() needs the OpenSpiel state at this seat's decision "
                             "(observe_state first)")
        probs = self.policy.action_probabilities(self.state, self.seat)
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if sorted(probs) != legal:
            raise ValueError(f"seat {self.seat}: the OpenSpiel state and the table disagree on the legal actions")
        actions = list(probs)
        p = np.array([probs[a] for a in actions], np.float64)
        return int(actions[self.rng.choice(len(actions), p=p / p.sum())])


def train(game, iterations: int, seed: int) -> outcome_sampling_mccfr.OutcomeSamplingSolver:
    np.random.seed(seed)  # OpenSpiel's MCCFR samples with numpy's global generator
    # MCCFR recurses once a decision: allow a whole game (Python 3.11+ recursion costs no C stack)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * game.max_game_length() + 1000))
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    solver._expl = EXPLORATION  # the module's constructor offers no argument for it
    for _ in range(iterations):
        solver.iteration()
    return solver


def evaluate(spec, params: dict, average_policy, games_to_play: int, seed: int) -> dict:
    """The learnt seat against ``random`` in every other seat, seats rotated; the AEC env and an OpenSpiel
    state of the same game played side by side."""
    n = params["players"]
    wins = 0
    returns = []
    for k in range(games_to_play):
        game_seed = seed + k
        learnt = k % n
        env = spec.env(num_players=n, **{key: v for key, v in params.items() if key != "players"})
        env.reset(seed=game_seed)
        state = pyspiel.load_game(openspiel.short_name(spec), {**params, "seed": game_seed}).new_initial_state()
        state.apply_action(0)  # the chance node draws the seed: the env's game, step for step
        seats = {agent: AveragePolicySeat(average_policy, learnt, game_seed) if i == learnt
                 else RandomPolicy(seed=game_seed * 10 + i) for i, agent in enumerate(env.possible_agents)}
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = seats[agent]
            if isinstance(seat, AveragePolicySeat):
                seat.observe_state(state)
            action = seat.act(observation)
            env.step(action)
            state.apply_action(action)
        outcome = env.unwrapped.outcome()
        assert state.is_terminal() and state.returns() == outcome  # the two tables played the same game
        wins += outcome[learnt] > 0
        returns.append(outcome[learnt])
    return {"games": games_to_play, "wins": int(wins), "win_rate": wins / games_to_play,
            "mean_return": float(np.mean(returns)), "fair_share": 1 / n}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=GAME, help="a registry id (default %(default)s)")
    parser.add_argument("--players", type=int, default=PLAYERS)
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="an OpenSpiel game parameter (an env option, JSON value), e.g. max_turns=2")
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--eval-games", type=int, default=EVAL_GAMES)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--tiny", action="store_true", help=f"a smoke run: {TINY}")
    args = parser.parse_args(argv)
    if args.tiny:
        args.iterations, args.eval_games = TINY["iterations"], TINY["eval_games"]

    spec = games.get(args.game)
    params = {"players": args.players}
    for item in args.param:
        key, _, value = item.partition("=")
        params[key] = json.loads(value)
    game = pyspiel.load_game(openspiel.short_name(spec), {**params, "seed": args.seed})
    print(f"{game}: information state {game.information_state_tensor_shape()} floats, "
          f"{game.num_distinct_actions()} actions")

    start = time.perf_counter()
    solver = train(game, args.iterations, args.seed)
    print(f"MCCFR: {args.iterations} iterations, {len(solver._infostates)} information states in "
          f"{time.perf_counter() - start:.1f} s")

    result = evaluate(spec, params, solver.average_policy(), args.eval_games, args.seed + 1000)
    print(f"against random: {result['wins']}/{result['games']} won (win rate {result['win_rate']:.3f}, "
          f"fair share {result['fair_share']:.3f}), mean return {result['mean_return']:+.3f}")
    return result


if __name__ == "__main__":
    main()
