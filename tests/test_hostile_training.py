"""Hostile inputs, round three (issue #49): mixtures, promote, the trainers' outputs and resumes,
the search's options and configs. Each test names its finding's number in the issue."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env.bounds import load_yaml
from dragonstones_env.policies import PolicyError, load_policy, mixture
from dragonstones_env.policies.checkpoint import expected_layout, unpacked_bytes
from dragonstones_env.policies.marks import KEY_ENV, check_mark, write_mark
from tests.checkpoints import write_checkpoint
from tests.extras import TRAIN, TRAIN_MODULE

ENV = "dragonstones_v1"


def _mixture(folder: Path, members: list[tuple[str, float]]) -> Path:
    return mixture.write(folder, members, ENV, expected_layout(ENV))


# ---------------------------------------------------------------------------- 3. one budget
def test_3_a_folder_listed_eight_times_is_loaded_once(tmp_path):
    write_checkpoint(tmp_path / "m" / "members" / "net", seed=3)
    policy = load_policy(str(_mixture(tmp_path / "m", [("members/net", 1.0)] * 8 + [("value", 1.0)] * 2)))
    assert len(policy.members) == 10 and len({id(m) for m in policy.members}) == 2


def test_3_members_over_the_mixtures_budget_are_refused_before_they_load(tmp_path, monkeypatch):
    for name in ("a", "b", "c"):
        write_checkpoint(tmp_path / "m" / "members" / name, seed=3, hidden=64)
    one = unpacked_bytes(tmp_path / "m" / "members" / "a")
    monkeypatch.setattr(mixture, "MAX_MIXTURE_BYTES", 2 * one)
    loads = []
    original = mixture.admit_member
    monkeypatch.setattr(mixture, "admit_member", lambda *a: (original(*a), loads.append(a[1])))
    folder = _mixture(tmp_path / "m", [("members/a", 1.0), ("members/b", 1.0), ("members/a", 1.0)])
    assert len(load_policy(str(folder)).members) == 3  # a twice, counted once: within 2 x one
    folder = _mixture(tmp_path / "m", [("members/a", 1.0), ("members/b", 1.0), ("members/c", 1.0)])
    with pytest.raises(PolicyError, match=r"member 'members/c' holds .* over the 0 bytes left of the mixture's "
                                          r"budget"):
        load_policy(str(folder))


# ---------------------------------------------------------------------------- 15. nesting, weights
def test_15_nested_mixtures_are_refused_before_loading_however_deep(tmp_path):
    folder = tmp_path / "m"
    for _ in range(400):
        _mixture(folder, [("n", 1.0)])
        folder = folder / "n"
    _mixture(folder, [("value", 1.0)])
    with pytest.raises(PolicyError, match="member 'n' is a mixture; list its members instead"):
        load_policy(str(tmp_path / "m"))


def test_15_weights_whose_sum_overflows_are_refused_clearly(tmp_path):
    with pytest.raises(PolicyError, match="weights sum beyond a float"):
        load_policy(str(_mixture(tmp_path / "m", [("value", 1e308), ("random", 1e308)])))


# ---------------------------------------------------------------------------- 12. mark before reading
def test_12_a_model_zip_without_a_mark_is_refused_before_it_is_read(tmp_path, monkeypatch):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError
    from training.train import model_zip_bytes

    model = tmp_path / "model.zip"
    with model.open("wb") as f:  # sparse: 2 GB on paper, nothing on disk
        f.truncate(2 * 2**30)

    def read_whole(self):
        raise AssertionError(f"{self} read whole before its mark was checked")

    monkeypatch.setattr(Path, "read_bytes", read_whole)
    with pytest.raises(ConfigError, match=r"no model\.zip\.mark"):
        model_zip_bytes(model, False, "--resume")


# ---------------------------------------------------------------------------- minor: the key, YAML
def test_minor_a_mark_key_others_can_read_is_refused_when_used(tmp_path, monkeypatch):
    key = tmp_path / "mark.key"
    monkeypatch.setenv(KEY_ENV, str(key))
    (tmp_path / "f").write_bytes(b"x")
    write_mark(tmp_path / "f")
    assert check_mark(tmp_path / "f") is None
    key.chmod(0o644)
    assert "can be read or written by others (mode 644): chmod 600" in check_mark(tmp_path / "f")


@pytest.mark.parametrize("text", ["0x" + "f" * 5000, "1" + ":59" * 3000, "0b" + "1" * 20000])
def test_minor_huge_hex_binary_and_base60_yaml_integers_are_named_not_python_errors(tmp_path, text):
    value = load_yaml(f"seed: {text}", "c.yaml")["seed"]
    assert re.fullmatch(r"an integer of \d+ digits", repr(value))  # printable: Python's own repr raises
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, load_config

    (tmp_path / "c.yaml").write_text(f"run_name: {text}\n")  # a text key, so the value is printed
    with pytest.raises(ConfigError, match=r"run_name.*an integer of \d+ digits"):
        load_config(tmp_path / "c.yaml")


# ---------------------------------------------------------------------------- 14. base: confined
def test_14_a_configs_base_stays_in_its_folder_and_is_never_quoted(tmp_path):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, load_config

    secret = tmp_path / "credentials"
    secret.write_text("[default]\naws_secret_access_key = AKIA-SECRET: [x\n")
    (tmp_path / "cfg").mkdir()
    config = tmp_path / "cfg" / "c.yaml"
    for base, why in [(str(secret), "is an absolute path"), ("../credentials", "leaves the config's folder")]:
        config.write_text(f"base: {base}\n")
        with pytest.raises(ConfigError, match=why):
            load_config(config)
    (tmp_path / "cfg" / "credentials").write_text(secret.read_text())
    config.write_text("base: credentials\n")
    with pytest.raises(ConfigError, match="is not valid YAML") as info:
        load_config(config)
    assert "SECRET" not in str(info.value) and "aws" not in str(info.value)
    (tmp_path / "cfg" / "sub").mkdir()
    (tmp_path / "cfg" / "sub" / "b.yaml").write_text("sb3: {n_envs: 2}\n")
    config.write_text("base: sub/b.yaml\n")  # below the folder: allowed
    assert load_config(config).sb3.n_envs == 2


# ---------------------------------------------------------------------------- 13. search options
@pytest.mark.parametrize(("spec", "message"), [
    ("ismcts:simulations=1000000000000", r"simulations=.* simulations per decision, an integer in \[1, 20000\]"),
    ("ismcts:widen=1e300", r"widen=.*an? finite number in \[0, 1000\]"),
    ("ismcts:c=1e300", r"c=.*finite number in \[0, 100\]"),
    ("ismcts:horizon=" + "9" * 5000, r"horizon=.*an integer in \[0, 100000\]"),
    ("ismcts:seed=4294967296", r"seed=.*an integer in \[0, 4294967295\]"),
])
def test_13_search_options_are_bounded_wherever_a_spec_is_loaded(spec, message):
    with pytest.raises(PolicyError, match=message):
        load_policy(spec)


@pytest.mark.parametrize("overrides", [
    ['league.pool=["ismcts:simulations=1000000000000"]', "league.mix={pool: 0.1}"],
    ["imitate.teacher=ismcts:simulations=1000000000000"],
])
def test_13_a_configs_specs_are_bounded_before_a_run_starts(overrides):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, check_sources, load_config

    with pytest.raises(ConfigError, match=r"simulations per decision, an integer in \[1, 20000\]"):
        check_sources(load_config(None, overrides))


# ---------------------------------------------------------------------------- 4. promote
def test_4_promote_refuses_a_symlink_instead_of_copying_what_it_points_to(tmp_path):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.promote import promote

    private = tmp_path / "private.key"
    private.write_text("secret")
    source = write_checkpoint(tmp_path / "runs" / "mine", seed=1)
    for name in ("value.npz", "training_curve.png"):
        (source / name).symlink_to(private)
        with pytest.raises(PolicyError, match=f"{name} is a symbolic link; promote copies plain files only"):
            promote(source, tmp_path / "policies" / "mine")
        assert not (tmp_path / "policies").exists()
        (source / name).unlink()
    (source / "training_curve.png").write_text("secret")  # a plain file, but not what it claims to be
    with pytest.raises(PolicyError, match="is not a PNG image"):
        promote(source, tmp_path / "policies" / "mine")


def test_4_promote_writes_nothing_outside_its_destination(tmp_path):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.promote import promote

    shipped = write_checkpoint(tmp_path / "policies" / "champion-mixture" / "members" / "v5", seed=1)
    before = (shipped / "policy.npz").read_bytes()
    source = tmp_path / "runs" / "champion-mixture"
    write_checkpoint(source / "members" / "v5", seed=2)
    _mixture(source, [("../champion-mixture/members/v5", 1.0)])  # resolves inside the source
    with pytest.raises(PolicyError, match="outside"):
        promote(source, tmp_path / "policies" / "new")
    assert (shipped / "policy.npz").read_bytes() == before
    assert not (tmp_path / "policies" / "new").exists()


# ---------------------------------------------------------------------------- 11. training.meta
@pytest.mark.parametrize(("argv", "message"), [
    (["--seed", "-1"], "argument --seed: must be an integer in [0, 4294967295], got -1"),
    (["--grid", "51"], "argument --grid: must be an integer in [2, 50], got 51"),
    (["--grid", "50"], "--grid 50 of 8 members makes 264,385,836 mixtures: meta.mixtures: must be an integer in"),
    (["--workers", "1000"], "argument --workers: must be an integer in [1, 32]"),
    (["--pure-games", "-1"], "argument --pure-games: must be an integer in [0, 100000]"),
    (["--players", "99"], "argument --players: must be an integer in [2, 6]"),
    (["--cells", "/dev/zero"], "more than 64000000 bytes"),
])
def test_11_metas_flags_are_bounded_and_its_cells_read_within_limits(tmp_path, capsys, argv, message):
    from training.meta import main as meta

    members = ["random", "heuristic", "value", "aggressor", "miser", "collector", "hoarder", "rusher"]
    try:
        code = meta(["--members", *members, "--games", "0", "--cells", str(tmp_path / "none.json"),
                     "--out", str(tmp_path / "out"), *argv])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_11_deep_cells_are_refused_not_a_recursion_error(tmp_path, capsys):
    from training.meta import main as meta

    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    assert meta(["--members", "random", "value", "--games", "0", "--cells", str(tmp_path / "deep.json"),
                 "--out", str(tmp_path / "out")]) == 2
    assert "not a meta.json of this module (RecursionError" in capsys.readouterr().err


def test_11_every_numeric_flag_of_meta_has_a_bound():
    from training.meta import build_parser

    unbounded = [a.option_strings for a in build_parser()._actions
                 if a.type in (int, float) or (isinstance(a.default, int) and not isinstance(a.default, bool)
                                               and not hasattr(a.type, "bound"))]
    assert not unbounded


# ---------------------------------------------------------------------------- 5. outputs
def test_5_meta_refuses_an_existing_mixture_card_and_the_shipped_folder(tmp_path, monkeypatch, capsys):
    from training.meta import main as meta

    shipped = _shipped(tmp_path, monkeypatch)

    existing = write_checkpoint(tmp_path / "ckpt", seed=1)
    card = (existing / "card.json").read_text()
    args = ["--members", "random", "value", "--games", "2", "--workers", "1", "--grid", "2"]
    assert meta([*args, "--out", str(tmp_path / "m"), "--write-mixture", str(existing)]) == 2
    assert "--write-mixture" in capsys.readouterr().err and (existing / "card.json").read_text() == card
    assert not (tmp_path / "m").exists()
    assert meta([*args, "--out", str(tmp_path / "m"), "--write-mixture", str(shipped / "x")]) == 2
    assert "inside the shipped checkpoints' folder" in capsys.readouterr().err
    assert not (shipped / "x").exists()


def _shipped(tmp_path, monkeypatch) -> Path:
    """A stand-in for the shipped folder (a test that fails must not replace the real champion)."""
    import training.outputs

    shipped = tmp_path / "policies"
    write_checkpoint(shipped / "champion", seed=5)
    monkeypatch.setattr(training.outputs, "shipped_dir", lambda: shipped)
    return shipped


def test_5_train_refuses_the_shipped_folder_and_an_existing_result(tmp_path, monkeypatch, capsys):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.train import main as train

    shipped = _shipped(tmp_path, monkeypatch)
    champion = (shipped / "champion" / "policy.npz").read_bytes()
    base = ["--set", f"runs_dir={tmp_path / 'runs'}", "--set", "run_name=champion", "--set", "total_timesteps=64",
            "--set", "sb3.n_envs=1", "--set", "sb3.n_steps=32", "--set", "sb3.batch_size=32"]
    assert train([*base, "--set", f"out_dir={shipped}"]) == 2
    assert "inside the shipped checkpoints' folder" in capsys.readouterr().err
    assert (shipped / "champion" / "policy.npz").read_bytes() == champion
    write_checkpoint(tmp_path / "out" / "champion", seed=1)
    assert train([*base, "--set", f"out_dir={tmp_path / 'out'}"]) == 2
    assert "exists and is not empty: pass --overwrite" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_5_the_exploiter_refuses_the_shipped_folder_and_a_non_empty_out(tmp_path, monkeypatch, capsys):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    pytest.importorskip("matplotlib")
    from training.exploit import main as exploit

    shipped = _shipped(tmp_path, monkeypatch)
    for out, why in [(shipped / "champion", "inside the shipped checkpoints' folder"),
                     (write_checkpoint(tmp_path / "mine", seed=1), "exists: use --resume to continue it")]:
        before = (out / "policy.npz").read_bytes()
        with pytest.raises(SystemExit) as info:
            exploit(["--out", str(out), "--timesteps", "1"])
        assert info.value.code == 2 and why in capsys.readouterr().err
        assert (out / "policy.npz").read_bytes() == before


# ---------------------------------------------------------------------------- 10. demonstrations
def _header_only(entries: dict[str, tuple[tuple[int, ...], str]], path: Path) -> Path:
    """An .npz whose entries are .npy headers claiming ``shape`` and ``dtype``, with no data."""
    import io
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        buffer = io.BytesIO()
        np.save(buffer, np.array(json.dumps({})))
        z.writestr("identity.npy", buffer.getvalue())
        for name, (shape, dtype) in entries.items():
            buffer = io.BytesIO()
            np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
            z.writestr(f"{name}.npy", buffer.getvalue())  # the header writes its magic
    return path


@pytest.mark.parametrize(("entries", "message"), [
    ({"targets": ((1, 10**8), "<i8")}, r"targets\.npy has rows of shape \(100000000,\)"),
    ({"observations": ((2**40,), "<f4")}, r"headers claim 43980465113\d\d bytes; a collection holds at most"),
])
def test_10_demonstrations_are_bounded_by_their_headers_before_reading(tmp_path, entries, message):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.imitate import ARRAYS, load_demonstrations

    arrays = {name: ((1, 8), "<f4") for name in (*ARRAYS, "games", "wins")} | entries
    path = _header_only(arrays, tmp_path / "demos.npz")
    with pytest.raises(ValueError, match=message):
        load_demonstrations(path, {}, 8, 8)


# ---------------------------------------------------------------------------- 6. RLlib --resume: one copy
def test_6_rllib_resume_checks_and_restores_one_private_copy(tmp_path):
    """What --resume checks is what it restores: a private copy of the checkpoint and its mark (training/
    train_rllib.py restores from the copy), so a pickle swapped into the run's folder after the check is never
    read; a symbolic link in the folder stays a link in the copy, which the mark's digest refuses."""
    from dragonstones_env.policies import marks
    from training.train_rllib import private_copy

    algo = tmp_path / "checkpoint" / "algo"
    (algo / "learner").mkdir(parents=True)
    (algo / "learner" / "state.pkl").write_bytes(b"genuine")
    marks.write_mark(algo)
    copy = private_copy(algo)
    assert copy != algo and (copy.parent.stat().st_mode & 0o077) == 0  # private to its owner
    assert marks.check_mark(copy) is None
    (algo / "learner" / "state.pkl").write_bytes(b"swapped after the check")  # the attack
    assert (copy / "learner" / "state.pkl").read_bytes() == b"genuine"  # what is restored is what was checked
    assert marks.check_mark(private_copy(algo)) is not None  # a later copy of the swapped folder is refused

    (algo / "learner" / "state.pkl").write_bytes(b"genuine")
    (algo / "link.pkl").symlink_to(tmp_path / "elsewhere.pkl")
    with pytest.raises(PolicyError, match="not a plain file or folder"):
        marks.check_mark(private_copy(algo))


def test_5_the_rllib_trainer_refuses_the_shipped_folder_and_a_result_without_overwrite(tmp_path, capsys):
    """training/train_rllib.py checks its output folders as training/train.py does, before Ray starts."""
    from dragonstones_env.policies.registry import shipped_dir
    from training.train_rllib import main

    shipped = str(shipped_dir())
    assert main(["--config", "configs/rllib_ppo.yaml", "--set", f"out_dir={shipped}", "--set", "run_name=champion",
                 "--set", f"runs_dir={tmp_path / 'runs'}"]) == 2
    assert "shipped checkpoints" in capsys.readouterr().err
    result = tmp_path / "out" / "mine"
    result.mkdir(parents=True)
    (result / "card.json").write_text("{}")
    assert main(["--config", "configs/rllib_ppo.yaml", "--set", f"out_dir={tmp_path / 'out'}",
                 "--set", "run_name=mine", "--set", f"runs_dir={tmp_path / 'runs'}"]) == 2
    assert "--overwrite" in capsys.readouterr().err and (result / "card.json").read_text() == "{}"
