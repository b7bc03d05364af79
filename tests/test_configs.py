"""Configs that compose (``base:``) and the step that ships a run (``training.promote``).

Neither needs torch: a config is read and checked with PyYAML and the game registry, and a
checkpoint is promoted with numpy.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from dragonstones_env import raw_env
from dragonstones_env.policies import PolicyError, load_policy, mixture
from dragonstones_env.policies.checkpoint import expected_layout, save_mlp
from tests.checkpoints import write_checkpoint
from training.config import MAX_BASE_DEPTH, ConfigError, MovedKeyWarning, load_config, merge, read_config
from training.promote import main as promote_main
from training.promote import promote

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _write(folder: Path, name: str, data: dict) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_merge_overrides_keys_and_merges_sections():
    base = {"a": 1, "ppo": {"n_steps": 8, "gamma": 0.9}, "league": {"mix": {"random": 1.0, "zoo": 1.0}}}
    over = {"a": 2, "ppo": {"n_steps": 16}, "league": {"mix": {"zoo": 0.0}}, "num_players": [3, 4]}
    assert merge(base, over) == {"a": 2, "ppo": {"n_steps": 16, "gamma": 0.9},
                                 "league": {"mix": {"random": 1.0, "zoo": 0.0}}, "num_players": [3, 4]}
    assert base["ppo"] == {"n_steps": 8, "gamma": 0.9}  # the base is not changed


def test_a_config_on_a_base_takes_its_keys_and_overrides_some(tmp_path):
    (tmp_path / "sub").mkdir()  # a base is in its config's folder or below it (issue #49)
    _write(tmp_path / "sub", "parent.yaml", {"run_name": "parent", "seed": 3,
                                             "sb3": {"n_steps": 64, "batch_size": 32}})
    child = _write(tmp_path, "child.yaml", {"base": "sub/parent.yaml", "run_name": "child",
                                            "sb3": {"batch_size": 16}})
    cfg = load_config(child, ["sb3.n_steps=128"])
    assert (cfg.run_name, cfg.seed, cfg.sb3.n_steps, cfg.sb3.batch_size) == ("child", 3, 128, 16)


def test_a_set_mapping_merges_as_on_a_base():
    """--set 'league.mix={...}' changes the shares it names and keeps the others (the default's
    latest and snapshot shares come from configs/champion.yaml, its base)."""
    cfg = load_config(CONFIGS / "default.yaml", ["league.mix={zoo: 0.2, pool: 0.1}", "league.pool=[value]"])
    assert cfg.league.mix == {"latest": 0.35, "snapshot": 0.25, "zoo": 0.2, "random": 0.1, "pool": 0.1}
    assert load_config(None, ["num_players=[3, 4]", "num_players=[5]"]).num_players == [5]  # a list replaces


@pytest.mark.parametrize(("base", "message"), [
    (5, "base: expected the path of another config"),
    ("", "base: expected the path of another config"),
    ("missing.yaml", "cannot read config"),
    ("self.yaml", "makes a cycle"),
])
def test_a_bad_base_is_refused_naming_it(tmp_path, base, message):
    path = _write(tmp_path, "self.yaml", {"base": base, "run_name": "x"})
    with pytest.raises(ConfigError, match=message):
        read_config(path)


def test_a_cycle_and_a_chain_too_deep_are_refused(tmp_path):
    _write(tmp_path, "a.yaml", {"base": "b.yaml"})
    _write(tmp_path, "b.yaml", {"base": "a.yaml"})
    with pytest.raises(ConfigError, match="makes a cycle"):
        read_config(tmp_path / "a.yaml")
    for i in range(MAX_BASE_DEPTH + 2):
        _write(tmp_path, f"c{i}.yaml", {"base": f"c{i + 1}.yaml"} if i <= MAX_BASE_DEPTH else {"seed": 1})
    with pytest.raises(ConfigError, match="deep"):
        read_config(tmp_path / "c0.yaml")


@pytest.mark.parametrize("path", sorted(p.name for p in CONFIGS.glob("*.yaml") if "rllib" not in p.name))
def test_every_shipped_config_differs_from_its_base_only_in_what_it_is_about(path):
    """A config on a base restates none of the base's values: each key it sets changes something."""
    raw = yaml.safe_load((CONFIGS / path).read_text())
    if "base" not in raw:
        return
    base = read_config(CONFIGS / raw["base"])

    def restated(over: dict, under: dict, prefix: str = "") -> list[str]:
        out = []
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(under.get(key), dict):
                out += restated(value, under[key], f"{prefix}{key}.")
            elif key in under and under[key] == value and key != "run_name":
                out.append(prefix + key)
        return out

    assert restated({k: v for k, v in raw.items() if k != "base"}, base) == []
    assert load_config(CONFIGS / path).run_name == raw.get("run_name", base.get("run_name"))


