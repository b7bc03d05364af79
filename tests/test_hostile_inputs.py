"""Issue #30, hostile inputs round two: one test (or a few) per numbered case of the issue, each of
which passed a hostile input before; and the bounds table's completeness (every numeric input of
every entry point has a row).

1. ``--resume`` unpickled a model.zip wherever ``runs_dir`` pointed;
2. DrachenSchatten's ``replay()`` accepted the test-only ``arrange`` event;
3. a Fist record with a malformed start ``deck`` raised AttributeError;
4. a YAML alias bomb in a deck file;
5. weights checked before the cast to float32, and a size limit in numbers, not bytes;
6. numbers without bounds (seeds, reward shaping, the exploiter's flags, 5,000-digit integers);
7. near-duplicate card names;
8. ``--set start=`` (the README's own command);
9. ``dragonstones replay /dev/zero`` and ``--seat all``;
10. a Python power that breaks F2 only from turn 3 on.
"""

from __future__ import annotations

import argparse
import base64
import copy
import dataclasses
import json
import os
import pickle
import random
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import bounds
from dragonstones_env import env as fist_env
from dragonstones_env.bounds import BOUNDS, FILE_BYTES, InputError
from dragonstones_env.core import ReplayError
from dragonstones_env.evaluation.cli import build_parser as evaluation_parser
from dragonstones_env.games.drachenschatten import env as ds_env
from dragonstones_env.games.drachenschatten.rules import DrachenSchattenGame
from dragonstones_env.games.drachenschatten.rules import replay as ds_replay
from dragonstones_env.games.dragonstones import custom, replay
from dragonstones_env.games.dragonstones.engine import ConservationError, Game
from dragonstones_env.policies import PolicyError, load_policy
from dragonstones_env.policies.checkpoint import MAX_ENTRY_BYTES, expected_layout
from dragonstones_env.policies.marks import check_mark, sha256_bytes, write_mark
from tests.extras import TRAIN, TRAIN_MODULE
from tools.random_games import choose

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "characters.yaml"
OBS, ACTIONS = fist_env().unwrapped.OBS_SIZE, fist_env().unwrapped.NUM_ACTIONS


class _Payload:
    """Unpickling this touches ``marker``: the code a hostile pickle would run."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _evil_model_zip(path: Path, marker: Path) -> Path:
    """An SB3-shaped model.zip whose ``policy_class`` unpickles into code that writes ``marker``."""
    payload = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":type:": "<class 'type'>", ":serialized:": payload}}))
        z.writestr("_stable_baselines3_version", "2.4.0")
    return path


# ---------------------------------------------------------------------------- 1. --resume
def test_1_resume_never_unpickles_a_model_zip_this_machine_did_not_mark(tmp_path, capsys):
    """A shared config points runs_dir at a folder holding a hostile checkpoint: --resume refuses it,
    bare, with a plain SHA-256 mark (anyone can write one), and with a mark of another machine's key."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.train import main as train

    marker = tmp_path / "CODE-RAN"
    shared = tmp_path / "shared-runs"
    checkpoint = shared / "victim" / "checkpoint"
    model = _evil_model_zip(checkpoint / "model.zip", marker)
    (checkpoint / "state.json").write_text(json.dumps({"wall_time": 0.0, "evaluations": []}))
    args = ["--set", f"runs_dir={shared}", "--set", "run_name=victim", "--set", "sb3.n_envs=1", "--resume"]

    assert train(args) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "no model.zip.mark" in err and "--trust-model-zip" in err

    (tmp_path / "mine").write_bytes(b"x")
    write_mark(tmp_path / "mine")  # this machine has a key (as after any run trained here)
    digest = sha256_bytes(model.read_bytes())
    (checkpoint / "model.zip.mark").write_text(json.dumps({"file": "model.zip", "sha256": digest,
                                                           "hmac_sha256": "00" * 32}))
    assert train(args) == 2
    assert "not made with this machine's key" in capsys.readouterr().err

    other = tmp_path / "other.key"
    other.write_bytes(os.urandom(32))
    os.environ["DRAGONSTONES_MARK_KEY"], mine = str(other), os.environ["DRAGONSTONES_MARK_KEY"]
    try:
        write_mark(model)  # a genuine mark, of another machine
    finally:
        os.environ["DRAGONSTONES_MARK_KEY"] = mine
    assert check_mark(model) is not None
    assert train(args) == 2
    assert not marker.exists()


