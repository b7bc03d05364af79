"""One record format for both engines (dragonstones_env/core/records.py), and records of version 1
(``tests/golden/records_v1.json.gz``: random games recorded at commit 648b887, before the change)
replaying exactly as the same games recorded today."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import games
from dragonstones_env.core import ReplayError
from dragonstones_env.core.records import KIND_KEY, RECORD_VERSION, read_record, record_version
from dragonstones_env.play.refusals import Unplayable
from dragonstones_env.play.sources import LOCAL
from dragonstones_env.play.table import LiveGame, parse_record

ROOT = Path(__file__).resolve().parents[1]
with gzip.open(ROOT / "tests" / "golden" / "records_v1.json.gz", "rt") as f:
    OLD = json.load(f)["games"]


def play_today(old: dict) -> tuple[list, dict]:
    """The old game's seed, table and actions played by today's engine: its record and final state."""
    spec = games.get(old["game"])
    options = {k: str(ROOT / v) if k == "characters" else v for k, v in old["options"].items()}
    e = spec.env(num_players=old["players"], **options)
    e.reset(seed=old["seed"])
    actions = iter(old["actions"])
    while e.agents:
        a = e.agent_selection
        e.step(None if e.terminations[a] or e.truncations[a] else next(actions))
    assert next(actions, None) is None
    return e.unwrapped.game.record, e.unwrapped.game.state_dict()


def test_the_old_records_are_version_1_of_both_games_and_both_endings():
    assert {o["game"] for o in OLD} == {"dragonstones", "drachenschatten"}
    assert all(record_version(o["record"]) == 1 for o in OLD)
    ends = {(o["game"], o["record"][-1].get("type", o["record"][-1].get("event"))) for o in OLD}
    assert ends == {("dragonstones", "win"), ("dragonstones", "truncated"), ("drachenschatten", "end")}
    assert any("deck" in o["record"][0] for o in OLD)  # a custom deck travels in the start event


@pytest.mark.parametrize("i", range(len(OLD)), ids=[f"{o['game']}-{o['seed']}" for o in OLD])
def test_an_old_record_replays_as_the_same_game_recorded_today(i):
    old = OLD[i]
    spec = games.get(old["game"])
    new_record, new_state = play_today(old)
    assert record_version(new_record) == RECORD_VERSION
    assert spec.read_record(old["record"]) == new_record  # upgraded event for event
    from_old, from_new = spec.replay(old["record"]), spec.replay(new_record)
    assert from_old.state_dict() == from_new.state_dict() == new_state
    assert from_old.record == from_new.record == new_record
    assert from_old.winners == from_new.winners


@pytest.mark.parametrize("i", range(len(OLD)), ids=[f"{o['game']}-{o['seed']}" for o in OLD])
def test_the_table_reads_an_old_file_saved_by_the_app_as_today(i):
    old = OLD[i]
    body = {"game": old["game"], "seats": ["random"] * old["players"], "names": None, "record": old["record"]}
    spec, record, seats, _ = parse_record(json.loads(json.dumps(body)))
    assert spec.id == old["game"] and seats == body["seats"]
    assert record == play_today(old)[0]


@pytest.mark.parametrize("game", ["dragonstones", "drachenschatten"])
def test_both_engines_write_one_format(game):
    spec = games.get(game)
    e = spec.env(num_players=spec.default_players)
    e.reset(seed=11)
    rng = np.random.default_rng(11)
    while e.agents:
        a = e.agent_selection
        e.step(None if e.terminations[a] or e.truncations[a]
               else int(rng.choice(np.flatnonzero(e.observe(a)["action_mask"]))))
    record = e.unwrapped.game.record
    assert record[0][KIND_KEY] == "start" and record[0]["game"] == game and record[0]["version"] == RECORD_VERSION
    assert all(isinstance(ev.get(KIND_KEY), str) and "type" not in ev for ev in record)
    end = record[-1]
    assert end[KIND_KEY] == "end" and end["winners"] == list(e.unwrapped.game.winners)
    assert sum(ev[KIND_KEY] == "end" for ev in record) == 1


def test_a_record_of_an_unknown_version_is_refused_naming_the_versions_read():
    record = [dict(OLD[3]["record"][0], version=3), *OLD[3]["record"][1:]]
    with pytest.raises(ReplayError, match=r"record version 3 is not one this dragonstones_env reads") as err:
        games.get("drachenschatten").replay(record)
    assert "1, 2" in str(err.value)
    with pytest.raises(ReplayError, match="record version '2'"):
        read_record([{"event": "start", "version": "2"}], "drachenschatten", {})


def test_one_game_refuses_the_others_record_of_either_version():
    fist_old = OLD[0]["record"]
    fist_new = games.get("dragonstones").read_record(fist_old)
    ds = games.get("drachenschatten")
    for record in (fist_old, fist_new):
        with pytest.raises(ReplayError):
            ds.replay(record)
    with pytest.raises(ReplayError, match="a Fist of Dragonstones record of version 1"):
        games.get("dragonstones").replay(OLD[3]["record"])


def test_an_edited_old_record_is_refused_at_the_edited_event():
    record = json.loads(json.dumps(OLD[0]["record"]))
    record[-1]["player"] = (record[-1]["player"] + 1) % 3  # another winner
    with pytest.raises(ReplayError) as err:
        games.get("dragonstones").replay(record)
    assert err.value.index == len(record) - 1


def test_the_table_refuses_a_record_no_game_reads():
    with pytest.raises(Unplayable, match="not the start event of any known game"):
        parse_record([{"kind": "start"}])


@pytest.mark.parametrize("i", [1, 4], ids=["dragonstones-truncated", "drachenschatten-truncated"])
def test_a_table_stored_by_an_older_version_resumes_in_todays_format(i):
    old = OLD[i]
    n = old["players"]
    setup = {"game": old["game"], "seats": ["random"] * n, "names": [f"p{k}" for k in range(n)],
             "seeded": True, "pace_ms": 0}
    table = LiveGame.resume(setup, old["record"], LOCAL)
    assert table.env.game.record == play_today(old)[0]
