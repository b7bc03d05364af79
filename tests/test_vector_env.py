"""The batched vector env (dragonstones_env/play/vector.py) and its SB3 adapter (play/sb3.py): Gymnasium's
vector API (its spaces, same-step autoreset as gymnasium's own SyncVectorEnv plays it), seeds, masks,
an OpponentSampler, a custom deck, worker processes, and MaskablePPO learning through the adapter.

The games are compared with gymnasium's ``SyncVectorEnv`` over ``gymnasium.make`` tables, seeded as
gymnasium seeds them (``seed + k``): the vector env must play the same games, step for step.
"""

from __future__ import annotations

import gc
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space

import dragonstones_env  # noqa: F401  (registers the Gym ids)
from dragonstones_env.play import OpponentSampler, OpponentsVectorEnv
from dragonstones_env.play.vector import WORKER_GC_THRESHOLD, TableInfos, game_of, quiet_collector
from dragonstones_env.policies import Policy, load_policy
from dragonstones_env.policies.bots.dragonstones.policy import HeuristicPolicy
from tests.extras import TRAIN, TRAIN_MODULE

EXAMPLE_DECK = Path(__file__).resolve().parents[1] / "examples" / "characters.yaml"


def learner_actions(masks: np.ndarray, step: int) -> np.ndarray:
    """A fixed rule for the learner's moves: the legal action at a position that moves with the step."""
    return np.array([np.flatnonzero(m)[(step * 7 + k * 3) % int(m.sum())] for k, m in enumerate(masks)])


def play(envs, steps: int, seed: int, masks_of=None) -> list:
    """The trace of ``steps`` steps from ``reset(seed=seed)``: observations, rewards, ends, final
    observations and masks (``masks_of(envs)``: how to ask for them; default ``action_masks()``)."""
    masks_of = masks_of or (lambda e: e.action_masks())
    obs, infos = envs.reset(seed=seed)
    trace = [(obs.copy(), masks_of(envs).copy())]
    for t in range(steps):
        obs, rewards, terminated, truncated, infos = envs.step(learner_actions(masks_of(envs), t))
        finals = [None if "final_obs" not in infos or not infos["_final_obs"][k] else infos["final_obs"][k].copy()
                  for k in range(len(obs))]
        trace.append((obs.copy(), rewards.copy(), terminated.copy(), truncated.copy(), finals,
                      masks_of(envs).copy()))
    envs.close()
    return trace


def sync_masks(envs: SyncVectorEnv) -> np.ndarray:
    return np.stack([env.unwrapped.action_masks() for env in envs.envs])


def ends(trace: list) -> int:
    return sum(int((step[2] | step[3]).sum()) for step in trace[1:])


def test_the_spaces_are_gymnasiums_batched_spaces_and_the_autoreset_mode_is_declared():
    envs = OpponentsVectorEnv("Dragonstones-v0", num_envs=3, num_players=4, opponents="heuristic")
    single = gym.make("Dragonstones-v0", num_players=4)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    assert envs.observation_space == batch_space(single.observation_space, 3)
    assert envs.action_space == batch_space(single.action_space, 3)
    obs, infos = envs.reset(seed=1)
    assert envs.observation_space.contains(obs)
    assert infos["action_mask"].shape == (3, single.action_space.n) and infos["_action_mask"].all()
    assert set(infos["num_players"]) == {4} and infos["_seat"].all()
    envs.close()
    assert envs.closed


@pytest.mark.parametrize("workers", [1, 3])
def test_it_plays_gymnasiums_own_same_step_vector_env_games(workers):
    """Against gymnasium's SyncVectorEnv (same-step autoreset) over gymnasium.make tables, seeded
    alike: the same observations, rewards, ends, final observations and masks, step for step, at
    drawn table sizes, in this process and in one worker process per table."""
    kwargs = {"num_players": [3, 4, 5], "opponents": [["heuristic", "value", "miser"]]}
    ours = OpponentsVectorEnv("dragonstones", num_envs=3, workers=workers, **kwargs)
    theirs = SyncVectorEnv([lambda: gym.make("Dragonstones-v0", **kwargs) for _ in range(3)],
                           autoreset_mode=AutoresetMode.SAME_STEP)
    a, b = play(ours, 150, seed=11), play(theirs, 150, seed=11, masks_of=sync_masks)
    assert ends(a) >= 2  # games ended and the tables restarted on the way
    assert data_equivalence(a, b, exact=True)


def test_the_same_seed_gives_the_same_tables_with_any_number_of_workers():
    kwargs = {"num_players": 4, "opponents": "heuristic"}
    one = play(OpponentsVectorEnv("dragonstones", num_envs=4, workers=1, **kwargs), 120, seed=5)
    two = play(OpponentsVectorEnv("dragonstones", num_envs=4, workers=2, **kwargs), 120, seed=5)
    other = play(OpponentsVectorEnv("dragonstones", num_envs=4, workers=1, **kwargs), 120, seed=6)
    assert ends(one) >= 1
    assert data_equivalence(one, two, exact=True)
    assert not data_equivalence(one, other, exact=True)


