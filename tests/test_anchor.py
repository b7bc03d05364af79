"""The KL leash to the clone (training/anchor.py, imitate.anchor_kl): the per-decision penalty,
and a run that saves its anchor, charges it from the first rollout and resumes with it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from dragonstones_env.policies.checkpoint import CheckpointPolicy
from training.anchor import LOG_FLOOR, penalty
from training.config import ConfigError, load_config
from training.train import main as train


def small_anchor(seed: int = 0) -> CheckpointPolicy:
    rng = np.random.default_rng(seed)
    return CheckpointPolicy([(rng.normal(size=(5, 8)), rng.normal(size=8)), (rng.normal(size=(8, 4)), np.zeros(4))])


def rollout(seed: int = 1, steps: int = 3, envs: int = 2):
    """Observations, masks and legal actions shaped like SB3's rollout buffer."""
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(steps, envs, 5)).astype(np.float32)
    masks = rng.random((steps, envs, 4)) < 0.6
    masks[..., 0] = True  # at least one legal action everywhere
    actions = np.array([[rng.choice(np.flatnonzero(m)) for m in row] for row in masks])[..., None]
    return obs, masks, actions


def anchor_log_probs(anchor, obs, masks, actions):
    probs = anchor.probabilities(obs.reshape(-1, 5), masks.reshape(-1, 4))
    return np.log(probs[np.arange(len(probs)), actions.reshape(-1)]).reshape(actions.shape[:2])


def test_no_divergence_costs_nothing():
    anchor = small_anchor()
    obs, masks, actions = rollout()
    cost, kl = penalty(anchor, obs, masks, actions, anchor_log_probs(anchor, obs, masks, actions), coef=0.05)
    assert cost.shape == (3, 2) and np.allclose(cost, 0, atol=1e-6) and abs(kl) < 1e-6


def test_the_cost_is_coef_times_the_log_ratio_of_the_action_taken():
    anchor = small_anchor()
    obs, masks, actions = rollout()
    mine = anchor_log_probs(anchor, obs, masks, actions)
    mine[0, 1] += 0.7  # the learner found this action more likely than the clone did...
    mine[2, 0] -= 0.2  # ...and this one less (a negative cost: its reward rises)
    cost, kl = penalty(anchor, obs, masks, actions, mine, coef=0.1)
    expected = np.zeros((3, 2))
    expected[0, 1], expected[2, 0] = 0.07, -0.02
    assert np.allclose(cost, expected, atol=1e-6)
    assert kl == pytest.approx(0.5 / 6, abs=1e-6)


def test_an_action_the_anchor_never_takes_costs_a_bounded_amount():
    # a logit 10^4 below the others: the anchor's probability underflows to exactly 0
    anchor = CheckpointPolicy([(np.zeros((5, 4)), np.array([0.0, 0.0, 0.0, -1e4]))])
    obs = np.zeros((1, 1, 5), np.float32)
    masks = np.ones((1, 1, 4), bool)
    cost, _ = penalty(anchor, obs, masks, np.array([[3]]), np.array([[-1.0]]), coef=0.05)
    assert np.isfinite(cost).all() and cost[0, 0] == pytest.approx(0.05 * (-1.0 - LOG_FLOOR))


def test_arrays_of_different_lengths_are_refused_by_name():
    anchor = small_anchor()
    obs, masks, actions = rollout()
    with pytest.raises(ValueError, match="6 observations, 4 masks"):
        penalty(anchor, obs, masks[:2], actions, np.zeros((3, 2)), coef=0.05)


def test_a_negative_leash_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"imitate\.anchor_kl: must be a finite number in \[0, 100\], got -0\.1"):
        load_config(None, ["imitate.anchor_kl=-0.1"])


CONFIG = {"total_timesteps": 512, "progress_bar": False, "checkpoint_every": 256,
          "ppo": {"learning_rate": 0.003, "net_arch": [32]},
          "sb3": {"n_envs": 1, "n_steps": 256, "batch_size": 128, "n_epochs": 2},
          "league": {"mix": {"random": 1.0}},
          "imitate": {"teacher": "heuristic", "games": 4, "epochs": 2, "anchor_kl": 0.05},
          "eval": {"every": 512, "games": 1, "final_games": 0, "final_panel_games": 0}}


def write(tmp_path, **changes):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**CONFIG, "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "out"),
                                    **changes}))
    return path


