"""What the requests that used to stall the server cost now, and what a table's write costs (issue #29).

    PYTHONPATH=. python tools/app_stalls.py [--actions 200]

Serves the app with uvicorn on a free local port (in this process), then for each hostile or heavy
request of the issue sends it and, while it is in flight, times a ``GET /api/meta`` (the request it
used to hold up): the status and time of each, and the process's peak RSS where memory was the
problem. Then plays ``--actions`` human actions of 4-player Fist against 3 heuristic bots and times
every write of the table to its SQLite store (``Tables.save``: the new record events and the
table's row, one transaction), with the bytes the store grew by.
"""

from __future__ import annotations

import argparse
import json
import resource
import select
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import uvicorn

from dragonstones_env.play.app import store as store_module
from dragonstones_env.play.app.server import create_app

ROOT = Path(__file__).resolve().parents[1]
GAIN = {"gain": {"coin": "silver", "amount": 1}}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # peak, in MB (Linux: kB)


def _bomb() -> str:
    lines = ["e0: &e0 [{gain: {coin: silver, amount: 1}}, {gain: {coin: silver, amount: 1}}]"]
    for k in range(1, 12):
        lines.append(f"e{k}: &e{k} [{{choose: [*e{k - 1}, *e{k - 1}]}}, {{choose: [*e{k - 1}, *e{k - 1}]}}]")
    return "\n".join([*lines, "characters: [{name: Bomb, effects: *e11}]"])


def while_in_flight(client: httpx.Client, send) -> tuple[int, float, float]:
    """(status, seconds) of ``send()``, and the seconds of a GET /api/meta sent while it is in flight."""
    out: dict = {}

    def run():
        t0 = time.perf_counter()
        out["status"] = send().status_code
        out["time"] = time.perf_counter() - t0

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.005)  # let it reach the server first
    t0 = time.perf_counter()
    assert client.get("/api/meta").status_code == 200
    meta = time.perf_counter() - t0
    worker.join()
    return out["status"], out["time"], meta


