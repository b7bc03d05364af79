"""A human table's search bot under load (issue #49): seconds a move, in-process, bounded.

    PYTHONPATH=. python tools/app_load.py [--bot-tables 20] [--moves 4] [--seconds 120]

Builds the app (its real bot threads and limits), starts ``--bot-tables`` all-search Fist tables
(3 seats of ``ismcts:simulations=100``), first all from one client (load case 1: past the client's
search seats they are refused), then each from its own address (load case 2), kept watched by a
poller; then plays a human table with an ``ismcts:simulations=100`` bot and times each of its
``--moves`` moves, from the human's action to the bot's decision played (polled every 10 ms).
Also the same human table alone, for comparison. Stops after ``--seconds`` in all.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from dragonstones_env.play.app.server import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SPEC = "ismcts:simulations=100"


def _client(app, address: str) -> TestClient:
    return TestClient(app, client=(address, 40000))


def human_moves(app, moves: int, deadline: float) -> list[float]:
    """Seconds from each human action to the search bot's decision, at a table [human, search, random]."""
    c = _client(app, "10.9.0.1")
    r = c.post("/api/games", json={"game": "dragonstones", "players": 3, "seats": ["human", SPEC, "random"],
                                   "seed": 4})
    made = r.json()
    auth = {"Authorization": f"Bearer {made['tokens']['0']}", "Content-Type": "application/json"}
    url = f"/api/games/{made['id']}"
    rng, out = np.random.default_rng(0), []
    state = c.get(url, headers=auth).json()
    while len(out) < moves and state["result"] is None and time.monotonic() < deadline:
        if state["actor"] != 0:
            time.sleep(0.01)
            state = c.get(url, headers=auth).json()
            continue
        group = state["actions"][int(rng.integers(len(state["actions"])))]
        if group["kind"] == "builder":
            action = group["base"] + sum(int(rng.integers(f["max"] + 1)) * f["stride"] for f in group["fields"])
        else:
            action = group["actions"][int(rng.integers(len(group["actions"])))]["action"]
        start = time.monotonic()
        state = c.post(f"{url}/actions", json={"action": action}, headers=auth).json()
        if state["thinking"] is None:
            continue  # no search came due: not a search move
        while state["thinking"] is not None and time.monotonic() < deadline:
            time.sleep(0.01)
            state = c.get(url, headers=auth).json()
        out.append(time.monotonic() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot-tables", type=int, default=20)
    parser.add_argument("--moves", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    folder = Path(tempfile.mkdtemp(prefix="dragonstones-load-"))
    app = create_app(store=folder / "alone.sqlite", hosts=("testserver",))
    with _client(app, "127.0.0.1"):
        alone = human_moves(app, args.moves, deadline)
    print(f"alone: {len(alone)} search moves, median {statistics.median(alone):.2f} s, max {max(alone):.2f} s")
    app = create_app(store=folder / "load.sqlite", hosts=("testserver",))
    bots = {"game": "dragonstones", "players": 3, "seats": [SPEC] * 3}
    with _client(app, "127.0.0.1") as one:
        codes = [one.post("/api/games", json=bots).status_code for _ in range(args.bot_tables)]
        print(f"load case 1: {args.bot_tables} all-search tables from one client: {codes.count(201)} started, "
              f"{codes.count(429)} refused (429)")
        ids = []
        for k in range(args.bot_tables):
            r = _client(app, f"10.8.{k // 200}.{k % 200 + 1}").post("/api/games", json=bots)
            if r.status_code == 201:
                ids.append(r.json()["id"])
        print(f"load case 2: {len(ids)} more all-search tables from {args.bot_tables} clients")
        stop = threading.Event()

        def watch() -> None:  # their spectators' pages poll
            while not stop.is_set() and time.monotonic() < deadline:
                for key in ids:
                    one.get(f"/api/games/{key}")
                stop.wait(1.0)

        poller = threading.Thread(target=watch, daemon=True)
        poller.start()
        time.sleep(2.0)
        print(f"queued searches before the human table: {len(app.state.bots.pending())}")
        loaded = human_moves(app, args.moves, deadline)
        stop.set()
        for key in ids:  # stop them
            app.state.tables.remove(key)
    print(f"under load: {len(loaded)} search moves, median {statistics.median(loaded):.2f} s, "
          f"max {max(loaded):.2f} s")


if __name__ == "__main__":
    main()
