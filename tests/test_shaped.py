"""The shaped network (issue 52): dragonstones_env/policies/shaped.py (numpy) and training/shaped.py (torch)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import dragonstones_env
from dragonstones_env import games
from dragonstones_env.games.dragonstones import actions as A
from dragonstones_env.games.dragonstones.observation import LAYOUT, OBS_SIZE
from dragonstones_env.policies import PolicyError, load_policy
from dragonstones_env.policies.checkpoint import (
    POLICY_FILE,
    VALUE_FILE,
    CheckpointPolicy,
    ShapedCheckpointPolicy,
    save_checkpoint,
    save_model,
    sb3_weights,
)
from dragonstones_env.policies.registry import shipped_dir
from dragonstones_env.policies.shaped import features, game_shape
from training.config import PPO, ConfigError, load_config
from training.promote import promote
from training.shaped import ShapedPolicy
from training.start import read_start
from training.train import new_model

SHAPE = game_shape(games.get("dragonstones").raw_env)


def model(flat: bool = True, seed: int = 0):
    venv = make_vec_env("Dragonstones-v0", n_envs=1, env_kwargs={"num_players": 4, "opponents": ["random"] * 3})
    ppo = PPO(architecture="shaped", net_arch=[32, 16], seat_arch=[12, 8], flat_logits=flat, n_steps=16,
              batch_size=16)
    m = new_model(venv, ppo, seed, game="dragonstones")
    with torch.no_grad():  # away from SB3's near-zero head, so that a wrong composition shows
        for p in m.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    return m


def observations(rng: np.random.Generator, n: int = 16) -> np.ndarray:
    """Random observations of tables of 2 to 6 seats: the absent seats' cuts are zeros, as the env's."""
    x = rng.random((n, OBS_SIZE)).astype(np.float32)
    for row, seats in zip(x, rng.integers(2, 7, n), strict=True):
        row[SHAPE.seat_index[seats - 1:].ravel()] = 0.0
    return x


def torch_logits(m, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with torch.no_grad():
        obs = torch.as_tensor(x)
        logits = m.policy.get_distribution(obs).distribution.logits  # log-softmax of the head's logits
        return logits.numpy(), m.policy.predict_values(obs).numpy()


@pytest.mark.parametrize("flat", [True, False])
def test_numpy_forward_equals_torch(flat):
    m = model(flat)
    x = observations(np.random.default_rng(1))
    want, _ = torch_logits(m, x)
    policy = CheckpointPolicy.from_sb3(m)
    assert isinstance(policy, ShapedCheckpointPolicy) and (policy.net.flat is not None) == flat
    got = policy.logits(x)
    got = got - np.log(np.exp(got - got.max(1, keepdims=True)).sum(1, keepdims=True)) - got.max(1, keepdims=True)
    np.testing.assert_allclose(got, want, atol=1e-5)
    with torch.no_grad():
        raw = m.policy.action_net(m.policy.mlp_extractor.forward_actor(m.policy.extract_features(
            torch.as_tensor(x)))).numpy()
    np.testing.assert_allclose(policy.logits(x), raw, atol=1e-5)


def test_saved_shaped_checkpoint_loads_and_plays_legal_moves(tmp_path):
    m = model()
    folder = save_checkpoint(m, tmp_path / "shaped", {"steps": 0})
    card = json.loads((folder / "card.json").read_text())
    assert card["architecture"] == "shaped"
    policy = load_policy(str(folder), seed=3)
    assert isinstance(policy, ShapedCheckpointPolicy)
    x = observations(np.random.default_rng(2), 8)
    np.testing.assert_allclose(policy.logits(x), CheckpointPolicy.from_sb3(m).logits(x), atol=1e-6)
    # the critic, read from value.npz, equals the torch model's value
    _, values = torch_logits(m, x[:1])
    assert policy.value({"observation": x[0]}) == pytest.approx(float(values[0, 0]), abs=1e-5)
    for n in (3, 4, 6):  # whole games: the env raises on an illegal action
        env = dragonstones_env.env(num_players=n)
        env.reset(seed=n)
        moves = 0
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else policy.act(obs)
            if action is not None:
                assert obs["action_mask"][action] == 1
                moves += 1
            env.step(action)
        assert moves > 0 and env.game.over


def test_cards_without_architecture_load_as_mlp(tmp_path):
    folder = shutil.copytree(shipped_dir() / "champion", tmp_path / "old")
    card = json.loads((folder / "card.json").read_text())
    assert "architecture" not in card  # written before shaped networks
    policy = load_policy(str(folder))
    assert type(policy) is CheckpointPolicy and len(policy.weights) == 3
    (folder / "card.json").write_text(json.dumps({**card, "architecture": "mlp"}))
    assert type(load_policy(str(folder))) is CheckpointPolicy
    (folder / "card.json").write_text(json.dumps({**card, "architecture": "transformer"}))
    with pytest.raises(PolicyError, match=r"unknown architecture 'transformer' \(known: mlp, shaped\)"):
        load_policy(str(folder))
    # a card that says shaped over an MLP's weights, and the other way round: refused, naming what is wrong
    (folder / "card.json").write_text(json.dumps({**card, "architecture": "shaped"}))
    with pytest.raises(PolicyError, match="no 'architecture' entry"):
        load_policy(str(folder))
    shaped = save_checkpoint(model(), tmp_path / "shaped", {"steps": 0}, with_model=False)
    shutil.copy(shaped / POLICY_FILE, folder / POLICY_FILE)
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(PolicyError, match="another architecture"):
        load_policy(str(folder))


def test_a_shaped_checkpoint_of_another_shape_is_refused(tmp_path):
    folder = save_checkpoint(model(), tmp_path / "shaped", {"steps": 0})
    with np.load(folder / POLICY_FILE) as data:
        arrays = dict(data)
    np.savez(folder / POLICY_FILE, **{**arrays, "shape": np.array("0123456789ab")})
    with pytest.raises(PolicyError, match="made for the game shape '0123456789ab'"):
        load_policy(str(folder))
    np.savez(folder / POLICY_FILE, **{**arrays, "h_w": arrays["h_w"][:, :-1]})
    with pytest.raises(PolicyError, match="h_w"):
        load_policy(str(folder))
    assert (folder / VALUE_FILE).is_file()


def test_components_come_from_the_action_decoding():
    names, incidence = SHAPE.components, SHAPE.incidence
    assert incidence.shape == (len(names), A.NUM_ACTIONS)
    fairy, common, black, amulet = 7, 3, 1, 0
    action = A.encode(("bid", fairy, common, black, amulet), 0, 4)
    on = {names[i] for i in np.flatnonzero(incidence[:, action])}
    assert on == {"bid", "bid[1]=7", "bid[2]=3", "bid[3]=1", "bid[4]=0"}
    # a bid component per amount of each coin kind: the fairy amounts are the family's first axis
    assert sum(n.startswith("bid[1]=") for n in names) == A.FAIRY_CAP + 1
    assert sum(n.startswith("bid[2]=") for n in names) == A.COMMON_CAP + 1
    # every action has its family's component, and no two actions have the same components
    assert len({incidence[:, a].tobytes() for a in range(A.NUM_ACTIONS)}) == A.NUM_ACTIONS
    for fam in A.FAMILIES:
        assert incidence[names.index(fam.name), fam.start:fam.stop].all()
        assert incidence[names.index(fam.name)].sum() == fam.size


def test_seat_encoder_pools_opponents_whatever_their_seats():
    m = model()
    policy = CheckpointPolicy.from_sb3(m)
    x = observations(np.random.default_rng(4), 1)[0]
    x[SHAPE.seat_index.ravel()] = np.random.default_rng(5).random(SHAPE.seat_index.size)  # 6 seats
    swapped = x.copy()
    order = [3, 0, 4, 1, 2]
    swapped[SHAPE.seat_index.ravel()] = x[SHAPE.seat_index[order].ravel()]
    act = np.tanh
    np.testing.assert_allclose(features(policy.net, SHAPE, act, x[None]),
                               features(policy.net, SHAPE, act, swapped[None]), atol=1e-6)
    assert not np.allclose(features(policy.net, SHAPE, act, x[None]),
                           features(policy.net, SHAPE, act, (x * 0.5)[None]))
    # the cuts are the layout's seat pieces: own seat 0 with the unseated pieces, each opponent's the same features
    seated = sum(int(np.prod(p.shape)) for p in LAYOUT.values() if p.seat_axis is not None)
    assert SHAPE.seat_index.shape == (5, seated // 6) and len(SHAPE.own_index) == OBS_SIZE - 5 * (seated // 6)
    assert sorted([*SHAPE.own_index, *SHAPE.seat_index.ravel()]) == list(range(OBS_SIZE))
    assert list(SHAPE.seat_index[0][:2]) == [LAYOUT["seat_present"].slice.start + 1,
                                            LAYOUT["acting_seat"].slice.start + 1]


def test_config_architecture_is_checked():
    assert load_config(None, []).sb3.architecture == "mlp"
    with pytest.raises(ConfigError, match=r"sb3\.architecture: must be one of"):
        load_config(None, ["sb3.architecture=cnn"])
    with pytest.raises(ConfigError, match="start"):
        load_config(None, ["sb3.architecture=shaped", "start=policies/starts/heuristic-clone"])
    cfg = load_config(str(Path(__file__).parents[1] / "configs" / "netshape-shaped.yaml"), [])
    assert (cfg.sb3.architecture, cfg.seed, cfg.total_timesteps) == ("shaped", 5, 150_000)


def test_promote_half_ships_a_shaped_checkpoint_that_plays_as_float32(tmp_path):
    m = model()
    folder = save_checkpoint(m, tmp_path / "run", {"steps": 0})
    promote(folder, tmp_path / "shipped", half=True)
    shipped = load_policy(str(tmp_path / "shipped"))
    assert isinstance(shipped, ShapedCheckpointPolicy) and shipped.net.head[0].dtype == np.float32
    x = observations(np.random.default_rng(6), 4)
    np.testing.assert_allclose(shipped.logits(x), CheckpointPolicy.from_sb3(m).logits(x), atol=0.05)
    assert shipped.value({"observation": x[0]}) == pytest.approx(load_policy(str(folder)).value({"observation": x[0]}),
                                                                  abs=0.05)


def test_a_shaped_checkpoint_is_no_start(tmp_path):
    m = model()
    folder = save_checkpoint(m, tmp_path / "shaped", {"steps": 0})
    with pytest.raises(ConfigError, match="is a shaped network; a start gives its layers"):
        read_start(str(folder), "dragonstones_v1")
    with pytest.raises(PolicyError, match="has no MLP layers"):  # what start, export and the MLP readers use
        sb3_weights(m, "actor")


def test_model_zip_of_a_shaped_network_loads_as_one(tmp_path):
    m = model(flat=False)
    save_model(m, tmp_path / "model.zip")
    again = MaskablePPO.load(tmp_path / "model.zip", device="cpu")  # --resume and --finetune load it so
    assert isinstance(again.policy, ShapedPolicy) and again.policy.action_net.flat is None
    x = observations(np.random.default_rng(7), 4)
    np.testing.assert_allclose(torch_logits(again, x)[0], torch_logits(m, x)[0], atol=1e-6)
