"""training.train end to end on a tiny budget: result, card, resume, league, config errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

from dragonstones_env import env, raw_env
from dragonstones_env.play.arena import play_game
from dragonstones_env.policies import RandomPolicy, load_policy
from training.config import ConfigError, load_config
from training.league import FolderVersions, League
from training.start import read_start
from training.train import main as train

TINY = {
    "total_timesteps": 1024,
    "progress_bar": False,
    "checkpoint_every": 512,
    "ppo": {"net_arch": [32]},
    "sb3": {"n_envs": 2, "n_steps": 256, "batch_size": 128, "n_epochs": 1},
    "league": {"mix": {"snapshot": 0.5, "random": 0.5}, "snapshot_every": 512},
    "eval": {"every": 512, "games": 3, "final_games": 3, "final_panel_games": 0},
}


def write_config(tmp_path, **changes):
    cfg = {**TINY, "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "policies"), **changes}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_training_writes_a_policy_that_plugs_in_as_an_opponent(tmp_path, capsys):
    watched = {"every": 512, "games": 3, "final_games": 3, "panel_every": 1024, "panel_games": 1,
               "final_panel_games": 1}
    assert train(["--config", str(write_config(tmp_path, run_name="tiny", eval=watched))]) == 0
    out = tmp_path / "policies" / "tiny"
    card = json.loads((out / "card.json").read_text())
    assert card["algorithm"] == "MaskablePPO" and card["steps"] >= 1024
    assert card["config"]["ppo"]["net_arch"] == [32]
    assert {"vs_heuristic", "vs_random"} <= set(card["evaluation"])
    copies = card["evaluation"]["copies"]  # the table of copies, where a stall would show
    assert (copies["players"], copies["games"]) == (4, 3) and 0 <= copies["truncated"] <= 3
    assert "machine" in card and "git_commit" in card and card["wall_time_s"] > 0
    runs = tmp_path / "runs" / "tiny"
    assert len(list((runs / "snapshots").iterdir())) == 2  # at 512 and 1024 steps
    rows = (runs / "eval.csv").read_text().splitlines()
    assert rows[0].endswith(",robustness") and len(rows) == 3  # header + 2 evaluations
    assert rows[1].endswith(",") and float(rows[2].split(",")[-1]) >= 0  # the panel ran at 1024 steps only
    panel = card["evaluation"]["panel"]
    assert panel["robustness"] == min(m["ratio"] for m in panel["mixes"])
    assert {m["opponent"] for m in panel["mixes"]} >= {"heuristic", "random"}
    printed = capsys.readouterr().out
    assert f"robustness: {panel['robustness']:.3f}" in printed
    assert f"4 copies of the learner left {copies['truncated']} of 3 games to the step limit" in printed
    assert (runs / "latest.json").is_file()  # the league's `latest` seats follow the learner
    policy = load_policy(str(out), seed=0)
    result = play_game(lambda: env(num_players=4), [policy, RandomPolicy(1), RandomPolicy(2), RandomPolicy(3)],
                       ["tiny", "r", "r", "r"], seed=0)
    assert result.winners or result.truncated


def test_resume_continues_from_the_checkpoint(tmp_path):
    config = write_config(tmp_path, run_name="again", sb3={**TINY["sb3"], "n_envs": 1})
    assert train(["--config", str(config)]) == 0
    assert train(["--config", str(config)]) == 2  # the run exists: refuse to overwrite it
    assert train(["--config", str(config), "--resume", "--set", "total_timesteps=2048"]) == 0
    card = json.loads((tmp_path / "policies" / "again" / "card.json").read_text())
    assert card["steps"] >= 2048
    # a finished run resumed with no step left writes its result again (nothing to learn)
    assert train(["--config", str(config), "--resume", "--set", "total_timesteps=1024"]) == 0
    assert json.loads((tmp_path / "policies" / "again" / "card.json").read_text())["steps"] == card["steps"]


def test_a_resumed_run_publishes_its_own_latest_weights(tmp_path):
    """A run stopped after its checkpoint leaves `latest` folders of later steps; resumed from the
    checkpoint, it writes an earlier step. That folder must be the one published (it was the first
    deleted when the two highest steps were kept: the league's latest seats pointed at nothing)."""
    from sb3_contrib import MaskablePPO

    from dragonstones_env.play.single_agent import make as make_gym
    from training.config import Config
    from training.train import RunFolders, refresh_latest

    cfg = Config()
    run = RunFolders(tmp_path / "run", tmp_path / "out")
    model = MaskablePPO("MlpPolicy", make_gym("dragonstones", num_players=3), n_steps=64, batch_size=32,
                        policy_kwargs={"net_arch": [8]}, device="cpu")
    for t in (300, 325):  # the stopped timeline
        refresh_latest(model, run, t, cfg)
    published = refresh_latest(model, run, 200, cfg)  # resumed from the checkpoint at 200
    pointer = json.loads((run.root / "latest.json").read_text())["path"]
    assert Path(pointer) == published and (published / "policy.npz").is_file()
    load_policy(pointer)  # what a league seat loads
    assert sorted(p.name for p in run.latest.iterdir()) == ["step-000000200", "step-000000325"]  # + the previous
    # resumed again from the same checkpoint: the published folder is not rewritten under a reader
    again = refresh_latest(model, run, 200, cfg)
    assert again.name == "step-000000200-1" and (published / "policy.npz").is_file()
    assert sorted(p.name for p in run.latest.iterdir()) == ["step-000000200", "step-000000200-1"]
    # a pointer to a folder that is gone (a run stopped by the old pruning) seats the zoo, not a crash
    versions = FolderVersions(str(run.root))
    assert versions.latest() == str(again)
    shutil.rmtree(again)
    assert versions.latest() is None


def test_finetune_trains_with_the_configs_ppo_settings(tmp_path, capsys):
    from sb3_contrib import MaskablePPO

    assert train(["--config", str(write_config(tmp_path, run_name="base"))]) == 0
    base = tmp_path / "policies" / "base"
    config = write_config(tmp_path, run_name="tuned")
    changes = ["--set", "ppo.learning_rate=1e-5", "--set", "sb3.n_epochs=2", "--set", "ppo.clip_range=0.1"]
    assert train(["--config", str(config), "--finetune", str(base), "--trust-model-zip", *changes]) == 0
    tuned = MaskablePPO.load(tmp_path / "policies" / "tuned" / "model.zip")  # made by this test
    assert tuned.learning_rate == 1e-5 and tuned.n_epochs == 2 and tuned.clip_range(1.0) == 0.1
    assert tuned.num_timesteps == 1024  # counted from 0, not from the base run's steps
    # a network of another shape is refused before anything is written
    capsys.readouterr()
    args = ["--config", str(write_config(tmp_path, run_name="wide")), "--finetune", str(base), "--trust-model-zip",
            "--set", "ppo.net_arch=[64]"]
    assert train(args) == 2
    err = capsys.readouterr().err
    assert "ppo.net_arch: " in err and "[64]" in err and "set ppo.net_arch=[32]" in err
    assert not (tmp_path / "runs" / "wide").exists()


def test_start_gives_a_new_run_a_checkpoints_actor_and_critic(tmp_path, capsys):
    """The config's ``start`` (training/start.py): the base run's policy.npz and value.npz, read as
    arrays, are the new model's weights; errors stop the run before its folder exists."""

    from dragonstones_env.policies.checkpoint import read_mlp, sb3_weights
    from training.config import PPO
    from training.envs import make_vec_env
    from training.start import apply_start, read_start
    from training.train import new_model

    short = {"sb3": {**TINY["sb3"], "n_envs": 1}, "total_timesteps": 256,
             "eval": {"every": 10**6, "games": 1, "final_games": 0}}
    assert train(["--config", str(write_config(tmp_path, run_name="base", **short))]) == 0
    base = tmp_path / "policies" / "base"
    assert (base / "value.npz").is_file()  # every full checkpoint carries its critic
    venv = make_vec_env("Dragonstones-v0", n_envs=1, seed=3, subproc=False, num_players=4, opponents="random")
    model = new_model(venv, PPO(net_arch=[32]), seed=3)
    before = sb3_weights(model, "critic")[0]
    info = apply_start(model, read_start(str(base), "dragonstones_v1"))
    assert info["critic"] and info["folder"] == str(base)
    for part, file, outputs in (("actor", "policy.npz", raw_env.NUM_ACTIONS), ("critic", "value.npz", 1)):
        mine, theirs = sb3_weights(model, part)[0], read_mlp(base / file, raw_env.OBS_SIZE, outputs)[0]
        assert all(np.array_equal(w, v) and np.array_equal(b, c) for (w, b), (v, c) in zip(mine, theirs, strict=True))
    assert not np.array_equal(before[0][0], sb3_weights(model, "critic")[0][0][0])

    # end to end, and the card says where the run started
    assert train(["--config", str(write_config(tmp_path, run_name="started", start=str(base), **short))]) == 0
    card = json.loads((tmp_path / "policies" / "started" / "card.json").read_text())
    assert card["start"]["folder"] == str(base) and card["start"]["critic"] is True
    assert card["start"]["env_options"]["observation_mode"] == "recall"  # what the start learnt to see
    printed = capsys.readouterr().out
    assert "starting from" in printed and "note:" not in printed
    # a start that learnt in the other observation mode (F43) is taken, and the run says so
    assert train(["--config", str(write_config(tmp_path, run_name="blind", start=str(base),
                                               observation_mode="table", **short))]) == 0
    assert f"note: {base} learnt with env options {{'observation_mode': 'recall'" in capsys.readouterr().out

    # without value.npz: the actor only (a fresh critic), and the card says so
    (base / "value.npz").unlink()
    critic = sb3_weights(model, "critic")[0]
    assert apply_start(model, read_start(str(base), "dragonstones_v1"))["critic"] is False
    assert all(np.array_equal(w, v) for (w, _), (v, _) in zip(critic, sb3_weights(model, "critic")[0], strict=True))
    venv.close()

    capsys.readouterr()
    cases = [({"run_name": "wide", "ppo": {**TINY["ppo"], "net_arch": [64]}}, "set ppo.net_arch=[32]"),
             ({"run_name": "nowhere", "start": str(tmp_path / "nowhere")}, "is not a folder")]
    for changes, message in cases:
        assert train(["--config", str(write_config(tmp_path, **{"start": str(base), **changes}))]) == 2
        err = capsys.readouterr().err
        assert "start" in err and message in err, err
        assert not (tmp_path / "runs" / changes["run_name"]).exists()
    assert train(["--config", str(write_config(tmp_path, run_name="tuned", start=str(base))), "--finetune",
                  str(base), "--trust-model-zip"]) == 2
    assert "--finetune" in capsys.readouterr().err

    # a start and a teacher: the start, then fitted to the teacher's decisions (expert iteration)
    both = {"run_name": "both", "start": str(base), "imitate": {"teacher": "heuristic", "games": 2, "epochs": 1}}
    assert train(["--config", str(write_config(tmp_path, **{**short, **both}))]) == 0
    card = json.loads((tmp_path / "policies" / "both" / "card.json").read_text())
    assert card["start"]["folder"] == str(base) and card["imitation"]["teacher"] == "heuristic"
    assert card["imitation"]["games"] == 2 and card["imitation"]["decisions"] > 0


def test_drachenschatten_trains_through_the_config(tmp_path):
    config = write_config(tmp_path, run_name="ds", game="drachenschatten", num_players=2,
                          sb3={**TINY["sb3"], "n_envs": 1},
                          league={"mix": {"random": 1.0}}, eval={"every": 512, "games": 2, "players": 2,
                                                                  "final_games": 2})
    assert train(["--config", str(config)]) == 0
    card = json.loads((tmp_path / "policies" / "ds" / "card.json").read_text())
    assert card["env"] == "drachenschatten_v1"
    from dragonstones_env import drachenschatten

    policy = load_policy(str(tmp_path / "policies" / "ds"))
    result = play_game(lambda: drachenschatten.env(num_players=2), [policy, RandomPolicy(1)], ["ds", "r"], seed=0)
    assert result.steps > 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("learning_rat=0.1", r"unknown key.*'learning_rat'"),
        ("ppo.learning_rat=0.1", r"unknown key.*'ppo\.learning_rat'"),
        ("sb3.n_epochs=two", r"sb3\.n_epochs: expected int"),
        ("ppo.gamma=1.5", r"ppo\.gamma"),
        ("num_players=7", r"num_players: must be an integer in \[2, 6\], got 7"),  # the bounds table
        ("num_players=2", r"num_players must be an integer from 3 to 6 for Fist of Dragonstones, got 2"),  # the game's
        ("num_players=[3, 9]", r"num_players"),
        ("league.mix={snapshot: -1}", r"league\.mix"),
        ("league.mix={champions: 1}", r"league\.mix"),
        ("sb3.n_envs=0", r"sb3\.n_envs"),
        ("eval.players=2", r"eval\.players must be an integer from 3 to 6"),
        ("game=chess", r"game"),
        ("total_timesteps=true", r"total_timesteps"),
    ],
)
def test_config_errors_name_the_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config("configs/default.yaml", [override])


