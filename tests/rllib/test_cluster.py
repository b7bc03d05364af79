"""A two-node Ray cluster on the loopback of one machine (tools/ray_cluster.sh: a head and a second
node, 1 CPU each, token authentication on, in a network namespace of its own where the kernel allows
it): env runners on both nodes, the card naming both, and a node killed mid-run. At the default
``rllib.min_healthy_share`` (1.0) the run stops with exit 3, its checkpoint kept; at 0.5 it goes on
with the runner left, exits 0, and its card and runners.csv say so (docs/rllib.md, "When a node dies").
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_rllib import TINY

from training import cluster

ROOT = Path(__file__).resolve().parents[2]

# Inside the cluster: one run per share, each killing the second node once its second iteration is
# logged (and `up` bringing it back between them). One run joins with --address auto, the other through
# RAY_ADDRESS only (what tools/ray_cluster.sh exports).
SCRIPT = r"""
set -u
train() {  # name, extra args: the run in the background, the second node killed after iteration 2
    "$PY" -m training.train_rllib --config "$OUT/config.yaml" --set run_name=$1 "${@:2}" >"$OUT/$1.log" 2>&1 &
    local pid=$! i
    for i in $(seq 1 600); do
        grep -q "^iter 2:" "$OUT/$1.log" && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.2
    done
    tools/ray_cluster.sh kill-node
    wait $pid
    echo $? >"$OUT/$1.rc"
}
train strict --address auto
tools/ray_cluster.sh up
train lenient --set rllib.min_healthy_share=0.5
"""


def free_port() -> int:
    """A port free on this machine now: where `unshare -rn` is refused the cluster shares its network."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_a_node_lost_and_the_health_share(tmp_path):
    config = {**TINY, "total_timesteps": 1400, "checkpoint_every": 400, "runs_dir": str(tmp_path / "runs"),
              "out_dir": str(tmp_path / "policies"),
              "rllib": {**TINY["rllib"], "num_cpus_per_env_runner": 1},
              "eval": {"every": 10_000, "games": 2, "final_games": 0}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/bin", "HOME": str(Path.home()),
           "PYTHON": sys.executable, "PY": sys.executable, "OUT": str(tmp_path), "PYTHONPATH": str(ROOT),
           "RAY_CLUSTER_DIR": str(tmp_path / "cluster"), "TMPDIR": "/tmp", "RAY_PORT": str(free_port()),
           # the head marks a silent node dead after 3 missed health checks 1 s apart (Ray's default:
           # about 30 s), so that kill-node returns sooner
           "RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3",
           "RAY_health_check_timeout_ms": "1000"}
    done = subprocess.run(["tools/ray_cluster.sh", "run", "bash", "-c", SCRIPT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    logs = {name: (tmp_path / f"{name}.log").read_text() if (tmp_path / f"{name}.log").exists() else ""
            for name in ("strict", "lenient")}
    context = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}\n{logs['strict'][-3000:]}\n{logs['lenient'][-3000:]}"
    assert done.returncode == 0, context

    # the default share: a lost runner stops the run (exit 3), naming the share, its checkpoint kept
    assert (tmp_path / "strict.rc").read_text().strip() == "3", context
    assert "below rllib.min_healthy_share=1" in logs["strict"] and "--resume" in logs["strict"], context
    strict = tmp_path / "runs" / "strict"
    assert (strict / "checkpoint" / "state.json").is_file() and not (tmp_path / "policies" / "strict").exists()
    rows = (strict / "runners.csv").read_text().splitlines()
    assert rows[0] == "iteration,timesteps,requested,healthy,restarted,nodes"
    assert rows[1].split(",")[2:4] == ["2", "2"] and rows[-1].split(",")[3] == "1", rows

    # a share of 0.5: the run goes on with the head's runner, exits 0, and its card says what ran where
    assert (tmp_path / "lenient.rc").read_text().strip() == "0", context
    card = json.loads((tmp_path / "policies" / "lenient" / "card.json").read_text())
    runners = card["env_runners"]
    assert runners["requested"] == 2 and runners["least_healthy"] == 1 and runners["degraded_iterations"] >= 1
    assert runners["min_healthy_share"] == 0.5
    assert len(runners["nodes"]) == 2 and {n["ip"] for n in runners["nodes"]} == {"127.0.0.1"}, runners
    assert card["steps"] >= 1400
    first = (tmp_path / "runs" / "lenient" / "runners.csv").read_text().splitlines()[1].split(",")
    assert len(first[5].split()) == 2, first  # both nodes, one runner each


# A driver run from a copy of the checkout that the second node cannot see (tools/ray_cluster.sh's
# NODE2_HIDE: a tmpfs over it in the node's own mount namespace), as a node on a machine without that
# checkout: the package is installed there, `training` is not. Shipped by default, the code trains on
# both nodes; with rllib.ship_code false the import check names the node and the run stops.
HIDDEN = r"""
set -u
cd "$CHECKOUT"
for run in shipped unshipped; do
    extra=""
    [ "$run" = unshipped ] && extra="--set rllib.ship_code=false"
    "$PY" -m training.train_rllib --config "$OUT/config.yaml" --set run_name=$run $extra >"$OUT/$run.log" 2>&1
    echo $? >"$OUT/$run.rc"
done
"""


def test_a_node_without_the_checkout_trains_on_the_shipped_code(tmp_path):
    flags = "-m" if os.geteuid() == 0 else "-rm"  # as tools/ray_cluster.sh hides a folder from a node
    if subprocess.run(["unshare", flags, "true"], capture_output=True).returncode != 0:
        pytest.skip(f"`unshare {flags}` is refused here: no folder can be hidden from a node")
    checkout = tmp_path / "checkout"
    for package in ("dragonstones_env", "training"):
        shutil.copytree(ROOT / package, checkout / package, ignore=shutil.ignore_patterns("__pycache__"))
    config = {**TINY, "total_timesteps": 800, "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "policies"),
              "rllib": {**TINY["rllib"], "num_cpus_per_env_runner": 1},
              "eval": {"every": 10_000, "games": 2, "final_games": 0}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/bin", "HOME": str(Path.home()),
           "PYTHON": sys.executable, "PY": sys.executable, "OUT": str(tmp_path), "CHECKOUT": str(checkout),
           "NODE2_HIDE": str(checkout), "RAY_CLUSTER_DIR": str(tmp_path / "cluster"), "TMPDIR": "/tmp",
           "RAY_PORT": str(free_port())}  # no PYTHONPATH: each process finds `training` only where it runs
    done = subprocess.run([str(ROOT / "tools" / "ray_cluster.sh"), "run", "bash", "-c", HIDDEN], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=900)
    logs = {run: (tmp_path / f"{run}.log").read_text() if (tmp_path / f"{run}.log").exists() else ""
            for run in ("shipped", "unshipped")}
    context = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}\n{logs['shipped'][-3000:]}\n{logs['unshipped'][-3000:]}"
    assert done.returncode == 0, context

    assert (tmp_path / "shipped.rc").read_text().strip() == "0", context
    card = json.loads((tmp_path / "policies" / "shipped" / "card.json").read_text())
    assert len(card["env_runners"]["nodes"]) == 2 and card["env_runners"]["least_healthy"] == 2, card["env_runners"]

    # the same run without shipping: the node that lacks the checkout is named, nothing trains
    assert (tmp_path / "unshipped.rc").read_text().strip() == "3", context
    assert "No module named 'training'" in logs["unshipped"] and "on node " in logs["unshipped"], context
    assert not (tmp_path / "policies" / "unshipped").exists()


def test_a_node_that_cannot_import_the_code_is_named(ray_local):
    """What a node without the package (and rllib.ship_code false) meets, on the local instance: the
    probe pinned to the node fails, and the error names the node, its address and the missing module."""
    node = ray_local.get_runtime_context().get_node_id()
    assert [n["node_id"] for n in cluster.check_imports()] == [node]
    with pytest.raises(cluster.ClusterError, match=rf"on node {node[:12]} \(.+\): .*no_such_module_here"):
        cluster.check_imports(("dragonstones_env", "no_such_module_here"))
