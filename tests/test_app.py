"""The web app's API without a browser (Starlette's TestClient): every endpoint, every refused
request (a 4xx naming the problem, the game unchanged), private seats (issue #29: a seat's token,
the spectators' public view, the creator's delete), concurrent games, replays, and the no-leak
check: two games that differ only in what a viewer cannot see give that viewer byte-identical
responses. Files, stalls and restarts are in tests/test_app_server.py."""

from __future__ import annotations

import json
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # recent Starlette suggests httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dragonstones_env import env as fist_env
from dragonstones_env import games
from dragonstones_env.games.drachenschatten import present as ds_adapter
from dragonstones_env.games.dragonstones import present as fist_adapter
from dragonstones_env.play.app.limits import NO_LIMITS
from dragonstones_env.play.app.server import create_app
from dragonstones_env.play.table import insight
from dragonstones_env.policies import Policy
from dragonstones_env.presenting import event_text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "characters.yaml"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "tables.sqlite"
    with TestClient(create_app(store=store, decks=ROOT / "examples", hosts=("testserver",), limits=NO_LIMITS)) as c:
        yield c


@dataclass
class Table:
    """A table as its creator holds it: the id, the creator's token and each human seat's."""

    id: str
    creator: str
    tokens: dict[int, str]

    def seat(self, k: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[k]}"}

    @property
    def owner(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.creator}", **JSON}


def _new(client, game="dragonstones", players=4, seats=None, **extra) -> Table:
    seats = seats or ["human"] + ["random"] * (players - 1)
    r = client.post("/api/games", json={"game": game, "players": players, "seats": seats, **extra})
    assert r.status_code == 201, r.text
    d = r.json()
    return Table(d["id"], d["creator"], {int(s): t for s, t in d["tokens"].items()})


def _get(client, t: Table, seat: int | None = None) -> dict:
    r = client.get(f"/api/games/{t.id}", headers={} if seat is None else t.seat(seat))
    assert r.status_code == 200, r.text
    return r.json()


def _act(client, t: Table, seat: int, action: int):
    return client.post(f"/api/games/{t.id}/actions", json={"action": action}, headers=t.seat(seat))


def _pick(state, rng):
    """A random legal action from what the page is given (a composed bid or a button)."""
    group = state["actions"][int(rng.integers(len(state["actions"])))]
    if group["kind"] == "builder":
        return group["base"] + sum(int(rng.integers(f["max"] + 1)) * f["stride"] for f in group["fields"])
    return group["actions"][int(rng.integers(len(group["actions"])))]["action"]


def _play_out(client, t: Table, seat, rng, limit=3000):
    state = _get(client, t, seat)
    for _ in range(limit):
        if state["result"] is not None:
            return state
        r = _act(client, t, seat, _pick(state, rng))
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


def test_meta_lists_games_policies_rules_and_decks(client):
    meta = client.get("/api/meta").json()
    games = {g["name"]: g for g in meta["games"]}
    assert set(games) == {"dragonstones", "drachenschatten"}
    assert {"random", "heuristic", "champion"} <= set(games["dragonstones"]["policies"])
    assert "ds-heuristic" not in games["dragonstones"]["policies"]
    assert {"random", "ds-heuristic"} <= set(games["drachenschatten"]["policies"])
    assert games["dragonstones"]["min_players"] == 3 and games["drachenschatten"]["max_players"] == 4
    # every card's rules text, from the games' own data
    assert games["dragonstones"]["rules"]["Witch"].startswith("take a black coin")
    assert len(games["dragonstones"]["rules"]) == 28 and len(games["drachenschatten"]["rules"]) == 22
    assert "battle with a dragon" in games["drachenschatten"]["rules"]["shield protect-dragon"]
    assert meta["decks"] == ["characters"]  # the configured deck folder, by name


