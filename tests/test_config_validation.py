"""Training configs from outside (issue #14): every bad value is a ConfigError naming its key,
and a run that cannot start leaves nothing that blocks the same command."""

from __future__ import annotations

import json

import pytest

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

import training.envs
from training.config import BOUNDS, ConfigError, load_config
from training.train import env_kwargs
from training.train import main as train
from training.train_rllib import load_config as load_rllib_config


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("ppo.learning_rate=.inf", "ppo.learning_rate"),
        ("ppo.learning_rate=.nan", "ppo.learning_rate"),
        ("ppo.clip_range=.inf", "ppo.clip_range"),
        ("ppo.ent_coef=.inf", "ppo.ent_coef"),
        ("ppo.vf_coef=.nan", "ppo.vf_coef"),
        ("ppo.gamma=.nan", "ppo.gamma"),
        ("reward_shaping=.inf", "reward_shaping"),
        ("reward_shaping=-.inf", "reward_shaping"),
        ("time_budget_s=.nan", "time_budget_s"),
        ("league.mix={heuristic: .inf}", "league.mix.heuristic"),
        ("league.mix={heuristic: .nan, random: 1}", "league.mix.heuristic"),
        ("sb3.device=quantum", "sb3.device"),
        ("sb3.device=cuda:x", "sb3.device"),
        ("sb3.n_envs=100000", "sb3.n_envs"),
        (f"sb3.n_envs={BOUNDS['sb3.n_envs'].high + 1}", "sb3.n_envs"),
        ("torch_threads=1000000", "torch_threads"),
        ("torch_threads=0", "torch_threads"),
        ("ppo.net_arch=[100000000]", "ppo.net_arch"),
        ("ppo.net_arch=[8192, 8192, 8192]", "ppo.net_arch"),
        ("ppo.net_arch=[]", "ppo.net_arch"),
        ("ppo.net_arch=[0]", "ppo.net_arch"),
        (f"ppo.net_arch={[8] * 17}", "ppo.net_arch"),
        ("total_timesteps=1e12", "total_timesteps"),
        ("total_timesteps=0", "total_timesteps"),
        ("sb3.n_steps=100000000", "sb3.n_steps"),
        ("eval.games=10000000", "eval.games"),
        ("league.max_snapshots=100000", "league.max_snapshots"),
        ("league.pool=[3]", "league.pool"),
        ("seed=1.5", "seed"),
        ("truncation_reward=0.5", "truncation_reward"),
        ("truncation_reward=-2", "truncation_reward"),
    ],
)
def test_bad_values_name_their_key(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config("configs/default.yaml", [override])


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("ppo.learning_rate=.inf", "ppo.learning_rate"),
        ("ppo.net_arch=[100000000]", "ppo.net_arch"),
        ("rllib.num_env_runners=100000", "rllib.num_env_runners"),
        ("torch_threads=1000000", "torch_threads"),
        ("rllib.vf_clip=.nan", "rllib.vf_clip"),
    ],
)
def test_the_rllib_config_has_the_same_checks(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_rllib_config("configs/rllib_ppo.yaml", [override])


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:1", "mps", "auto"])
def test_known_devices_are_accepted(device):
    assert load_config("configs/default.yaml", [f"sb3.device={device}"]).sb3.device == device


def test_numbers_written_with_an_exponent_are_numbers():
    # PyYAML reads 1e-4 (no dot) as a string; the --set help's own example must work
    cfg = load_config(None, ["ppo.learning_rate=1e-4", "ppo.ent_coef=5E-3", "total_timesteps=2e5"])
    assert (cfg.ppo.learning_rate, cfg.ppo.ent_coef, cfg.total_timesteps) == (1e-4, 5e-3, 200_000)
    assert load_rllib_config(None, ["ppo.learning_rate=3e-5"]).ppo.learning_rate == 3e-5
    for bad, key in [("ppo.learning_rate=1e", "ppo.learning_rate"), ("total_timesteps=1e-3", "total_timesteps")]:
        with pytest.raises(ConfigError, match=key):
            load_config(None, [bad])


def test_duplicate_yaml_keys_are_refused(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("ppo:\n  learning_rate: 0.001\n  learning_rate: 0.1\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'learning_rate' \(line 3\)"):
        load_config(path)
    path.write_text("seed: 1\nseed: 2\n")
    with pytest.raises(ConfigError, match="duplicate key 'seed'"):
        load_config(path)
    with pytest.raises(ConfigError, match="duplicate key 'random'"):
        load_config(None, ["league.mix={random: 1, random: 2}"])


@pytest.mark.parametrize(
    "override",
    ["seed=!!python/object/apply:os.system ['true']", "seed=!!binary AAAA", "seed=[", "seed={a: [}",
     "=1", "ppo..gamma=1", "nokey", "seed=&a [*a]"],
)
def test_every_set_error_is_a_config_error(override):
    with pytest.raises(ConfigError, match=r"--set|seed"):
        load_config(None, [override])


def test_a_config_file_that_is_not_a_mapping_is_refused(tmp_path):
    for text in ("[1, 2]", "3", "!!python/name:os.system", "a: [" * 3000):
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError, match="config"):
            load_config(path)


def test_the_script_reports_a_yaml_tag_as_a_config_error(capsys):
    assert train(["--set", "seed=!!python/object/apply:os.system ['true']"]) == 2
    assert "config error" in capsys.readouterr().err


def test_a_missing_pool_spec_stops_before_the_run_folder(tmp_path, capsys):
    runs = tmp_path / "runs"
    args = ["--set", f"runs_dir={runs}", "--set", "league.mix={pool: 1.0}", "--set", "league.pool=[no-such-policy]"]
    assert train(args) == 2
    err = capsys.readouterr().err
    assert "league.pool" in err and "no-such-policy" in err
    assert not runs.exists()
    assert train([*args[:4], "--set", "league.pool=[ds-heuristic]"]) == 2  # a policy of the other game
    assert not runs.exists()


def test_a_run_that_fails_to_start_leaves_nothing_behind(tmp_path, monkeypatch):
    runs = tmp_path / "runs"

    def broken(*args, **kwargs):
        raise RuntimeError("workers died")

    monkeypatch.setattr(training.envs, "make_vec_env", broken)
    args = ["--set", f"runs_dir={runs}", "--set", "run_name=fails",
            "--set", "sb3.n_envs=1", "--set", "sb3.batch_size=64"]
    for _ in range(2):  # the second run meets the same failure, not "exists: use --resume"
        with pytest.raises(RuntimeError, match="workers died"):
            train(args)
        assert not (runs / "fails").exists()


def test_finetune_needs_the_trust_switch(tmp_path, capsys):
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "model.zip").write_bytes(b"PK not read")
    (folder / "card.json").write_text(json.dumps({"algorithm": "MaskablePPO"}))
    runs = tmp_path / "runs"
    assert train(["--set", f"runs_dir={runs}", "--finetune", str(folder)]) == 2
    assert "--trust-model-zip" in capsys.readouterr().err
    assert train(["--set", f"runs_dir={runs}", "--finetune", str(tmp_path / "none"), "--trust-model-zip"]) == 2
    assert not runs.exists()


def test_the_truncation_reward_reaches_the_training_tables_only_when_set():
    assert "truncation_reward" not in env_kwargs(load_config("configs/default.yaml", []), None)
    cfg = load_config("configs/default.yaml", ["truncation_reward=-0.25"])
    assert env_kwargs(cfg, None)["truncation_reward"] == -0.25
