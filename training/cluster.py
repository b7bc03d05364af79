"""What an RLlib run on a Ray cluster ran, and where: the code it ships to the nodes, a check that
every node can import it, and the env runners' health after each training iteration.

RLlib takes a failed env runner out of service and goes on with the others (a run that lost a node
used to finish with exit 0 on half its runners). Here each iteration's record says how many runners
were requested, how many are healthy, how many Ray restarted and on which nodes they run; below
``rllib.min_healthy_share`` of the requested runners the run stops (:func:`health_problem`),
its last checkpoint left as it was for ``--resume`` (exit 3). See docs/rllib.md, "On a Ray cluster".
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import dragonstones_env
import training

# What an env runner imports: the package, and this folder (the env and the RLModule live in training/)
SHIPPED = (dragonstones_env, training)
RUNNER_IMPORTS = ("dragonstones_env", "training.rllib_env", "training.rllib_module")
PROBE_TIMEOUT_S = 120.0  # a node's first worker also sets up the shipped code (runtime_env) first


class ClusterError(RuntimeError):
    """A cluster the run cannot (or can no longer) train on as configured."""


def runtime_env(ship_code: bool) -> dict[str, Any] | None:
    """Ray's ``runtime_env`` that uploads ``dragonstones_env/`` and ``training/`` to every node (their
    dependencies must be installed there), or None when the cluster has them installed."""
    if not ship_code:
        return None
    return {"py_modules": [str(Path(m.__file__).resolve().parent) for m in SHIPPED],
            "excludes": ["__pycache__", "*.pyc"]}


def _probe(imports: tuple[str, ...]) -> dict[str, str]:
    """Runs on one node: imports what the env runners import (an ImportError names the module)."""
    import ray  # the rllib extra; this runs in a Ray worker

    for name in imports:
        importlib.import_module(name)
    return {"node_id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}


def check_imports(imports: tuple[str, ...] = RUNNER_IMPORTS) -> list[dict[str, str]]:
    """Every alive node of the cluster imports ``imports`` (what the env runners import), or
    :class:`ClusterError` naming each node that cannot (and why). Returns the nodes checked."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0, max_retries=0)(_probe)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    refs = {n["NodeID"]: probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
            .remote(imports) for n in nodes}
    checked, failures = [], []
    for node in nodes:
        node_id, ip = node["NodeID"], node.get("NodeManagerAddress", "?")
        try:
            checked.append(ray.get(refs[node_id], timeout=PROBE_TIMEOUT_S))
        except ray.exceptions.TaskUnschedulableError:
            continue  # a node that died since ray.nodes() listed it: nothing will run there
        except Exception as err:  # any failure of the probe: the node cannot run an env runner
            lines = [line for line in str(err).strip().splitlines() if line.strip()]
            failures.append(f"node {node_id[:12]} ({ip}): {lines[-1] if lines else type(err).__name__}")
    if failures:
        raise ClusterError("cannot import the env runners' code (" + ", ".join(imports) + ") on "
                           + "; ".join(failures) + ". Install this package there (the same version) or set "
                           "rllib.ship_code: true to upload it")
    return checked


def _where(runner: Any) -> tuple[str, str]:
    import ray

    return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()


def runner_health(algo: Any, requested: int) -> dict[str, Any]:
    """The env runners after an iteration: ``{requested, healthy, restarted, nodes}``, ``nodes`` the
    ``{node_id, ip, runners}`` of the nodes the healthy runners are on (the driver's node when
    ``requested`` is 0: it samples itself)."""
    group = algo.env_runner_group
    healthy = group.num_healthy_remote_workers() if requested else 0
    # a runner lost since RLlib last looked answers nothing here (healthy_only skips those it knows of,
    # the timeout bounds a node that is dying)
    where = group.foreach_env_runner(_where, local_env_runner=requested == 0, timeout_seconds=30.0)
    nodes: dict[str, dict[str, Any]] = {}
    for node_id, ip in where:
        nodes.setdefault(node_id, {"node_id": node_id, "ip": ip, "runners": 0})["runners"] += 1
    return {"requested": requested, "healthy": healthy, "restarted": group.num_remote_worker_restarts(),
            "nodes": sorted(nodes.values(), key=lambda n: n["node_id"])}


def health_problem(record: dict[str, Any], min_share: float) -> str | None:
    """Why the run must stop: fewer than ``min_share`` of the requested runners are healthy (or None)."""
    requested, healthy = record["requested"], record["healthy"]
    if requested and healthy < min_share * requested - 1e-9:
        return (f"{healthy} of {requested} env runners healthy ({record['restarted']} restarts): below "
                f"rllib.min_healthy_share={min_share:g} (at least {min_share * requested:g} of {requested})")
    return None


CSV_HEADER = "iteration,timesteps,requested,healthy,restarted,nodes\n"


def csv_row(iteration: int, steps: int, record: dict[str, Any]) -> str:
    """One line of runners.csv: the nodes as ``node_id:runners`` separated by spaces."""
    nodes = " ".join(f"{n['node_id']}:{n['runners']}" for n in record["nodes"])
    return f"{iteration},{steps},{record['requested']},{record['healthy']},{record['restarted']},{nodes}\n"


def summary(records: list[dict[str, Any]], min_share: float) -> dict[str, Any]:
    """The card's account of the runners over a run: the nodes they ran on, the least healthy count seen,
    the restarts and the iterations below the full count."""
    nodes: dict[str, dict[str, Any]] = {}
    for record in records:
        for node in record["nodes"]:
            seen = nodes.setdefault(node["node_id"], {"node_id": node["node_id"], "ip": node["ip"],
                                                      "iterations": 0})
            seen["iterations"] += 1
    requested = records[-1]["requested"] if records else 0
    return {"requested": requested, "min_healthy_share": min_share,
            "least_healthy": min((r["healthy"] for r in records), default=requested),
            "restarted": records[-1]["restarted"] if records else 0,
            "degraded_iterations": sum(r["healthy"] < r["requested"] for r in records),
            "nodes": sorted(nodes.values(), key=lambda n: n["node_id"])}