def test_config_error_stops_the_script_before_training(tmp_path, capsys):
    assert train(["--config", "configs/default.yaml", "--set", "ppo.clip=0.1"]) == 2
    assert "ppo.clip" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_default_config_is_valid_and_every_key_is_known():
    cfg = load_config("configs/default.yaml")
    assert cfg.total_timesteps > 0 and cfg.league.mix["latest"] > 0 and cfg.league.mix["zoo"] > 0


@pytest.mark.parametrize("path", sorted(str(p) for p in Path("configs").glob("*.yaml") if "rllib" not in p.name))
def test_every_shipped_config_loads(path):
    # the experiments' configs are documented results: each must still run as written
    cfg = load_config(path)
    assert cfg.total_timesteps > 0
    for spec in cfg.league.pool:  # a pool member is a committed folder (e.g. an earlier champion's exploiter)
        assert load_policy(spec, seed=0) is not None
    if cfg.start:  # so is a start (make train's clone)
        assert read_start(cfg.start, cfg.env_name)["critic"] is not None


def test_the_shipped_champion_and_clone_are_starts_with_their_critics():
    # `start: policies/champion` fine-tunes the champion without unpickling its run state
    for folder in ("policies/champion", "policies/starts/heuristic-clone"):
        start = read_start(folder, "dragonstones_v1")
        weights, _ = start["critic"]
        assert weights[0][0].shape[0] == raw_env.OBS_SIZE and weights[-1][0].shape[1] == 1
        assert [w.shape[1] for w, _ in weights[:-1]] == [w.shape[1] for w, _ in start["actor"][0][:-1]]


