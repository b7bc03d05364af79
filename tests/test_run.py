"""training/run.py: the run lifecycle every trainer shares, and the trainers' runs compared (issue #50)."""

from __future__ import annotations

import csv
import json

import pytest
import yaml

from dragonstones_env.policies.registry import shipped_dir
from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)  # training/run.py's bars need rich, which the train extra brings

from tests.run_layout import EXPECTED, layout
from training import run as lifecycle
from training.config import ConfigError


def test_a_schedule_counts_from_where_a_run_starts_and_fires_once_per_jump():
    s = lifecycle.Schedule(100, start=250)
    assert s.next == 300
    assert [t for t in (260, 299, 300, 301, 399, 650, 699, 700) if s.due(t)] == [300, 650, 700]


def test_eval_rows_have_the_header_columns_with_or_without_a_panel():
    width = len(lifecycle.EVAL_COLUMNS)
    plain = lifecycle.eval_row(512, {"rate": 0.25, "ci95": (0.1, 0.5)})
    assert plain == "512,0.2500,0.1000,0.5000,\n" and plain.count(",") == width - 1
    assert lifecycle.eval_row(3, {"rate": 1, "ci95": (0, 1)}, 0.75).endswith(",0.7500\n")


def test_an_old_four_column_eval_csv_is_given_the_fifth_column(tmp_path):
    path = tmp_path / "eval.csv"
    path.write_text("timesteps,win_rate,ci_low,ci_high\n10,0.5000,0.1000,0.9000\n")
    lifecycle.start_eval_csv(path)
    lifecycle.append_eval(path, 20, {"rate": 0.5, "ci95": (0.1, 0.9)})
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0]) == list(lifecycle.EVAL_COLUMNS) and [r["robustness"] for r in rows] == ["", ""]
    lifecycle.start_eval_csv(path)  # a file of the new header is left as it is
    assert len(path.read_text().splitlines()) == 3


def test_folders_refuse_an_old_run_a_missing_checkpoint_and_the_shipped_folder(tmp_path):
    folders = lifecycle.Folders.of(tmp_path / "runs", tmp_path / "out", "x")
    lifecycle.check_folders(folders, resume=False, overwrite=False)  # nothing there yet
    with pytest.raises(ConfigError, match="--resume: no checkpoint"):
        lifecycle.check_folders(folders, resume=True, overwrite=False)
    assert lifecycle.open_folders(folders, {"seed": 0}, resume=False, overwrite=False)
    assert folders.eval_csv.read_text() == lifecycle.EVAL_HEADER
    with pytest.raises(ConfigError, match="exists: use --resume"):
        lifecycle.check_folders(folders, resume=False, overwrite=False)
    lifecycle.check_folders(folders, resume=False, overwrite=True)
    (folders.eval_csv).write_text(lifecycle.EVAL_HEADER + "1,0,0,0,\n")
    assert lifecycle.open_folders(folders, {"seed": 1}, resume=False, overwrite=True)  # new again
    assert json.loads(folders.config_json.read_text()) == {"seed": 1}
    assert folders.eval_csv.read_text() == lifecycle.EVAL_HEADER  # replaced whole
    shipped = lifecycle.Folders.of(tmp_path / "runs", shipped_dir(), "champion")
    with pytest.raises(ConfigError, match="shipped checkpoints"):
        lifecycle.check_folders(shipped, resume=False, overwrite=True)


def test_a_card_holds_the_shared_keys_then_the_trainers_own():
    card = lifecycle.card(10.0, 1.26, {}, {"cpu": "x"}, "abc", {}, [{"timesteps": 5, "rate": 0.5, "ci95": [0, 1],
                                                                     "games": 3}], exploiter_of="heuristic")
    assert list(card)[: len(lifecycle.CARD_KEYS)] == list(lifecycle.CARD_KEYS)
    assert (card["steps"], card["wall_time_s"], card["exploiter_of"]) == (10, 1.3, "heuristic")
    assert card["training_curve"] == [{"timesteps": 5, "rate": 0.5, "ci95": [0, 1]}]


TINY = {"total_timesteps": 512, "progress_bar": False, "checkpoint_every": 256, "ppo": {"net_arch": [32]},
        "sb3": {"n_envs": 1, "n_steps": 128, "batch_size": 64, "n_epochs": 1},
        "league": {"mix": {"random": 1.0}},
        "eval": {"every": 256, "games": 3, "final_games": 3, "final_panel_games": 0}}