# ------------------------------------------------------------------ playing
@pytest.mark.parametrize(("game", "players", "seat"), [("dragonstones", 4, 0), ("drachenschatten", 3, 1)])
def test_a_whole_game_against_random_bots(client, game, players, seat):
    seats = ["random"] * players
    seats[seat] = "human"
    t = _new(client, game, players, seats, seed=5)
    assert list(t.tokens) == [seat]
    assert client.get(f"/api/games/{t.id}/record").status_code == 409  # not before the end
    state = _play_out(client, t, seat, np.random.default_rng(0))
    assert state["actions"] is None and state["actor"] is None and state["prompt"] is None
    assert set(state["result"]) == {"winners", "points", "unit", "truncated", "text"}
    assert len(state["result"]["points"]) == players and "rewards" not in json.dumps(state["result"])
    assert state["view"]["decision"] is None  # game over, not "none"
    assert len(state["log"]) > 5 and state["race"] and len(state["view"]["players"]) == players
    assert state["log_total"] == len(state["log"])
    saved = client.get(f"/api/games/{t.id}/record").json()
    assert saved["game"] == game and saved["seats"] == seats
    listed = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert listed[t.id]["over"] is True


def test_the_bid_builder_is_the_box_of_legal_bids(client):
    t = _new(client, seed=1)
    state = _get(client, t, 0)
    assert state["view"]["decision"] == "bid" and state["prompt"].startswith("Your move: The Witch is up for auction")
    assert _get(client, t)["prompt"].startswith("player_0 decides: The Witch")
    (group,) = state["actions"]
    assert group["kind"] == "builder" and group["title"] == "Your sealed bid for the Witch"
    fields = {f["name"]: f["max"] for f in group["fields"]}
    assert fields == {"fairy": 8, "common": 2, "black": 0, "amulet": 0}  # the starting coins (F3)


def test_the_log_is_whole_and_sent_from_where_the_page_is(client):
    t = _new(client, seed=2)
    _play_out(client, t, 0, np.random.default_rng(2))
    whole = _get(client, t, 0)
    tail = client.get(f"/api/games/{t.id}?log_from=10", headers=t.seat(0)).json()
    assert tail["log"] == whole["log"][10:] and tail["log_from"] == 10 and tail["log_total"] == whole["log_total"]
    assert whole["log_total"] > 60  # the whole game, not the last 60 lines
    assert client.get(f"/api/games/{t.id}?log_from=-1").status_code == 400


def test_insight_is_for_tables_of_bots_only(client):
    """Insight shows what a bot privately knows (its coming bid): never live at a table with humans."""
    r = client.post("/api/games", json={"game": "dragonstones", "players": 4, "insight": True,
                                        "seats": ["human", "champion", "random", "random"]})
    assert r.status_code == 400 and "after the game, in its replay" in r.json()["error"]
    t = _new(client, seats=["human", "champion", "random", "random"], seed=2)
    assert _get(client, t, 0)["insight_allowed"] is False
    assert client.get(f"/api/games/{t.id}?insight=1", headers=t.seat(0)).json()["insight"] is None
    bots = _new(client, seats=["champion", "random", "champion", "random"], seed=2, pace_ms=10_000)
    assert bots.tokens == {}
    watched = client.get(f"/api/games/{bots.id}?insight=1").json()  # any spectator may open it
    assert watched["insight"] == [] and watched["insight_allowed"] is True
    assert client.post(f"/api/games/{bots.id}/pace", json={"pace_ms": 0}, headers=bots.owner).status_code == 200
    done = client.get(f"/api/games/{bots.id}?insight=1").json()
    assert done["result"] is not None and done["insight"]
    top = done["insight"][-1]["top"]
    assert top and all(0 < x["p"] <= 1 for x in top) and isinstance(top[0]["text"], str)
    # the champion ships its critic: its estimate of the seat's final reward, within the game's range
    assert all(-1 / 3 - 0.5 <= x["value"] <= 1.5 for x in done["insight"])
    assert client.get(f"/api/games/{bots.id}").json()["insight"] is None  # only when asked for


def test_insight_lists_only_actions_that_show_a_probability():
    e = fist_env(num_players=4)
    e.reset(seed=0)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])

    class Sure(Policy):  # a checkpoint nearly certain of one action: the next one rounds to 0
        def probabilities(self, observations, masks):
            p = np.zeros(masks.shape)
            p[0, legal[0]], p[0, legal[1]], p[0, legal[2]] = 0.99998, 0.00001, 0.00001
            return p

    seen = insight(Sure(), e, e.agent_selection, "sure")
    assert [t["action"] for t in seen["top"]] == [legal[0]] and seen["top"][0]["p"] == 1.0
    assert seen["policy"] == "sure" and seen["value"] is None  # no critic: no value shown


