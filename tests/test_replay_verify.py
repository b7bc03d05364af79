"""Replays verify every event (issue #14): tampered, truncated and malformed records are refused.

Both games share one ``ReplayError(ValueError)`` naming the first event that differs.
"""

import copy
import json

import numpy as np
import pytest

from dragonstones_env import ReplayError
from dragonstones_env.games.drachenschatten.rules import DrachenSchattenGame
from dragonstones_env.games.drachenschatten.rules import replay as ds_replay
from dragonstones_env.games.dragonstones.engine import Game, replay


def _play(seed: int, num_players: int = 4, max_turns: int = 40) -> tuple[Game, set[int]]:
    """A random game and the record lengths at which it waited for a decision (the oracle of
    which prefixes are records of a game in progress)."""
    rng = np.random.default_rng(seed)
    game = Game(num_players, seed=seed, max_turns=max_turns)
    waits = set()
    while not game.over:
        waits.add(len(game.record))
        options = game.legal_options()
        game.apply(options[int(rng.integers(len(options)))])
    waits.add(len(game.record))
    return game, waits


@pytest.fixture(scope="module")
def records() -> list[list[dict]]:
    return [json.loads(json.dumps(_play(seed)[0].record)) for seed in range(4)]


def _refused(record, index: int | None = None) -> ReplayError:
    with pytest.raises(ReplayError) as info:
        replay(record)
    if index is not None:
        assert info.value.index == index, str(info.value)
    return info.value


def _tamper(event: dict) -> dict:
    """The event with one field changed (a number +1, a string renamed, a list extended)."""
    out = copy.deepcopy(event)
    for key in sorted(out):
        if key == "event":
            continue
        value = out[key]
        if isinstance(value, bool) or value is None:
            out[key] = 1
        elif isinstance(value, int):
            out[key] = value + 1
        elif isinstance(value, str):
            out[key] = value + "x"
        elif isinstance(value, list):
            out[key] = [*value, 0]
        elif isinstance(value, dict):
            out[key] = {**value, "extra": 0}
        return out
    out["extra"] = 1
    return out


def test_untouched_records_replay_identically(records):
    for record in records:
        game = replay(record)
        assert game.record == record and game.over
        assert isinstance(ReplayError(0, 1, 2), ValueError)


def test_every_event_type_tampered_is_refused_at_that_event(records):
    seen = set()
    for record in records:
        for i, event in enumerate(record):
            kind = event["event"]
            if kind in seen or kind == "start":
                continue
            seen.add(kind)
            bad = [*record[:i], _tamper(event), *record[i + 1:]]
            err = _refused(bad)
            if kind == "choice":  # another option may be legal: the divergence shows at or after it
                assert err.index >= i
            else:
                assert err.index == i and err.found == bad[i] and err.expected == record[i]
    assert {"reveal", "outcome", "score", "end", "choice", "auction", "setup"} <= seen


def test_score_and_reveal_and_win_edits_are_refused(records):
    record = records[0]
    i = next(i for i, e in enumerate(record) if e["event"] == "score")
    bad = copy.deepcopy(record)
    bad[i]["points"] = bad[i].get("points", 1) + 5
    _refused(bad, i)
    j = next(i for i, e in enumerate(record) if e["event"] == "reveal")
    bad = copy.deepcopy(record)
    bad[j]["values"][0] += 1
    _refused(bad, j)
    # a fake win event inserted before the real end, and one appended after it
    k = next(i for i, e in enumerate(record) if e["event"] == "choice")
    _refused([*record[:k], {"event": "end", "reason": "won", "winners": [0]}, *record[k:]], k)
    _refused([*record, {"event": "end", "reason": "won", "winners": [1]}], len(record))
    _refused([*record, record[-2]], len(record))