def first_answer(port: int, total: int = 300_000_000) -> tuple[float, int]:
    """Seconds from a chunked 300 MB POST's first byte to the server's first byte of answer, and the
    bytes sent by then (a raw socket: a client library sends its whole body before it reads)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"10000\r\n" + b" " * 65536 + b"\r\n"
    sock.setblocking(False)
    t0, sent = time.perf_counter(), 0
    while sent < total:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        try:
            sent += sock.send(chunk)
        except BlockingIOError:
            select.select([sock], [sock], [], 1)
    took = time.perf_counter() - t0
    sock.close()
    return took, sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="app-stalls-"))
    app = create_app(store=folder / "tables.sqlite")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, timeout=120) as client, httpx.Client(base_url=base, timeout=120) as other:
        client.get("/api/meta")  # warm: the policy list is cached after the first call

        def table(characters):
            return lambda: other.post("/api/games", json={"game": "dragonstones", "players": 4, "seats": ["human"] * 4,
                                                          "characters": characters})

        cases = {
            "200 data cards": table([{"name": f"C{i}", "effects": [GAIN]} for i in range(200)]),
            "1 card of 4,000 effects": table([{"name": "Long", "effects": [GAIN] * 4000}]),
            "a YAML alias bomb (2^24 effects)": table({"format": "yaml", "text": _bomb()}),
            "4 valid cards of 32 effects (the most work allowed)": table(
                [{"name": f"Max{i}", "effects": [GAIN] * 32} for i in range(4)]),
            "a 6-champion game regenerated": lambda: other.post("/api/replays", json={
                "game": "dragonstones", "regenerate": {"game": 0, "seed": 5, "lineup": ["champion"] * 6}}),
        }
        for name, send in cases.items():
            status, took, meta = while_in_flight(client, send)
            print(f"{name}: {status} in {took * 1000:.1f} ms; GET /api/meta meanwhile {meta * 1000:.1f} ms")

        before = rss_mb()
        chunk = b" " * 65536

        def huge():
            return other.post("/api/replays", content=(chunk for _ in range(300_000_000 // len(chunk))),
                              headers={"Content-Type": "application/json"})

        status, took, meta = while_in_flight(client, huge)
        answer, sent = first_answer(port)
        print(f"a 300 MB body (streamed, no length): {status} in {took * 1000:.1f} ms at the client (which sends "
              f"until the server closes); the server's answer came {answer * 1000:.1f} ms after the first byte, "
              f"{sent / 1e6:.1f} MB sent by then; GET /api/meta meanwhile {meta * 1000:.1f} ms; peak RSS "
              f"{before:.0f} -> {rss_mb():.0f} MB")

        made = other.post("/api/games", json={"game": "dragonstones", "players": 4, "seats": ["random"] * 4}).json()
        record = other.get(f"/api/games/{made['id']}/record").json()
        rid = other.post("/api/replays", json=record).json()["id"]
        before, times = rss_mb(), []
        for k in range(300):
            t0 = time.perf_counter()
            r = other.get(f"/api/replays/{rid}", params={"step": 0, "seat": 0, "insight": f"runs/x{k}/../ckpt"})
            times.append(time.perf_counter() - t0)
            assert r.status_code == 400
        print(f"300 distinct ?insight= paths: all 400, median {statistics.median(times) * 1000:.1f} ms; peak RSS "
              f"{before:.0f} -> {rss_mb():.0f} MB")

        # the cost of a table's write per action
        writes: list[tuple[float, int]] = []
        real = store_module.Tables.save

        def timed(self, table):
            n = len(table.game.env.game.record) - table.saved
            t0 = time.perf_counter()
            real(self, table)
            writes.append((time.perf_counter() - t0, n))

        store_module.Tables.save = timed
        rng = np.random.default_rng(0)
        actions, latency, games = 0, [], 0
        app.state.tables.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size0 = sum(f.stat().st_size for f in folder.iterdir())
        while actions < args.actions:
            made = other.post("/api/games", json={"game": "dragonstones", "players": 4,
                                                  "seats": ["human"] + ["heuristic"] * 3}).json()
            games += 1
            seat = {"Authorization": f"Bearer {made['tokens']['0']}", "Content-Type": "application/json"}
            state = other.get(f"/api/games/{made['id']}", headers=seat).json()
            while state["result"] is None and actions < args.actions:
                group = state["actions"][int(rng.integers(len(state["actions"])))]
                if group["kind"] == "builder":
                    action = group["base"] + sum(int(rng.integers(f["max"] + 1)) * f["stride"] for f in group["fields"])
                else:
                    action = group["actions"][int(rng.integers(len(group["actions"])))]["action"]
                writes.clear()
                t0 = time.perf_counter()
                state = other.post(f"/api/games/{made['id']}/actions", json={"action": action}, headers=seat).json()
                latency.append((time.perf_counter() - t0, sum(w for w, _ in writes), sum(n for _, n in writes)))
                actions += 1
        store_module.Tables.save = real
        app.state.tables.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size1 = sum(f.stat().st_size for f in folder.iterdir())
        total = np.array([x[0] for x in latency]) * 1000
        write = np.array([x[1] for x in latency]) * 1000
        events = np.array([x[2] for x in latency])
        print(f"writes: {len(latency)} human actions in {games} games (4-player Fist, 3 heuristic bots): the store's "
              f"write per action median {np.median(write):.2f} ms, p95 {np.percentile(write, 95):.2f} ms, "
              f"max {write.max():.2f} ms, {events.mean():.1f} record events per write; the whole action median "
              f"{np.median(total):.1f} ms (the write {100 * np.median(write) / np.median(total):.0f} % of it); "
              f"the store grew {(size1 - size0) / 1024:.0f} kB ({(size1 - size0) / max(1, events.sum()):.0f} bytes "
              f"per event)")
        print(json.dumps({"store": str(folder)}))
    server.should_exit = True


if __name__ == "__main__":
    main()