def test_1_finetune_refuses_an_unmarked_model_zip_and_marks_follow_the_bytes(tmp_path, capsys):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.train import main as train

    marker = tmp_path / "CODE-RAN"
    folder = tmp_path / "downloaded"
    _evil_model_zip(folder / "model.zip", marker)
    assert train(["--set", f"runs_dir={tmp_path / 'runs'}", "--finetune", str(folder)]) == 2
    assert "--trust-model-zip" in capsys.readouterr().err and not marker.exists()
    assert not (tmp_path / "runs").exists()
    # a marked file that changes afterwards is refused too; the same bytes pass
    write_mark(folder / "model.zip")
    assert check_mark(folder / "model.zip") is None
    with (folder / "model.zip").open("ab") as f:
        f.write(b"\0")
    assert "changed since it was marked" in check_mark(folder / "model.zip")


def test_1_runs_dir_is_checked_like_every_path_key(tmp_path):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, load_config

    a_file = tmp_path / "file"
    a_file.write_text("x")
    for override, message in [("runs_dir=", "runs_dir: a path; it is empty"),
                              ("out_dir=''", "out_dir: a path; it is empty"),
                              ('runs_dir="a\\0b"', "runs_dir: a path without NUL"),
                              (f"runs_dir={'x' * 5000}", "runs_dir: a path of at most 4096"),
                              (f"runs_dir={a_file}", "is a file, not a folder"),
                              ('start="a\\0b"', "start: a path without NUL")]:
        with pytest.raises(ConfigError, match=message):
            load_config(None, [override])


# ---------------------------------------------------------------------------- 2. test-only events
def _forged_win() -> list[dict]:
    """The issue's 4-event record: start, setup, an ``arrange`` giving seat 0 three treasures, its win."""
    g = DrachenSchattenGame(2, seed=0)
    g.arrange([[] for _ in range(16)], [["treasure"] * 3, []], 0)
    record = json.loads(json.dumps(g.record))
    assert [e["event"] for e in record] == ["start", "setup", "arrange", "end"] and record[-1]["winners"] == [0]
    return record


def test_2_a_forged_arrangement_never_replays_outside_the_tests(tmp_path, capsys):
    record = _forged_win()
    with pytest.raises(ReplayError, match="'arrange' events are test set-ups") as info:
        ds_replay(record)
    assert info.value.index == 2
    assert ds_replay(record, test_events=True).winners == [0]  # the flag only tests set
    # Fist has no test-only event: one in a record is refused as any unknown input
    g = Game(3, seed=1)
    with pytest.raises(ReplayError, match="an input event"):
        replay([*json.loads(json.dumps(g.record)), {"type": "arrange", "args": {}}])
    pytest.importorskip("PIL")
    pytest.importorskip("starlette")
    from dragonstones_env.cli import main as cli

    path = tmp_path / "forged.json"
    path.write_text(json.dumps(record))
    assert cli(["replay", str(path), "--gif", str(tmp_path / "x.gif")]) == 2
    assert "test set-ups" in capsys.readouterr().err and not (tmp_path / "x.gif").exists()


# ---------------------------------------------------------------------------- 3. malformed start fields
BAD_DECKS = [[], None, "x", 1, 1.5, True, {"custom": "x"}, {"custom": [1]}, {"custom": [None]}, {"custom": [[]]},
             {"custom": {}}, {"custom": [{"python": True}]}, {"custom": [{"python": True, "name": ["x"]}]},
             {"exclude": "Troll"}, {"exclude": [1]}, {"exclude": [["Troll"]]}, {"extra": 1},
             {"custom": [{"name": "X", "effects": [{"gain": []}]}]}, {"custom": [{"name": [], "effects": []}]}]
BAD_FIELDS = {"num_players": [[], None, "x", 1.5, True, -1, 2**70, {}, 7],
              "seed": [[], None, "x", 1.5, True, -1, {}],
              "max_turns": [[], None, "x", 1.5, True, 0, 2**70, {}, 100_000]}