def test_removed_or_swapped_events_are_refused(records):
    record = records[1]
    for i in (1, 2, 5, len(record) // 2, len(record) - 1):
        _refused(record[:i] + record[i + 1:])
    i = len(record) // 3
    swapped = [*record[:i], record[i + 1], record[i], *record[i + 2:]]
    if swapped != record:
        _refused(swapped)


def test_every_prefix_is_accepted_exactly_when_it_ends_before_a_decision():
    for seed in (0, 1):
        game, waits = _play(seed, num_players=3, max_turns=2)
        record = json.loads(json.dumps(game.record))
        accepted = set()
        for k in range(len(record) + 1):
            try:
                replay(record[:k])
            except ReplayError as err:
                assert err.index <= k
            else:
                accepted.add(k)
        assert accepted == waits
        assert 0 not in accepted and len(record) in accepted


def test_a_prefix_of_a_long_game_continues_the_same_game(records):
    record = records[2]
    _, waits = _play(2)
    k = sorted(waits)[len(waits) // 2]
    game = replay(record[:k])
    assert not game.over and game.decision is not None
    assert game.record == record[:k]


@pytest.mark.parametrize("bad", [None, [], 7, "start", {}, [None], [{}], [{"event": "choice"}], ["start"]])
def test_malformed_records_are_refused(bad):
    with pytest.raises(ReplayError):
        replay(bad)


@pytest.mark.parametrize("seed", ["abc", "1", 1.5, True, None, -1, [1], 2.0])
def test_start_event_seed_of_the_wrong_type_is_refused(records, seed):
    bad = copy.deepcopy(records[0])
    bad[0]["seed"] = seed
    err = _refused(bad, 0)
    assert "seed" in str(err)


def test_start_event_fields_are_checked(records):
    for key, value in (("num_players", 9), ("num_players", "4"), ("max_turns", 0), ("extra", 1)):
        bad = copy.deepcopy(records[0])
        bad[0][key] = value
        _refused(bad, 0)
    bad = copy.deepcopy(records[0])
    del bad[0]["max_turns"]
    _refused(bad, 0)


def test_malformed_choice_events_are_refused(records):
    record = records[0]
    i = next(i for i, e in enumerate(record) if e["event"] == "choice")
    for event in ({"event": "choice"}, {"event": "choice", "option": None}, {"event": "choice", "option": "bid"},
                  {"event": "choice", "option": [["bid"]]}, {"event": "choice", "option": ["bid", 1.0, 0, 0, 0]},
                  {"event": "nonsense"}, None, 3):
        err = _refused([*record[:i], event, *record[i + 1:]], i)
        assert err.found == event


def test_types_are_strict_in_events(records):
    record = records[0]
    i = next(i for i, e in enumerate(record) if e["event"] == "reveal")
    bad = copy.deepcopy(record)
    bad[i]["values"][0] = float(bad[i]["values"][0])  # 3.0 is not the engine's 3
    _refused(bad, i)


def test_the_error_names_index_expected_and_found(records):
    bad = copy.deepcopy(records[0])
    bad[1]["stones"][0][0] += 1
    err = _refused(bad, 1)
    assert str(err).startswith("record event 1: expected {") and "found {" in str(err)


# ---------------------------------------------------------------------------- DrachenSchatten
def _ds_record(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    game = DrachenSchattenGame(3, seed=seed)
    while not game.over:
        options = game.legal_options()
        game.apply(options[int(rng.integers(len(options)))])
    return json.loads(json.dumps(game.record))


def test_drachenschatten_uses_the_same_replay_error():
    record = _ds_record(0)
    assert ds_replay(record).record == record
    for bad in (None, [], [{"event": "start"}], [*record[:1], {"event": "end"}]):
        with pytest.raises(ReplayError):
            ds_replay(bad)
    i = len(record) // 2
    tampered = copy.deepcopy(record)
    tampered[i]["extra"] = 1
    with pytest.raises(ReplayError) as info:
        ds_replay(tampered)
    assert info.value.index == i
    fist = json.loads(json.dumps(_play(0, 3, 1)[0].record))
    with pytest.raises(ReplayError):
        ds_replay(fist)
    with pytest.raises(ReplayError):
        replay(record)