EXPLOIT = ["--timesteps", "512", "--n-steps", "128", "--batch-size", "64", "--n-epochs", "1", "--n-envs", "1",
           "--net-arch", "32", "--eval-games", "3", "--eval-every", "256"]


def test_the_sb3_trainer_and_the_exploiter_write_the_same_run(tmp_path, capsys):
    """Issue #50's "done when" (RLlib's run: tests/rllib/test_rllib.py, against the same layout)."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    pytest.importorskip("matplotlib")
    from training.exploit import main as exploit
    from training.train import main as train

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "out"),
                                      "run_name": "tiny"}))
    with_resume = ["--config", str(config), "--resume"]
    assert train(with_resume) == 2  # nothing to resume
    assert "--resume: no checkpoint" in capsys.readouterr().err
    assert train(["--config", str(config)]) == 0
    assert train(["--config", str(config)]) == 2  # the run exists: refused
    assert "exists: use --resume" in capsys.readouterr().err
    ex = tmp_path / "exploiter"
    with pytest.raises(SystemExit, match="2"):  # nothing to resume (the exploiter's errors are argparse's)
        exploit(["--target", "heuristic", "--out", str(ex), "--resume", *EXPLOIT])
    assert "--resume: no checkpoint" in capsys.readouterr().err
    assert exploit(["--target", "heuristic", "--out", str(ex), *EXPLOIT]) == 0
    with pytest.raises(SystemExit, match="2"):  # the run exists: refused
        exploit(["--target", "heuristic", "--out", str(ex), *EXPLOIT])
    assert "exists: use --resume" in capsys.readouterr().err

    sb3 = lifecycle.Folders.of(tmp_path / "runs", tmp_path / "out", "tiny")
    exploiter = lifecycle.Folders.of(tmp_path, tmp_path, "exploiter")  # --out: the run's one folder
    assert layout(sb3) == layout(exploiter) == EXPECTED
    sb3_card = json.loads((sb3.out / "card.json").read_text())
    ex_card = json.loads((ex / "card.json").read_text())
    assert set(sb3_card["evaluation"]) == {"vs_heuristic", "vs_random", "copies"}
    assert set(ex_card["evaluation"]) == {"vs_heuristic"} and ex_card["exploiter_of"] == "heuristic"
    rows = sb3.eval_csv.read_text().splitlines() + exploiter.eval_csv.read_text().splitlines()
    assert {row.count(",") for row in rows} == {len(lifecycle.EVAL_COLUMNS) - 1}
    assert (ex / "exploit.csv").read_text().splitlines()[0] == lifecycle.EVAL_HEADER.strip()
    # both resume from their checkpoint, and both overwrite on --overwrite
    assert train([*with_resume, "--set", "total_timesteps=768"]) == 0
    assert "resuming tiny at 512 steps" in capsys.readouterr().out
    assert exploit(["--target", "heuristic", "--out", str(ex), "--resume", *EXPLOIT[:1], "768", *EXPLOIT[2:]]) == 0
    assert "resuming exploiter at 512 steps" in capsys.readouterr().out
    assert json.loads((sb3.out / "card.json").read_text())["steps"] == 768
    assert json.loads((ex / "card.json").read_text())["steps"] == 768
    assert train(["--config", str(config), "--overwrite"]) == 0
    assert exploit(["--target", "heuristic", "--out", str(ex), "--overwrite", *EXPLOIT]) == 0
    assert json.loads((sb3.out / "card.json").read_text())["steps"] == 512
    assert json.loads((ex / "card.json").read_text())["steps"] == 512
    assert layout(sb3) == layout(exploiter) == EXPECTED


class Counting(lifecycle.Adapter):
    """A library that learns 100 steps an iteration and remembers what the run asked of it."""

    def __init__(self, run):
        self.run, self.calls = run, []

    def learn(self, n):
        self.calls.append(("learn", n))
        return self.run.state["steps"] + -(-n // 100) * 100

    def policy(self):
        return lambda seed: None

    def save(self, folder):
        self.calls.append(("save", self.run.state["steps"]))

    def write_policy(self, folder, card, final=False):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "card.json").write_text(json.dumps(card))
        self.calls.append(("write", final))
        return folder


def test_drive_learns_in_chunks_that_end_where_something_is_due(tmp_path, monkeypatch):
    from training import evals
    from training.config import RunConfig, build

    monkeypatch.setattr(evals, "against_bots", lambda *a, **k: {"rate": 0.5, "ci95": (0.0, 1.0)})
    cfg = build(RunConfig, {"total_timesteps": 1000, "checkpoint_every": 400, "runs_dir": str(tmp_path / "r"),
                            "out_dir": str(tmp_path / "o"), "run_name": "c",
                            "eval": {"every": 250, "final_games": 0}})
    made = []
    run = lifecycle.drive(cfg, lambda r: made.append(Counting(r)) or made[-1])
    calls = made[0].calls
    # chunks end at the next evaluation (250) or checkpoint (400), each crossed once by whole iterations
    assert [n for kind, n in calls if kind == "learn"] == [250, 100, 100, 250, 200]
    assert [n for kind, n in calls if kind == "save"] == [400, 800, 1000]
    assert [e["timesteps"] for e in run.state["evaluations"]] == [300, 500, 800, 1000]
    assert calls[-1] == ("write", True) and layout(run.folders) == {**EXPECTED, "curve": EXPECTED["curve"],
                                                                     "result": ["card.json"]}


def test_learning_in_chunks_trains_the_weights_of_one_unbroken_learn(tmp_path):
    """The run cuts SB3's learning where an evaluation or a checkpoint is due (model.learn once a chunk):
    the same rollouts and updates as one learn, so the same weights, however the schedule cuts it."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    from training.train import main as train

    weights = []
    for name, every in (("chunked", 100), ("whole", 10**6)):
        config = tmp_path / f"{name}.yaml"
        config.write_text(yaml.safe_dump({
            **TINY, "total_timesteps": 640, "run_name": name, "checkpoint_every": every,
            "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "out"),
            "sb3": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "league": {"mix": {"latest": 0.5, "random": 0.5}, "latest_every": 100},  # the league's refreshes too
            "eval": {"every": every, "games": 1, "final_games": 0}}))
        assert train(["--config", str(config)]) == 0
        weights.append((tmp_path / "out" / name / "policy.npz").read_bytes())
    rows = (tmp_path / "runs" / "chunked" / "eval.csv").read_text().splitlines()[1:]
    assert [int(r.split(",")[0]) for r in rows] == [128, 256, 384, 512, 640]  # at the rollouts' ends
    assert weights[0] == weights[1]