def test_the_champion_recipe_names_its_start_as_a_key():
    """What the champion starts from is a key (``start``), not a comment."""
    assert load_config(CONFIGS / "champion.yaml").start == "policies/starts/heuristic-clone"
    assert load_config(CONFIGS / "default.yaml").start == "policies/starts/heuristic-clone"
    assert load_config(CONFIGS / "champion-v2.yaml").imitate.teacher == "heuristic"


# ---------------------------------------------------------------------------- promote
def _checkpoint(folder: Path) -> Path:
    """A run's result: what plays, and the run state promote leaves behind."""
    write_checkpoint(folder, seed=7, hidden=8)
    (folder / "model.zip").write_bytes(b"run state: never shipped")
    return folder


def test_promote_ships_what_plays_and_leaves_the_run_state(tmp_path):
    source = _checkpoint(tmp_path / "runs" / "policies" / "mine")
    written = promote(source, tmp_path / "policies" / "mine")
    assert sorted(p.name for p in written) == ["card.json", "policy.npz"]
    assert not (tmp_path / "policies" / "mine" / "model.zip").exists()
    assert load_policy(str(tmp_path / "policies" / "mine")).act is not None
    with pytest.raises(PolicyError, match="exists: pass --force"):
        promote(source, tmp_path / "policies" / "mine")
    assert promote(source, tmp_path / "policies" / "mine", force=True)


def test_promote_half_stores_float16_that_plays_as_the_float32_weights_do(tmp_path):
    source = _checkpoint(tmp_path / "runs" / "mine")
    save_mlp(source / "value.npz", [(np.full((raw_env.OBS_SIZE, 4), 0.01, np.float32), np.zeros(4, np.float32)),
                                    (np.ones((4, 1), np.float32), np.zeros(1, np.float32))], "tanh")
    promote(source, tmp_path / "full")
    promote(source, tmp_path / "half", half=True)
    for name in ("policy.npz", "value.npz"):
        with np.load(tmp_path / "half" / name) as data:
            assert {data[k].dtype for k in data.files if k[0] in "wb"} == {np.dtype(np.float16)}
    assert (tmp_path / "half" / "policy.npz").stat().st_size < 0.6 * (tmp_path / "full" / "policy.npz").stat().st_size
    full, half = (load_policy(str(tmp_path / f), seed=0) for f in ("full", "half"))
    env = raw_env(num_players=4)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    probs = [p.probabilities(obs["observation"][None], obs["action_mask"][None]) for p in (full, half)]
    assert np.abs(probs[0] - probs[1]).max() < 1e-2
    assert half.value(obs) == pytest.approx(full.value(obs), abs=1e-3)


def test_promote_checks_the_size_of_what_it_writes(tmp_path):
    source = write_checkpoint(tmp_path / "runs" / "wide", seed=1, hidden=700)  # 1.9 M weights: 7 MB as float32
    with pytest.raises(PolicyError, match="over the 5,242,880-byte limit"):
        promote(source, tmp_path / "full")
    assert not (tmp_path / "full").exists()
    promote(source, tmp_path / "half", half=True)  # 3.6 MB as float16
    assert (tmp_path / "half" / "policy.npz").stat().st_size < 5 * 1024 * 1024


