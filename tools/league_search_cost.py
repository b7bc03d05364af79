"""What a search (``ismcts``) in the league's pool costs the batched collector (a benchmark, not a test).

    python -m tools.league_search_cost [--spec ismcts:simulations=10] [--share 0.1] [--envs 8]
                                       [--steps 200] [--players 4] [--rounds 2]

Two leagues play the same tables in turn (rounds alternate, so a loaded machine slows both alike):
the search's, ``{"heuristic": 1 - share, "pool": share}`` with the pool ``[spec]``, and its
baseline, the same with the pool ``[the game's bot]`` (the search's own rollout policy), so the
difference is the search alone. The learner's moves are random legal ones (no network: the
collector's step only, without the learner's forward pass or the PPO update). Printed: the
search's milliseconds per decision (every call, and those with a choice: one legal action is
answered at once), its decisions per learner step, the collector's milliseconds per learner step
with and without it (wall and this process's CPU time), the share of a step the search takes,
and that share projected to other pool shares (the search's time per step grows with its share,
the rest of the step does not).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from dragonstones_env import games
from dragonstones_env.core.seeding import stream_seed
from dragonstones_env.play.sb3 import OpponentsVecEnv
from dragonstones_env.policies import Policy, Table, load_policy
from training.league import FolderVersions, League


class Timed(Policy):
    """A search policy that counts its decisions and the time they take (what the collector calls)."""

    def __init__(self, policy: Policy):
        self.policy, self.game = policy, policy.game
        self.seconds, self.decisions, self.chosen = 0.0, 0, 0

    def observe_game(self, info: Any) -> None:
        self._started = time.perf_counter()
        self.policy.observe_game(info)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        action = self.policy.act(observation)
        self.seconds += time.perf_counter() - self._started
        self.decisions += 1
        self.chosen += int(observation["action_mask"].sum() > 1)
        return action

    def sit(self, table: Table) -> Policy:
        self.policy.sit(table)
        return self

    def reset(self, seed: int | None = None) -> None:
        self.policy.reset(seed)


class TimedVersions(FolderVersions):
    """The run folder's versions (none here), the search wrapped in :class:`Timed`."""

    def __init__(self, run_dir: str, spec: str):
        super().__init__(run_dir)
        self.spec = spec
        self.timed: list[Timed] = []

    def build(self, spec: str, seed: int) -> Any:
        policy = load_policy(spec, seed=seed)
        if spec == self.spec and policy.capabilities.information_state:
            self.timed.append(Timed(policy))
            return self.timed[-1]
        return policy


def run(game: str, pool: str, share: float, envs: int, steps: int, players: int, seed: int,
        run_dir: str) -> dict[str, Any]:
    """One collector of ``envs`` tables for ``steps`` learner steps, its league's pool ``[pool]``."""
    spec = games.get(game)
    versions = TimedVersions(run_dir, pool)
    league = League(run_dir, {"heuristic": 1.0 - share, "pool": share}, pool=[pool], heuristic=spec.default_bot,
                    game=spec.name, versions=versions)
    venv = OpponentsVecEnv(spec.gym_id, envs, seed=seed, opponents=league, num_players=players,
                           illegal_action="raise")
    venv.reset()
    rng = np.random.default_rng(seed)

    def totals() -> np.ndarray:  # the searches so far (the first line-ups were played before the clock starts)
        return np.array([sum(t.seconds for t in versions.timed), sum(t.decisions for t in versions.timed),
                         sum(t.chosen for t in versions.timed)])

    before = totals()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        masks = venv.action_masks()
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    timers = venv.get_attr("timers")[0]
    venv.close()
    search_s, decisions, chosen = totals() - before
    learner_steps = envs * steps
    return {"wall_ms": 1e3 * wall / learner_steps, "cpu_ms": 1e3 * cpu / learner_steps,
            "search_s": float(search_s), "decisions": int(decisions), "chosen": int(chosen),
            "opponent_decisions": timers["opponent_decisions"],
            "learner_steps": learner_steps, "wall_s": wall}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.league_search_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=games.ids(), default="dragonstones")
    parser.add_argument("--spec", default="ismcts:simulations=10", help="the search spec in the pool")
    parser.add_argument("--share", type=float, default=0.1, help="the pool's share of the league's seats")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200, help="learner steps per table and round")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 < args.share <= 1:
        parser.error(f"--share is the pool's share of the seats, in (0, 1], got {args.share}")
    baseline = games.get(args.game).default_bot
    with_search, without = [], []
    with tempfile.TemporaryDirectory() as run_dir:
        for r in range(args.rounds):
            seed = stream_seed(args.seed, "repeat", r)
            table = (args.share, args.envs, args.steps, args.players, seed, run_dir)
            with_search.append(run(args.game, args.spec, *table))
            without.append(run(args.game, baseline, *table))
    search_s = sum(r["search_s"] for r in with_search)
    decisions = sum(r["decisions"] for r in with_search)
    chosen = sum(r["chosen"] for r in with_search)
    steps = sum(r["learner_steps"] for r in with_search)
    wall = statistics.median(r["wall_ms"] for r in with_search)
    base_wall = statistics.median(r["wall_ms"] for r in without)
    cpu = statistics.median(r["cpu_ms"] for r in with_search)
    base_cpu = statistics.median(r["cpu_ms"] for r in without)
    per_step = 1e3 * search_s / steps  # the search's ms per learner step
    share_of_step = per_step / wall
    print(f"{args.game}, {args.players} players, {args.envs} tables x {args.steps} learner steps x {args.rounds} "
          f"rounds; pool [{args.spec}] at {args.share:g} of the seats (the rest {baseline})")
    print(f"search: {decisions} decisions ({chosen} with a choice), {1e3 * search_s / max(decisions, 1):.2f} ms "
          f"per decision, {1e3 * search_s / max(chosen, 1):.2f} ms per decision with a choice; "
          f"{decisions / steps:.3f} search decisions per learner step")
    print(f"collector step, per learner step (median of rounds): {wall:.2f} ms wall / {cpu:.2f} ms CPU with the "
          f"search; {base_wall:.2f} ms wall / {base_cpu:.2f} ms CPU with {baseline} in its place")
    print(f"the search takes {per_step:.2f} ms of each learner step: {100 * share_of_step:.1f}% of the "
          f"collector's step ({wall / base_wall:.2f}x the baseline's wall time)")
    rest = wall - per_step  # what does not grow with the search's share
    for share in sorted({0.02, 0.05, 0.1, 0.25, 0.5, args.share}):
        scaled = per_step * share / args.share
        print(f"  at a pool share of {share:4.2f}: ~{scaled:7.2f} ms a learner step in the search, "
              f"{100 * scaled / (rest + scaled):5.1f}% of the collector's step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