def test_bots_keep_their_pace_and_seats_and_the_creator_change_it(client):
    t = _new(client, seats=["random", "random", "human", "random"], seed=3, pace_ms=10_000)
    state = _get(client, t, 2)
    assert state["actor"] == 0 and state["moves"] == 0  # seat 0's bot waits for its pace
    r = client.post(f"/api/games/{t.id}/pace", json={"pace_ms": 0}, headers=JSON)
    assert r.status_code == 401  # a spectator does not set the pace
    r = client.post(f"/api/games/{t.id}/pace", json={"pace_ms": 0}, headers={**t.seat(2), **JSON})
    assert r.json() == {"pace_ms": 0}
    state = _get(client, t, 2)
    assert state["actor"] == 2 and state["moves"] == 2 and state["pace_ms"] == 0
    assert client.post(f"/api/games/{t.id}/pace", json={"pace_ms": 50}, headers=t.owner).status_code == 200


def test_concurrent_games_stay_apart(client):
    tables = [_new(client, seed=s) for s in (10, 11, 12)]
    results = {}

    def run(t, k):
        results[t.id] = _play_out(client, t, 0, np.random.default_rng(k))

    threads = [threading.Thread(target=run, args=(t, k)) for k, t in enumerate(tables)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len({json.dumps(results[t.id]["log"]) for t in tables}) == 3
    again = _new(client, seed=10)
    assert _play_out(client, again, 0, np.random.default_rng(0))["log"] == results[tables[0].id]["log"]


# ------------------------------------------------------------------ private seats (issue #29)
def test_two_players_each_see_and_act_for_their_own_seat_only(client):
    t = _new(client, seats=["human", "human", "random", "random"], seed=4)
    assert set(t.tokens) == {0, 1} and len({t.creator, *t.tokens.values()}) == 3
    assert all(len(tok) >= 32 for tok in (t.creator, *t.tokens.values()))
    mine = _get(client, t, 0)
    assert mine["seat"] == 0 and mine["actions"] and mine["actor"] == 0
    bid = mine["actions"][0]["base"] + 3 * mine["actions"][0]["fields"][0]["stride"]  # 3 fairy gold
    # player_1 may neither act for player_0 nor ask for player_0's view
    r = _act(client, t, 1, bid)
    assert r.status_code == 409 and "player_0's decision, not player_1's" in r.json()["error"]
    r = client.post(f"/api/games/{t.id}/actions", json={"seat": 0, "action": bid}, headers=t.seat(1))
    assert r.status_code == 403 and "acts for no other seat" in r.json()["error"]
    assert client.get(f"/api/games/{t.id}?seat=0", headers=t.seat(1)).status_code == 403
    assert client.get(f"/api/games/{t.id}?seat=0").status_code == 403  # no token: no seat's view
    assert client.post(f"/api/games/{t.id}/actions", json={"action": bid}).status_code == 401
    assert _act(client, t, 0, bid).status_code == 200
    # sealed: player_0 sees his bid, player_1 and a spectator only that a bid is sealed
    own = _get(client, t, 0)
    assert own["view"]["own"]["bid_fairy"] == 3 and any("seals a bid of 3 fairy" in x for x in own["log"])
    for other in (_get(client, t, 1), _get(client, t)):
        assert other["view"]["players"][0]["has_bid"] is True
        assert other["view"]["own"] is None or other["view"]["own"]["bid_fairy"] == 0
        assert not any("seals" in line for line in other["log"])
        assert other["view"]["auctions"][-1]["bids"] is None
    # a token of another table is none of this one's
    other_table = _new(client, seed=4)
    r = client.get(f"/api/games/{t.id}", headers=other_table.seat(0))
    assert r.status_code == 403 and "none of this table's" in r.json()["error"]
    assert client.get(f"/api/games/{t.id}", headers={"Authorization": "Basic x"}).status_code == 401


def test_a_spectator_sees_the_public_view(client):
    t = _new(client, seats=["human", "heuristic", "random", "random"], seed=6)
    state = _get(client, t)
    assert state["seat"] is None and state["actions"] is None and state["view"]["own"] is None
    assert state["insight"] is None and state["result"] is None
    assert client.get(f"/api/games/{t.id}/record").status_code == 409  # the record after the game only
    _play_out(client, t, 0, np.random.default_rng(6))
    assert client.get(f"/api/games/{t.id}/record").status_code == 200


def test_only_the_creator_deletes_a_table(client):
    t = _new(client, seats=["human", "human", "random", "random"])
    for headers in ({**JSON}, {**t.seat(0), **JSON}, {**t.seat(1), **JSON}):
        r = client.delete(f"/api/games/{t.id}", headers=headers)
        assert r.status_code in (401, 403) and "only the table's creator" in r.json()["error"]
        assert _get(client, t, 0)["seat"] == 0
    assert client.delete(f"/api/games/{t.id}", headers=t.owner).status_code == 200
    gone = client.get(f"/api/games/{t.id}")  # the seats still polling are told why
    assert gone.status_code == 410 and "this table was deleted" in gone.json()["error"]


def test_the_list_of_tables_shows_no_secret(client):
    t = _new(client, seats=["human", "human", "random", "random"])
    text = client.get("/api/games").text
    assert t.id in text
    assert t.creator not in text and not any(tok in text for tok in t.tokens.values())
    row = next(g for g in client.get("/api/games").json()["games"] if g["id"] == t.id)
    assert set(row) == {"id", "game", "seats", "names", "over", "moves"}


def test_a_chosen_seed_is_announced_and_a_server_seed_is_secret(client):
    chosen = _new(client, seed=1)
    assert _get(client, chosen, 0)["seeded"] is True and _get(client, chosen)["seeded"] is True
    drawn = [_new(client, seats=["random"] * 4) for _ in range(4)]  # all-bot tables: over at once
    seeds = [client.get(f"/api/games/{t.id}/record").json()["record"][0]["seed"] for t in drawn]
    assert all(_get(client, t)["seeded"] is False for t in drawn)
    assert len(set(seeds)) == 4 and max(s.bit_length() for s in seeds) > 40  # 63 bits from secrets


def test_player_names(client):
    t = _new(client, seats=["human", "random", "random"], players=3, names=["Ann", None, "Bot Bob"], seed=1)
    state = _get(client, t, 0)
    assert state["names"] == ["Ann", "player_1", "Bot Bob"] and _get(client, t)["prompt"].startswith("Ann decides")
    for names, message in [(["x" * 25, None, None], "1 to 24"), (["<b>", None, None], "letters, digits"),
                           (["Ann", "Ann", None], "another name"), (["Ann"], "names must be a list of 3")]:
        r = client.post("/api/games", json={"game": "dragonstones", "players": 3, "names": names,
                                            "seats": ["human", "random", "random"]})
        assert r.status_code == 400 and message in r.json()["error"], r.text


# ------------------------------------------------------------------ a custom deck (issue #16)
@pytest.mark.parametrize("how", ["text", "name"])
def test_a_game_with_the_example_deck_names_its_cards_and_replays(client, how):
    """The example deck, sent as its text or named from the server's deck folder: its cards by name
    (never their custom_k slot) with their rules text in every state, the rule bots play, and the
    saved record replays."""
    characters = {"format": "yaml", "text": EXAMPLE.read_text()} if how == "text" else "characters"
    seats = ["human", "heuristic", "value", "champion"]
    t = _new(client, seats=seats, seed=3, characters=characters, exclude=["Troll"])
    state = _get(client, t, 0)
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
        r = _act(client, t, 0, _pick(state, rng))
        assert r.status_code == 200, r.text
        state = r.json()
    assert state["result"] is not None and seen  # a custom card came up, by its name
    saved = client.get(f"/api/games/{t.id}/record").json()
    assert saved["record"][0]["deck"]["exclude"] == ["Troll"]
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 201, r.text
    last = client.get(f"/api/replays/{r.json()['id']}?step={r.json()['steps']}&seat=all").json()
    assert last["result"] == state["result"]
    assert last["view"]["deck"] == deck
    meta = {g["name"]: g["options"] for g in client.get("/api/meta").json()["games"]}
    assert meta == {"dragonstones": ["characters", "exclude"], "drachenschatten": []}


# ------------------------------------------------------------------ refused requests
BAD_NEW_GAMES = [
    ({"game": "chess", "players": 4, "seats": ["human"] * 4}, 400, "unknown game 'chess'"),
    ({"game": "dragonstones", "players": 9, "seats": ["human"] * 9}, 400, "players must be an integer from 3 to 6"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"]}, 400, "seats must be a list of 4"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", "nobody", "random", "random"]}, 400,
     "unknown policy 'nobody'"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", "ds-heuristic", "random", "random"]}, 400,
     "not Fist of"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", 7, "random", "random"]}, 400,
     "a seat is 'human' or a policy"),
    ({"game": "dragonstones", "players": 4, "seats": ["human", "x" * 101, "random", "random"]}, 400,
     "at most 100 characters"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "pace_ms": -1}, 400, "pace_ms must be"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "seed": 1.5}, 400, "seed must be"),
    ([1, 2], 400, "must be a JSON object"),
    # the custom deck (issues #16, #29): each error names what is wrong, and no file is read
    ({"game": "drachenschatten", "players": 3, "seats": ["human"] * 3, "characters": "characters"},
     400, "characters is not an option of DrachenSchatten"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "characters": 7}, 400, "characters is a deck's"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "characters": "nofile.yaml"}, 400,
     "unknown deck 'nofile.yaml': this server's decks are characters"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "characters": "README.md"}, 400,
     "unknown deck 'README.md'"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4,
      "characters": {"format": "yaml", "text": "characters: [{name: X"}}, 400, "not valid YAML"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4,
      "characters": {"format": "xml", "text": "<x/>"}}, 400, "the format must be one of ['yaml', 'toml', 'json']"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4,
      "characters": {"format": "json", "text": "{}", "path": "/etc"}}, 400, "unknown field(s) ['path']"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4,
      "characters": [{"name": "Banker", "effects": [{"gain": {"coin": "fairy", "amount": 99}}]}]}, 400,
     "character 'Banker'.effects[0].gain.amount: impossible amount 99"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "exclude": "Troll"}, 400, "exclude must be a list"),
    ({"game": "dragonstones", "players": 4, "seats": ["human"] * 4, "exclude": ["Witch"]}, 400,
     "exclude: 'Witch' cannot be excluded"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD_NEW_GAMES)
