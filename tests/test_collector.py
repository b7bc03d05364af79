"""The batched league collector (the package's SB3 vector env, dragonstones_env/play/sb3.py, as
training uses it): the same games as the sequential Gym env,
masks as the env's own, every league kind seated, any number of worker processes.

Equivalence needs deterministic opponents: a stochastic policy shared by many tables draws from
one generator in another order when the tables are played in lockstep (each game is as random,
not the same draw). So the equivalence tests seat checkpoints that take their most likely action,
and the tests with the rule bots and random check legality and bookkeeping instead.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.checkpoints import write_checkpoint
from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

from dragonstones_env.play.sb3 import OpponentsVecEnv
from dragonstones_env.play.vector import act_grouped
from dragonstones_env.policies import Policy, load_policy
from training.envs import make_vec_env
from training.league import FolderVersions, League, publish_latest


def checkpoint(folder, seed: int) -> str:
    return str(write_checkpoint(folder, seed))


class DeterministicFolders(FolderVersions):
    """The league's checkpoints take their most likely action (so that games can be compared)."""

    def build(self, spec: str, seed: int):
        return load_policy(spec, seed=seed, deterministic=True)


def league(run_dir, pool: list[str], mix: dict | None = None, **shares) -> League:
    versions = DeterministicFolders(str(run_dir))
    mix = mix or {"latest": 0.4, "snapshot": 0.3, "pool": 0.3}
    return League(run_dir, mix, pool, game="dragonstones_v1", versions=versions, **shares)


@pytest.fixture
def run_dir(tmp_path):
    """A run folder with a latest version and two snapshots, and a pool of two checkpoints."""
    run = tmp_path / "run"
    publish_latest(run, checkpoint(run / "latest" / "step-1", 1))
    checkpoint(run / "snapshots" / "step-000000100", 2)
    checkpoint(run / "snapshots" / "step-000000200", 3)
    pool = [checkpoint(tmp_path / "pool-a", 4), checkpoint(tmp_path / "pool-b", 5)]
    return run, pool


def learner_actions(masks: np.ndarray, step: int) -> np.ndarray:
    """A fixed rule for the learner's moves: the legal action at a position that moves with the step."""
    out = []
    for k, mask in enumerate(masks):
        legal = np.flatnonzero(mask)
        out.append(legal[(step * 7 + k * 3) % len(legal)])
    return np.array(out)


def play(venv, steps: int) -> list[tuple]:
    trace = [(venv.reset().copy(), np.stack(venv.env_method("action_masks")))]
    for t in range(steps):
        masks = np.stack(venv.env_method("action_masks"))
        obs, rewards, dones, infos = venv.step(learner_actions(masks, t))
        finals = [i.get("terminal_observation") for i in infos]
        trace.append((obs.copy(), rewards.copy(), dones.copy(), np.stack(venv.env_method("action_masks")),
                      [None if f is None else f.copy() for f in finals]))
    venv.close()
    return trace


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize(("table", "mixed", "sizes"), [(0.0, 0.0, 4), (0.5, 0.3, [3, 4, 6])])
def test_the_collector_plays_the_same_games_as_the_sequential_env(run_dir, table, mixed, sizes):
    """Each table of the collector is, step for step, the Gym env of the same rank and seed: the
    same observations, rewards, ends (with auto-reset) and masks, with the league's latest,
    snapshot and pool kinds seated at whole, mixed and drawn tables."""
    run, pool = run_dir
    kwargs = {"num_players": sizes}
    sequential = make_vec_env("Dragonstones-v0", n_envs=6, seed=5, subproc=False,
                              opponents=league(run, pool, table=table, mixed=mixed), **kwargs)
    batched = make_vec_env("Dragonstones-v0", n_envs=6, seed=5, collector="batched",
                           opponents=league(run, pool, table=table, mixed=mixed), **kwargs)
    a, b = play(sequential, 200), play(batched, 200)
    assert sum(int(step[2].sum()) for step in a[1:]) >= 2  # games ended and restarted on the way
    assert same(a, b)