def test_promote_half_refuses_weights_beyond_float16(tmp_path):
    source = _checkpoint(tmp_path / "runs" / "big")
    with np.load(source / "policy.npz") as data:
        weights = [(data[f"w{i}"], data[f"b{i}"]) for i in range(int(data["layers"]))]
    weights[0][0][0, 0] = 1e6
    save_mlp(source / "policy.npz", weights, "tanh")
    with pytest.raises(PolicyError, match="float16"):
        promote(source, tmp_path / "dest", half=True)
    assert not (tmp_path / "dest").exists()


def test_promote_ships_a_mixture_with_the_member_folders_inside_it(tmp_path):
    source = tmp_path / "runs" / "policies" / "mix"
    _checkpoint(source / "members" / "0-net")
    layout = expected_layout("dragonstones_v1")
    mixture.write(source, [("members/0-net", 0.5), ("value", 0.5)], "dragonstones_v1", layout)
    written = promote(source, tmp_path / "policies" / "mix")
    assert sorted(str(p.relative_to(tmp_path / "policies" / "mix")) for p in written) == \
        ["card.json", "members/0-net/card.json", "members/0-net/policy.npz"]  # no model.zip
    assert load_policy(str(tmp_path / "policies" / "mix")).names == ["members/0-net", "value"]
    mixture.write(source, [("members/0-net", 0.5), ("no-such-bot", 0.5)], "dragonstones_v1", layout)
    with pytest.raises(PolicyError, match="no-such-bot"):
        promote(source, tmp_path / "policies" / "other")


def test_promote_refuses_a_folder_that_would_not_load(tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "card.json").write_text("{}")
    with pytest.raises(SystemExit) as info:
        promote_main([str(bad), str(tmp_path / "dest")])
    assert info.value.code == 2 and "card.json" in capsys.readouterr().err
    assert not (tmp_path / "dest").exists()


def test_a_flat_config_of_before_the_sections_loads_each_key_at_its_new_place(tmp_path):
    flat = _write(tmp_path, "flat.yaml", {"n_envs": 2, "collector": "subproc", "ppo": {"n_steps": 64, "gamma": 0.9},
                                          "ray": {"num_env_runners": 3}})
    with pytest.warns(MovedKeyWarning, match=r" is now (sb3|rllib)\.") as seen:
        cfg = load_config(flat, ["ppo.batch_size=32", "ray.address=auto"])
    assert (cfg.sb3.n_envs, cfg.sb3.collector, cfg.sb3.n_steps, cfg.sb3.batch_size) == (2, "subproc", 64, 32)
    assert (cfg.ppo.gamma, cfg.rllib.num_env_runners, cfg.rllib.address) == (0.9, 3, "auto")
    assert {str(w.message).split(": ", 1)[1].split(" (")[0] for w in seen} >= {
        "ppo.n_steps is now sb3.n_steps", "ray.num_env_runners is now rllib.num_env_runners",
        "ppo.batch_size is now sb3.batch_size", "ray.address is now rllib.address"}
    both = _write(tmp_path, "both.yaml", {"n_envs": 2, "sb3": {"n_envs": 4}})
    with pytest.raises(ConfigError, match=r"n_envs and sb3\.n_envs are the same key .*: give sb3\.n_envs only"), \
            pytest.warns(MovedKeyWarning, match=r"n_envs is now sb3\.n_envs"):
        load_config(both)
    # the sectioned layout: each key once, no warning
    sectioned = _write(tmp_path, "new.yaml", {"sb3": {"n_envs": 2}, "rllib": {"num_env_runners": 3}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_config(sectioned, ["sb3.n_steps=64"]).sb3.n_envs == 2