def test_bad_new_games_are_refused(client, body, status, message):
    before = len(client.get("/api/games").json()["games"])
    r = client.post("/api/games", json=body)
    assert r.status_code == status and message in r.json()["error"], r.text
    assert len(client.get("/api/games").json()["games"]) == before


def test_malformed_json_is_refused(client):
    for url in ("/api/games", "/api/replays"):
        r = client.post(url, content=b"{not json", headers=JSON)
        assert r.status_code == 400 and "malformed JSON" in r.json()["error"]
    r = client.post("/api/games", content=b'{"game": NaN}', headers=JSON)
    assert r.status_code == 400 and "NaN is not JSON" in r.json()["error"]


def test_bad_actions_are_refused_and_change_nothing(client):
    t = _new(client, seats=["human", "human", "random", "random"], seed=4)
    before = client.get(f"/api/games/{t.id}", headers=t.seat(0)).text
    legal = json.loads(before)["actions"][0]
    top = legal["base"] + sum(f["max"] * f["stride"] for f in legal["fields"])
    cases = [
        (1, {"action": 0}, 409, "it is player_0's decision, not player_1's"),
        (0, {"action": top + 64}, 422, "is not legal now"),  # one fairy gold more than held
        (0, {"action": 10**9}, 422, "outside 0.."),
        (0, {"action": "3f"}, 400, "action must be an integer"),
        (0, {"action": True}, 400, "action must be an integer"),
        (0, {"seat": 1, "action": 0}, 403, "acts for no other seat"),
        (0, {}, 400, "action must be"),
        (0, [0], 400, "must be a JSON object"),
    ]
    for seat, body, status, message in cases:
        r = client.post(f"/api/games/{t.id}/actions", json=body, headers=t.seat(seat))
        assert r.status_code == status and message in r.json()["error"], (body, r.text)
        assert client.get(f"/api/games/{t.id}", headers=t.seat(0)).text == before
    r = client.post(f"/api/games/{t.id}/actions", content=b"[", headers={**t.seat(0), **JSON})
    assert r.status_code == 400 and client.get(f"/api/games/{t.id}", headers=t.seat(0)).text == before
    r = client.post(f"/api/games/{t.id}/pace", json={"pace_ms": "fast"}, headers=t.owner)
    assert r.status_code == 400
    assert client.get(f"/api/games/{t.id}?log_from=x").status_code == 400
    # acting after the end
    done = _new(client, seed=6)
    _play_out(client, done, 0, np.random.default_rng(2))
    r = _act(client, done, 0, 0)
    assert r.status_code == 409 and "the game is over" in r.json()["error"]


