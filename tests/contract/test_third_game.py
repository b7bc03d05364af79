"""A third game, defined only in the tests (toy_auction.py), works everywhere once registered:
the contract tests (they run over it too, see conftest.py), the Gymnasium id, load_policy("random"),
dragonstones_env.evaluation and a short training.train run -- with no edit outside its file."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
import yaml

from dragonstones_env import games
from dragonstones_env.evaluation import evaluate, player_range
from dragonstones_env.policies import load_policy
from tests.contract.conftest import TOY
from tests.extras import EVAL, EVAL_MODULE, TRAIN, TRAIN_MODULE


@pytest.fixture
def toy():
    games.register(TOY)
    yield TOY
    games.unregister(TOY.id)


def test_the_registry_knows_it_only_while_registered(toy):
    assert games.get("toyauction") is toy and games.get("toyauction_v0") is toy
    assert player_range("toyauction") == (2, 4)
    games.unregister(toy.id)
    with pytest.raises(games.UnknownGameError, match="toyauction"):
        games.get("toyauction")
    assert "ToyAuction-v0" not in gym.registry
    games.register(toy)


def test_gym_id_and_random_policy(toy):
    e = gym.make("ToyAuction-v0", num_players=3, opponents="random")
    obs, info = e.reset(seed=0)
    assert obs.shape == (toy.raw_env.OBS_SIZE,) and info["num_players"] == 3
    policy = load_policy("random", seed=1)
    aec = toy.env(num_players=2)
    aec.reset(seed=0)
    observation = aec.observe(aec.agent_selection)
    assert observation["action_mask"][policy.act(observation)] == 1


def test_evaluate_plays_it(toy):
    pytest.importorskip(EVAL_MODULE, reason=EVAL)  # the ratings
    summary = evaluate(["random"], players=3, games=6, game="toyauction", progress=False)
    assert sum(row["games"] for row in summary["policies"]) == 18  # 6 games x 3 seats


def test_a_short_training_run_on_it(toy, tmp_path):
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.train import main as train

    cfg = {
        "game": "toyauction", "num_players": 3, "run_name": "toy", "total_timesteps": 256,
        "progress_bar": False, "checkpoint_every": 256,
        "ppo": {"net_arch": [16]}, "sb3": {"n_envs": 1, "n_steps": 128, "batch_size": 64, "n_epochs": 1},
        "league": {"mix": {"random": 1.0}},
        "eval": {"every": 256, "games": 3, "players": 3, "final_games": 3, "final_panel_games": 0},
        "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "policies"),
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert train(["--config", str(path)]) == 0
    card = json.loads((tmp_path / "policies" / "toy" / "card.json").read_text())
    assert card["env"] == "toyauction_v0" and card["layout"] == toy.layout
    policy = load_policy(str(tmp_path / "policies" / "toy"), seed=0)
    assert policy.game == "toyauction_v0"
