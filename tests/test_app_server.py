"""The web app as a server others may reach (issue #29): no file of its disk is reachable from a
request, no request holds up the others, a foreign Host or a cross-site post is refused, tables
expire but a connected human's never does, and a restarted server resumes every unfinished table
from its SQLite store with the same seat tokens.

No test here times anything (the figures are measured by tools/app_stalls.py): a stall is shown by
order (a request served while another waits in a worker thread) and by work not done (the
validation never called, the body never read past its limit)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

import anyio

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dragonstones_env import games, raw_env
from dragonstones_env.games.dragonstones import custom
from dragonstones_env.play import sources
from dragonstones_env.play import table as play_table
from dragonstones_env.play.app import server
from dragonstones_env.play.app.limits import NO_LIMITS
from dragonstones_env.play.app.server import MAX_BODY, create_app, host_allowed
from dragonstones_env.play.app.store import CONNECTED_SECONDS, IDLE_SECONDS
from dragonstones_env.policies.checkpoint import CheckpointPolicy, expected_layout

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "characters.yaml"
JSON = {"Content-Type": "application/json"}
MARKER = "MARKER-7f3a9c"  # in every file a request must not reach: no response may ever contain it


def _client(tmp_path: Path, **options) -> TestClient:
    options.setdefault("store", tmp_path / "tables.sqlite")
    options.setdefault("limits", NO_LIMITS)  # one test client makes many tables (the limits: test_app_hostile)
    return TestClient(create_app(hosts=("testserver",), **options))


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **JSON}


def _new(c, seats, game="dragonstones", **extra) -> dict:
    r = c.post("/api/games", json={"game": game, "players": len(seats), "seats": seats, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def _pick(state, rng):
    group = state["actions"][int(rng.integers(len(state["actions"])))]
    if group["kind"] == "builder":
        return group["base"] + sum(int(rng.integers(f["max"] + 1)) * f["stride"] for f in group["fields"])
    return group["actions"][int(rng.integers(len(group["actions"])))]["action"]


def _checkpoint(folder: Path, **card) -> Path:
    """A small checkpoint of Fist (random weights), or a broken one given other card fields."""
    folder.mkdir(parents=True)
    obs, actions = raw_env.OBS_SIZE, raw_env.NUM_ACTIONS
    rng = np.random.default_rng(0)
    weights = [(rng.normal(size=(obs, 8)).astype(np.float32), np.zeros(8, np.float32)),
               (rng.normal(size=(8, actions)).astype(np.float32), np.zeros(actions, np.float32))]
    CheckpointPolicy(weights).save_npz(folder / "policy.npz")
    data = {"algorithm": "MaskablePPO", "env": "dragonstones_v1", "layout": expected_layout("dragonstones_v1"),
            "steps": 1, **card}
    (folder / "card.json").write_text(json.dumps(data))
    return folder


# ------------------------------------------------------------------ no file reachable
@pytest.fixture
def disk(tmp_path):
    """Files a request must never reach, each holding MARKER, beside a configured deck and policy folder."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "deck.yaml").write_text(f"characters:\n  - name: {MARKER}\n    effects: [{{gain: {{coin: silver, "
                                      f"amount: 99}}}}]\n")
    (secret / "broken.yaml").write_text(f"{MARKER}: [unclosed\n")
    (secret / "deck.toml").write_text(f'{MARKER} = "not a deck"\n')
    _checkpoint(secret / "ckpt", layout=MARKER)
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "example.yaml").write_text(EXAMPLE.read_text())
    (decks / "bad.yaml").write_text(f"characters:\n  - name: {MARKER}\n    effects: [{{gain: {{coin: silver, "
                                    f"amount: 99}}}}]\n")
    policies = tmp_path / "policies"
    _checkpoint(policies / "tiny")
    _checkpoint(policies / "broken", layout=MARKER)
    return tmp_path


def _same_refusal(responses: list, probes: list[str]) -> None:
    """Every response a 4xx without MARKER; with the probe's own text blanked, all the same message:
    whether a path exists, or is a folder or a file, is not told."""
    messages = []
    for r, probe in zip(responses, probes, strict=True):
        assert 400 <= r.status_code < 500, r.text
        assert MARKER not in r.text
        text = r.json()["error"]
        for p in sorted({probe, probe[:60], probe[:100], probe[:200]}, key=len, reverse=True):
            text = text.replace(repr(p), "<probe>")
        messages.append(text)
    assert len(set(messages)) == 1, messages


def test_no_error_quotes_a_file_or_tells_whether_it_exists(disk, capsys):
    with _client(disk, decks=disk / "decks", policies=disk / "policies") as c:
        secret = disk / "secret"
        rel = str(Path("..") / ".." / secret.relative_to(secret.anchor))  # a ../ path from anywhere
        files = [str(secret / "deck.yaml"), str(secret / "broken.yaml"), str(secret / "deck.toml"),
                 str(secret / "missing.yaml"), rel + "/deck.yaml", "/etc/passwd", str(secret)]
        seats = ["human", "random", "random", "random"]
        _same_refusal([c.post("/api/games", json={"game": "dragonstones", "players": 4, "seats": seats,
                                                  "characters": f}) for f in files], files)
        folders = [str(secret / "ckpt"), str(secret / "ckpt" / "card.json"), str(secret / "nothing"), str(secret),
                   rel + "/ckpt", "/etc"]
        _same_refusal([c.post("/api/games", json={"game": "dragonstones", "players": 4,
                                                  "seats": ["human", f, "random", "random"]}) for f in folders],
                      folders)
        saved = _new(c, ["random"] * 4)
        record = c.get(f"/api/games/{saved['id']}/record").json()
        rid = c.post("/api/replays", json=record).json()["id"]
        _same_refusal([c.get(f"/api/replays/{rid}", params={"step": 0, "seat": 0, "insight": f}) for f in folders],
                      folders)
        entry = {"game": 0, "seed": 5, "lineup": ["random"] * 4}
        _same_refusal([c.post("/api/replays", json={"game": "dragonstones", "regenerate": {
            **entry, "env_options": {"characters": f}}}) for f in files], files)
        _same_refusal([c.post("/api/replays", json={"game": "dragonstones", "regenerate": {
            **entry, "lineup": [f, "random", "random", "random"]}}) for f in folders], folders)
        # the configured folders: by name only, and a bad file's content goes to the server's log, not the client
        assert _new(c, seats, characters="example")["id"]
        assert _new(c, seats, characters="example.yaml")["id"]
        r = c.post("/api/games", json={"game": "dragonstones", "players": 4, "seats": seats, "characters": "bad"})
        assert r.status_code == 400 and MARKER not in r.text and "the server's log says why" in r.json()["error"]
        meta = c.get("/api/meta").json()
        assert meta["decks"] == ["bad", "example"]
        assert "tiny" in meta["games"][0]["policies"] and "broken" not in meta["games"][0]["policies"]
        assert _new(c, ["human", "tiny", "random", "random"])["id"]
        r = c.post("/api/games", json={"game": "dragonstones", "players": 4, "seats": ["human", "broken", "random",
                                                                                        "random"]})
        assert r.status_code == 400 and MARKER not in r.text
        r = c.post("/api/games", json={"game": "drachenschatten", "players": 2, "seats": ["human", "tiny"]})
        assert r.status_code == 400 and "plays 'dragonstones_v1', not DrachenSchatten" in r.json()["error"]
    assert MARKER in capsys.readouterr().err  # the operator reads why


def test_a_server_without_folders_names_none():
    with TestClient(create_app(hosts=("testserver",))) as c:
        meta = c.get("/api/meta").json()
        assert meta["decks"] == []
        r = c.post("/api/games", json={"game": "dragonstones", "players": 3, "seats": ["human"] * 3,
                                       "characters": "characters"})
        assert r.status_code == 400 and "no deck folder (dragonstones serve --decks DIR)" in r.json()["error"]
        c.app.state.tables.close()


# ------------------------------------------------------------------ Host and content type
def test_a_foreign_host_is_refused(tmp_path):
    assert all(host_allowed(h, ()) for h in ("127.0.0.1:8000", "localhost", "LOCALHOST:80", "[::1]:8000", "::1",
                                             "10.1.2.3", "192.168.0.5:8000"))
    assert not any(host_allowed(h, ()) for h in ("evil.example", "evil.example:8000", "localhost.evil.example",
                                                 "127.0.0.1.nip.io", ""))
    assert host_allowed("table.lan:8000", ("table.lan",))
    with _client(tmp_path) as c:
        for host in ("evil.example", "rebind.attacker.test:8000"):
            r = c.get("/api/meta", headers={"Host": host})
            assert r.status_code == 421 and "does not name this server" in r.json()["error"]
            r = c.post("/api/games", json={"game": "dragonstones", "players": 3, "seats": ["random"] * 3},
                       headers={"Host": host})
            assert r.status_code == 421
        assert c.get("/api/meta", headers={"Host": "127.0.0.1:8000"}).status_code == 200
        assert c.get("/api/games").json()["games"] == []


def test_state_changing_requests_must_be_json(tmp_path):
    """A cross-site form or text/plain post (no preflight) is refused before anything happens."""
    with _client(tmp_path) as c:
        body = json.dumps({"game": "dragonstones", "players": 3, "seats": ["random"] * 3})
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
            headers = {} if kind is None else {"Content-Type": kind}
            r = c.post("/api/games", content=body, headers=headers)
            assert r.status_code == 415 and "application/json" in r.json()["error"], kind
        assert c.get("/api/games").json()["games"] == []
        made = _new(c, ["human", "random", "random"])
        r = c.delete(f"/api/games/{made['id']}", headers={"Authorization": f"Bearer {made['creator']}"})
        assert r.status_code == 415
        r = c.post(f"/api/games/{made['id']}/actions", content=b'{"action": 0}',
                   headers={"Authorization": f"Bearer {made['tokens']['0']}", "Content-Type": "text/plain"})
        assert r.status_code == 415
        assert c.post("/api/games", content=body, headers={"Content-Type": "application/json; charset=utf-8"}) \
            .status_code == 201


# ------------------------------------------------------------------ no stalls
def _asgi(app, method: str, path: str, chunks, headers: dict[str, str]) -> tuple[int, bytes, int]:
    """One request straight through the ASGI app, its body fed chunk by chunk as a client sends it;
    returns the status, the body and how many bytes the app read."""
    consumed = 0
    sent: list[dict] = []
    it = iter(chunks)

    async def receive():
        nonlocal consumed
        chunk = next(it, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        consumed += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(k.lower().encode(), v.encode()) for k, v in {"host": "127.0.0.1", **headers}.items()],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}
    anyio.run(app, scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"), consumed


def test_a_huge_body_is_cut_at_the_limit_not_read_whole(tmp_path):
    app = create_app(store=tmp_path / "t.sqlite")
    chunk = b" " * 65536
    total = 300_000_000 // len(chunk)  # 300 MB, generated lazily: never held
    status, body, consumed = _asgi(app, "POST", "/api/replays", (chunk for _ in range(total)), JSON)
    assert status == 413 and b"more than" in body and consumed <= MAX_BODY + len(chunk)
    status, body, consumed = _asgi(app, "POST", "/api/replays", (chunk for _ in range(total)),
                                   {**JSON, "content-length": "300000000"})
    assert status == 413 and consumed == 0  # refused on its declared length, before a byte is read
    status, _, consumed = _asgi(app, "POST", "/api/games", (chunk for _ in range(total)), JSON)
    assert status == 413 and consumed <= server.MAX_TABLE_BODY + len(chunk)
    app.state.tables.close()


@pytest.fixture
def counted(monkeypatch):
    """Counts the expensive checks of a custom card (schema and conservation)."""
    calls = {"effects": 0, "conservation": 0}
    real_effects, real_conservation = custom.check_effects, custom.check_conservation

    def effects(*a, **k):
        calls["effects"] += 1
        return real_effects(*a, **k)

    def conservation(*a, **k):
        calls["conservation"] += 1
        return real_conservation(*a, **k)

    monkeypatch.setattr(custom, "check_effects", effects)
    monkeypatch.setattr(custom, "check_conservation", conservation)
    return calls


def _alias_bomb() -> str:
    """A short YAML text whose aliases make a card of millions of nested effects."""
    lines = ["e0: &e0 [{gain: {coin: silver, amount: 1}}, {gain: {coin: silver, amount: 1}}]"]
    for k in range(1, 12):
        lines.append(f"e{k}: &e{k} [{{choose: [*e{k - 1}, *e{k - 1}]}}, {{choose: [*e{k - 1}, *e{k - 1}]}}]")
    lines.append("characters: [{name: Bomb, effects: *e11}]")
    return "\n".join(lines)


def test_oversized_decks_are_refused_before_any_card_is_checked(tmp_path, counted):
    gain = {"gain": {"coin": "silver", "amount": 1}}
    cards_200 = [{"name": f"C{i}", "effects": [gain]} for i in range(200)]
    cases = [
        (cards_200, "at most 4 custom characters"),
        ({"format": "json", "text": json.dumps({"characters": cards_200})}, "at most 4 custom characters"),
        ([{"name": "Long", "effects": [gain] * 4000}], "more than 32 effects"),
        ([{"name": "Deep", "effects": [{"choose": [[{"choose": [[{"choose": [[{"choose": [[{"choose": [
            [gain], [gain]]}], [gain]]}], [gain]]}], [gain]]}], [gain]]}]}], "nested more than 4 deep"),
        ({"format": "yaml", "text": _alias_bomb()}, "YAML aliases"),  # refused as it is parsed
        ({"format": "yaml", "text": "x" * 70_000}, "at most 64000"),
        ([{"name": "N" * 41, "effects": [gain]}], "at most 40 characters"),
    ]
    with _client(tmp_path) as c:
        for characters, message in cases:
            r = c.post("/api/games", json={"game": "dragonstones", "players": 3, "seats": ["human"] * 3,
                                           "characters": characters})
            assert r.status_code == 400 and message in r.json()["error"], r.text[:300]
        assert counted == {"effects": 0, "conservation": 0}
        assert _new(c, ["human"] * 3, characters=[{"name": "Fine", "effects": [gain] * 32}])
        assert counted["conservation"] == 1


def test_slow_work_runs_off_the_event_loop(tmp_path, monkeypatch):
    """While a new table, a replay or a regeneration is being made in a worker thread (held there by
    the test), another request is served: the event loop is free."""
    release, entered = threading.Event(), threading.Event()

    def held(real):
        def wrapper(*args, **kwargs):
            entered.set()
            assert release.wait(60), "the test never released the held request"
            return real(*args, **kwargs)
        return wrapper

    with _client(tmp_path) as c:
        saved = c.get(f"/api/games/{_new(c, ['random'] * 3)['id']}/record").json()
        requests = [
            ("LiveGame", lambda: c.post("/api/games", json={"game": "dragonstones", "players": 3,
                                                            "seats": ["random"] * 3})),
            ("Replay", lambda: c.post("/api/replays", json=saved)),
        ]
        for name, slow_request in requests:
            release.clear()
            entered.clear()
            monkeypatch.setattr(server, name, held(getattr(play_table, name)))
            done: dict = {}
            worker = threading.Thread(target=lambda req=slow_request, out=done: out.update(r=req()))
            worker.start()
            assert entered.wait(60)
            meta = c.get("/api/meta")  # served while the other request waits in its thread
            games = c.get("/api/games")
            assert meta.status_code == 200 and games.status_code == 200 and "r" not in done
            release.set()
            worker.join(60)
            assert done["r"].status_code == 201
            monkeypatch.setattr(server, name, getattr(play_table, name))


def test_a_regeneration_has_a_time_limit(tmp_path):
    entry = {"game": 0, "seed": 5, "lineup": ["champion"] * 6}
    with _client(tmp_path, regenerate_seconds=0.001) as c:
        r = c.post("/api/replays", json={"game": "dragonstones", "regenerate": entry})
        assert r.status_code == 422 and "took longer than 0.001 s" in r.json()["error"]
    with _client(tmp_path, store=tmp_path / "other.sqlite") as c:
        assert c.post("/api/replays", json={"game": "dragonstones", "regenerate": entry}).status_code == 201


def test_insight_requests_do_not_grow_a_cache(tmp_path):
    with _client(tmp_path) as c:
        saved = c.get(f"/api/games/{_new(c, ['random'] * 4)['id']}/record").json()
        rid = c.post("/api/replays", json=saved).json()["id"]
        for k in range(300):
            r = c.get(f"/api/replays/{rid}", params={"step": 0, "seat": 0, "insight": f"runs/x/../x{k}"})
            assert r.status_code == 400
        for name in ("champion", "heuristic", "random"):
            assert c.get(f"/api/replays/{rid}", params={"step": 0, "seat": 0, "insight": name}).status_code == 200
        assert len(sources._INSIGHT) <= sources._INSIGHT.size


# ------------------------------------------------------------------ expiry and eviction
class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_tables_expire_but_a_connected_humans_table_is_never_evicted(tmp_path):
    clock = Clock()
    with _client(tmp_path, tables={"clock": clock, "max_tables": 3, "max_loaded": 2}) as c:
        tables = c.app.state.tables
        done = _new(c, ["random"] * 3)  # all bots: over at once
        playing = _new(c, ["human", "random", "random"])
        clock.now += 11  # a table just fetched is not unloaded (a request may be about to use it)
        left = _new(c, ["human", "random", "random"])
        assert c.get(f"/api/games/{playing['id']}", headers=_bearer(playing["tokens"]["0"])).status_code == 200
        assert len(tables.items) <= 2  # the others stay in the file
        assert c.get(f"/api/games/{done['id']}").status_code == 200  # and load again
        watched = _new(c, ["random"] * 3, pace_ms=10_000)  # full: the finished table makes room
        assert c.get(f"/api/games/{done['id']}").status_code == 404
        _new(c, ["human", "random", "random"])  # full: the all-bot table makes room
        assert c.get(f"/api/games/{watched['id']}").status_code == 404
        r = c.post("/api/games", json={"game": "dragonstones", "players": 3, "seats": ["human", "random", "random"]})
        assert r.status_code == 503 and "try again" in r.json()["error"]  # nothing is evicted from a human
        assert c.get(f"/api/games/{playing['id']}").status_code == 200
        # a week later: the idle human table expires, the one whose player is still there does not
        clock.now += tables.human_idle_seconds + 1
        assert c.get(f"/api/games/{playing['id']}", headers=_bearer(playing["tokens"]["0"])).status_code == 200
        _new(c, ["random"] * 3)
        assert c.get(f"/api/games/{left['id']}").status_code == 404
        assert c.get(f"/api/games/{playing['id']}").status_code == 200
        # a finished table expires an hour after it was last looked at
        ended = _new(c, ["random"] * 3)
        clock.now += IDLE_SECONDS + CONNECTED_SECONDS
        assert c.get(f"/api/games/{playing['id']}", headers=_bearer(playing["tokens"]["0"])).status_code == 200
        _new(c, ["random"] * 3)
        assert c.get(f"/api/games/{ended['id']}").status_code == 404
        assert c.get(f"/api/games/{playing['id']}").status_code == 200


# ------------------------------------------------------------------ restarts
def _drive(c, made: dict, moves: int, rng) -> None:
    """Play ``moves`` human moves, whoever's turn it is (every human seat's token is at hand)."""
    tokens = {int(s): t for s, t in made["tokens"].items()}
    for _ in range(moves):
        state = c.get(f"/api/games/{made['id']}").json()
        if state["result"] is not None:
            return
        me = c.get(f"/api/games/{made['id']}", headers=_bearer(tokens[state["actor"]])).json()
        r = c.post(f"/api/games/{made['id']}/actions", json={"action": _pick(me, rng)},
                   headers=_bearer(tokens[state["actor"]]))
        assert r.status_code == 200, r.text


@pytest.mark.parametrize(("game", "seats", "extra"), [
    ("dragonstones", ["human", "human", "heuristic", "random"], {}),
    ("dragonstones", ["human", "random", "champion"], {"characters": {"format": "yaml", "text": EXAMPLE.read_text()}}),
    ("drachenschatten", ["human", "ds-heuristic", "random"], {}),
])
def test_a_restarted_server_resumes_the_table_with_the_same_tokens(tmp_path, game, seats, extra):
    store = tmp_path / "tables.sqlite"
    rng = np.random.default_rng(1)
    with _client(tmp_path, store=store) as c:
        made = _new(c, seats, game=game, seed=2, **extra)  # a fixed deal: a game still on after 12 moves
        _drive(c, made, 12, rng)
        before = {s: c.get(f"/api/games/{made['id']}", headers=_bearer(t)).content for s, t in made["tokens"].items()}
        assert json.loads(before["0"])["result"] is None  # half played
        spectator = c.get(f"/api/games/{made['id']}").content
        reference = c.app.state.tables.get(made["id"]).game.fork()  # the game as if never stopped
        c.app.state.tables.close()
    with _client(tmp_path, store=store) as c:  # a new process would do the same: everything from the file
        tables = c.app.state.tables
        assert tables.resumed == [made["id"]] and tables.refused == {}
        after = {s: c.get(f"/api/games/{made['id']}", headers=_bearer(t)).content for s, t in made["tokens"].items()}
        assert after == before and c.get(f"/api/games/{made['id']}").content == spectator
        # the same tokens continue, and the bots go on as they would have (their random state replayed)
        _drive(c, made, 15, np.random.default_rng(2))
        resumed = tables.get(made["id"]).game
        replay_rng = np.random.default_rng(2)
        for _ in range(15):
            if reference.over:
                break
            seat = reference.actor()
            state = reference.state(seat)
            reference.act(seat, {"action": _pick(state, replay_rng)})
            reference.advance()
        assert resumed.env.game.record == reference.env.game.record
        r = c.delete(f"/api/games/{made['id']}", headers=_bearer(made["creator"]))
        assert r.status_code == 200


def test_a_tampered_store_is_refused_not_played(tmp_path):
    store = tmp_path / "tables.sqlite"
    with _client(tmp_path, store=store) as c:
        made = _new(c, ["human", "random", "random"], seed=3)
        _drive(c, made, 10, np.random.default_rng(0))
        c.app.state.tables.close()
    db = sqlite3.connect(store)
    n, event = next((n, json.loads(e)) for n, e in db.execute(
        "SELECT n, event FROM events WHERE id = ? ORDER BY n", (made["id"],)) if json.loads(e)["event"] == "reveal")
    event["values"] = [99] * len(event["values"])
    db.execute("UPDATE events SET event = ? WHERE id = ? AND n = ?", (json.dumps(event), made["id"], n))
    db.commit()
    db.close()
    with _client(tmp_path, store=store) as c:
        assert made["id"] in c.app.state.tables.refused
        assert "does not replay" in c.app.state.tables.refused[made["id"]]
        r = c.get(f"/api/games/{made['id']}")
        assert r.status_code == 422 and "does not replay" in r.json()["error"]


# ------------------------------------------------------------------ search bots (issue #27)
SEARCH = "ismcts:simulations=10"  # a server offers it (sources.MENU_SPECS)
QUICK = "ismcts:simulations=2"  # the terminal's (any spec)


def _settled(c, made: dict, token: str | None = None, limit: float = 120.0) -> dict:
    """The state once no search is deciding (polled, as the page does; no time is asserted)."""
    deadline = time.monotonic() + limit
    while True:
        headers = _bearer(token) if token else {}
        state = c.get(f"/api/games/{made['id']}", headers=headers).json()
        if state["thinking"] is None:
            return state
        assert time.monotonic() < deadline, "the search never finished"
        time.sleep(0.01)


def test_a_search_bot_decides_in_a_bot_thread_while_requests_answer(tmp_path, monkeypatch):
    """A seat of ``ismcts``: the human's move is answered with the search still to decide ("thinking":
    its seat), while the search is held in its bot thread by the test; the game moves on once it is
    released, and a table with a search bot plays to its end, legally, through polls alone."""
    release, entered = threading.Event(), threading.Event()
    real = play_table._think

    def held(*args):
        entered.set()
        assert release.wait(60), "the test never released the held search"
        return real(*args)

    monkeypatch.setattr(play_table, "_think", held)
    with _client(tmp_path) as c:
        made = _new(c, ["human", SEARCH, "random"], seed=4)
        token = made["tokens"]["0"]
        state = c.get(f"/api/games/{made['id']}", headers=_bearer(token)).json()
        assert state["actor"] == 0 and state["thinking"] is None and state["actions"]
        rng = np.random.default_rng(0)
        while state["actor"] == 0:  # until the search's seat is to act
            state = c.post(f"/api/games/{made['id']}/actions", json={"action": _pick(state, rng)},
                           headers=_bearer(token)).json()
            if state["actor"] == 2:  # random moves in the request
                state = c.get(f"/api/games/{made['id']}", headers=_bearer(token)).json()
        assert state["actor"] == 1 and state["thinking"] == 1 and state["actions"] is None
        assert entered.wait(60)  # held in its bot thread: the requests below are answered meanwhile
        moves = state["moves"]
        for _ in range(3):
            shown = c.get(f"/api/games/{made['id']}").json()
            assert shown["thinking"] == 1 and shown["moves"] == moves
        r = c.post(f"/api/games/{made['id']}/actions", json={"action": 0}, headers=_bearer(token))
        assert r.status_code == 409 and "player_1's decision" in r.json()["error"]
        assert c.get("/api/games").status_code == 200
        release.set()
        after = _settled(c, made, token)
        assert after["moves"] > moves
        # a search bot and a random one, watched: the page's polls alone play the game to its end
        watched = _new(c, [SEARCH, "random"], game="drachenschatten", seed=1)
        for _ in range(1000):
            state = _settled(c, watched)
            if state["result"] is not None:
                break
        assert state["result"] is not None and state["thinking"] is None
        record = c.get(f"/api/games/{watched['id']}/record").json()["record"]
        games.get("drachenschatten").replay(record)


@pytest.mark.parametrize("game", ["dragonstones", "drachenschatten"])
def test_a_search_in_the_bot_thread_decides_as_it_would_in_the_request(game):
    """The background search decides on a copy of the env: the same game as deciding on the env
    itself (the terminal's way), move for move."""
    body = {"game": game, "players": 3, "seats": [QUICK, "random", QUICK], "seed": 11}
    direct = play_table.LiveGame(body)  # a table of bots: over at once
    assert direct.over
    threaded = play_table.LiveGame(body, background=True)
    searches = 0
    while not threaded.over:
        job = threaded.think_due()
        assert job is not None and threaded.thinking == threaded.actor()
        assert threaded.advance() == 0  # nothing moves while it thinks
        assert threaded.play_thought(*job())
        threaded.advance()
        searches += 1
    assert searches > 10 and threaded.env.game.record == direct.env.game.record


def test_a_table_with_a_search_bot_resumes_after_a_restart(tmp_path):
    store = tmp_path / "tables.sqlite"
    with _client(tmp_path, store=store) as c:
        made = _new(c, ["human", SEARCH, "heuristic"], seed=5)
        token = made["tokens"]["0"]
        rng = np.random.default_rng(3)
        for _ in range(6):
            state = _settled(c, made, token)
            r = c.post(f"/api/games/{made['id']}/actions", json={"action": _pick(state, rng)}, headers=_bearer(token))
            assert r.status_code == 200, r.text
        before = _settled(c, made, token)
        c.app.state.tables.close()
    with _client(tmp_path, store=store) as c:
        assert c.app.state.tables.resumed == [made["id"]] and c.app.state.tables.refused == {}
        after = _settled(c, made, token)
        assert after["moves"] >= before["moves"] and after["log"][:len(before["log"])] == before["log"]
        state = c.post(f"/api/games/{made['id']}/actions", json={"action": _pick(after, rng)}, headers=_bearer(token))
        assert state.status_code == 200, state.text