def test_unknown_ids_are_404(client):
    for method, url in [("GET", "/api/games/nope"), ("POST", "/api/games/nope/actions"),
                        ("GET", "/api/games/nope/record"), ("DELETE", "/api/games/nope"),
                        ("POST", "/api/games/nope/pace"), ("GET", "/api/replays/nope?step=0&seat=0")]:
        r = client.request(method, url, json={"action": 0, "pace_ms": 0},
                           headers={"Authorization": "Bearer x"})
        assert r.status_code == 404 and "unknown" in r.json()["error"] and "'nope'" in r.json()["error"], url


# ------------------------------------------------------------------ replays
def _finished_record(client, game="dragonstones", players=4, seats=None, seed=7):
    seats = seats or ["human"] + ["random"] * (players - 1)
    t = _new(client, game, players, seats, seed=seed)
    _play_out(client, t, seats.index("human"), np.random.default_rng(seed))
    return client.get(f"/api/games/{t.id}/record").json()


def test_replay_steps_seats_and_the_whole_table(client):
    saved = _finished_record(client, seats=["human", "random", "champion", "random"])
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 201
    rid, steps = r.json()["id"], r.json()["steps"]
    assert steps == sum(ev["event"] == "choice" for ev in saved["record"])
    assert r.json()["insight_unavailable"] == []
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


