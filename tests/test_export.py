"""Bring your own learner (policies/export.py, evaluation/factories.py): SB3 and torch MLPs exported to
checkpoint folders, torch modules and functions seated live, ``--policy-factory``, and the examples."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("openskill")

from torch import nn

import dragonstones_env
from dragonstones_env import games
from dragonstones_env.evaluation import EvaluationError, evaluate, main
from dragonstones_env.evaluation.factories import parse_factories
from dragonstones_env.evaluation.journal import JOURNAL
from dragonstones_env.play.arena import play_game, seat_rotated_match
from dragonstones_env.policies import (
    PolicyError,
    export_sb3,
    export_torch,
    from_callable,
    from_torch,
    load_policy,
)

ROOT = Path(__file__).resolve().parents[1]
FIST = games.get("dragonstones")
OBS, ACTIONS = FIST.raw_env.OBS_SIZE, FIST.raw_env.NUM_ACTIONS


def _batch(n: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of real decisions: random play at a 4-player table."""
    env = dragonstones_env.env(num_players=4)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    for agent in env.agent_iter():
        observation, _, term, trunc, _ = env.last()
        if term or trunc or len(observations) == n:
            break
        observations.append(observation["observation"])
        masks.append(observation["action_mask"])
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        del agent
    return np.array(observations), np.array(masks)


def _mlp(seed: int = 0, activation: type = nn.ReLU) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(OBS, 16), activation(), nn.Linear(16, 16), activation(), nn.Linear(16, ACTIONS))