def test_league_draws_each_kind_and_falls_back_to_the_heuristic(tmp_path):
    league = League(tmp_path / "none-yet", {"snapshot": 1.0, "random": 0.0})
    rng = np.random.default_rng(0)
    lineup = league.sample_lineup(rng, 3)
    assert all(type(p).__name__ == "HeuristicPolicy" for p in lineup)  # no snapshot yet
    mixed = League(tmp_path / "none-yet", {"random": 1.0, "heuristic": 1.0})
    kinds = {type(p).__name__ for _ in range(20) for p in mixed.sample_lineup(rng, 3)}
    assert kinds == {"RandomPolicy", "HeuristicPolicy"}
    with pytest.raises(ValueError, match="pool"):
        League(tmp_path, {"pool": 1.0})


def test_time_budget_stops_training_early(tmp_path):
    config = write_config(tmp_path, run_name="budget", sb3={**TINY["sb3"], "n_envs": 1},
                          total_timesteps=1_000_000, time_budget_s=0.5,
                          eval={"every": 10**6, "games": 1, "final_games": 0, "final_panel_games": 0})
    assert train(["--config", str(config)]) == 0
    card = json.loads((tmp_path / "policies" / "budget" / "card.json").read_text())
    assert 0 < card["steps"] < 1_000_000


