"""The web app's API without a browser (Starlette's TestClient): every endpoint, every refused
request (a 4xx naming the problem, the game unchanged), concurrent games, replays, and the
no-leak check: two games that differ only in what a seat cannot see give that seat
byte-identical responses."""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # recent Starlette suggests httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dragonstones_env import env as fist_env
from dragonstones_env.play.app.games.common import insight
from dragonstones_env.play.app.server import create_app


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def _new(client, game="dragonstones", players=4, seats=None, **extra):
    seats = seats or ["human"] + ["random"] * (players - 1)
    r = client.post("/api/games", json={"game": game, "players": players, "seats": seats, **extra})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _pick(state, rng):
    """A random legal action from what the page is given (a composed bid or a button)."""
    group = state["actions"][int(rng.integers(len(state["actions"])))]
    if group["kind"] == "builder":
        return group["base"] + sum(int(rng.integers(f["max"] + 1)) * f["stride"] for f in group["fields"])
    return group["actions"][int(rng.integers(len(group["actions"])))]["action"]


def _play_out(client, gid, seat, rng, limit=3000):
    state = client.get(f"/api/games/{gid}?seat={seat}").json()
    for _ in range(limit):
        if state["result"] is not None:
            return state
        r = client.post(f"/api/games/{gid}/actions", json={"seat": seat, "action": _pick(state, rng)})
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


# ------------------------------------------------------------------ page and meta
def test_page_and_static_files(client):
    page = client.get("/")
    assert page.status_code == 200 and "<script src=\"/static/app.js\">" in page.text
    for name in ("app.js", "app.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert client.get("/static/nope.js").status_code == 404


def test_meta_lists_games_and_their_policies(client):
    games = {g["name"]: g for g in client.get("/api/meta").json()["games"]}
    assert set(games) == {"dragonstones", "drachenschatten"}
    assert {"random", "heuristic", "champion"} <= set(games["dragonstones"]["policies"])
    assert "ds-heuristic" not in games["dragonstones"]["policies"]
    assert {"random", "ds-heuristic"} <= set(games["drachenschatten"]["policies"])
    assert games["dragonstones"]["min_players"] == 3 and games["drachenschatten"]["max_players"] == 4


# ------------------------------------------------------------------ playing
@pytest.mark.parametrize(("game", "players", "seat"), [("dragonstones", 4, 0), ("drachenschatten", 3, 1)])
def test_a_whole_game_against_random_bots(client, game, players, seat):
    seats = ["random"] * players
    seats[seat] = "human"
    gid = _new(client, game, players, seats, seed=5)
    assert client.get(f"/api/games/{gid}/record").status_code == 409  # not before the end
    state = _play_out(client, gid, seat, np.random.default_rng(0))
    assert state["actions"] is None and state["actor"] is None
    assert set(state["result"]) == {"winners", "rewards", "truncated"}
    assert len(state["log"]) > 5 and state["race"] and len(state["view"]["players"]) == players
    saved = client.get(f"/api/games/{gid}/record").json()
    assert saved["game"] == game and saved["seats"] == seats
    listed = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert listed[gid]["over"] is True


def test_the_bid_builder_is_the_box_of_legal_bids(client):
    gid = _new(client, seed=1)
    state = client.get(f"/api/games/{gid}?seat=0").json()
    assert state["view"]["decision"] == "bid"
    (group,) = state["actions"]
    assert group["kind"] == "builder"
    fields = {f["name"]: f["max"] for f in group["fields"]}
    assert fields == {"fairy": 8, "common": 2, "black": 0, "amulet": 0}  # the starting coins (F3)


def test_checkpoint_insight_in_a_live_game(client):
    gid = _new(client, seats=["human", "champion", "random", "random"], seed=2, insight=True)
    state = _play_out(client, gid, 0, np.random.default_rng(1))
    assert state["insight"], "the champion decided and its thinking is shown"
    top = state["insight"][-1]["top"]
    assert top and all(0 < t["p"] <= 1 for t in top) and isinstance(top[0]["text"], str)
    off = _new(client, seats=["human", "champion", "random", "random"], seed=2)
    assert client.get(f"/api/games/{off}?seat=0").json()["insight"] is None


def test_insight_lists_only_actions_that_show_a_probability():
    e = fist_env(num_players=4)
    e.reset(seed=0)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])

    class Sure:  # a checkpoint nearly certain of one action: the next one rounds to 0
        spec = "sure"

        def probabilities(self, observations, masks):
            p = np.zeros(masks.shape)
            p[0, legal[0]], p[0, legal[1]], p[0, legal[2]] = 0.99998, 0.00001, 0.00001
            return p

    seen = insight(Sure(), e, e.agent_selection)
    assert [t["action"] for t in seen["top"]] == [legal[0]] and seen["top"][0]["p"] == 1.0