def scalars(run_dir, tag):
    """The tag's values in step order. A run that learns in chunks writes an event file per chunk,
    named ``...<pid>.<n>``: sorting the names puts ``.10`` before ``.9``, so order by the step."""
    events = []
    for path in run_dir.glob("tb/*/events.*"):
        acc = EventAccumulator(str(path))
        acc.Reload()
        if tag in acc.Tags()["scalars"]:
            events += acc.Scalars(tag)
    return [e.value for e in sorted(events, key=lambda e: (e.step, e.wall_time))]


def test_a_leashed_run_saves_its_anchor_charges_it_and_resumes_with_it(tmp_path):
    config = write(tmp_path, run_name="leashed")
    assert train(["--config", str(config)]) == 0
    run = tmp_path / "runs" / "leashed"
    card = json.loads((run / "anchor" / "card.json").read_text())
    assert card["anchor"] is True and card["steps"] == 0
    kl = scalars(run, "anchor/kl")
    assert len(kl) == 2  # one per rollout
    assert abs(kl[0]) < 1e-5  # the first rollout is played by the anchor itself
    assert kl[1] != 0  # after one PPO update the learner has moved, and pays for it
    assert scalars(run, "anchor/penalty") == pytest.approx([0.05 * k for k in kl], abs=1e-6)
    anchor_before = (run / "anchor" / "policy.npz").read_bytes()
    assert train(["--config", str(config), "--resume", "--set", "total_timesteps=1024"]) == 0
    assert (run / "anchor" / "policy.npz").read_bytes() == anchor_before  # the same clone, not the resumed weights
    assert len(scalars(run, "anchor/kl")) == 4


def test_a_leash_is_refused_where_there_is_nothing_to_leash_to(tmp_path, capsys):
    # random weights are no start to leash to: refused before the run folder exists
    assert train(["--config", str(write(tmp_path, run_name="random", imitate={"anchor_kl": 0.05}))]) == 2
    assert "random weights are no place to leash to" in capsys.readouterr().err
    assert not (tmp_path / "runs" / "random").exists()
    free = write(tmp_path, run_name="free", imitate={"teacher": "heuristic", "games": 2, "epochs": 1})
    assert train(["--config", str(free)]) == 0
    # resumed with a leash it never had: refused, and the run is left as it was
    assert train(["--config", str(free), "--resume", "--set", "imitate.anchor_kl=0.05",
                  "--set", "total_timesteps=1024"]) == 2
    assert "no anchor to leash to" in capsys.readouterr().err


def test_a_finetuned_run_is_leashed_to_the_model_it_starts_from(tmp_path):
    free = write(tmp_path, run_name="free", imitate={})
    assert train(["--config", str(free)]) == 0
    tuned = write(tmp_path, run_name="tuned", imitate={"anchor_kl": 0.05})
    assert train(["--config", str(tuned), "--finetune", str(tmp_path / "out" / "free"), "--trust-model-zip"]) == 0
    run = tmp_path / "runs" / "tuned"
    start = np.load(tmp_path / "out" / "free" / "policy.npz")
    anchor = np.load(run / "anchor" / "policy.npz")
    assert all(np.array_equal(start[k], anchor[k]) for k in start.files)
    assert abs(scalars(run, "anchor/kl")[0]) < 1e-5


def test_a_moving_leash_follows_the_learner_and_resumes_from_where_it_moved(tmp_path):
    """imitate.magnet_every (regularised self-play): the anchor becomes the learner's weights of the
    step it moved at, the rollout after a move is charged against them, --resume keeps them."""
    config = write(tmp_path, run_name="magnet", total_timesteps=768,
                   imitate={**CONFIG["imitate"], "magnet_every": 300})
    assert train(["--config", str(config)]) == 0
    run = tmp_path / "runs" / "magnet"
    card = json.loads((run / "anchor" / "card.json").read_text())
    assert card["steps"] == 600  # moved at steps 300 and 600 (one env: the callback sees every step)
    assert json.loads((run / "checkpoint" / "state.json").read_text())["magnet_steps"] == 600
    assert len(scalars(run, "anchor/kl")) == 3 and scalars(run, "anchor/kl")[-1] != 0  # charged after a move
    moved = (run / "anchor" / "policy.npz").read_bytes()
    assert train(["--config", str(config), "--resume", "--set", "total_timesteps=1024"]) == 0
    assert json.loads((run / "anchor" / "card.json").read_text())["steps"] == 900  # the schedule goes on
    assert (run / "anchor" / "policy.npz").read_bytes() != moved


def test_a_moving_leash_without_a_leash_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"imitate\.magnet_every"):
        load_config(None, ["imitate.magnet_every=1000"])