def test_a_replay_whose_policies_are_not_here_plays_from_its_actions(client):
    """Replays travel: a seat named after a checkpoint of another machine replays from the record's
    own actions, and the replay says whose insight is unavailable instead of failing."""
    saved = _finished_record(client, seats=["human", "random", "champion", "random"], seed=11)
    saved["seats"] = ["human", "runs/my-league/best", "champion", "elsewhere"]
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 201, r.text
    rid, steps = r.json()["id"], r.json()["steps"]
    assert r.json()["insight_unavailable"] == [1, 3]
    for step in range(0, steps + 1, max(1, steps // 40)):
        state = client.get(f"/api/replays/{rid}?step={step}&seat=all")
        assert state.status_code == 200, state.text
        s = state.json()
        assert s["insight_unavailable"] == [1, 3]
        if s["actor"] in (1, 3):
            assert s["insight"] is None
        if s["actor"] == 2:
            assert s["insight"][0]["policy"] == "champion"
    assert client.get(f"/api/replays/{rid}?step={steps}&seat=1").json()["result"] is not None


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
    k = next(i for i, ev in enumerate(record) if ev["event"] == "reveal")
    record[k]["values"] = [99] * len(record[k]["values"])
    r = client.post("/api/replays", json=saved)
    assert r.status_code == 422 and f"record event {k}" in r.json()["error"]
    del record[k:]
    record.append({"event": "choice", "player": 0, "decision": "bid", "option": ["bid", 99, 0, 0, 0]})
    assert client.post("/api/replays", json=saved).status_code == 422


def test_bad_replay_queries(client):
    rid = client.post("/api/replays", json=_finished_record(client, seed=9)).json()["id"]
    for query, message in [("step=-1&seat=0", "'step' must be at least 0"), ("step=99999&seat=0", "step must be"),
                           ("step=0&seat=7", "seat must be"), ("step=a&seat=0", "'step' must be an integer"),
                           ("step=0&seat=0&insight=nobody", "unknown policy 'nobody'")]:
        r = client.get(f"/api/replays/{rid}?{query}")
        assert r.status_code == 400 and message in r.json()["error"], (query, r.text)


# ------------------------------------------------------------------ no leaks
def _fork(client, t: Table) -> Table:
    tables = client.app.state.tables
    key, creator, tokens = tables.add(tables.get(t.id).game.fork())
    return Table(key, creator, tokens)


def _views(client, t: Table, seats) -> dict:
    """Each viewer's bytes: a seat by its token, None a spectator."""
    return {s: client.get(f"/api/games/{t.id}", headers={} if s is None else t.seat(s)).content for s in seats}


def _round(raw: bytes) -> tuple:
    v = json.loads(raw)["view"]
    return v["turn"], len(v["auctions"]), v["decision"]


@pytest.mark.parametrize("players", [3, 4, 6])
def test_no_endpoint_shows_another_seats_sealed_bid(client, players):
    """Branch a game on two different sealed bids: until the reveal, every other seat and every
    spectator get byte-identical responses in both branches (as the env's no-leak test branches states)."""
    rng = np.random.default_rng(players)
    checked = 0
    for seed in range(5):
        t = _new(client, "dragonstones", players, ["human"] * players, seed=seed)
        prefix = int(rng.integers(0, 120))  # a random state of the game, then on to a bid with a choice
        for k in range(prefix + 300):
            state = _get(client, t)
            if state["result"] is not None:
                break
            actor = state["actor"]
            mine = _get(client, t, actor)
            group = mine["actions"][0]
            if k >= prefix and group["kind"] == "builder" and any(f["max"] for f in group["fields"]):
                break
            _act(client, t, actor, _pick(mine, rng))
        if state["result"] is not None:
            continue
        top = group["base"] + sum(f["max"] * f["stride"] for f in group["fields"])
        twin = _fork(client, t)
        viewers = [*range(players), None]
        assert _views(client, t, viewers) == _views(client, twin, viewers)
        others = [s for s in range(players) if s != actor] + [None]
        start = _round(_views(client, t, others[:1])[others[0]])  # before the bid: its round
        _act(client, t, actor, group["base"])
        _act(client, twin, actor, top)
        assert _views(client, t, [actor]) != _views(client, twin, [actor])  # the bidder sees his own bid
        while True:  # the rest of the round: same moves in both branches, same bytes for the others
            left = _views(client, t, others)
            if _round(left[others[0]]) != start:
                break  # revealed: from here the bids are public
            assert left == _views(client, twin, others)
            checked += 1
            nxt = json.loads(left[others[0]])["actor"]
            a = _pick(_get(client, t, nxt), rng)
            _act(client, t, nxt, a)
            _act(client, twin, nxt, a)
    assert checked >= 3


def test_no_endpoint_shows_what_another_seat_saw_with_a_torch(client):
    """DrachenSchatten: branch on two different stacks looked at (D4); the other seats and the
    spectators get the same bytes."""
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(40):
        t = _new(client, "drachenschatten", 3, ["human"] * 3, seed=seed)
        for _ in range(200):
            s = _get(client, t)
            if s["result"] is not None:
                break
            actor = s["actor"]
            mine = _get(client, t, actor)
            views = [a for g in mine["actions"] if g.get("family") == "view" for a in g["actions"]]
            if len(views) >= 2:
                twin = _fork(client, t)
                _act(client, t, actor, views[0]["action"])
                _act(client, twin, actor, views[-1]["action"])
                others = [q for q in range(3) if q != actor] + [None]
                assert _views(client, t, others) == _views(client, twin, others)
                assert _views(client, t, [actor]) != _views(client, twin, [actor])
                checked += 1
                break
            _act(client, t, actor, _pick(mine, rng))
        if checked >= 4:
            break
    assert checked >= 4


def test_a_spectator_sees_no_seats_private_pieces():
    """The public view is what every seat sees alike: no own holdings, no torch memory; each player's
    row as another seat sees it."""
    rng = np.random.default_rng(1)
    for seed in range(3):
        e = fist_env(num_players=4, observation_mode="table")
        e.reset(seed=seed)
        raw = e.unwrapped
        for _ in range(int(rng.integers(5, 60))):
            e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
        public = fist_adapter.public_view(raw)
        assert public["own"] is None
        for p in range(4):  # behind the screens ("table" mode): hidden from a spectator as from the others
            assert public["players"][p]["fairy"] is None
            assert public["players"][p] == fist_adapter.view(raw, (p + 1) % 4)["players"][p]
    from dragonstones_env import drachenschatten

    d = drachenschatten.env(num_players=3)
    d.reset(seed=0)
    while not any(ds_adapter.view(d.unwrapped, s)["memory"] != [None] * 16 for s in range(3)):
        d.step(int(rng.choice(np.flatnonzero(d.observe(d.agent_selection)["action_mask"]))))
        if d.unwrapped.game.decision is None:
            d.reset(seed=int(rng.integers(100)))
    assert ds_adapter.public_view(d.unwrapped)["memory"] == [None] * 16


# ------------------------------------------------------------------ words for people (issue #29)
@pytest.mark.parametrize(("game", "sizes"), [("dragonstones", (3, 4, 5, 6)), ("drachenschatten", (2, 3, 4))])
def test_every_event_and_decision_is_in_words(game, sizes):
    """Random games, the example deck in half of them: every log line a sentence of the adapter's own
    (never the raw event), every decision a prompt, every choice named by player (never 'seat +1')."""
    spec = games.get(game)
    mod = spec.presenter
    rng = np.random.default_rng(5)
    kinds = set()
    for seed in range(8):
        n = sizes[seed % len(sizes)]
        names = [f"player_{i}" for i in range(n)]
        deck = {"characters": str(EXAMPLE)} if "characters" in mod.table_options and seed % 2 else {}
        env = spec.make_table(n, **deck)
        env.reset(seed=seed)
        while env.game.decision is not None:
            seat = env.agent_name_mapping[env.agent_selection]
            v = mod.view(env, seat)
            assert mod.prompt(v, names)
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            for group in mod.groups(env, seat, legal, names):
                for a in group.get("actions", []):
                    assert "seat +" not in a["text"] and "custom_" not in a["text"], a["text"]
            env.step(int(rng.choice(legal)))
        for viewer in ("all", None, 0):
            for ev in env.game.record:
                line = mod.log_line(ev, viewer, names)
                kinds.add(ev[mod.kind_key])
                assert line is None or line != event_text(ev, mod.kind_key, names), ev
        result = mod.outcome(env, names)
        assert result["text"] and len(result["points"]) == n
        assert mod.prompt(mod.view(env, 0), names) is None
    assert len(kinds) > 8


def test_targets_are_named_by_player():
    """The Brigand's and the Thief's choices name the players, as the table does."""
    e = fist_env(num_players=4).unwrapped
    e.reset(seed=0)
    names = ["Ann", "Bea", "Cy", "Di"]
    fam = fist_adapter.A.FAMILY
    text = fist_adapter.action_text(e, fam["steal"].start, names)  # seat +1, red: from the actor's left
    actor = e.game.decision.player
    assert text == f"a red stone from {names[(actor + 1) % 4]}"


# ------------------------------------------------------------------ games of dragonstones_env.evaluation
def test_a_game_of_evaluate_is_regenerated_exactly(client, tmp_path):
    evaluate = pytest.importorskip("dragonstones_env.evaluation")
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
    """The entry's deck file is found by its name in the server's deck folder (never opened by its path)."""
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

    rng = np.random.default_rng(0)
    for seed in range(4):
        e = env(num_players=3 + seed % 4)
        e.reset(seed=seed)
        raw, g = e.unwrapped, e.unwrapped.game
        while g.decision is not None:
            viewer = int(rng.integers(raw.num_players))
            v = fist_adapter.view(raw, viewer)
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
            v = ds_adapter.view(raw, viewer)
            state = g.state_dict()
            assert v["stacks"] == state["stacks"] and v["acting"] == g.decision.player
            assert [p["cards"] for p in v["players"]] == [len(c) for c in g._collections]
            assert {s: t for s, t in enumerate(v["memory"]) if t} == {
                s: ds_adapter.CARD_NAMES[t] for s, t in g.memory(viewer).items()}
            d.step(int(rng.choice(np.flatnonzero(d.observe(d.agent_selection)["action_mask"]))))