def test_bots_keep_their_pace(client):
    gid = _new(client, seats=["random", "random", "human", "random"], seed=3, pace_ms=10_000)
    state = client.get(f"/api/games/{gid}?seat=2").json()
    assert state["actor"] == 0 and state["moves"] == 0  # seat 0's bot waits for its pace
    assert client.post(f"/api/games/{gid}/pace", json={"pace_ms": 0}).json() == {"pace_ms": 0}
    state = client.get(f"/api/games/{gid}?seat=2").json()
    assert state["actor"] == 2 and state["moves"] == 2


def test_concurrent_games_stay_apart(client):
    ids = [_new(client, seed=s) for s in (10, 11, 12)]
    results = {}

    def run(gid, k):
        results[gid] = _play_out(client, gid, 0, np.random.default_rng(k))

    threads = [threading.Thread(target=run, args=(gid, k)) for k, gid in enumerate(ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({json.dumps(results[g]["log"]) for g in ids}) == 3
    again = _new(client, seed=10)
    assert _play_out(client, again, 0, np.random.default_rng(0))["log"] == results[ids[0]]["log"]


def test_deleting_a_game(client):
    gid = _new(client)
    assert client.delete(f"/api/games/{gid}").status_code == 200
    assert client.get(f"/api/games/{gid}?seat=0").status_code == 404


# ------------------------------------------------------------------ a custom deck (issue #16)
def test_a_game_with_the_example_deck_names_its_cards_and_replays(client):
    """The example deck through the same env options: its cards by name (never their custom_k slot)
    with their rules text in every state, the rule bots play, and the saved record replays."""
    example = str(Path(__file__).resolve().parents[1] / "examples" / "characters.yaml")
    seats = ["human", "heuristic", "value", "champion"]
    gid = _new(client, seats=seats, seed=3, characters=example, exclude=["Troll"])
    state = client.get(f"/api/games/{gid}?seat=0").json()
    deck = state["view"]["deck"]
    assert [(c["name"], c["copies"]) for c in deck["custom"]] == [("Banker", 2), ("Highwayman", 1), ("Jeweller", 2)]
    assert deck["custom"][0]["text"].startswith("Take 3 fairy gold") and deck["exclude"] == ["Troll"]
    rng, seen = np.random.default_rng(3), set()
    for _ in range(3000):
        v = state["view"]
        names = [c["name"] for c in v["characters"]] + [v["card"], *v["special_pile"], *v["special_discards"]]
        names += [a["card"] for a in v["auctions"]]
        assert not any(str(n).startswith("custom_") for n in names), names
        seen.update(n for n in names if n in ("Banker", "Highwayman", "Jeweller"))
        if state["result"] is not None:
            break
        r = client.post(f"/api/games/{gid}/actions", json={"seat": 0, "action": _pick(state, rng)})
        assert r.status_code == 200, r.text
        state = r.json()
    assert state["result"] is not None and seen  # a custom card came up, by its name
    saved = client.get(f"/api/games/{gid}/record").json()
    assert saved["record"][0]["deck"]["exclude"] == ["Troll"]
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 201, r.text
    last = client.get(f"/api/replays/{r.json()['id']}?step={r.json()['steps']}&seat=all").json()
    assert last["result"] == {**state["result"], "rewards": last["result"]["rewards"]}
    assert last["view"]["deck"] == deck
    meta = {g["name"]: g["options"] for g in client.get("/api/meta").json()["games"]}
    assert meta == {"dragonstones": ["characters", "exclude"], "drachenschatten": []}


# ------------------------------------------------------------------ refused requests
BAD_NEW_GAMES = [
    ({"game": "chess", "players": 4, "seats": ["human"] * 4}, 400, "unknown game 'chess'"),
    ({"game": "dragonstones", "players": 9, "seats": ["human"] * 9}, 400, "players must be an integer from 3 to 6"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"]}, 400, "seats must be a list of 4"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", "nobody", "random", "random"]}, 400,
     "unknown policy spec 'nobody'"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", "ds-heuristic", "random", "random"]}, 400,
     "not Fist of"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", 7, "random", "random"]}, 400,
     "a seat is 'human' or a policy"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "pace_ms": -1}, 400, "pace_ms must be"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "seed": 1.5}, 400, "seed must be"),
    ([1, 2], 400, "must be a JSON object"),
    # the custom deck (issue #16): each error names what is wrong
    ({"game": "drachenschatten", "players": 3, "seats": ["human"] * 3, "characters": "examples/characters.yaml"},
     400, "characters is not an option of DrachenSchatten"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "characters": 7}, 400, "characters must be a YAML"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "characters": "nofile.yaml"}, 400,
     "nofile.yaml: cannot read it"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "characters": "README.md"}, 400,
     "'README.md' is neither a .yaml, .yml or .toml file"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4,
      "characters": [{"name": "Banker", "effects": [{"gain": {"coin": "fairy", "amount": 99}}]}]}, 400,
     "character 'Banker'.effects[0].gain.amount: impossible amount 99"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "exclude": "Troll"}, 400, "exclude must be a list"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "exclude": ["Witch"]}, 400,
     "exclude: 'Witch' cannot be excluded"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD_NEW_GAMES)
