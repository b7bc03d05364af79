"""Issue #14: nothing from outside is trusted -- hostile checkpoints, inputs of any type.

The malicious fixtures are built here, at test time: a ``model.zip`` whose pickle writes a
marker file, pickles inside ``policy.npz``, NaN weights, wrong shapes, a decompression bomb,
hostile ``card.json`` files. Every entry point must refuse them with a ``PolicyError`` (or a
``ValueError`` naming the problem) and the marker must never appear.
"""

from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import env as fist_env
from dragonstones_env import raw_env
from dragonstones_env.evaluation import EvaluationError, evaluate
from dragonstones_env.evaluation import main as evaluate_main
from dragonstones_env.games.drachenschatten import env as ds_env
from dragonstones_env.games.dragonstones.engine import Game
from dragonstones_env.play.single_agent import make as make_gym
from dragonstones_env.policies import PolicyError, RandomPolicy, load_policy
from dragonstones_env.policies.checkpoint import (
    MAX_CARD_BYTES,
    MAX_CARD_DEPTH,
    MAX_WEIGHT_BYTES,
    CheckpointPolicy,
    expected_layout,
)
from tests.extras import TRAIN, TRAIN_MODULE
from training.league import League

OBS, ACTIONS = raw_env.OBS_SIZE, raw_env.NUM_ACTIONS


class _Payload:
    """Unpickling this touches ``marker``: the code a hostile pickle would run."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _card(folder: Path, **changes) -> None:
    card = {"algorithm": "MaskablePPO", "env": "dragonstones_v1", "layout": expected_layout("dragonstones_v1"),
            "steps": 1, **changes}
    (folder / "card.json").write_text(json.dumps(card))


def _weights(hidden: int = 8, rng: np.random.Generator | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = rng or np.random.default_rng(0)
    return [(rng.normal(size=(OBS, hidden)).astype(np.float32), np.zeros(hidden, np.float32)),
            (rng.normal(size=(hidden, ACTIONS)).astype(np.float32), np.zeros(ACTIONS, np.float32))]


def _checkpoint(folder: Path, arrays: dict | None = None, **card) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _card(folder, **card)
    if arrays is None:
        CheckpointPolicy(_weights()).save_npz(folder / "policy.npz")
    else:
        np.savez(folder / "policy.npz", **arrays)
    return folder


def _arrays(**changes) -> dict:
    w = _weights()
    out = {"layers": 2, "activation": "tanh", "w0": w[0][0], "b0": w[0][1], "w1": w[1][0], "b1": w[1][1]}
    out.update(changes)
    return {k: v for k, v in out.items() if v is not None}


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "CODE-RAN"


@pytest.fixture
def evil_zip(tmp_path, marker) -> Path:
    """A checkpoint folder with a card saying MaskablePPO, a crafted model.zip, no policy.npz."""
    folder = tmp_path / "evil"
    folder.mkdir()
    _card(folder)
    payload = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": payload}}
    with zipfile.ZipFile(folder / "model.zip", "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("_stable_baselines3_version", "2.4.0")
    return folder


def test_the_malicious_model_zip_really_runs_code_when_unpickled(evil_zip, marker, tmp_path):
    """The fixture is hostile for real: SB3's own reader of model.zip runs its code."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from stable_baselines3.common.save_util import json_to_data

    with zipfile.ZipFile(evil_zip / "model.zip") as z:
        text = z.read("data").decode()
    json_to_data(text)
    assert marker.exists()


def test_model_zip_is_never_unpickled_by_load_policy(evil_zip, marker):
    for spec in (evil_zip, str(evil_zip), str(evil_zip / "model.zip"), str(evil_zip / "card.json")):
        with pytest.raises(PolicyError, match=r"no policy\.npz.*model\.zip is never loaded"):
            load_policy(spec)
    assert not marker.exists()


def test_model_zip_is_never_unpickled_by_gym_opponents(evil_zip, marker):
    with pytest.raises(PolicyError, match="evil"):
        make_gym("dragonstones", num_players=3, opponents=str(evil_zip))
    with pytest.raises(PolicyError, match="evil"):
        make_gym("dragonstones", num_players=3, opponents=[["random", str(evil_zip)]])
    assert not marker.exists()


def test_model_zip_is_never_unpickled_by_a_league_pool(evil_zip, marker, tmp_path):
    league = League(tmp_path / "snaps", {"pool": 1.0}, pool=[str(evil_zip)], game="dragonstones_v1")
    with pytest.raises(PolicyError):
        league.check()
    with pytest.raises(PolicyError):
        league.sample_lineup(np.random.default_rng(0), 2)
    assert not marker.exists()