@pytest.mark.parametrize("deck", BAD_DECKS, ids=repr)
def test_3_every_malformed_deck_in_a_fist_start_is_a_replay_error(deck):
    record = json.loads(json.dumps(Game(4, seed=1, deck=custom.make_deck(EXAMPLE)).record))
    record[0]["deck"] = deck
    with pytest.raises(ReplayError) as info:
        replay(record)
    assert info.value.index == 0


def test_3_every_malformed_start_field_is_a_replay_error_in_both_games():
    fist = json.loads(json.dumps(Game(4, seed=1).record))
    ds = json.loads(json.dumps(DrachenSchattenGame(3, seed=4).record))
    ds_fields = {"num_players": BAD_FIELDS["num_players"], "seed": BAD_FIELDS["seed"],
                 "max_steps": [[], None, "x", 1.5, True, 0, 2**70, {}, 10**6], "game": [[], None, {}, 1, "fist"],
                 "extra": [1]}
    for base, replayer, fields in ((fist, replay, BAD_FIELDS), (ds, ds_replay, ds_fields)):
        for field, values in fields.items():
            for value in values:
                record = copy.deepcopy(base)
                record[0][field] = value
                with pytest.raises(ReplayError):
                    replayer(record)
        for event in (1, None, [], {"type": []}, {"event": {}}, {"type": "choice", "option": [{}]},
                      {"event": "option", "option": None}):
            with pytest.raises(ReplayError):
                replayer([*base, event])


def test_3_the_app_answers_a_malformed_deck_with_a_422(tmp_path, capsys):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    pytest.importorskip("PIL")
    with warnings.catch_warnings():  # recent Starlette suggests httpx2 for its TestClient; httpx works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from dragonstones_env.cli import main as cli
    from dragonstones_env.play.app.server import create_app

    record = json.loads(json.dumps(Game(4, seed=1, deck=custom.make_deck(EXAMPLE)).record))
    with TestClient(create_app(hosts=("testserver",))) as client:
        for deck in ([], None, "x", {"custom": "x"}, {"custom": [1]}):
            record[0]["deck"] = deck
            r = client.post("/api/replays", json=record)
            assert r.status_code == 422 and "does not replay" in r.json()["error"], r.text
            path = tmp_path / "bad.json"
            path.write_text(json.dumps(record))
            assert cli(["replay", str(path), "--gif", str(tmp_path / "x.gif")]) == 2
            assert "record event 0" in capsys.readouterr().err


# ---------------------------------------------------------------------------- 4. deck files
def _deck_with_alias(levels: int) -> str:
    """A deck whose card's effects alias a list that doubles at each level (an alias bomb)."""
    lines = ["base: &l0 [{gain: {coin: silver, amount: 1}}, {gain: {coin: silver, amount: 1}}]"]
    lines += [f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]" for i in range(1, levels + 1)]
    lines += ["characters:", "  - name: Bomb", f"    effects: *l{levels}"]
    return "\n".join(lines) + "\n"


def test_4_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_deck_with_alias(40))  # 2^40 effects once expanded
    with pytest.raises(custom.CharacterError, match=r"bomb\.yaml: line \d+: YAML aliases \(\*l0\) are not allowed"):
        custom.make_deck(str(path))
    path.write_text(_deck_with_alias(0).replace("'", ""))  # even one alias: a deck file has none
    with pytest.raises(custom.CharacterError, match="aliases"):
        custom.load_file(path)
    with pytest.raises(ValueError, match="aliases"):
        fist_env(characters=str(path))


