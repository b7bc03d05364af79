"""Latency of the browser table's server, and the page's weight (issue #15's figures).

    PYTHONPATH=. python tools/app_latency.py [--actions 200] [--opponents heuristic champion]

Serves the app with uvicorn on a free local port (its tables in a temporary SQLite file, written at
every action) and plays Fist of Dragonstones at 4 players
over HTTP, one human seat against three bots at pace 0: each timed request is one human action
(POST /api/games/{id}/actions), which includes every bot move up to the human's next decision
and the new view. The human picks uniformly among the legal actions the page is given. Prints
the median and 95th percentile per opponent, then the bytes and requests of loading the page.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time

import httpx
import numpy as np
import uvicorn

from dragonstones_env.play.app.server import create_app


def _pick(state: dict, rng: np.random.Generator) -> int:
    group = state["actions"][int(rng.integers(len(state["actions"])))]
    if group["kind"] == "builder":
        return group["base"] + sum(int(rng.integers(f["max"] + 1)) * f["stride"] for f in group["fields"])
    return group["actions"][int(rng.integers(len(group["actions"])))]["action"]


def latency(client: httpx.Client, game: str, players: int, opponent: str, actions: int, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    times: list[float] = []
    state = None
    while len(times) < actions:
        if state is None or state["result"] is not None:
            seats = ["human"] + [opponent] * (players - 1)
            made = client.post("/api/games", json={"game": game, "players": players, "seats": seats,
                                                    "seed": seed + len(times)}).json()
            gid, seat = made["id"], {"Authorization": f"Bearer {made['tokens']['0']}"}
            state = client.get(f"/api/games/{gid}", headers=seat).json()
            continue
        action = _pick(state, rng)
        t0 = time.perf_counter()
        r = client.post(f"/api/games/{gid}/actions", json={"action": action}, headers=seat)
        times.append(time.perf_counter() - t0)
        r.raise_for_status()
        state = r.json()
    return times


def page_weight(client: httpx.Client) -> tuple[int, int]:
    """Bytes and requests to load the page: the HTML, its stylesheet and script, and /api/meta."""
    urls = ["/", "/static/app.css", "/static/app.js", "/api/meta"]
    return sum(len(client.get(u).content) for u in urls), len(urls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=200)
    parser.add_argument("--opponents", nargs="+", default=["heuristic", "champion"])
    parser.add_argument("--game", default="dragonstones")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        size, requests = page_weight(client)
        print(f"page: {size} bytes in {requests} requests (HTML, CSS, JS, /api/meta; no images, no fonts)")
        for opponent in args.opponents:
            t = np.array(latency(client, args.game, args.players, opponent, args.actions)) * 1000
            print(f"{args.game} {args.players}p vs {args.players - 1} {opponent}: {len(t)} human actions, "
                  f"median {statistics.median(t):.1f} ms, p95 {np.percentile(t, 95):.1f} ms, max {t.max():.1f} ms")
    server.should_exit = True


if __name__ == "__main__":
    main()