def test_masks_are_legal_and_the_infos_carry_them_and_the_final_steps():
    """Every learner move drawn from the masks is legal (the tables raise on an illegal one); the
    infos' masks are action_masks(); a finished table reports its final observation and info, and its
    observation is already its next episode's first (same-step autoreset)."""
    envs = OpponentsVectorEnv("dragonstones", num_envs=4, num_players=[3, 6], opponents="heuristic",
                              illegal_action="raise")
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        masks = envs.action_masks()
        assert np.array_equal(masks, infos["action_mask"]) and masks.any(axis=1).all()
        for table, mask in zip(envs.engine.tables, masks, strict=True):
            assert np.array_equal(mask, table.learner_observation()["action_mask"].astype(bool))
        obs, _, terminated, truncated, infos = envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        done = terminated | truncated
        if done.any():
            assert np.array_equal(infos["_final_obs"], done) and np.array_equal(infos["_final_info"], done)
            for k in np.flatnonzero(done):
                assert not np.array_equal(infos["final_obs"][k], obs[k])
                assert np.array_equal(obs[k], envs.engine.tables[k].learner_observation()["observation"])
            finished += int(done.sum())
    assert finished >= 3
    envs.close()


def added_one_by_one(envs, infos: list[dict]) -> dict:
    """Gymnasium's vector infos made the plain way: ``_add_info`` table by table (what the env did before
    TableInfos)."""
    out: dict = {}
    for k, info in enumerate(infos):
        out = envs._add_info(out, info, k)
    return out


def test_table_infos_are_the_dicts_and_the_gymnasium_infos_they_replace(monkeypatch):
    """At every step of 300 (tables finishing, sizes drawn), the infos' columns give back each table's
    dict (types, copies) and the gymnasium infos that ``_add_info`` table by table made; split in two
    workers' shares and joined again, the same; and shares whose columns differ still join right."""
    seen: list[list[dict]] = []
    of = TableInfos.of.__func__
    monkeypatch.setattr(TableInfos, "of", classmethod(lambda cls, infos: seen.append(list(infos)) or of(cls, infos)))
    envs = OpponentsVectorEnv("dragonstones", num_envs=5, num_players=[3, 4], opponents="heuristic")
    envs.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(300):
        envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in envs.action_masks()]))
    envs.close()
    monkeypatch.undo()
    finals = 0
    for infos in seen:
        columns = TableInfos.of(infos)
        assert set(columns.columns) == {"seat", "num_players", "winners", "illegal_action"}
        assert data_equivalence(columns.tables(), infos, exact=True)
        assert columns.table(0)["winners"] is not infos[0]["winners"]
        want = added_one_by_one(envs, infos)
        assert data_equivalence(columns.gymnasium(envs), want, exact=True)
        joined = TableInfos.concat([TableInfos.of(infos[:2]), TableInfos.of(infos[2:])])
        assert data_equivalence(joined.gymnasium(envs), want, exact=True)
        assert data_equivalence(joined.tables(), infos, exact=True)
        finals += sum("final_obs" in info for info in infos)
    assert finals >= 3
    odd = [{**info, "extra": 1.5 if k < 2 else 2} for k, info in enumerate(seen[-1])]  # a float, then ints
    joined = TableInfos.concat([TableInfos.of(odd[:2]), TableInfos.of(odd[2:])])
    assert "extra" not in joined.columns
    assert data_equivalence(joined.gymnasium(envs), added_one_by_one(envs, odd), exact=True)
    assert data_equivalence(joined.tables(), odd, exact=True)


def test_the_infos_are_the_same_with_workers():
    kwargs = {"num_players": 4, "opponents": "heuristic"}
    traces = []
    for workers in (1, 2):
        envs = OpponentsVectorEnv("dragonstones", num_envs=4, workers=workers, **kwargs)
        trace = [envs.reset(seed=9)[1]]
        for t in range(120):
            trace.append(envs.step(learner_actions(envs.action_masks(), t))[4])
        envs.close()
        traces.append(trace)
    assert any("final_obs" in infos for infos in traces[0])
    assert data_equivalence(traces[0], traces[1], exact=True)


class CountingSampler(OpponentSampler):
    """The heuristic in every other seat, counting the line-ups drawn and the results reported."""

    game = "dragonstones"

    def __init__(self):
        self.heuristic = load_policy("heuristic")
        self.lineups, self.reports = 0, []

    def sample_lineup(self, rng, seats):
        self.lineups += 1
        return [self.heuristic] * seats

    def report(self, won):
        self.reports.append(won)


def test_an_opponent_sampler_draws_every_lineup_and_hears_every_result():
    sampler = CountingSampler()
    envs = OpponentsVectorEnv("dragonstones", num_envs=3, num_players=3, opponents=sampler)
    envs.reset(seed=2)
    done = 0
    for t in range(200):
        _, _, terminated, truncated, _ = envs.step(learner_actions(envs.action_masks(), t))
        done += int((terminated | truncated).sum())
    assert done >= 2 and len(sampler.reports) == done
    assert sampler.lineups == 3 + done  # the first line-ups, then one per restart
    envs.close()
    # in worker processes each holds its own copy (as SubprocVecEnv's workers do): the games go on
    envs = OpponentsVectorEnv("dragonstones", num_envs=2, workers=2, num_players=3, opponents=CountingSampler())
    envs.reset(seed=2)
    for t in range(50):
        envs.step(learner_actions(envs.action_masks(), t))
    envs.close()