def test_4_deck_and_config_files_are_read_up_to_their_limit(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("characters: []\n" + "#" * FILE_BYTES["deck"])
    with pytest.raises(custom.CharacterError, match=f"more than {FILE_BYTES['deck']} bytes"):
        custom.load_file(big)
    if Path("/dev/zero").exists():
        with pytest.raises(custom.CharacterError, match="more than"):
            custom.load_file("/dev/zero")
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, load_config

    config = tmp_path / "big-config.yaml"
    config.write_text("seed: 1\n" + "#" * FILE_BYTES["config"])
    with pytest.raises(ConfigError, match=f"more than {FILE_BYTES['config']} bytes"):
        load_config(config)
    config.write_text("ppo: &p {gamma: 0.9}\nleague: {mix: {random: 1}}\neval: *p\n")
    with pytest.raises(ConfigError, match="aliases"):
        load_config(config)


# ---------------------------------------------------------------------------- 5. weights
def _checkpoint(folder: Path, arrays: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    card = {"algorithm": "MaskablePPO", "env": "dragonstones_v1", "layout": expected_layout("dragonstones_v1")}
    (folder / "card.json").write_text(json.dumps(card))
    np.savez(folder / "policy.npz", **arrays)
    return folder


def test_5_weights_are_checked_as_the_float32_that_plays(tmp_path):
    rng = np.random.default_rng(0)
    w0, w1 = rng.normal(size=(OBS, 8)), rng.normal(size=(8, ACTIONS))
    w1[3, 5] = 1e39  # finite as float64, inf as float32
    arrays = {"layers": 2, "activation": "tanh", "w0": w0, "b0": np.zeros(8), "w1": w1, "b1": np.zeros(ACTIONS)}
    with pytest.raises(PolicyError, match=r"layer 1 holds NaN or infinite values \(as float32"):
        load_policy(_checkpoint(tmp_path / "overflow", arrays))
    w1[3, 5] = 1e38  # finite in both: float64 weights still load, as float32
    policy = load_policy(_checkpoint(tmp_path / "fine", arrays))
    assert all(w.dtype == np.float32 for layer in policy.weights for w in layer)


def test_5_the_size_limit_is_in_bytes_of_the_stored_arrays(tmp_path):
    """46.7 M float64 parameters (under the old limit of 50 M numbers), 373 MB as stored: refused from
    the headers, before any array is read."""
    width = 17_000
    folder = _checkpoint(tmp_path / "f64", {"layers": 2, "activation": "tanh"})
    small = {"b0": np.zeros(width), "b1": np.zeros(ACTIONS)}
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(folder / "policy.npz", "a", compression=zipfile.ZIP_DEFLATED) as z:
        for name, shape in (("w0", (OBS, width)), ("w1", (width, ACTIONS))):
            with z.open(f"{name}.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": shape})
                for _ in range(shape[0] * shape[1] * 8 // len(chunk) + 1):
                    f.write(chunk)
        for name, array in small.items():
            with z.open(f"{name}.npy", "w") as f:
                np.lib.format.write_array(f, array)
    assert (folder / "policy.npz").stat().st_size < 2_000_000
    assert OBS * width + width * ACTIONS < 50_000_000
    with pytest.raises(PolicyError, match=rf"hold \d+ bytes; at most {MAX_ENTRY_BYTES} \(limit MAX_ENTRY_BYTES\)"):
        load_policy(folder)


# ---------------------------------------------------------------------------- 6. bounds
@pytest.mark.parametrize(("override", "message"), [
    ("seed=-1", r"seed: must be an integer in \[0, 4294967295\], got -1"),
    (f"seed={2**64}", r"seed: must be an integer in \[0, 4294967295\], got 18446744073709551616"),
    (f"seed={'9' * 5000}", r"seed: must be an integer in \[0, 4294967295\], got an integer of 5000 digits"),
    ("reward_shaping=1e308", r"reward_shaping: must be a finite number in \[0, 1\], got 1e\+308"),
    ("reward_shaping=.nan", r"reward_shaping: must be a finite number in \[0, 1\], got nan"),
    ("ppo.gamma=5", r"ppo\.gamma: must be a finite number in \(0, 1\], got 5"),
    ("ppo.net_arch=[100000, 100000]", r"ppo\.net_arch\[0\]: must be an integer in \[1, 8192\], got 100000"),
    ("sb3.n_envs=100000", r"sb3\.n_envs: must be an integer in \[1, 1024\], got 100000"),
    ("sb3.n_steps=1000000", r"sb3\.n_steps: n_steps x n_envs = \d+ rows .* GiB of rollout buffer; at most 4"),
    ("league.mix={random: 1e300}", r"league\.mix\.random: must be a finite number in \[0, 1e\+06\]"),
    ("imitate.holdout=1", r"imitate\.holdout: must be a finite number in \[0, 1\), got 1"),
])
def test_6_config_numbers_are_refused_naming_the_key_and_the_range(override, message):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message):
        load_config("configs/default.yaml", [override])


def test_6_a_5000_digit_integer_in_a_config_file_names_its_key(tmp_path):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import ConfigError, load_config
    from training.train import main as train

    path = tmp_path / "c.yaml"
    path.write_text(f"sb3:\n  n_steps: {'1' * 5000}\n")
    with pytest.raises(ConfigError, match=r"sb3\.n_steps: must be an integer in \[2, 10000000\], got an integer of "
                                          r"5000 digits"):
        load_config(path)
    assert train(["--config", str(path), "--set", f"runs_dir={tmp_path / 'runs'}"]) == 2


@pytest.mark.parametrize(("argv", "message"), [
    (["--seed", "-1"], r"argument --seed: must be an integer in [0, 4294967295], got -1"),
    (["--learning-rate", "nan"], r"argument --learning-rate: must be a finite number in (0, 1], got nan"),
    (["--gamma", "5"], r"argument --gamma: must be a finite number in (0, 1], got 5.0"),
    (["--net-arch", "100000", "100000"], r"argument --net-arch: must be an integer in [1, 8192], got 100000"),
    (["--n-envs", "100000"], r"argument --n-envs: must be an integer in [1, 1024], got 100000"),
    (["--eval-games", "0"], r"argument --eval-games: must be an integer in [1, 1000000], got 0"),
    (["--seed", "9" * 5000], r"argument --seed: must be an integer in [0, 4294967295]"),
])
def test_6_the_exploiters_flags_are_bounded(tmp_path, capsys, argv, message):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    pytest.importorskip("matplotlib")
    from training.exploit import main as exploit

    with pytest.raises(SystemExit) as info:
        exploit([*argv, "--out", str(tmp_path / "x")])
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_6_env_options_and_the_commands_flags_are_bounded(capsys):
    for kwargs, message in [({"reward_shaping": 1e308}, r"reward_shaping: must be a finite number in \[0, 1\]"),
                            ({"max_turns": 10**6}, r"max_turns: must be an integer in \[1, 1000\]"),
                            ({"max_turns": 10**5000}, r"max_turns: .* got an integer of about 5001 digits")]:
        with pytest.raises(ValueError, match=message):
            fist_env(**kwargs)
    with pytest.raises(ValueError, match=r"max_steps: must be an integer in \[1, 100000\]"):
        ds_env(max_steps=10**7)
    for argv, message in [(["--policies", "random", "--seed", "-1"], "argument --seed: must be an integer in"),
                          (["--policies", "random", "--workers", "100000"], "argument --workers: must be an integer"),
                          (["--panel", "random", "--games", "0"], "argument --games: must be an integer in [1, "),
                          (["--panel", "random", "--k", "9"], "argument --k: must be an integer in [1, 5], got 9")]:
        with pytest.raises(SystemExit):
            evaluation_parser().parse_args(argv)
        assert message in capsys.readouterr().err


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every entry point's parser (the trainers' when the train extra is there)."""
    from dragonstones_env.cli import _parser as command
    from dragonstones_env.play.app.__main__ import build_parser as app

    out = {"dragonstones": command(), "python -m dragonstones_env.evaluation": evaluation_parser(),
           "python -m dragonstones_env.play.app": app()}
    try:
        from training.exploit import build_parser as exploit
        from training.make_clone import build_parser as make_clone
        from training.train import build_parser as train
        from training.train_rllib import build_parser as train_rllib
    except ImportError:
        return out
    return {**out, "training.exploit": exploit(), "training.make_clone": make_clone(), "training.train": train(),
            "training.train_rllib": train_rllib()}


def _actions(parser: argparse.ArgumentParser, where: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{where} {name}")
        else:
            yield where, action


def test_6_every_numeric_flag_of_every_entry_point_is_bounded():
    unbounded = [f"{where} {'/'.join(a.option_strings)}" for name, parser in _parsers().items()
                 for where, a in _actions(parser, name)
                 if a.type in (int, float) or (isinstance(a.default, (int, float)) and not isinstance(a.default, bool)
                                               and not hasattr(a.type, "bound") and a.nargs != 0)]
    assert not unbounded, unbounded


def test_6_every_numeric_config_key_has_a_row_in_the_bounds_table():
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import BOUNDS as TRAIN_BOUNDS
    from training.config import Config, check_bounds, load_config
    from training.exploit import PRESET

    check_bounds(Config())  # a numeric key without a row is a KeyError: every default is checked
    check_bounds(load_config(PRESET))  # the exploiter's preset (its flags set these keys)
    assert all(key in TRAIN_BOUNDS for key in BOUNDS)  # the trainers extend the shared table

    @dataclasses.dataclass
    class Extended(Config):
        new_number: int = 3

    with pytest.raises(KeyError, match="new_number: a number without a row"):
        check_bounds(Extended())


def test_6_every_bound_refuses_its_neighbours_and_keeps_its_ends():
    for key, bound in BOUNDS.items():
        assert bound.check(bound.high, key) == bound.high and bound.why
        step = 1 if bound.kind is int else 1e-9 * max(1.0, abs(bound.high))
        with pytest.raises(InputError, match=key):
            bound.check(bound.high + step, key)
        with pytest.raises(InputError, match=key):
            bound.check(bound.low - (1 if bound.kind is int else 1e-9), key)
        for junk in (True, "1", None, float("nan"), [1]):
            with pytest.raises(InputError, match=key):
                bound.check(junk, key)
    assert bounds.check("seed", 2**32 - 1) == 2**32 - 1


# ---------------------------------------------------------------------------- 7. card names
@pytest.mark.parametrize("name", ["Troll ", "troll", "Wi\u200btch", "\uff34\uff52\uff4f\uff4c\uff4c", " TROLL",
                                  "Tro\u00adll", "custom_1", "CUSTOM_2\u200d", "Witch\u2060", "\u200b"])
def test_7_near_duplicates_of_the_boxs_names_are_refused(name):
    card = {"name": name, "effects": [{"gain": {"coin": "silver", "amount": 1}}]}
    with pytest.raises(custom.CharacterError, match=r"clashes with|non-empty"):
        custom.make_deck([card])


def test_7_near_duplicate_custom_names_are_refused():
    def card(name: str) -> dict:
        return {"name": name, "effects": [{"gain": {"coin": "silver", "amount": 1}}]}

    for a, b in [("Banker", "banker"), ("Banker", "Banker "), ("Banker", "Ban\u200bker"), ("Banker", "\uff22anker")]:
        with pytest.raises(custom.CharacterError, match="defined twice"):
            custom.make_deck([card(a), card(b)])
    assert len(custom.make_deck([card("Banker"), card("Bankers")]).custom) == 2
    assert custom.name_key(" Wi\u200btch\u00a0 ") == "witch"


# ---------------------------------------------------------------------------- 8. --set start=
def test_8_set_start_empty_clears_the_start_as_documented(capsys):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.config import check_sources, load_config

    assert load_config(None, ["start="]).start == ""
    cfg = load_config("configs/champion-examples.yaml")
    assert cfg.start  # this config starts from the champion
    both = load_config("configs/champion-examples.yaml", ["imitate.teacher=heuristic"])
    check_sources(both)  # the start, then fitted to the teacher (an expert-iteration step)
    assert both.start and both.imitate.teacher == "heuristic"
    cleared = load_config("configs/champion-examples.yaml", ["imitate.teacher=heuristic", "start="])
    assert cleared.start == "" and cleared.imitate.teacher == "heuristic"
    check_sources(cleared)


# ---------------------------------------------------------------------------- 9. dragonstones replay
def test_9_replay_reads_a_record_up_to_its_limit(tmp_path, capsys):
    pytest.importorskip("PIL")
    pytest.importorskip("starlette")
    from dragonstones_env.cli import main as cli

    if Path("/dev/zero").exists():
        assert cli(["replay", "/dev/zero", "--gif", str(tmp_path / "z.gif")]) == 2
        assert f"more than {FILE_BYTES['record']} bytes" in capsys.readouterr().err
    # a valid record padded past the limit (the old 50 MB limit let it through): refused unread
    padded = tmp_path / "padded.json"
    with padded.open("w") as f:
        f.write(json.dumps(DrachenSchattenGame(2, seed=0).record))
        f.write(" " * (FILE_BYTES["record"] + 1))
    assert cli(["replay", str(padded), "--gif", str(tmp_path / "p.gif")]) == 2
    assert "more than" in capsys.readouterr().err and not (tmp_path / "p.gif").exists()


def test_9_replay_draws_every_seat_with_seat_all(tmp_path, capsys):
    pytest.importorskip("PIL")
    pytest.importorskip("starlette")
    from PIL import Image

    from dragonstones_env.cli import main as cli

    game = Game(3, seed=2)
    rng = random.Random(2)
    for _ in range(40):
        game.apply(choose(game, rng, "realistic"))
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game.record))
    assert cli(["replay", str(path), "--gif", str(tmp_path / "all.gif"), "--seat", "all", "--ms", "50"]) == 0
    assert "from every seat" in capsys.readouterr().out
    with Image.open(tmp_path / "all.gif") as im:
        assert im.size == (800, 500) and im.n_frames == 41  # 3 seats at half size, 2 by 2
    assert cli(["replay", str(path), "--gif", str(tmp_path / "bad.gif"), "--seat", "3"]) == 2
    assert "seat must be from 0 to 2 (or all)" in capsys.readouterr().err
    for seat, message in (("x", "argument --seat: must be an integer in [0, 5], got 'x'"),
                          ("9", "argument --seat: must be an integer in [0, 5], got 9")):
        with pytest.raises(SystemExit):
            cli(["replay", str(path), "--gif", str(tmp_path / "bad.gif"), "--seat", seat])
        assert message in capsys.readouterr().err


# ---------------------------------------------------------------------------- 10. Python powers
def test_10_a_python_power_that_breaks_f2_from_turn_3_stops_the_game_naming_the_card():
    @custom.character("Forger", copies=3, text="a silver out of nowhere, from turn 3 on")
    def forger(g, p, auction):
        if g.turn >= 3:
            g.players[p].silver += 1

    try:
        deck = custom.make_deck(["Forger"])  # the load-time check tries turn 1 states only: accepted
        stopped = []
        for seed in range(40):
            g = Game(4, seed=seed, deck=deck)
            rng = random.Random(seed)
            totals = g.totals()
            try:
                while not g.over:
                    g.apply(choose(g, rng, "realistic"))
                    assert g.totals() == totals  # never played on after a broken F2
            except ConservationError as err:
                assert re.match(r"character 'Forger'( \(through the \w+\))? broke F2", str(err)), str(err)
                assert "silver +1" in str(err)
                assert g.turn >= 3 and g.fault == str(err)
                with pytest.raises(ConservationError, match="Forger"):
                    g.apply(("bid", 0, 0, 0, 0))  # a stopped game stays stopped
                stopped.append(seed)
        assert stopped  # random play reaches it
    finally:
        custom.PYTHON_CHARACTERS.pop("Forger", None)


def test_10_a_python_power_breaking_f2_in_its_decision_is_caught_when_its_use_ends():
    def resolve(g, p, option, data):
        if option == ("yes",) and g.turn >= 2:
            g.players[p].stones[0] -= 1 if g.players[p].stones[0] else 0

    @custom.character("Eater", copies=3, text="may eat a red stone")
    def eater(g, p, auction):
        g.ask("yes_no", p, "Eater", [("yes",), ("no",)], resolve)

    try:
        deck = custom.make_deck(["Eater"])
        caught = 0
        for seed in range(40):
            g = Game(5, seed=seed, deck=deck)
            rng = random.Random(seed)
            try:
                while not g.over:
                    g.apply(choose(g, rng, "realistic"))
            except ConservationError as err:
                assert "'Eater'" in str(err) and "red -1" in str(err)
                caught += 1
        assert caught
    finally:
        custom.PYTHON_CHARACTERS.pop("Eater", None)
