"""The one training league (training/league.py) of both trainers, without Ray: kinds drawn in
proportion, whole tables of one kind, PFSP, report() statistics, the fallbacks before the
learner's weights exist, bad values, and the RLlib env's use of it (training/rllib_env.py
imports without Ray)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dragonstones_env.policies import zoo
from dragonstones_env.policies.checkpoint import CheckpointPolicy
from training.config import ConfigError
from training.config import load_config as load_sb3_config
from training.league import LEARNER, FolderVersions, League, PushedVersions, publish_latest
from training.rllib_env import DragonstonesMultiAgentEnv, make_league

# the RLlib trainer's module draws the final evaluation's bar with rich (the train and rllib extras)
pytest.importorskip("rich", reason="needs rich (the train or rllib extra): pip install -e '.[train]'")

from training.train_rllib import env_config
from training.train_rllib import load_config as load_rllib_config

TINY_ACTOR = [(np.zeros((3, 2), np.float32), np.zeros(2, np.float32))]  # never asked to act here


def snapshot(spec: str) -> dict:
    return {"spec": spec, "weights": TINY_ACTOR, "activation": "tanh"}


def pushed_league(mix: dict, *snapshots: str, **kwargs) -> League:
    versions = PushedVersions(max_snapshots=kwargs.get("max_snapshots", 8))
    for spec in snapshots:
        versions.add(snapshot(spec))
    return League(None, mix, versions=versions, **kwargs)


def write_snapshot(run_dir, name: str) -> str:
    folder = run_dir / "snapshots" / name
    folder.mkdir(parents=True)
    (folder / "card.json").write_text("{}")  # enough to be listed; sample_specs reads nothing else
    return str(folder)


# ---------------------------------------------------------------------------- sampling
def test_kinds_are_drawn_in_proportion_to_the_mix(tmp_path):
    league = League(tmp_path, {"random": 0.2, "heuristic": 0.5, "zoo": 0.3}, zoo=["z1"], heuristic="h")
    rng = np.random.default_rng(0)
    counts = Counter(spec for _ in range(2000) for spec in league.sample_specs(rng, 3))
    n = sum(counts.values())
    # zoo draws z1 or the heuristic with equal chance: h = 0.5 + 0.3 / 2, z1 = 0.15
    assert counts["random"] / n == pytest.approx(0.2, abs=0.02)
    assert counts["h"] / n == pytest.approx(0.65, abs=0.02)
    assert counts["z1"] / n == pytest.approx(0.15, abs=0.02)


@pytest.mark.parametrize("table", [0.0, 0.5, 1.0])
def test_the_table_share_seats_whole_tables_of_one_kind(tmp_path, table):
    league = League(tmp_path, {"random": 0.5, "zoo": 0.5}, zoo=["z1", "z2", "z3"], heuristic="h", table=table)
    rng = np.random.default_rng(1)
    lineups = [league.sample_specs(rng, 3) for _ in range(3000)]
    whole = np.mean([len(set(specs)) == 1 for specs in lineups])
    # a whole table: drawn as one (table), or by chance per seat: all random (1/8) or all the
    # same zoo bot (1/8 x 3 bots x (1/4)^3 each)
    chance = 0.5**3 + 0.5**3 * 4 * 0.25**3
    assert whole == pytest.approx(table + (1 - table) * chance, abs=0.03)
    if table == 1.0:  # a zoo table is one bot in every seat, as the evaluation panel seats them
        assert all(len(set(specs)) == 1 for specs in lineups)


def write_latest(run_dir, name: str) -> str:
    """A `latest` folder (a card is enough to be seated) and the pointer to it."""
    folder = run_dir / "latest" / name
    folder.mkdir(parents=True)
    (folder / "card.json").write_text("{}")
    publish_latest(run_dir, folder)
    return str(folder)


def test_mixed_tables_are_the_panels_mixes_seen_from_one_copy(tmp_path):
    now = write_latest(tmp_path, "now")
    league = League(tmp_path, {"random": 1.0}, pool=["exploiter"], zoo=["z1"], heuristic="h", table=0.2,
                    mixed=0.5)
    rng = np.random.default_rng(3)
    lineups = [league.sample_specs(rng, 3) for _ in range(4000)]
    mixed = [specs for specs in lineups if now in specs]
    # mix["latest"] is 0, so every copy of the learner comes from a mixed table: half the tables
    assert len(mixed) / len(lineups) == pytest.approx(0.5, abs=0.03)
    for specs in mixed:  # 1..n-2 other copies, and one bot (zoo, heuristic or pool) everywhere else
        bots = [s for s in specs if s != now]
        assert 1 <= len(bots) <= 2 and len(set(bots)) == 1 and bots[0] in {"z1", "h", "exploiter"}
    copies = Counter(specs.count(now) for specs in mixed)
    assert copies[1] / len(mixed) == pytest.approx(0.5, abs=0.04)  # other copies drawn uniformly in 1..2
    assert Counter(s for specs in mixed for s in specs if s != now).keys() == {"z1", "h", "exploiter"}
    seatings = {tuple(s == now for s in specs) for specs in mixed}
    assert len(seatings) == 6  # seats shuffled: each of the 3 + 3 ways to seat 1 or 2 copies


def test_mixed_tables_wait_for_the_learners_weights(tmp_path):
    league = League(tmp_path, {"random": 1.0}, zoo=["z1"], heuristic="h", mixed=1.0)
    rng = np.random.default_rng(4)
    assert all(set(league.sample_specs(rng, 3)) == {"random"} for _ in range(50))


def test_pfsp_favours_the_snapshots_the_learner_beats_least():
    league = pushed_league({"snapshot": 1.0}, "beaten", "even", "unbeaten")
    rng = np.random.default_rng(2)
    for spec, won, games in (("beaten", 18, 20), ("even", 10, 20), ("unbeaten", 1, 20)):
        league.results[spec] = [float(won), float(games)]
    w = league.pfsp_weights(["beaten", "even", "unbeaten"])
    assert w[0] < w[1] < w[2] and w.sum() == pytest.approx(1.0)
    counts = Counter(spec for _ in range(1500) for spec in league.sample_specs(rng, 1))
    assert counts["unbeaten"] > 2 * counts["even"] > 4 * counts["beaten"]
    flat = pushed_league({"snapshot": 1.0}, "a", "b", pfsp_power=0.0)  # power 0: uniform
    flat.results["a"] = [20.0, 20.0]
    np.testing.assert_allclose(flat.pfsp_weights(["a", "b"]), [0.5, 0.5])


def test_report_counts_each_snapshot_at_the_table_once_per_game():
    league = pushed_league({"snapshot": 0.5, "random": 0.5}, "s1", "s2")
    rng = np.random.default_rng(3)
    expected: dict[str, list[float]] = {}
    for game in range(60):
        lineup = league.sample_lineup(rng, 3)
        assert all(isinstance(p, CheckpointPolicy) or type(p).__name__ == "RandomPolicy" for p in lineup)
        won = game % 3 == 0
        league.report(won)
        for spec in {p.spec for p in lineup if isinstance(p, CheckpointPolicy)}:
            stats = expected.setdefault(spec, [0.0, 0.0])
            stats[0] += won
            stats[1] += 1
    assert league.results == expected and set(expected) == {"s1", "s2"}
    assert "random" not in league.results  # only snapshots have statistics


def test_folder_versions_fall_back_before_any_weights_exist(tmp_path):
    league = League(tmp_path, {"latest": 0.5, "snapshot": 0.5}, zoo=["z1"], heuristic="h")
    rng = np.random.default_rng(4)
    assert league.latest() is None and league.snapshots() == []
    # no weights yet: latest and snapshot seats go to the zoo
    assert {s for _ in range(50) for s in league.sample_specs(rng, 3)} == {"z1", "h"}
    publish_latest(tmp_path, tmp_path / "latest" / "step-0")
    assert league.latest() is None  # a pointer to a folder that is gone (a stopped run's): still the zoo
    latest = write_latest(tmp_path, "step-1")
    # latest weights but no snapshot yet: snapshot seats go to latest
    assert {s for _ in range(50) for s in league.sample_specs(rng, 3)} == {latest}
    snap = write_snapshot(tmp_path, "step-000000100")
    specs = {s for _ in range(50) for s in league.sample_specs(rng, 3)}
    assert specs == {latest, snap}
    assert league.versions.is_snapshot(snap) and not league.versions.is_snapshot(league.latest())


def test_pushed_versions_latest_is_the_learner_and_snapshots_fall_back_to_it():
    league = pushed_league({"snapshot": 1.0})
    rng = np.random.default_rng(5)
    assert league.latest() == LEARNER and league.snapshots() == []
    assert league.sample_lineup(rng, 3) == [None, None, None]  # the learner plays every seat
    league.report(True)
    assert league.results == {}
    league.versions.add(snapshot("s1"))
    assert all(isinstance(p, CheckpointPolicy) for p in league.sample_lineup(rng, 3))


def test_pushed_versions_keep_the_newest_snapshots():
    versions = PushedVersions(max_snapshots=2)
    for spec in ("a", "b", "c"):
        versions.add(snapshot(spec))
    assert versions.snapshots() == ["b", "c"]
    versions.add(snapshot("b"))  # pushed again (a resumed run): now the newest
    assert versions.snapshots() == ["c", "b"] and not versions.is_snapshot("a")


def test_pool_checkpoints_are_played_from_the_weights_the_driver_sent():
    versions = PushedVersions(provided={"some/folder": snapshot("some/folder")})
    league = League(None, {"pool": 1.0}, pool=["some/folder"], versions=versions)
    league.check()  # builds from the weights: no file is read
    (policy,) = league.sample_lineup(np.random.default_rng(6), 1)
    assert isinstance(policy, CheckpointPolicy) and policy.spec == "some/folder"


# ---------------------------------------------------------------------------- loading
def test_every_seat_the_league_deals_is_loaded_once(monkeypatch):
    # A cache smaller than the league reloads a checkpoint for many episodes (v5's run fell from
    # 830 to 580 learner steps/s as its snapshots passed the old fixed cache of 8).
    names = [f"snap-{i:02d}" for i in range(20)]
    league = pushed_league({"snapshot": 0.6, "zoo": 0.3, "random": 0.1}, *names, max_snapshots=20,
                           zoo=zoo("dragonstones"), pfsp_power=0.0)
    builds = Counter()
    build = league.versions.build
    monkeypatch.setattr(league.versions, "build", lambda spec, seed: builds.update([spec]) or build(spec, seed))
    rng = np.random.default_rng(0)
    for _ in range(500):
        league.sample_lineup(rng, 3)
    assert len(builds) == 20 + len(league.zoo) + 1 and set(builds.values()) == {1}


def test_league_and_rllib_league_size_their_cache_to_the_league():
    league = make_league("dragonstones", {"mix": {"snapshot": 1.0}, "max_snapshots": 15})
    assert league.cache_size >= 15 + len(league.zoo) + 2  # snapshots, zoo, latest, random
    assert League(None, {"random": 1.0}, versions=PushedVersions(), cache_size=3).cache_size == 3


# ---------------------------------------------------------------------------- bad values
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mix": {"boss": 1.0}}, r"unknown league kind\(s\) \['boss'\]"),
    ({"mix": {"self": 1.0}}, r"unknown league kind"),
    ({"mix": {"random": -1.0, "heuristic": 2.0}}, r"finite and >= 0"),
    ({"mix": {"random": 0.0}}, r"positive sum"),
    ({"mix": {"random": float("nan")}}, r"finite"),
    ({"mix": {"random": float("inf")}}, r"finite"),
    ({"mix": {"pool": 1.0}}, r"'pool' > 0 but the pool lists no policy"),
    ({"mix": {"random": 1.0}, "table": 1.5}, r"table share must be in 0\.\.1, got 1\.5"),
    ({"mix": {"random": 1.0}, "table": -0.1}, r"table share"),
    ({"mix": {"random": 1.0}, "table": float("nan")}, r"table share"),
    ({"mix": {"random": 1.0}, "pfsp_power": -1.0}, r"pfsp_power"),
    ({"mix": {"random": 1.0}, "mixed": -0.1}, r"mixed share must be in 0\.\.1"),
    ({"mix": {"random": 1.0}, "table": 0.6, "mixed": 0.5}, r"table \+ mixed <= 1, got mixed=0\.5, table=0\.6"),
])
def test_bad_league_values_are_refused_with_a_clear_error(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        League(tmp_path, **kwargs)


@pytest.mark.parametrize("load", [load_sb3_config, load_rllib_config], ids=["sb3", "rllib"])
@pytest.mark.parametrize(("override", "key"), [
    ("league.mix={boss: 1}", r"league\.mix"),
    ("league.mix={self: 1}", r"league\.mix"),
    ("league.mix={random: 0}", r"league\.mix"),
    ("league.table=1.5", r"league\.table"),
    ("league.mixed=0.8", r"league\.mixed"),
    ("league.pfsp_power=-1", r"league\.pfsp_power"),
    ("league.latest_every=0", r"league\.latest_every"),
    ("league.mix={pool: 1}", r"league\.pool"),
])
def test_both_trainers_check_the_league_section_alike(load, override, key):
    with pytest.raises(ConfigError, match=key):
        load(None, [override])


def test_one_league_section_for_both_trainers():
    section = ["league.mix={latest: 0.5, snapshot: 0.2, zoo: 0.2, random: 0.1}", "league.table=0.4",
               "league.pfsp_power=3", "league.max_snapshots=5"]
    sb3, rllib = load_sb3_config(None, section), load_rllib_config(None, section)
    assert type(sb3.league) is type(rllib.league) and sb3.league == rllib.league
    # the shipped RLlib config uses the shared keys
    shipped = load_rllib_config("configs/rllib_ppo.yaml")
    assert shipped.league.mix["latest"] > 0 and 0 <= shipped.league.table <= 1


# ---------------------------------------------------------------------------- the RLlib env's league
def test_rllib_env_seats_one_learner_and_the_league_fills_the_rest():
    cfg = load_rllib_config(None, ["league.mix={latest: 0.5, random: 0.5}", "league.table=0.0"])
    env = DragonstonesMultiAgentEnv({**env_config(cfg), "num_players": 4})
    assert isinstance(env.league, League) and isinstance(env.league.versions, PushedVersions)
    assert env.league.zoo == [*zoo("dragonstones"), "heuristic"] and env.league.heuristic == "heuristic"
    learners = Counter()
    for g in range(200):
        env.reset(seed=g)
        learners[sum(p is None for p in env.seat_policies)] += 1
        assert set(env.agents) == {f"player_{i}" for i, p in enumerate(env.seat_policies) if p is None}
    # one seat is always the learner's; each of the other 3 is `latest` (the learner) half the time
    assert min(learners) == 1 and max(learners) == 4
    assert learners[1] / 200 == pytest.approx(1 / 8, abs=0.06)
    ds = make_league("drachenschatten", {"mix": {"zoo": 1.0}})
    assert ds.heuristic == "ds-heuristic" and "ds-heuristic" in ds.zoo


def test_rllib_env_reports_each_game_to_its_league():
    env = DragonstonesMultiAgentEnv({"num_players": 3, "league": {"mix": {"snapshot": 1.0}}})
    size, actions = env.observation_spaces["player_0"]["observation"].shape[0], env.action_spaces["player_0"].n
    # zero weights: uniform over the legal actions, so the snapshot seats play real games
    env.add_snapshot({"spec": "snap", "weights": [(np.zeros((size, actions)), np.zeros(actions))],
                      "activation": "tanh"})
    reports: list[bool] = []
    env.league.report = reports.append  # what the env tells its league at the end of each game
    rng = np.random.default_rng(7)
    for g in range(3):
        obs, _ = env.reset(seed=g)
        while True:
            ((agent, o),) = obs.items()
            obs, _, terms, truncs, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
            if terms["__all__"] or truncs["__all__"]:
                winners = env.aec._winners()
                assert reports[-1] == any(env.seat_policies[s] is None for s in winners)
                break
    assert len(reports) == 3


def test_folder_versions_are_the_default(tmp_path):
    league = League(tmp_path, {"random": 1.0})
    assert isinstance(league.versions, FolderVersions) and league.versions.run_dir == str(tmp_path)
    with pytest.raises(ValueError, match="run folder"):
        League(None, {"random": 1.0})