class FirstLegal(Policy):
    """A deterministic policy object: the first legal action."""

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class FirstLegalInBatches(FirstLegal):
    """FirstLegal deciding in batches too, counting the rows of each batch it is asked."""

    def __init__(self):
        self.batches: list[int] = []

    def act_batch(self, observations, masks):
        self.batches.append(len(masks))
        return np.array([int(np.flatnonzero(m)[0]) for m in masks])


def test_batched_and_one_by_one_opponents_together_play_the_gym_envs_games(monkeypatch):
    """A policy that decides in batches (one shared object) beside rule bots loaded per table: the
    batching one is asked once a round for all the tables waiting on it, the heuristics of the tables
    together through act_each, the value bots at once, table by table; the games are SyncVectorEnv's,
    step for step."""
    batching = FirstLegalInBatches()
    groups: list[int] = []
    act_each = HeuristicPolicy.act_each

    def counted(policies, observations, masks):
        groups.append(len(policies))
        return act_each(policies, observations, masks)

    kwargs = {"num_players": 4, "opponents": [batching, "heuristic", "value"]}
    ours = OpponentsVectorEnv("dragonstones", num_envs=6, **kwargs)
    monkeypatch.setattr(HeuristicPolicy, "act_each", staticmethod(counted))
    a = play(ours, 120, seed=2)
    monkeypatch.undo()
    assert batching.batches and max(batching.batches) > 1
    assert groups and max(groups) > 1
    theirs = SyncVectorEnv([lambda: gym.make("Dragonstones-v0", **kwargs) for _ in range(6)],
                           autoreset_mode=AutoresetMode.SAME_STEP)
    b = play(theirs, 120, seed=2, masks_of=sync_masks)
    assert ends(a) >= 2
    assert data_equivalence(a, b, exact=True)


def test_a_custom_deck_and_a_policy_object_play_as_the_gym_env_plays_them():
    kwargs = {"num_players": 4, "opponents": FirstLegal(), "characters": str(EXAMPLE_DECK)}
    ours = OpponentsVectorEnv("dragonstones", num_envs=2, workers=2, **kwargs)
    theirs = SyncVectorEnv([lambda: gym.make("Dragonstones-v0", **kwargs) for _ in range(2)],
                           autoreset_mode=AutoresetMode.SAME_STEP)
    a, b = play(ours, 80, seed=3), play(theirs, 80, seed=3, masks_of=sync_masks)
    assert data_equivalence(a, b, exact=True)
    plain = play(OpponentsVectorEnv("dragonstones", num_envs=2, num_players=4, opponents=FirstLegal()), 80, seed=3)
    assert not data_equivalence(a, plain, exact=True)  # the deck changed the games


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"num_envs": 0}, "num_envs must be an int >= 1"),
    ({"num_envs": 2, "workers": 3}, r"workers must be an int in 1..num_envs \(2\)"),
    ({"num_envs": 2, "opponents": "no-such-bot"}, "no-such-bot"),
    ({"num_envs": 2, "render_mode": "ansi"}, "renders nothing"),
])
def test_bad_arguments_are_refused_with_what_is_allowed(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OpponentsVectorEnv("dragonstones", **kwargs)


def test_bad_calls_are_refused():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        game_of("chess")
    envs = OpponentsVectorEnv("dragonstones", num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, int))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        envs.step(np.zeros(3, int))
    with pytest.raises(ValueError, match="seed lists 1 seeds for 2 tables"):
        envs.reset(seed=[1])
    envs.close()


def test_a_worker_quiets_its_garbage_collector_without_turning_it_off():
    """What a worker process does to its collector (quiet_collector, run here and undone): still on,
    what was loaded frozen out of the collections, the youngest generation collected less often."""
    before = gc.get_threshold()
    try:
        quiet_collector()
        assert gc.isenabled()
        assert gc.get_threshold() == WORKER_GC_THRESHOLD and WORKER_GC_THRESHOLD[0] > before[0]
        assert gc.get_freeze_count() > 1000  # the modules and objects loaded so far
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_maskable_ppo_learns_through_the_sb3_adapter():
    """sb3-contrib's MaskablePPO, unchanged, on the adapter in two worker processes: it reads the
    masks with env_method("action_masks"); the tables raise on an illegal move, so every move it
    made was legal."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from dragonstones_env.play.sb3 import OpponentsVecEnv

    venv = OpponentsVecEnv("Dragonstones-v0", n_envs=4, seed=0, workers=2, num_players=4, opponents="heuristic",
                           illegal_action="raise")
    assert is_masking_supported(venv) and get_action_masks(venv).shape == (4, venv.action_space.n)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(256)
    assert model.num_timesteps >= 256
    assert venv.get_attr("timers")[0]["learner_steps"] >= 256
    venv.close()
