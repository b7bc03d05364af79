"""Behaviour cloning before self-play (training/imitate.py): the teacher's decisions, the
returns that followed them, a clone that copies it, and the config that asks for it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)


import torch

import dragonstones_env  # noqa: F401  (registers the gym ids)
from dragonstones_env.bounds import FILE_BYTES
from training.config import PPO, ConfigError, load_config
from training.envs import make_vec_env
from training.imitate import (
    VISIT_WIDTH,
    Demonstrations,
    agreement,
    clone,
    collect,
    load_demonstrations,
    save_demonstrations,
    saved_identity,
    visit_target,
)
from training.train import main as train
from training.train import new_model

ENV = {"num_players": 4, "observation_mode": "recall", "reward_shaping": 0.05}


def test_collect_keeps_every_teacher_decision_with_its_discounted_return():
    demos = collect("Dragonstones-v0", "heuristic", ["random"], games=3, gamma=0.9, seed=1, max_rows=10**6, **ENV)
    assert demos.games == 3 and len(demos) == len(demos.masks) == len(demos.observations) == len(demos.returns)
    # every kept action was legal where it was taken
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    # a game's last decision is followed by the final reward: +1 (plus shaping) for a win, -1/3 or less else
    assert 0 <= demos.wins <= 3
    # the same seed gives the same decisions, byte for byte
    again = collect("Dragonstones-v0", "heuristic", ["random"], games=3, gamma=0.9, seed=1, max_rows=10**6, **ENV)
    assert np.array_equal(demos.actions, again.actions) and np.array_equal(demos.observations, again.observations)
    assert np.array_equal(demos.returns, again.returns)


def test_returns_are_discounted_sums_of_the_rewards_that_followed():
    demos = collect("Dragonstones-v0", "heuristic", ["random"], games=1, gamma=0.5, seed=4, max_rows=10**6, **ENV)
    r = demos.returns
    # G_t = r_t + 0.5 G_{t+1}: the rewards recovered from consecutive returns are shaping
    # (a multiple of 0.05 per point) except the last, which holds the final +1 or -1/3
    rewards = r[:-1] - 0.5 * r[1:]
    steps = np.round(rewards / 0.05, 4)
    assert np.allclose(steps, np.round(steps)) and (steps >= 0).all()
    extra = [(r[-1] - final) / 0.05 for final in (1.0, -1 / 3, 0.0)]  # win, loss, truncation
    assert any(x > -1e-4 and abs(x - round(x)) < 1e-4 for x in extra), r[-1]


def test_collect_stops_at_max_rows():
    demos = collect("Dragonstones-v0", "random", ["random"], games=50, gamma=0.99, seed=0, max_rows=10, **ENV)
    assert demos.games == 1 and len(demos) >= 10


@pytest.mark.parametrize("max_rows", [10**6, 150])
def test_collect_in_worker_processes_keeps_the_same_decisions(max_rows):
    one = collect("Dragonstones-v0", "heuristic", ["random", "heuristic"], games=5, gamma=0.9, seed=3,
                  max_rows=max_rows, **ENV)
    two = collect("Dragonstones-v0", "heuristic", ["random", "heuristic"], games=5, gamma=0.9, seed=3,
                  max_rows=max_rows, workers=2, **ENV)
    assert (one.games, one.wins) == (two.games, two.wins) and (one.games < 5) == (max_rows == 150)
    for a, b in [(one.observations, two.observations), (one.actions, two.actions), (one.returns, two.returns),
                 (one.masks, two.masks)]:
        assert np.array_equal(a, b)


def test_a_search_teacher_is_handed_its_seat_and_plays_legal_moves():
    # an expert-iteration teacher (configs/ds-champion-v3-search.yaml): the search decides with its
    # seat's information state, which collect hands it as every table does (policies.decide)
    demos = collect("DrachenSchatten-v0", "ismcts:simulations=4", ["ds-heuristic"], games=2, gamma=1.0, seed=5,
                    max_rows=10**6, num_players=3)
    assert demos.games == 2 and len(demos) > 0 and demos.masks[np.arange(len(demos)), demos.actions].all()
    again = collect("DrachenSchatten-v0", "ismcts:simulations=4", ["ds-heuristic"], games=2, gamma=1.0, seed=5,
                    max_rows=10**6, num_players=3)
    assert np.array_equal(demos.actions, again.actions)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_search_teacher_can_teach_its_root_visits(workers):
    """imitate.target=visits: each decision's target is the search's visit shares at the root (its
    VISIT_WIDTH most visited), legal there, summing to 1, led by the move it played."""
    kwargs = {"gamma": 1.0, "seed": 5, "max_rows": 10**6, "num_players": 3}
    demos = collect("DrachenSchatten-v0", "ismcts:simulations=12", ["ds-heuristic"], games=2, workers=workers,
                    target="visits", **kwargs)
    moves = collect("DrachenSchatten-v0", "ismcts:simulations=12", ["ds-heuristic"], games=2, **kwargs)
    assert np.array_equal(demos.actions, moves.actions)  # the target does not change the teacher's play
    assert moves.targets.shape == (len(moves), 1) and np.array_equal(moves.targets[:, 0], moves.actions)
    rows = np.arange(len(demos))
    assert 1 < demos.targets.shape[1] <= VISIT_WIDTH and np.allclose(demos.weights.sum(axis=1), 1.0)
    assert demos.masks[rows[:, None], demos.targets].all()
    top = demos.weights.max(axis=1)
    assert (demos.weights[rows, 0] == top).all()
    # the move played is a most visited one (ties may be broken differently: by mean, then order)
    played = (demos.targets == demos.actions[:, None]) & (demos.weights == top[:, None])
    assert played.any(axis=1).all()
    searched = demos.weights[:, 1] > 0  # decisions with more than one move tried
    assert searched.sum() > len(demos) / 4
    assert np.allclose(demos.weights[searched] * 12, np.round(demos.weights[searched] * 12), atol=1e-4)


def test_visit_target_keeps_the_most_visited_as_shares():
    assert visit_target({4: 1, 7: 6, 2: 3}, 8) == ([7, 2, 4], [0.6, 0.3, 0.1])
    assert visit_target({4: 2, 7: 6, 2: 2}, 2) == ([7, 2], [0.75, 0.25])  # ties: the smaller action


def test_collect_refuses_a_visits_target_from_a_teacher_without_a_search():
    with pytest.raises(ValueError, match="needs a search teacher"):
        collect("Dragonstones-v0", "heuristic", ["random"], games=1, gamma=1.0, seed=0, max_rows=10, target="visits",
                **ENV)
    with pytest.raises(ValueError, match=r"one of \('action', 'visits'\)"):
        collect("Dragonstones-v0", "heuristic", ["random"], games=1, gamma=1.0, seed=0, max_rows=10, target="moves",
                **ENV)


def test_demonstrations_of_both_targets_join_padded():
    hard = collect("Dragonstones-v0", "heuristic", ["random"], games=1, gamma=1.0, seed=0, max_rows=10**6, **ENV)
    soft = Demonstrations(hard.observations, hard.masks, hard.actions, hard.returns, 1, 0.0,
                          targets=np.stack([hard.actions, hard.actions], axis=1),
                          weights=np.full((len(hard), 2), 0.5, np.float32))
    both = Demonstrations.concatenate([hard, soft])
    assert both.targets.shape == (2 * len(hard), 2) and np.allclose(both.weights.sum(axis=1), 1.0)
    assert np.array_equal(both.targets[:len(hard), 1], hard.actions) and (both.weights[:len(hard), 1] == 0).all()


def test_clone_fits_a_distribution_as_its_target():
    """Cross-entropy with a soft target: fitted long enough, the clone's probabilities are the target's."""
    demos = collect("Dragonstones-v0", "heuristic", ["heuristic"], games=1, gamma=0.99, seed=2, max_rows=10**6,
                    **ENV)
    rows = [i for i in range(len(demos)) if demos.masks[i].sum() >= 2]
    demos = Demonstrations(*(getattr(demos, k)[rows] for k in ("observations", "masks", "actions", "returns")), 1, 0.0)
    second = [int(next(a for a in np.flatnonzero(m) if a != act)) for m, act in zip(demos.masks, demos.actions,
                                                                                      strict=True)]
    demos.targets = np.stack([demos.actions, second], axis=1)
    demos.weights = np.tile(np.array([0.7, 0.3], np.float32), (len(demos), 1))
    venv = make_vec_env("Dragonstones-v0", n_envs=1, seed=0, subproc=False, opponents="random", **ENV)
    model = new_model(venv, PPO(net_arch=[64]), seed=0)
    clone(model, demos, epochs=300, batch_size=256, learning_rate=3e-3, value_coef=0.5, holdout=0.0, seed=0,
          log=lambda _: None)
    venv.close()
    with torch.no_grad():
        probs = model.policy.get_distribution(torch.as_tensor(demos.observations),
                                              action_masks=torch.as_tensor(demos.masks)).distribution.probs.numpy()
    fitted = probs[np.arange(len(demos))[:, None], demos.targets]
    assert np.allclose(fitted.mean(axis=0), [0.7, 0.3], atol=0.05), fitted.mean(axis=0)


def test_clone_learns_to_copy_the_teacher():
    demos = collect("Dragonstones-v0", "heuristic", ["heuristic"], games=12, gamma=0.99, seed=2, max_rows=10**6,
                    **ENV)
    venv = make_vec_env("Dragonstones-v0", n_envs=1, seed=0, subproc=False, opponents="random", **ENV)
    model = new_model(venv, PPO(net_arch=[64]), seed=0)
    everything = np.arange(len(demos))
    before = agreement(model.policy, demos, everything, 256)
    stats = clone(model, demos, epochs=15, batch_size=128, learning_rate=3e-3, value_coef=0.5, holdout=0.0,
                  seed=0, log=lambda _: None)
    after = agreement(model.policy, demos, everything, 256)
    venv.close()
    assert after > max(0.5, before + 0.2), (before, after)
    assert stats["epoch"] == 15 and stats["loss_policy"] > 0


@pytest.mark.parametrize(
    ("override", "key"),
    [("imitate.games=0", "imitate.games"), ("imitate.max_rows=0", "imitate.max_rows"),
     ("imitate.max_rows=100000000", "imitate.max_rows"), ("imitate.epochs=0", "imitate.epochs"),
     ("imitate.learning_rate=0", "imitate.learning_rate"), ("imitate.holdout=1", "imitate.holdout"),
     ("imitate.value_coef=-1", "imitate.value_coef"), ("imitate.opponents=['']", "imitate.opponents"),
     ("imitate.teach=heuristic", "imitate.teach"), ("imitate.target=moves", "imitate.target")],
)
def test_bad_imitate_values_name_their_key(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(None, [override])


@pytest.mark.parametrize(("teacher", "target", "message"), [("no-such-bot", "action", "no-such-bot"),
                                                            ("ds-heuristic", "action", "plays"),
                                                            ("heuristic", "visits", "needs a search teacher")])
def test_a_teacher_that_cannot_teach_stops_the_run_before_its_folder(tmp_path, capsys, teacher, target, message):
    runs = tmp_path / "runs"
    assert train(["--set", f"runs_dir={runs}", "--set", f"imitate.teacher={teacher}",
                  "--set", f"imitate.target={target}"]) == 2
    err = capsys.readouterr().err
    assert "imitate" in err and message in err
    assert not runs.exists()


def test_training_starts_from_the_clone_and_says_so_in_the_card(tmp_path):
    cfg = {"total_timesteps": 256, "progress_bar": False, "checkpoint_every": 256,
           "ppo": {"net_arch": [32]}, "sb3": {"n_envs": 1, "n_steps": 256, "batch_size": 128, "n_epochs": 1},
           "league": {"mix": {"random": 1.0}},
           "imitate": {"teacher": "heuristic", "games": 4, "epochs": 2, "holdout": 0.25},
           "eval": {"every": 512, "games": 1, "final_games": 0, "final_panel_games": 0},
           "run_name": "cloned", "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "out")}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert train(["--config", str(path)]) == 0
    card = json.loads((tmp_path / "out" / "cloned" / "card.json").read_text())
    im = card["imitation"]
    assert im["teacher"] == "heuristic" and im["games"] == 4 and im["decisions"] > 0
    assert im["opponents"][0] == "heuristic" and "value" in im["opponents"]  # the teacher and the zoo
    assert 0 <= im["holdout_agreement"] <= 1 and im["epoch"] == 2


# -- imitate.demonstrations: one collection of an expensive teacher, many fits

IDENTITY = {"teacher": "heuristic", "games": 2, "seed": 1}


def _saved(tmp_path, **changes):
    """A real collection saved with IDENTITY, then its arrays replaced by ``changes`` (as a hand-edited file)."""
    demos = collect("Dragonstones-v0", "heuristic", ["random"], games=2, gamma=0.9, seed=1, max_rows=10**6, **ENV)
    path = tmp_path / "demos.npz"
    save_demonstrations(demos, path, IDENTITY)
    if changes:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        np.savez(path, **(arrays | changes))
    return demos, path


def _sizes(demos):
    return demos.observations.shape[1], demos.masks.shape[1]


def test_saved_demonstrations_read_back_the_same(tmp_path):
    demos, path = _saved(tmp_path)
    again = load_demonstrations(path, dict(IDENTITY), *_sizes(demos))
    for k in ("observations", "masks", "actions", "returns", "targets", "weights"):
        mine, theirs = getattr(again, k), getattr(demos, k)
        assert np.array_equal(mine, theirs) and mine.dtype == theirs.dtype
    assert (again.games, again.wins) == (demos.games, demos.wins)
    assert not list(tmp_path.glob("*.part"))  # written whole, then renamed


def test_demonstrations_of_other_settings_are_refused_by_name(tmp_path):
    demos, path = _saved(tmp_path)
    with pytest.raises(ValueError, match=r"games: recorded 2, now 3"):
        load_demonstrations(path, IDENTITY | {"games": 3}, *_sizes(demos))
    with pytest.raises(ValueError, match=r"target: recorded None, now 'visits'"):
        load_demonstrations(path, IDENTITY | {"target": "visits"}, *_sizes(demos))


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: {"actions": d.actions.astype(np.int32)}, "actions is int32"),
    (lambda d: {"actions": np.zeros(0, np.int64)}, "at least one decision"),
    (lambda d: {"observations": d.observations[:, :-1]}, "observations has shape"),
    (lambda d: {"actions": np.full_like(d.actions, d.masks.shape[1])}, "not an action"),
    (lambda d: {"actions": np.full_like(d.actions, int(np.flatnonzero(~d.masks[0])[0]))}, "does not allow"),
    (lambda d: {"weights": d.weights * 0.5}, "sum to 1"),
    (lambda d: {"returns": np.full_like(d.returns, np.nan)}, "finite"),
    (lambda d: {"wins": np.float64(d.games + 1)}, "wins"),
    (lambda d: {"masks": np.array([object()] * len(d.actions))}, "masks is not a plain array"),
])
def test_a_damaged_collection_is_refused_with_what_is_wrong(tmp_path, change, message):
    demos = collect("Dragonstones-v0", "heuristic", ["random"], games=2, gamma=0.9, seed=1, max_rows=10**6, **ENV)
    _, path = _saved(tmp_path, **change(demos))
    with pytest.raises(ValueError, match=message):
        load_demonstrations(path, dict(IDENTITY), *_sizes(demos))


def test_a_file_that_is_not_a_collection_is_refused(tmp_path):
    path = tmp_path / "x.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a saved collection"):
        saved_identity(path)
    np.savez(path, identity=np.array([{"a": 1}], dtype=object))  # a pickled entry: never unpickled
    with pytest.raises(ValueError, match="not a saved collection"):
        saved_identity(path)



def test_a_collection_that_would_unpack_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
    # 32 MB of zeros deflate to ~32 kB: the zip directory's sizes are checked, not the file's
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, identity=np.str_(json.dumps(IDENTITY)), observations=np.zeros(8 * 2**20, np.float32))
    assert path.stat().st_size < 2**20
    monkeypatch.setitem(FILE_BYTES, "demonstrations", 2**20)
    with pytest.raises(ValueError, match=r"unpack to \d+ bytes; a collection holds at most 1048576"):
        saved_identity(path)
    with pytest.raises(ValueError, match="unpack to"):
        load_demonstrations(path, dict(IDENTITY), 10, 10)

def _cloned_run(tmp_path, name, **imitate):
    cfg = {"total_timesteps": 128, "progress_bar": False, "checkpoint_every": 128,
           "ppo": {"net_arch": [32]}, "sb3": {"n_envs": 1, "n_steps": 128, "batch_size": 128, "n_epochs": 1},
           "league": {"mix": {"random": 1.0}},
           "imitate": {"teacher": "heuristic", "games": 3, "epochs": 1, "holdout": 0.25,
                       "demonstrations": str(tmp_path / "teacher.npz"), **imitate},
           "eval": {"every": 512, "games": 1, "final_games": 0, "final_panel_games": 0},
           "run_name": name, "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "out")}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return ["--config", str(path)]


def test_a_second_run_reads_the_teacher_games_the_first_saved(tmp_path, capsys):
    assert train(_cloned_run(tmp_path, "first")) == 0
    assert (tmp_path / "teacher.npz").is_file()
    assert train(_cloned_run(tmp_path, "second")) == 0
    assert "read from" in capsys.readouterr().out
    first, second = (json.loads((tmp_path / "out" / n / "card.json").read_text())["imitation"]
                     for n in ("first", "second"))
    assert first["demonstrations"]["read"] is False and second["demonstrations"]["read"] is True
    # the same decisions and the same fit: the clone's agreement and losses are equal
    assert {k: first[k] for k in ("decisions", "games", "holdout_agreement", "loss_policy")} == \
           {k: second[k] for k in ("decisions", "games", "holdout_agreement", "loss_policy")}


def test_teacher_games_of_other_settings_stop_the_run_before_its_folder(tmp_path, capsys):
    assert train(_cloned_run(tmp_path, "first")) == 0
    assert train(_cloned_run(tmp_path, "other", games=4)) == 2
    err = capsys.readouterr().err
    assert "imitate.demonstrations" in err and "games: recorded 3, now 4" in err
    assert not (tmp_path / "runs" / "other").exists()


def test_imitate_demonstrations_must_name_an_npz_file():
    with pytest.raises(ConfigError, match=r"imitate\.demonstrations.*npz"):
        load_config(None, ["imitate.demonstrations=runs/teacher.pkl"])