def test_bad_new_games_are_refused(client, body, status, message):
    r = client.post("/api/games", json=body)
    assert r.status_code == status and message in r.json()["error"], r.text


def test_malformed_json_is_refused(client):
    for url in ("/api/games", "/api/replays"):
        r = client.post(url, content=b"{not json", headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "malformed JSON" in r.json()["error"]
    r = client.post("/api/games", content=b'{"game": NaN}')
    assert r.status_code == 400 and "NaN is not JSON" in r.json()["error"]


def test_bad_actions_are_refused_and_change_nothing(client):
    gid = _new(client, seats=["human", "human", "random", "random"], seed=4)
    before = client.get(f"/api/games/{gid}?seat=0").text
    legal = json.loads(before)["actions"][0]
    top = legal["base"] + sum(f["max"] * f["stride"] for f in legal["fields"])
    cases = [
        ({"seat": 2, "action": 0}, 403, "seat 2 is played by 'random'"),
        ({"seat": 1, "action": 0}, 409, "it is player_0 (human)'s decision, not seat 1's"),
        ({"seat": 0, "action": top + 64}, 422, "is not legal now"),  # one fairy gold more than held
        ({"seat": 0, "action": 10**9}, 422, "outside 0.."),
        ({"seat": 0, "action": "3f"}, 400, "action must be an integer"),
        ({"seat": 0, "action": True}, 400, "action must be an integer"),
        ({"seat": 9, "action": 0}, 400, "seat must be an integer from 0 to 3"),
        ({"action": 0}, 400, "seat must be"),
        ([0], 400, "must be a JSON object"),
    ]
    for body, status, message in cases:
        r = client.post(f"/api/games/{gid}/actions", json=body)
        assert r.status_code == status and message in r.json()["error"], (body, r.text)
        assert client.get(f"/api/games/{gid}?seat=0").text == before
    r = client.post(f"/api/games/{gid}/actions", content=b"[", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and client.get(f"/api/games/{gid}?seat=0").text == before
    assert client.post(f"/api/games/{gid}/pace", json={"pace_ms": "fast"}).status_code == 400
    assert client.get(f"/api/games/{gid}?seat=x").status_code == 400
    assert client.get(f"/api/games/{gid}").status_code == 400
    # acting after the end
    done = _new(client, seed=6)
    _play_out(client, done, 0, np.random.default_rng(2))
    r = client.post(f"/api/games/{done}/actions", json={"seat": 0, "action": 0})
    assert r.status_code == 409 and "the game is over" in r.json()["error"]


def test_unknown_ids_are_404(client):
    for method, url in [("GET", "/api/games/nope?seat=0"), ("POST", "/api/games/nope/actions"),
                        ("GET", "/api/games/nope/record"), ("DELETE", "/api/games/nope"),
                        ("POST", "/api/games/nope/pace"), ("GET", "/api/replays/nope?step=0&seat=0")]:
        r = client.request(method, url, json={"seat": 0, "action": 0, "pace_ms": 0})
        assert r.status_code == 404 and "unknown" in r.json()["error"] and "'nope'" in r.json()["error"], url


# ------------------------------------------------------------------ replays
def _finished_record(client, game="dragonstones", players=4, seats=None, seed=7):
    seats = seats or ["human"] + ["random"] * (players - 1)
    gid = _new(client, game, players, seats, seed=seed)
    _play_out(client, gid, seats.index("human"), np.random.default_rng(seed))
    return client.get(f"/api/games/{gid}/record").json()


def test_replay_steps_seats_and_the_whole_table(client):
    saved = _finished_record(client, seats=["human", "random", "champion", "random"])
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 201
    rid, steps = r.json()["id"], r.json()["steps"]
    assert steps == sum(ev["type"] == "choice" for ev in saved["record"])
    turns = r.json()["turns"]  # jump to a turn: its first decision
    assert turns["1"] == 0 and list(turns) == [str(t) for t in range(1, len(turns) + 1)]
    at = client.get(f"/api/replays/{rid}?step={turns['2']}&seat=0").json()
    assert at["view"]["turn"] == 2
    first = client.get(f"/api/replays/{rid}?step=0&seat=1").json()
    assert first["step"] == 0 and first["hidden"] is None and first["next"]["seat"] == first["actor"]
    whole = client.get(f"/api/replays/{rid}?step=1&seat=all").json()
    assert whole["hidden"]["sealed_bids"] == {str(first["next"]["seat"]): whole["hidden"]["sealed_bids"][
        str(first["next"]["seat"])]}  # the first bid is sealed: only the whole table shows it
    last = client.get(f"/api/replays/{rid}?step={steps}&seat=0").json()
    assert last["result"] is not None and last["next"] is None
    back = client.get(f"/api/replays/{rid}?step=3&seat=2").json()  # stepping back rebuilds the state
    assert back == client.get(f"/api/replays/{rid}?step=3&seat=2").json()
    # insight: the champion's seat at its decisions, or any checkpoint asked for
    champ = next(s for s in range(steps) if client.get(f"/api/replays/{rid}?step={s}&seat=all").json()["actor"] == 2)
    seen = client.get(f"/api/replays/{rid}?step={champ}&seat=all").json()["insight"]
    assert seen[0]["seat"] == 2 and seen[0]["policy"] == "champion" and seen[0]["top"]
    asked = client.get(f"/api/replays/{rid}?step=0&seat=0&insight=champion").json()["insight"]
    assert asked and abs(sum(t["p"] for t in asked[0]["top"]) - 1) < 0.5
    # the engine's bare record replays too (no line-up)
    bare = client.post("/api/replays", json=saved["record"]).json()
    assert bare["steps"] == steps and bare["seats"] == ["?"] * 4


def test_a_drachenschatten_replay_shows_stacks_only_to_the_whole_table(client):
    saved = _finished_record(client, "drachenschatten", 2, ["human", "ds-heuristic"], seed=3)
    rid = client.post("/api/replays", json=saved).json()["id"]
    seat = client.get(f"/api/replays/{rid}?step=2&seat=0").json()
    whole = client.get(f"/api/replays/{rid}?step=2&seat=all").json()
    assert seat["hidden"] is None and len(whole["hidden"]["stack_cards"]) == 16
    assert "stack_cards" not in json.dumps(seat)


BAD_RECORDS = [
    ({}, 400, "a record is a non-empty JSON list"),
    ([], 400, "a record is a non-empty JSON list"),
    ([{"type": "nothing"}], 422, "not the start event of any known game"),
    ([{"type": "start", "num_players": 2, "seed": 0, "max_turns": 40}], 422, "does not replay"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD_RECORDS)
def test_bad_records_are_refused(client, body, status, message):
    r = client.post("/api/replays", json=body)
    assert r.status_code == status and message in r.json()["error"], r.text


def test_a_tampered_record_names_the_event(client):
    saved = _finished_record(client, seed=8)
    record = saved["record"]
    k = next(i for i, ev in enumerate(record) if ev["type"] == "reveal")
    record[k]["values"] = [99] * len(record[k]["values"])
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 422 and f"record event {k}" in r.json()["error"]
    del record[k:]
    record.append({"type": "choice", "player": 0, "decision": "bid", "option": ["bid", 99, 0, 0, 0]})
    assert client.post("/api/replays", json=saved).status_code == 422


def test_bad_replay_queries(client):
    rid = client.post("/api/replays", json=_finished_record(client, seed=9)).json()["id"]
    for query, message in [("step=-1&seat=0", "step must be"), ("step=99999&seat=0", "step must be"),
                           ("step=0&seat=7", "seat must be"), ("step=a&seat=0", "'step' must be an integer"),
                           ("step=0&seat=0&insight=nobody", "unknown policy spec")]:
        r = client.get(f"/api/replays/{rid}?{query}")
        assert r.status_code == 400 and message in r.json()["error"], (query, r.text)


# ------------------------------------------------------------------ no leaks
def _fork(client, gid):
    store = client.app.state.store
    game, _ = store.get(gid, type(store.items[gid]))
    return store.add(game.fork())


def _views(client, gid, seats):
    return {s: client.get(f"/api/games/{gid}?seat={s}").content for s in seats}


def _round(raw: bytes) -> tuple:
    v = json.loads(raw)["view"]
    return v["turn"], len(v["auctions"]), v["decision"]


@pytest.mark.parametrize("players", [3, 4, 6])
def test_no_endpoint_shows_another_seats_sealed_bid(client, players):
    """Branch a game on two different sealed bids: until the reveal, every other seat gets
    byte-identical responses in both branches (as the env's no-leak test branches states)."""
    rng = np.random.default_rng(players)
    checked = 0
    for seed in range(5):
        gid = _new(client, "dragonstones", players, ["human"] * players, seed=seed)
        prefix = int(rng.integers(0, 120))  # a random state of the game, then on to a bid with a choice
        for k in range(prefix + 300):
            state = client.get(f"/api/games/{gid}?seat=0").json()
            if state["result"] is not None:
                break
            actor = state["actor"]
            mine = client.get(f"/api/games/{gid}?seat={actor}").json()
            group = mine["actions"][0]
            if k >= prefix and group["kind"] == "builder" and any(f["max"] for f in group["fields"]):
                break
            client.post(f"/api/games/{gid}/actions", json={"seat": actor, "action": _pick(mine, rng)})
        if state["result"] is not None:
            continue
        top = group["base"] + sum(f["max"] * f["stride"] for f in group["fields"])
        twin = _fork(client, gid)
        others = [s for s in range(players) if s != actor]
        assert _views(client, gid, range(players)) == _views(client, twin, range(players))
        start = _round(_views(client, gid, others[:1])[others[0]])  # before the bid: its round
        client.post(f"/api/games/{gid}/actions", json={"seat": actor, "action": group["base"]})
        client.post(f"/api/games/{twin}/actions", json={"seat": actor, "action": top})
        assert _views(client, gid, [actor]) != _views(client, twin, [actor])  # the bidder sees his own bid
        while True:  # the rest of the round: same moves in both branches, same bytes for the others
            left = _views(client, gid, others)
            if _round(left[others[0]]) != start:
                break  # revealed: from here the bids are public
            assert left == _views(client, twin, others)
            checked += 1
            nxt = json.loads(left[others[0]])["actor"]
            a = _pick(client.get(f"/api/games/{gid}?seat={nxt}").json(), rng)
            client.post(f"/api/games/{gid}/actions", json={"seat": nxt, "action": a})
            client.post(f"/api/games/{twin}/actions", json={"seat": nxt, "action": a})
    assert checked >= 3


def test_no_endpoint_shows_what_another_seat_saw_with_a_torch(client):
    """DrachenSchatten: branch on two different stacks looked at (D4); the other seats get the same bytes."""
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(40):
        gid = _new(client, "drachenschatten", 3, ["human"] * 3, seed=seed)
        for _ in range(200):
            s = client.get(f"/api/games/{gid}?seat=0").json()
            if s["result"] is not None:
                break
            actor = s["actor"]
            mine = client.get(f"/api/games/{gid}?seat={actor}").json()
            views = [a for g in mine["actions"] if g.get("family") == "view" for a in g["actions"]]
            if len(views) >= 2:
                twin = _fork(client, gid)
                client.post(f"/api/games/{gid}/actions", json={"seat": actor, "action": views[0]["action"]})
                client.post(f"/api/games/{twin}/actions", json={"seat": actor, "action": views[-1]["action"]})
                others = [q for q in range(3) if q != actor]
                assert _views(client, gid, others) == _views(client, twin, others)
                assert _views(client, gid, [actor]) != _views(client, twin, [actor])
                checked += 1
                break
            client.post(f"/api/games/{gid}/actions", json={"seat": actor, "action": _pick(mine, rng)})
        if checked >= 4:
            break
    assert checked >= 4


# ------------------------------------------------------------------ games of dragonstones_env.evaluation
def test_a_game_of_evaluate_is_regenerated_exactly(client, tmp_path):
    evaluate = pytest.importorskip("dragonstones_env.evaluation")
    from dragonstones_env.play.app.sessions import evaluation_seed

    assert evaluation_seed(7, 3, 2) == evaluate.policy_seed(7, 3, 2)
    summary = evaluate.evaluate(["champion", "heuristic", "random"], players=4, games=2, seed=7,
                                out=tmp_path, progress=False)
    entries = json.loads((tmp_path / "games.json").read_text())
    for entry in entries:
        body = {"game": summary["game"], "deterministic": summary["deterministic"], "regenerate": entry}
        r = client.post("/api/replays", json=body)
        assert r.status_code == 201, r.text
        assert r.json()["seats"] == entry["lineup"] and r.json()["steps"] == entry["steps"]
    wrong = {"game": "dragonstones", "regenerate": {**entries[0], "steps": entries[0]["steps"] + 1}}
    r = client.post("/api/replays", json=wrong)
    assert r.status_code == 422 and "differs from the entry" in r.json()["error"]


def test_a_game_of_evaluate_with_a_custom_deck_is_regenerated_with_its_deck(client, tmp_path):
    evaluate = pytest.importorskip("dragonstones_env.evaluation")
    deck = {"characters": "examples/characters.yaml", "exclude": ["Troll"]}
    summary = evaluate.evaluate(["heuristic", "value", "random"], players=4, games=3, seed=3, out=tmp_path,
                                progress=False, env_options=deck)
    assert summary["env_options"] == deck
    entries = json.loads((tmp_path / "games.json").read_text())
    assert all(entry["env_options"] == deck for entry in entries)
    for entry in entries:
        r = client.post("/api/replays", json={"game": "dragonstones", "regenerate": entry})
        assert r.status_code == 201, r.text
        assert r.json()["steps"] == entry["steps"]
    # the deck is part of the game: without it the same seeds play other games
    boxed = [{k: v for k, v in entry.items() if k != "env_options"} for entry in entries]
    codes = [client.post("/api/replays", json={"game": "dragonstones", "regenerate": e}).status_code for e in boxed]
    assert 422 in codes
    r = client.post("/api/replays", json={"game": "dragonstones", "regenerate": {**entries[0], "env_options": [1]}})
    assert r.status_code == 400 and "env_options" in r.json()["error"]
    stray = {**entries[0], "env_options": {**deck, "max_turns": 5}}
    r = client.post("/api/replays", json={"game": "dragonstones", "regenerate": stray})
    assert r.status_code == 400 and "['max_turns'] cannot be set" in r.json()["error"]


# ------------------------------------------------------------------ the views say what the engine says
def test_what_a_seat_is_shown_agrees_with_the_public_engine_state():
    """The views are decoded from observations; checked here against the engine's public facts."""
    from dragonstones_env import drachenschatten, env
    from dragonstones_env.play.app.games import drachenschatten as ds_view
    from dragonstones_env.play.app.games import dragonstones as fist_view

    rng = np.random.default_rng(0)
    for seed in range(4):
        e = env(num_players=3 + seed % 4)
        e.reset(seed=seed)
        raw, g = e.unwrapped, e.unwrapped.game
        while g.decision is not None:
            viewer = int(rng.integers(raw.num_players))
            v = fist_view.view(raw, viewer)
            assert [(a.card, a.values) for a in g.auctions if a.bids is not None] == \
                [(a["card"], [b["value"] for b in a["bids"]]) for a in v["auctions"] if a["bids"]]
            assert [p["score"] for p in v["players"]] == [pl.score for pl in g.players]
            stones = [[p[c] for c in ("red", "blue", "yellow")] for p in v["players"]]
            assert stones == [list(pl.stones) for pl in g.players]
            assert v["acting"] == g.decision.player and v["turn"] == g.turn
            e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
        d = drachenschatten.env(num_players=2 + seed % 3)
        d.reset(seed=seed)
        raw, g = d.unwrapped, d.unwrapped.game
        while g.decision is not None:
            viewer = int(rng.integers(raw.num_players))
            v = ds_view.view(raw, viewer)
            state = g.state_dict()
            assert v["stacks"] == state["stacks"] and v["acting"] == g.decision.player
            assert [p["cards"] for p in v["players"]] == [len(c) for c in g._collections]
            assert {s: t for s, t in enumerate(v["memory"]) if t} == {
                s: ds_view.CARD_NAMES[t] for s, t in g.memory(viewer).items()}
            d.step(int(rng.choice(np.flatnonzero(d.observe(d.agent_selection)["action_mask"]))))