def test_a_table_mode_run_is_evaluated_and_shipped_seeing_what_it_learnt_from(tmp_path, monkeypatch):
    """Evaluations play at recall tables: a run in Fist's table mode (F43) must hide the others' coins
    from its learner there, and every card it writes says so, for load_policy to do the same."""
    from dragonstones_env.games.dragonstones.observation import hide_coins
    from training import evals

    seen = []

    def watched(match):
        def play(make, *policies, **kwargs):
            seen.extend(p.view for p in (policies[0] if isinstance(policies[0], list) else [policies[0]]))
            return match(make, *policies, **kwargs)
        return play

    monkeypatch.setattr(evals, "seat_rotated_match", watched(evals.seat_rotated_match))
    monkeypatch.setattr(evals, "copies_match", watched(evals.copies_match))
    assert train(["--config", str(write_config(tmp_path, run_name="blind", observation_mode="table"))]) == 0
    assert len(seen) >= 3 + 4 and all(view is hide_coins for view in seen)  # the heroes and the 4 copies
    out, runs = tmp_path / "policies" / "blind", tmp_path / "runs" / "blind"
    for folder in (out, *(runs / "snapshots").iterdir()):
        assert json.loads((folder / "card.json").read_text())["env_options"]["observation_mode"] == "table"
        assert load_policy(str(folder)).view is hide_coins
    recall = tmp_path / "policies" / "sighted"
    assert train(["--config", str(write_config(tmp_path, run_name="sighted", total_timesteps=256,
                                               eval={"every": 10**6, "games": 1, "final_games": 0}))]) == 0
    assert json.loads((recall / "card.json").read_text())["env_options"]["observation_mode"] == "recall"
    assert load_policy(str(recall)).view is None