def test_the_last_periodic_evaluation_is_the_final_one_not_the_same_games_twice(tmp_path, monkeypatch):
    from training import evals
    from training.config import RunConfig, build

    played = []
    monkeypatch.setattr(evals, "against_bots", lambda policy, cfg, games, opponent, **k: played.append(
        (opponent, games)) or {"rate": games / 10, "ci95": (0.0, 1.0), "games": games})
    monkeypatch.setattr(evals, "copies", lambda *a, **k: {})
    monkeypatch.setattr(lifecycle, "copies_summary", lambda c: "")
    cfg = build(RunConfig, {"total_timesteps": 500, "checkpoint_every": 1000, "runs_dir": str(tmp_path / "r"),
                            "out_dir": str(tmp_path / "o"), "run_name": "c",
                            "eval": {"every": 250, "games": 2, "final_games": 5, "final_panel_games": 0}})
    run = lifecycle.drive(cfg, Counting)
    heuristic = cfg.heuristic
    # at 300 the periodic one; at 500 only the final ones (its heuristic games are the curve's last point)
    assert played == [(heuristic, 2), (heuristic, 5), ("random", 5)]
    assert [(e["timesteps"], e["rate"]) for e in run.state["evaluations"]] == [(300, 0.2), (500, 0.5)]
    rows = run.folders.eval_csv.read_text().splitlines()[1:]
    assert [r.split(",")[:2] for r in rows] == [["300", "0.2000"], ["500", "0.5000"]]
    card = json.loads((run.folders.out / "card.json").read_text())
    assert [p["timesteps"] for p in card["training_curve"]] == [300, 500]
    saved = json.loads((run.folders.checkpoint / "state.json").read_text())  # what --resume reads
    assert [e["timesteps"] for e in saved["evaluations"]] == [300, 500] and "final" not in saved