# ---------------------------------------------------------------------------- SB3 -> folder
@pytest.fixture(scope="module")
def sb3_model():
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("Dragonstones-v0", num_players=4, opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(64)  # a step of training: weights no longer at their initial values
    return model


def test_sb3_model_exports_a_folder_that_plays_its_probabilities(sb3_model, tmp_path):
    folder = export_sb3(sb3_model, tmp_path / "ckpt", game="dragonstones", card={"steps": 64})
    assert sorted(p.name for p in folder.iterdir()) == ["card.json", "policy.npz", "value.npz"]  # no pickle
    card = json.loads((folder / "card.json").read_text())
    assert card["algorithm"] == "MaskablePPO" and card["env"] == FIST.name and card["layout"] == FIST.layout
    assert card["activation"] == "tanh" and card["steps"] == 64
    policy = load_policy(folder)
    observations, masks = _batch()
    with torch.no_grad():
        dist = sb3_model.policy.get_distribution(torch.as_tensor(observations), action_masks=masks)
        values = sb3_model.policy.predict_values(torch.as_tensor(observations)).numpy()[:, 0]
    np.testing.assert_allclose(policy.probabilities(observations, masks), dist.distribution.probs.numpy(),
                               atol=1e-5)
    assert policy.capabilities.value
    np.testing.assert_allclose([policy.value({"observation": o, "action_mask": m}) for o, m in
                                zip(observations, masks, strict=True)], values, atol=1e-5)


def test_sb3_export_with_model_writes_model_zip_and_refuses_another_game(sb3_model, tmp_path):
    folder = export_sb3(sb3_model, tmp_path / "full", with_model=True)
    assert {"model.zip", "model.zip.mark", "value.npz"} <= {p.name for p in folder.iterdir()}
    with pytest.raises(PolicyError, match="drachenschatten needs"):
        export_sb3(sb3_model, tmp_path / "ds", game="drachenschatten")
    with pytest.raises(PolicyError, match="unknown game 'chess'"):
        export_sb3(sb3_model, tmp_path / "chess", game="chess")


# ---------------------------------------------------------------------------- torch MLP -> folder
def test_torch_mlp_exports_a_folder_that_plays_as_the_module(tmp_path):
    net, critic = _mlp(), nn.Sequential(nn.Linear(OBS, 8), nn.ReLU(), nn.Linear(8, 1))
    folder = export_torch(net, tmp_path / "mlp", game="dragonstones", value=critic,
                          card={"algorithm": "my-ppo", "steps": 5}, env_options={"observation_mode": "table"})
    card = json.loads((folder / "card.json").read_text())
    assert card == {"activation": "relu", "algorithm": "my-ppo", "env": FIST.name, "layout": FIST.layout,
                    "steps": 5, "env_options": {"observation_mode": "table"}}
    observations, masks = _batch()
    observations = FIST.seat_view({"observation_mode": "table"})(observations)  # what the folder's policy sees
    played = load_policy(folder).probabilities(observations, masks)
    np.testing.assert_allclose(played, from_torch(net).probabilities(observations, masks), atol=1e-6)
    with torch.no_grad():
        want = critic(torch.as_tensor(observations[:1])).item()
    assert load_policy(folder).value({"observation": observations[0], "action_mask": masks[0]}) == \
        pytest.approx(want, abs=1e-5)


@pytest.mark.parametrize(("module", "message"), [
    (lambda: nn.Sequential(nn.Linear(OBS, 8), nn.Dropout(), nn.Linear(8, ACTIONS)), r"module\[1\] is Dropout"),
    (lambda: nn.Sequential(nn.Linear(OBS, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, ACTIONS)),
     r"mixes activations \['relu', 'tanh'\]"),
    (lambda: nn.Sequential(nn.Linear(OBS, ACTIONS), nn.Tanh()), "must end with a Linear layer"),
    (lambda: nn.Sequential(nn.Tanh(), nn.Linear(OBS, ACTIONS)), r"module\[0\] is Tanh"),
    (lambda: nn.Sequential(nn.Linear(OBS, ACTIONS, bias=False)), "without bias"),
    (lambda: nn.Sequential(nn.Linear(OBS - 1, ACTIONS)), f"takes {OBS - 1} inputs"),
    (lambda: nn.Sequential(nn.Linear(OBS, 7)), "gives 7 outputs"),
    (lambda: nn.Linear(OBS, ACTIONS), "is a Linear, not a plain MLP"),
    (lambda: nn.LSTM(OBS, ACTIONS), "is a LSTM, not a plain MLP"),
])
def test_what_is_not_a_plain_mlp_of_the_right_sizes_is_refused_by_name(module, message, tmp_path):
    with pytest.raises(PolicyError, match=message):
        export_torch(module(), tmp_path / "x")
    assert not (tmp_path / "x" / "card.json").exists()


# ---------------------------------------------------------------------------- live policies
class Counting(nn.Module):
    """A non-MLP module that counts its forward passes."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.a, self.b = nn.Linear(OBS, ACTIONS), nn.Linear(OBS, ACTIONS)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return self.a(x) * torch.sigmoid(self.b(x))


def test_from_torch_batches_in_one_forward_pass_and_never_plays_a_masked_action():
    module = Counting()
    policy = from_torch(module, game="dragonstones", seed=3)
    caps = policy.capabilities
    assert caps.batch and caps.probabilities and not caps.value
    observations, masks = _batch(8)
    module.calls = 0
    actions = policy.act_batch(observations, masks)
    assert module.calls == 1
    assert masks[np.arange(len(actions)), actions].all()
    probs = policy.probabilities(observations, masks)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert (probs[masks == 0] == 0).all()
    greedy = from_torch(module, deterministic=True).act_batch(observations, masks)
    np.testing.assert_array_equal(greedy, probs.argmax(axis=1))


def test_from_torch_refuses_a_module_of_the_wrong_sizes_when_made():
    with pytest.raises(PolicyError, match=r"cannot take a batch of dragonstones_v1's observations"):
        from_torch(nn.Linear(10, ACTIONS))
    with pytest.raises(PolicyError, match=rf"logits of shape \(1, 9\).*needs \(1, {ACTIONS}\)"):
        from_torch(nn.Linear(OBS, 9))
    with pytest.raises(PolicyError, match=r"takes a torch\.nn\.Module"):
        from_torch(lambda x: x)


def test_from_callable_checks_what_the_function_returns():
    observations, masks = _batch(1)
    illegal = int(np.flatnonzero(masks[0] == 0)[0])
    with pytest.raises(PolicyError, match=f"returned action {illegal}, which the action_mask forbids"):
        from_callable(lambda obs: illegal).act({"observation": observations[0], "action_mask": masks[0]})
    with pytest.raises(PolicyError, match="returned 'a'"):
        from_callable(lambda obs: "a").act({"observation": observations[0], "action_mask": masks[0]})
    with pytest.raises(PolicyError, match="plays dragonstones, not drachenschatten"):
        gymnasium.make("DrachenSchatten-v0", opponents=from_callable(lambda obs: 0, game="dragonstones"))


@pytest.mark.parametrize("make", [lambda: from_torch(Counting(), seed=0),
                                  lambda: from_callable(lambda obs: int(obs["action_mask"].argmax()),
                                                        game="dragonstones")])
def test_live_policies_play_as_gym_opponents_and_in_the_arena(make):
    env = gymnasium.make("Dragonstones-v0", num_players=3, opponents=[make(), make()])
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        _, reward, terminated, truncated, _ = env.step(action)
        done, steps = terminated or truncated, steps + 1
    assert steps > 1 and reward != 0
    result = seat_rotated_match(lambda: dragonstones_env.env(num_players=3), make(),
                                [load_policy("random"), load_policy("random")], 3, seed=2)
    assert result["games"] == 3 and 0 <= result["rate"] <= 1
    a = play_game(lambda: dragonstones_env.env(num_players=3), [make(), load_policy("random"), make()], "abc",
                  seed=9)
    b = play_game(lambda: dragonstones_env.env(num_players=3), [make(), load_policy("random"), make()], "abc",
                  seed=9)
    assert a == b  # seated anew each game: the same game for the same seed


# ---------------------------------------------------------------------------- --policy-factory
FACTORY = "tests.export_factories"


@pytest.mark.parametrize("workers", [1, 2])
def test_evaluate_plays_a_policy_factory_in_each_worker(workers, tmp_path, capsys):
    # with 2 workers the games are played by worker processes, which are handed no policy: each resolves
    # "mine" and "first" from their module:function text, or load_policy would refuse them as unknown specs
    rc = main(["--policies", "mine", "first", "random", "--policy-factory", f"mine={FACTORY}:torch_policy",
               "--policy-factory", f"first={FACTORY}:first_legal", "--players", "3", "--games", "6",
               "--workers", str(workers), "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert {row["spec"] for row in summary["policies"]} == {"mine", "first", "random"}
    assert all(row["games"] == 6 for row in summary["policies"])
    assert not (tmp_path / JOURNAL).exists()


def test_the_panel_takes_a_policy_factory_as_candidate_and_baseline(tmp_path):
    rc = main(["--panel", "mine", "--baseline", "first", "--policy-factory", f"mine={FACTORY}:torch_policy",
               "--policy-factory", f"first={FACTORY}:first_legal", "--players", "3", "--games", "3", "--k", "1",
               "--copies", "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    panel = json.loads((tmp_path / "panel.json").read_text())
    assert panel["candidate"] == "mine" and "first" in panel["opponents"]


@pytest.mark.parametrize(("function", "message"), [
    ("nowhere_at_all", r"cannot import it \(AttributeError"),
    ("broken", r"calling it failed \(RuntimeError: the user's factory failed"),
    ("not_a_policy", "it returned no policy"),
])
def test_a_factory_that_fails_is_a_clear_error_before_any_game(function, message, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--policies", "mine", "random", "--policy-factory", f"mine={FACTORY}:{function}", "--players", "3",
              "--games", "3", "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert f"--policy-factory mine={FACTORY}:{function}" in err and re.search(message, err)
    assert not (tmp_path / "out" / JOURNAL).exists()
    with pytest.raises(EvaluationError, match=r"cannot import it \(ModuleNotFoundError: No module named 'nope'"):
        evaluate(["mine", "random"], 3, 3, out=tmp_path / "o2", factories={"mine": "nope:make"}, progress=False)
    assert not (tmp_path / "o2" / JOURNAL).exists()


@pytest.mark.parametrize(("item", "message"), [
    ("mine", "expected NAME=package.module:function"),
    ("mine=tests.export_factories", "expected NAME"),
    ("mine=os.system('x'):y", "expected NAME"),
    ("a/b=m:f", "expected NAME"),
    ("heuristic=m:f", "is a built-in or shipped policy's name"),
])
def test_factory_flags_are_checked_before_anything_is_imported(item, message):
    with pytest.raises(EvaluationError, match=message):
        parse_factories([item])


def test_a_factory_name_is_given_once():
    assert parse_factories(["a=m:f", "b=m.n:g"]) == {"a": "m:f", "b": "m.n:g"}
    with pytest.raises(EvaluationError, match="given twice"):
        parse_factories(["a=m:f", "a=m:g"])


def test_a_module_function_text_anywhere_but_the_flag_is_refused_and_never_imported(tmp_path):
    probe = "tests.export_probe:make"
    sys.modules.pop("tests.export_probe", None)
    with pytest.raises(PolicyError, match=r"unknown policy spec 'tests\.export_probe:make'"):
        load_policy(probe)
    with pytest.raises(PolicyError, match="unknown policy spec"):
        evaluate([probe, "random"], 3, 3, progress=False)
    with pytest.raises(PolicyError, match="unknown policy spec"):
        gymnasium.make("Dragonstones-v0", opponents=probe)
    with pytest.raises(SystemExit):
        main(["--panel", "random", "--baseline", probe, "--players", "3", "--games", "3", "--no-progress",
              "--out", str(tmp_path)])
    card = {"algorithm": "mixture", "env": FIST.name, "layout": FIST.layout,
            "members": [{"policy": probe, "weight": 1.0}]}
    (tmp_path / "mix").mkdir()
    (tmp_path / "mix" / "card.json").write_text(json.dumps(card))
    with pytest.raises(PolicyError, match=r"mixture member 'tests\.export_probe:make' is neither"):
        load_policy(tmp_path / "mix")
    assert "tests.export_probe" not in sys.modules


def test_policies_import_no_torch():
    code = "import sys, dragonstones_env.policies as p; p.from_callable(print); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


# ---------------------------------------------------------------------------- the examples
@pytest.mark.parametrize("args", [["examples/cleanrl_selfplay.py", "--steps", "300", "--games", "2"],
                                  ["examples/sb3_export.py", "--steps", "64", "--games", "3"]])
def test_the_examples_run_at_a_tiny_budget(args, tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / args[0]), *args[1:], "--out", str(tmp_path / "out")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "win rate" in run.stdout or "| win rate |" in run.stdout
    assert (tmp_path / "out").is_dir()