def test_model_zip_is_never_unpickled_by_the_evaluate_cli(evil_zip, marker, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        evaluate_main(["--policies", str(evil_zip), "random", "--players", "3", "--games", "1", "--no-progress",
                       "--out", str(tmp_path / "out")])
    assert info.value.code == 2 and "policy.npz" in capsys.readouterr().err
    assert not marker.exists()


def test_model_zip_is_never_unpickled_by_training_pools(evil_zip, marker, tmp_path, capsys):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.train import main as train
    from training.train_rllib import pool_item

    runs = tmp_path / "runs"
    code = train(["--set", f"runs_dir={runs}", "--set", "league.mix={pool: 1.0}",
                  "--set", f"league.pool=[{json.dumps(str(evil_zip))}]"])
    assert code == 2 and "league.pool" in capsys.readouterr().err
    assert not runs.exists()  # nothing left behind to block the same command
    with pytest.raises(PolicyError):
        pool_item(str(evil_zip))
    assert not marker.exists()


def test_a_training_start_never_unpickles_and_checks_the_critic(evil_zip, marker, tmp_path, capsys):
    """``start`` (training/start.py) reads policy.npz and value.npz as arrays: the folder's
    model.zip stays unread, and a bad value.npz stops the run naming the file."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.start import read_start
    from training.train import main as train

    CheckpointPolicy(_weights()).save_npz(evil_zip / "policy.npz")
    critic = [*_weights()[:1], (np.zeros((8, 1), np.float32), np.zeros(1, np.float32))]
    CheckpointPolicy(critic).save_npz(evil_zip / "value.npz")
    start = read_start(str(evil_zip), "dragonstones_v1")
    assert start["critic"] is not None and len(start["actor"][0]) == 2
    runs = tmp_path / "runs"
    tiny = ["--set", f"runs_dir={runs}", "--set", f"out_dir={tmp_path / 'out'}", "--set", f"start={evil_zip}",
            "--set", "ppo.net_arch=[8]", "--set", "sb3.n_steps=64", "--set", "sb3.batch_size=64",
            "--set", "total_timesteps=64", "--set", "sb3.n_envs=1", "--set", "progress_bar=false",
            "--set", "league.mix={random: 1.0}", "--set", "eval.every=1000", "--set", "eval.final_games=0",
            "--set", "eval.final_panel_games=0", "--set", "eval.panel_every=0"]
    assert train(tiny) == 0
    assert json.loads((tmp_path / "out" / "default" / "card.json").read_text())["start"]["critic"] is True
    np.savez(evil_zip / "value.npz", **_arrays(w1=np.full((8, 1), np.nan, np.float32),
                                               b1=np.zeros(1, np.float32)))
    assert train([*tiny, "--set", "run_name=nan-critic"]) == 2
    err = capsys.readouterr().err
    assert "start:" in err and "value.npz" in err and "NaN" in err
    assert not (runs / "nan-critic").exists()
    assert not marker.exists()


def test_pickles_inside_policy_npz_are_refused(tmp_path, marker):
    folder = _checkpoint(tmp_path / "npz-pickle", _arrays(w0=np.array([_Payload(marker)], dtype=object)))
    with pytest.raises(PolicyError, match=r"w0|floats|layer 0"):
        load_policy(folder)
    folder = _checkpoint(tmp_path / "npz-pickle2", _arrays(activation=np.array(_Payload(marker), dtype=object)))
    with pytest.raises(PolicyError, match="activation"):
        load_policy(folder)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"w0": np.full((OBS, 8), np.nan, np.float32)}, "NaN or infinite"),
        ({"b1": np.full(ACTIONS, np.inf, np.float32)}, "NaN or infinite"),
        ({"w0": np.zeros((OBS + 1, 8), np.float32)}, rf"layer 0.*expected \({OBS}, n\)"),
        ({"w1": np.zeros((8, ACTIONS - 1), np.float32)}, rf"layer 1.*expected \(8, {ACTIONS}\)"),
        ({"w1": np.zeros((9, ACTIONS), np.float32)}, "layer 1"),
        ({"b0": np.zeros(7, np.float32)}, "layer 0"),
        ({"w0": np.zeros(OBS * 8, np.float32)}, "layer 0"),
        ({"layers": -1}, "layers must be"),
        ({"layers": 0}, "layers must be"),
        ({"layers": 3}, "missing"),
        ({"layers": 2.0}, "'layers' must be a scalar"),
        ({"layers": None}, "no 'layers'"),
        ({"activation": "softplus"}, "unknown activation"),
        ({"activation": 1}, "'activation' must be"),
        ({"w0": np.full((OBS, 8), "x")}, "floats"),
        ({"w0": np.zeros((OBS, 8), np.int64)}, "floats"),
        ({"w0": np.zeros((OBS, 8), np.complex64)}, "floats"),
        ({"extra": np.zeros(3)}, "unexpected"),
        ({"b1": None}, "missing"),
    ],
)
def test_bad_weights_are_refused_naming_the_file(tmp_path, changes, message):
    folder = _checkpoint(tmp_path / "bad", _arrays(**changes))
    with pytest.raises(PolicyError, match=message) as info:
        load_policy(folder)
    assert "policy.npz" in str(info.value)


def test_a_valid_checkpoint_loads_and_plays_legal_actions(tmp_path):
    policy = load_policy(_checkpoint(tmp_path / "ok"), seed=0)
    assert isinstance(policy, CheckpointPolicy) and policy.game == "dragonstones_v1"
    e = fist_env(num_players=3)
    e.reset(seed=0)
    for _ in range(30):
        obs = e.observe(e.agent_selection)
        a = policy.act(obs)
        assert obs["action_mask"][a] == 1
        e.step(a)


def test_a_decompression_bomb_is_refused_from_its_headers(tmp_path):
    """A small policy.npz whose w0 expands to more than MAX_WEIGHT_BYTES of float32 (200 MB): refused
    from the npz header, before the array is read."""
    folder = _checkpoint(tmp_path / "bomb")
    width = MAX_WEIGHT_BYTES // (4 * OBS) + 1
    header = {"descr": "<f4", "fortran_order": False, "shape": (OBS, width)}
    with zipfile.ZipFile(folder / "policy.npz", "a", compression=zipfile.ZIP_DEFLATED) as z:
        names = z.namelist()
    arrays = dict(np.load(folder / "policy.npz"))
    (folder / "policy.npz").unlink()
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(folder / "policy.npz", "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in names:
            key = name[:-4]
            with z.open(name, "w", force_zip64=True) as f:
                if key == "w0":
                    np.lib.format.write_array_header_1_0(f, header)
                    for _ in range(OBS * width * 4 // len(chunk) + 1):
                        f.write(chunk)
                else:
                    np.lib.format.write_array(f, np.asanyarray(arrays[key]))
    assert (folder / "policy.npz").stat().st_size < 2_000_000
    with pytest.raises(PolicyError, match=r"at most \d+ \(limit MAX_(ENTRY|WEIGHT)_BYTES\)"):
        load_policy(folder)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, f"deeper than {MAX_CARD_DEPTH}"),
        ('{"a": ' * 40 + "1" + "}" * 40, f"deeper than {MAX_CARD_DEPTH}"),
        (json.dumps({"pad": "x" * (MAX_CARD_BYTES + 1)}), f"at most {MAX_CARD_BYTES}"),
        ("[1, 2]", "JSON object"),
        ("{not json", "not readable JSON"),
        ('{"algorithm": "x", "layout": "y", "steps": NaN}', "not readable JSON"),
        ("\udcff", "not readable JSON"),
    ],
)
def test_hostile_card_json_files_are_refused(tmp_path, text, message):
    folder = _checkpoint(tmp_path / "card")
    (folder / "card.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(PolicyError, match=message):
        load_policy(folder)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"env": 5}, "'env' must be a string"),
        ({"env": "chess_v0"}, "unknown env 'chess_v0'"),
        ({"algorithm": ["PPO"]}, "'algorithm' must be a string"),
        ({"layout": None}, "'layout' must be a string"),
        ({"layout": "dragonstones_v0:000000000000"}, "retrain"),
        ({"env": "drachenschatten_v0"}, "layout"),  # a Fist layout on a DrachenSchatten card
        ({"steps": -1}, "'steps' must be an int"),
        ({"steps": "many"}, "'steps' must be an int"),
    ],
)
def test_card_schema_is_checked(tmp_path, changes, message):
    folder = _checkpoint(tmp_path / "card", **changes)
    with pytest.raises(PolicyError, match=message):
        load_policy(folder)


def test_a_missing_card_key_is_named(tmp_path):
    folder = _checkpoint(tmp_path / "card")
    (folder / "card.json").write_text(json.dumps({"layout": expected_layout("dragonstones_v1")}))
    with pytest.raises(PolicyError, match="lacks 'algorithm'"):
        load_policy(folder)


@pytest.mark.parametrize("spec", ["", "\x00", "x" * 5000, 3, None, b"random", 1.5, ["random"]])
def test_unusable_specs_raise_policy_error(spec):
    with pytest.raises(PolicyError):
        load_policy(spec)


def test_every_policy_refuses_an_all_zero_mask(tmp_path):
    e = fist_env(num_players=3)
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    blind = {"observation": obs["observation"], "action_mask": np.zeros_like(obs["action_mask"])}
    for spec in ("random", "heuristic", "champion", _checkpoint(tmp_path / "ok")):
        with pytest.raises(ValueError, match="no legal action"):
            load_policy(spec, seed=0).act(blind)
    with pytest.raises(ValueError, match="no legal action"):
        RandomPolicy(0).act_batch(obs["observation"][None], np.zeros((1, ACTIONS), np.int8))
    d = ds_env(num_players=2)
    d.reset(seed=0)
    dobs = d.observe(d.agent_selection)
    with pytest.raises(ValueError, match="no legal action"):
        load_policy("ds-heuristic").act({"observation": dobs["observation"],
                                         "action_mask": np.zeros_like(dobs["action_mask"])})


# ---------------------------------------------------------------------------- which game a policy plays
def test_a_policy_of_another_game_is_refused_at_make():
    # named by the registry ids users type, not the PettingZoo names (issue 48)
    with pytest.raises(ValueError, match=r"ds-heuristic.*plays drachenschatten, not dragonstones:"):
        make_gym("dragonstones", num_players=3, opponents="ds-heuristic")
    for spec in ("heuristic", "champion"):
        with pytest.raises(ValueError, match=r"plays dragonstones, not drachenschatten:"):
            make_gym("drachenschatten", num_players=2, opponents=spec)
    with pytest.raises(ValueError, match="plays"):
        make_gym("drachenschatten", num_players=3, opponents=["random", "heuristic"])
    assert make_gym("drachenschatten", num_players=2, opponents="ds-heuristic") is not None
    assert make_gym("dragonstones", num_players=3, opponents=RandomPolicy(0)) is not None


def test_evaluate_and_leagues_refuse_a_policy_of_another_game(tmp_path):
    with pytest.raises(EvaluationError, match=r"heuristic.*plays dragonstones, not drachenschatten"):
        evaluate(["heuristic", "random"], players=2, games=1, game="drachenschatten", progress=False)
    league = League(tmp_path, {"pool": 1.0}, pool=["ds-heuristic"], game="dragonstones_v1")
    with pytest.raises(ValueError, match="plays drachenschatten"):
        league.check()


def test_a_sampler_of_another_game_is_refused_at_make(tmp_path):
    league = League(tmp_path, {"random": 1.0}, game="drachenschatten_v0")
    with pytest.raises(ValueError, match="sampler plays drachenschatten, not dragonstones:"):
        make_gym("dragonstones", num_players=3, opponents=league)


# ---------------------------------------------------------------------------- inputs that slipped through
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), -0.5, True, "0.1", None])
def test_reward_shaping_must_be_finite(value):
    with pytest.raises(ValueError, match="reward_shaping"):
        fist_env(reward_shaping=value)


@pytest.mark.parametrize("seed", [1.5, 1.0, True, np.bool_(True), "abc", "1", -1, [1], np.float64(2.0)])
def test_seeds_must_be_integers(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        Game(4, seed=seed)
    e = raw_env(num_players=3)
    e.reset(seed=7)
    before = (e.state_dict(), e.agent_selection, e.game.record[:])
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        e.reset(seed=seed)
    assert (e.state_dict(), e.agent_selection, e.game.record) == before


def test_numpy_integer_seeds_are_the_same_seed():
    assert Game(4, seed=np.int64(5)).record == Game(4, seed=5).record
    assert Game(4, seed=np.uint8(5)).seed == 5


def test_state_dict_before_reset_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        raw_env().state_dict()


@pytest.mark.parametrize("seat", [True, False, 1.0, "0", -1, 3])
def test_gym_seat_is_checked(seat):
    with pytest.raises(ValueError, match="seat"):
        make_gym("dragonstones", num_players=3, seat=seat)


def test_gym_accepts_integral_numpy_actions_and_punishes_the_rest():
    def fresh():
        e = make_gym("dragonstones", num_players=3, seat=0)
        e.reset(seed=0)
        return e, int(np.flatnonzero(e.action_masks())[0])

    for wrap in (np.int64, np.int8, np.float32, np.float64, np.array, lambda a: np.array(a, np.float32)):
        e, a = fresh()
        _, reward, terminated, _, info = e.step(wrap(a))
        assert not info["illegal_action"] and reward == 0.0  # the key is always there (issue #47)
    for bad in (lambda a: np.float32(a + 0.5), lambda a: True, lambda a: np.array([a]), lambda a: float(a),
                lambda a: str(a), lambda a: None):
        e, a = fresh()
        _, reward, terminated, _, info = e.step(bad(a))
        assert terminated and reward == -1.0 and info["illegal_action"]