def test_two_worker_processes_play_the_same_games_as_one(run_dir):
    """Without snapshots: each worker keeps the PFSP statistics of its own tables (as each
    SubprocVecEnv worker does), so snapshot draws after the first results differ by design."""
    run, pool = run_dir
    mix = {"latest": 0.5, "pool": 0.5}
    one = make_vec_env("Dragonstones-v0", n_envs=5, seed=2, collector="batched", workers=1,
                       opponents=league(run, pool, mix, table=0.3), num_players=4)
    two = make_vec_env("Dragonstones-v0", n_envs=5, seed=2, collector="batched", workers=2,
                       opponents=league(run, pool, mix, table=0.3), num_players=4)
    assert same(play(one, 120), play(two, 120))


def test_the_masks_are_the_envs_own_and_every_opponent_kind_plays_legally(tmp_path):
    """Rule bots, random and checkpoints (stochastic here) at the same tables: every move legal
    (the AEC env raises on an illegal one), masks as each table's own, episodes reported."""
    run = tmp_path / "run"
    publish_latest(run, checkpoint(run / "latest" / "step-1", 1))
    checkpoint(run / "snapshots" / "step-000000100", 2)
    mixed_league = League(run, {"latest": 0.3, "snapshot": 0.2, "zoo": 0.3, "random": 0.2}, zoo=["value", "miser"],
                          game="dragonstones_v1", table=0.3, mixed=0.2)
    venv = OpponentsVecEnv("Dragonstones-v0", 8, seed=1, opponents=mixed_league, num_players=[3, 4, 5],
                           illegal_action="raise")
    venv.reset()
    episodes = 0
    rng = np.random.default_rng(0)
    for _ in range(300):
        masks = venv.action_masks()
        for table, mask in zip(venv.tables, masks, strict=True):
            assert np.array_equal(mask, table.learner_observation()["action_mask"].astype(bool))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, dones, infos = venv.step(actions)
        episodes += sum("episode" in info for info in infos)
        assert all(("terminal_observation" in info) == done for info, done in zip(infos, dones, strict=True))
    timers = venv.get_attr("timers")[0]
    assert episodes >= 5 and timers["opponent_decisions"] > timers["learner_steps"]
    assert {type(p).__name__ for p in mixed_league._cache.values()} >= {"CheckpointPolicy"}
    venv.close()


def test_act_grouped_batches_each_policy_once_and_keeps_the_order():
    calls = []

    class Batched(Policy):
        def act(self, observation):
            raise AssertionError("a batched policy's decisions go through act_batch")

        def act_batch(self, observations, masks):
            calls.append(len(observations))
            return observations[:, 0].astype(int)

    class Alone(Policy):
        def act(self, observation):
            calls.append("alone")
            return int(observation["observation"][0]) + 100

    b, a = Batched(), Alone()
    pending = [(b, {"observation": np.array([k]), "action_mask": np.array([1])}) for k in (3, 4)]
    pending.insert(1, (a, {"observation": np.array([7]), "action_mask": np.array([1])}))
    assert act_grouped(pending) == [3, 107, 4]
    assert calls == [2, "alone"]


def test_a_search_in_the_pool_plays_legally_through_the_collector(tmp_path):
    """``ismcts`` in the league's pool: the collector decides its seats one table at a time through
    ``decide`` (its table's game), the others batched; every move legal (the env raises), masks the
    tables' own, episodes reported. Its cost per decision in a league: tools/league_search_cost.py."""
    search = "ismcts:simulations=2"
    pool_league = League(tmp_path / "run", {"heuristic": 0.5, "pool": 0.5}, pool=[search], game="dragonstones_v1",
                         table=0.2)
    pool_league.check()  # loads at run start as a training run does
    venv = OpponentsVecEnv("Dragonstones-v0", 2, seed=3, opponents=pool_league, num_players=[3, 4],
                           illegal_action="raise")
    venv.reset()
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(250):
        masks = venv.action_masks()
        for table, mask in zip(venv.tables, masks, strict=True):
            assert np.array_equal(mask, table.learner_observation()["action_mask"].astype(bool))
        infos = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))[3]
        episodes += sum("episode" in info for info in infos)
    searcher = pool_league._cache[search]
    assert type(searcher).__name__ == "SearchPolicy" and searcher.simulated > 0  # it searched, in the collector
    assert episodes >= 1 and venv.get_attr("timers")[0]["opponent_decisions"] > 250
    venv.close()
