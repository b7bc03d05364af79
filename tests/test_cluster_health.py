"""training/cluster.py without Ray: the health check's threshold, runners.csv's rows, the card's
account of the runners, the shipped code and the config key's bounds. The cluster itself (two nodes,
one killed mid-run) is tests/rllib/test_cluster.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import dragonstones_env
import training
from training import cluster
from training.config import ConfigError

# the RLlib trainer's module draws the final evaluation's bar with rich (the train and rllib extras)
pytest.importorskip("rich", reason="needs rich (the train or rllib extra): pip install -e '.[train]'")

from training.train_rllib import load_config


def record(healthy, requested=2, restarted=0, nodes=(("aaa", 1), ("bbb", 1))):
    return {"requested": requested, "healthy": healthy, "restarted": restarted,
            "nodes": [{"node_id": n, "ip": "127.0.0.1", "runners": k} for n, k in nodes]}


def test_the_health_share_stops_a_run_below_it_only():
    assert cluster.health_problem(record(2), 1.0) is None
    why = cluster.health_problem(record(1, restarted=1), 1.0)
    assert why == ("1 of 2 env runners healthy (1 restarts): below rllib.min_healthy_share=1 (at least 2 of 2)")
    assert cluster.health_problem(record(1), 0.5) is None
    assert cluster.health_problem(record(0), 0.5) is not None
    assert cluster.health_problem(record(0), 0.0) is None
    assert cluster.health_problem(record(2, requested=3), 2 / 3) is None  # no float rounding trap
    assert cluster.health_problem(record(0, requested=0), 1.0) is None  # sampling in the driver


def test_runners_csv_and_the_card_say_what_ran_where():
    assert cluster.csv_row(3, 600, record(1, nodes=(("aaa", 1),))) == "3,600,2,1,0,aaa:1\n"
    assert cluster.CSV_HEADER.rstrip().split(",") == ["iteration", "timesteps", "requested", "healthy",
                                                      "restarted", "nodes"]
    summary = cluster.summary([record(2), record(2), record(1, nodes=(("aaa", 1),))], 0.5)
    assert summary == {"requested": 2, "min_healthy_share": 0.5, "least_healthy": 1, "restarted": 0,
                       "degraded_iterations": 1,
                       "nodes": [{"node_id": "aaa", "ip": "127.0.0.1", "iterations": 3},
                                 {"node_id": "bbb", "ip": "127.0.0.1", "iterations": 2}]}
    assert cluster.summary([], 1.0)["nodes"] == []


def test_the_shipped_code_is_the_package_and_training():
    assert cluster.runtime_env(False) is None
    env = cluster.runtime_env(True)
    assert env["py_modules"] == [str(Path(dragonstones_env.__file__).resolve().parent),
                                 str(Path(training.__file__).resolve().parent)]
    assert "__pycache__" in env["excludes"]


def test_the_config_keys_and_their_bounds():
    cfg = load_config(None)
    assert cfg.rllib.ship_code is True and cfg.rllib.min_healthy_share == 1.0
    assert load_config(None, ["rllib.min_healthy_share=0.5"]).rllib.min_healthy_share == 0.5
    for bad in ("1.5", "-0.1", "nan"):
        with pytest.raises(ConfigError, match=r"rllib\.min_healthy_share"):
            load_config(None, [f"rllib.min_healthy_share={bad}"])
