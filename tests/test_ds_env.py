"""The DrachenSchatten AEC environment: masks, memory, errors, rewards.

The contract every game keeps (API, determinism, illegal actions, Gym checkers) is in tests/contract.
"""

from __future__ import annotations

import copy
import importlib
import json

import numpy as np
import pytest

from dragonstones_env import drachenschatten
from dragonstones_env.games.drachenschatten import TYPE_INDEX as T
from dragonstones_env.games.drachenschatten import actions as A
from dragonstones_env.games.drachenschatten import env as ds_env
from dragonstones_env.games.drachenschatten.observation import OBS_HIGH, OBS_SIZE, view
from tests.aec_support import act_ds, arranged_ds, play_out, random_step
from tests.aec_support import play_until as _play_until

NAMES = [f"player_{i}" for i in range(4)]


def play_until(e, rng, predicate, limit=3000) -> bool:
    return _play_until(e, rng, predicate, limit)


def arranged(n, stacks=None, colls=None, current=0, filler=True):
    return arranged_ds(n, stacks, colls, current, 15 if filler else None)


act = act_ds


# ---------------------------------------------------------------- PettingZoo conformance
# Shared spaces, the observation layout's spans, seeding and the API test: tests/contract.


def test_the_documented_import_path_and_the_environment_card():
    e2 = ds_env(num_players=2)
    assert drachenschatten.raw_env.metadata["name"] == "drachenschatten_v1"
    assert isinstance(e2.unwrapped, drachenschatten.raw_env)
    card = importlib.import_module("dragonstones_env.games.drachenschatten.env").__doc__  # the environment card
    assert f"{A.NUM_ACTIONS}" in card and f"{OBS_SIZE}" in card


def test_observations_stay_inside_the_space_and_masks_match_the_engine():
    rng = np.random.default_rng(7)
    space = ds_env().observation_space("player_0")
    low, high = space["observation"].low, space["observation"].high
    assert (high == OBS_HIGH).all()
    for game in range(240):
        n = 2 + game % 3
        e = ds_env(num_players=n)
        e.reset(seed=1000 + game)
        raw = e.unwrapped
        for agent in e.agent_iter():
            obs = e.observe(agent)
            o = obs["observation"]
            assert o.dtype == np.float32 and o.shape == (OBS_SIZE,)
            assert (o >= low).all() and (o <= high).all(), f"game {game}: out of bounds"
            assert obs["action_mask"].dtype == np.int8
            if game % 40 == 0:
                assert space.contains(obs)
                d = raw.game.decision
                if d is not None:  # the mask is exactly the engine's legal options
                    legal = raw.game.legal_options()
                    acts = np.flatnonzero(obs["action_mask"])
                    assert len(acts) == len(legal)
                    assert sorted(map(tuple, legal)) == sorted(A.decode(int(a), d.player, n) for a in acts)
                    for other in e.agents:  # nobody else may act
                        if other != agent:
                            assert not e.observe(other)["action_mask"].any()
            random_step(e, rng)


# ---------------------------------------------------------------- actions


def test_encode_decode_round_trip_every_action_and_seat():
    for n in (2, 3, 4):
        for actor in range(n):
            for a in range(A.NUM_ACTIONS):
                try:
                    opt = A.decode(a, actor, n)
                except ValueError:  # a relative seat not at this table
                    assert A.family_of(a).name in ("use_trade", "use_steal", "use_destroy")
                    continue
                assert A.encode(opt, actor, n) == a
    with pytest.raises(ValueError, match=r"int in 0\.\."):
        A.decode(A.NUM_ACTIONS, 0, 2)


def test_describe_action_every_family():
    descriptions = [A.describe(a) for a in range(A.NUM_ACTIONS)]
    assert len(set(descriptions)) == A.NUM_ACTIONS  # every action reads differently
    e = ds_env(num_players=3)
    e.reset(seed=0)
    expect = {
        "pick": "pick the top card of stack 0", "turn_over": "turn over the top card of stack 0",
        "use_view": "use torch view-1", "use_turn_over": "use boots turn-over: turn over",
        "use_trade": "use magic wand trade: give used torch view-1 to seat +1 for their used torch view-1",
        "use_steal": "take seat +1's used", "use_destroy": "destroy seat +1's used",
        "use_decay": "use magic wand decay", "use_restore": "use key restore: make used",
        "end_turn": "end the turn", "view": "view the top card of stack 0", "stop_view": "stop viewing",
        "protect": "protect with sword protect-dragon", "forfeit": "forfeit used torch view-1",
    }
    assert set(expect) == set(A.FAMILY)
    for fam in A.FAMILIES:
        text = e.unwrapped.describe_action(fam.start)
        assert expect[fam.name] in text, (fam.name, text)
        assert e.unwrapped.describe_action(fam.stop - 1)
    assert "+3" in A.describe(A.FAMILY["use_steal"].stop - 1)
    itself = A.encode(("use", T["gem trade"], T["gem trade"], 1, T["key restore"]), 0, 2)
    assert A.describe(itself) == "use gem trade: give the card itself to seat +1 for their used key restore"
    assert "caves 7" in A.describe(A.FAMILY["turn_over"].stop - 1)
    with pytest.raises(ValueError):
        A.describe(-1)


def test_describe_action_names_the_card_of_the_decision():
    e = arranged(2, {0: ["dragon"]}, [["shield protect-dragon", "helmet protect-dragon"], []])
    act(e, ("turn_over", 0))
    assert e.unwrapped.game.decision.kind == "protect"
    a = A.encode(("protect", T["shield protect-dragon"]), 0, 2)
    assert e.unwrapped.describe_action(a) == "dragon: protect with shield protect-dragon"


# ---------------------------------------------------------------- errors


def test_unknown_and_bad_options_raise_naming_them():
    with pytest.raises(ValueError, match="bogus"):
        ds_env(num_players=2, bogus=1)
    with pytest.raises(ValueError, match="max_turns"):
        ds_env(max_turns=3)  # that is the other game's option
    for bad in (1, 5, True, "3"):
        with pytest.raises(ValueError, match="num_players"):
            ds_env(num_players=bad)
    with pytest.raises(ValueError, match="illegal_action"):
        ds_env(illegal_action="ignore")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="max_steps"):
            ds_env(max_steps=bad)
    with pytest.raises(ValueError, match="render_mode"):
        ds_env(render_mode="rgb_array_list")


def test_illegal_actions_raise_and_change_nothing():
    rng = np.random.default_rng(5)
    e = ds_env(num_players=3)
    e.reset(seed=11)
    assert play_until(e, rng, lambda r: r.game.turn >= 3 and r.game.decision.kind == "turn")
    raw = e.unwrapped
    agent = e.agent_selection
    before = json.dumps(raw.state_dict(), sort_keys=True)
    obs_before = {a: e.observe(a)["observation"].copy() for a in e.agents}
    illegal = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    seat_off_table = A.FAMILY["use_steal"].stop - 1  # seat +3 at a 3-player table
    for bad in (illegal, seat_off_table, -1, A.NUM_ACTIONS, 2.0, True, None, "3"):
        with pytest.raises(ValueError) as err:
            e.step(bad)
        msg = str(err.value)
        assert agent in msg and "'turn'" in msg and repr(bad) in msg, msg
        assert json.dumps(raw.state_dict(), sort_keys=True) == before
        assert e.agent_selection == agent
        for a in e.agents:
            assert np.array_equal(e.observe(a)["observation"], obs_before[a])
    assert e.observe(agent)["action_mask"].any()
    random_step(e, rng)  # the game goes on


# ---------------------------------------------------------------- rewards and end


def final_rewards(e, rng=None) -> dict[str, float]:
    """Play on (randomly) to the end; every agent's reward collected through last()."""
    return play_out(e, rng or np.random.default_rng(0))


def expected(n, winners) -> dict[str, float]:
    k = len(winners)
    if k == n:
        return {NAMES[p]: 0.0 for p in range(n)}
    return {NAMES[p]: (1.0 / k if p in winners else -1.0 / (n - k)) for p in range(n)}


def test_random_games_end_zero_sum_as_specified():
    rng = np.random.default_rng(1)
    for game in range(30):
        n = 2 + game % 3
        e = ds_env(num_players=n)
        e.reset(seed=game)
        totals = final_rewards(e, rng)
        g = e.unwrapped.game
        assert g.over and not g.truncated and g.winners
        assert totals == pytest.approx(expected(n, g.winners))
        assert sum(totals.values()) == pytest.approx(0.0)


def test_everybody_wins_gives_zero_to_all():
    # D7: the last card is a treasure; after it both players hold 2 cards; the turn ends: both win.
    e = arranged(2, {0: ["treasure"]}, [["key restore"], ["gem trade", "torch view-1"]], filler=False)
    act(e, ("turn_over", 0))
    act(e, ("end_turn",))
    g = e.unwrapped.game
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [0, 1]
    assert final_rewards(e) == {"player_0": 0.0, "player_1": 0.0}


def test_d7_end_phase_masks_observations_and_rewards():
    # D7: after the last turn-over the same agent acts on; its mask holds only objects that need no
    # stack (D3) and end_turn; the game and the rewards come when the turn ends (D7 scored).
    e = arranged(2, {8: ["treasure"]}, [["magic wand steal", "torch view-1", "boots turn-over"],
                                         [("shield protect-dragon", False), "key restore"]], filler=False)
    act(e, ("turn_over", 8))
    raw = e.unwrapped
    assert e.agent_selection == "player_0" and not any(raw.terminations.values())
    obs = e.observe("player_0")
    assert obs["observation"].shape == (OBS_SIZE,) and raw.observation_space("player_0").contains(obs)
    legal = set(np.flatnonzero(obs["action_mask"]).tolist())
    steal = ("use", T["magic wand steal"], 1, T["shield protect-dragon"])
    assert legal == {A.encode(("end_turn",), 0, 2), A.encode(steal, 0, 2)}  # no torch, no boots (D7)
    assert legal == {A.encode(o, 0, 2) for o in raw.game.legal_options()}
    assert view(obs["observation"], "stacks").sum() == 0
    act(e, steal)
    assert e.agent_selection == "player_0" and not raw.game.over
    act(e, ("end_turn",))
    assert raw.game.over and raw.game.winners == [0] and raw.infos["player_0"]["end_reason"].tolist() == [0, 0, 0, 1, 0]
    assert final_rewards(e) == {"player_0": 1.0, "player_1": -1.0}


def test_shared_win_of_a_trade_splits_the_reward():
    # D6: a trade completing seven kinds for both players makes both winners; 3 players: +1/2, +1/2, -1.
    p0 = ["gem trade", "torch view-1", "boots turn-over", "sword protect-dragon", "spell book destroy",
          ("shield protect-dragon", False), ("shield protect-dragon", False)]
    p1 = [("helmet protect-dragon", False), ("helmet protect-dragon", False), "key restore",
          "magic potion protect-hydra", "torch view-2", "boots turn-over", "sword destroy"]
    e = arranged(3, None, [p0, p1, ["torch view-1"]])
    act(e, ("use", T["gem trade"], T["shield protect-dragon"], 1, T["helmet protect-dragon"]))
    g = e.unwrapped.game
    assert g.over and g.winners == [0, 1] and "seven_kinds" in g.end_reason
    assert final_rewards(e) == {"player_0": 0.5, "player_1": 0.5, "player_2": -1.0}


def test_single_winner_and_losers():
    e = arranged(4, {0: ["treasure"]}, [["treasure", "treasure"], [], [], []])
    act(e, ("turn_over", 0))
    assert e.unwrapped.game.winners == [0]
    assert final_rewards(e) == pytest.approx({"player_0": 1.0, **{NAMES[p]: -1 / 3 for p in (1, 2, 3)}})


def test_truncation_after_max_steps():
    e = ds_env(num_players=3, max_steps=7)
    e.reset(seed=2)
    totals = final_rewards(e)
    raw = e.unwrapped
    assert raw.game.truncated and raw.game.steps == 7
    assert all(raw.truncations.values()) and not any(raw.terminations.values())
    assert totals == dict.fromkeys(NAMES[:3], 0.0)


# ---------------------------------------------------------------- turn structure


def test_forfeit_is_decided_by_the_other_player_during_the_active_turn():
    e = arranged(3, None, [["magic wand decay"],
                           [("key restore", False), ("torch view-1", False)],
                           [("gem trade", False), ("helmet protect-dragon", False)]])
    act(e, ("use", T["magic wand decay"]))
    raw = e.unwrapped
    assert e.agent_selection == "player_1" and raw.game.decision.kind == "forfeit"
    assert raw.game.current_player == 0
    obs = e.observe("player_1")
    assert view(obs["observation"], "acting_seat").tolist() == [1, 0, 0, 0]
    assert view(obs["observation"], "active_seat").tolist() == [0, 0, 1, 0]  # player_0 is seat +2
    assert view(obs["observation"], "card")[T["magic wand decay"]] == 1
    assert not e.observe("player_0")["action_mask"].any()
    act(e, ("forfeit", T["torch view-1"]))
    assert e.agent_selection == "player_2"
    act(e, ("forfeit", T["gem trade"]))
    assert e.agent_selection == "player_0" and raw.game.decision.kind == "turn"


def test_observation_is_seat_relative_and_public_cards_shown():
    e = arranged(3, {0: ["treasure"]}, [["key restore"], [("gem trade", False)], ["treasure"]], current=1)
    for seat in range(3):
        o = e.observe(NAMES[seat])["observation"]
        coll = view(o, "collection")
        assert view(o, "seat_present").tolist() == [1, 1, 1, 0]
        rel = [(p - seat) % 3 for p in range(3)]
        assert coll[rel[0], T["key restore"], 0] == 0.25  # ready
        assert coll[rel[1], T["gem trade"], 1] == 0.25  # used
        assert coll[rel[2], T["treasure"], 1] == 0.25
        assert view(o, "acting_seat")[rel[1]] == 1
        assert not coll[3].any()


def expected_public(sd: dict, viewer: int) -> dict[str, np.ndarray]:
    """The public pieces of ``viewer``'s observation, rebuilt from the JSON state_dict."""
    n = sd["num_players"]
    coll = np.zeros((4, len(T), 2), np.float32)
    totals = np.zeros((4, 5), np.float32)
    for p in sd["players"]:
        r = (p["seat"] - viewer) % n
        for c in p["collection"]:
            coll[r, c["type"], 0 if c["ready"] else 1] += 0.25
        ready = sum(c["ready"] for c in p["collection"])
        totals[r] = np.array([p["cards"], p["kinds"], p["beasts"], p["treasures"], ready]) / [16, 7, 3, 3, 16]
    removed = np.zeros(len(T), np.float32)
    for t in sd["removed_cards"]:
        removed[t] += 0.25
    return {"collection": coll, "totals": totals, "removed_cards": removed,
            "stacks": np.array(sd["stacks"], np.float32) / 4, "removed": np.array([sd["removed"] / 64]),
            "turned_over": np.array([sd["turned_over"]], np.float32)}


def test_observation_matches_the_state_dict():
    rng = np.random.default_rng(12)
    for game in range(12):
        e = ds_env(num_players=2 + game % 3)
        e.reset(seed=500 + game)
        while not e.unwrapped.game.over:
            sd = e.unwrapped.state_dict()
            for agent in e.agents:
                o = e.observe(agent)["observation"]
                for name, want in expected_public(sd, e.unwrapped.agent_name_mapping[agent]).items():
                    np.testing.assert_allclose(view(o, name), want, atol=1e-6, err_msg=name)
            random_step(e, rng)


# ---------------------------------------------------------------- torch memory (D4)


def torch_state(n, seed):
    """A wrapped env at a 'turn' decision where the acting player can use a torch, 2+ stacks left."""
    rng = np.random.default_rng(seed)
    fam = A.FAMILY["use_view"]
    for s in range(seed, seed + 200):
        e = ds_env(num_players=n)
        e.reset(seed=s)
        if play_until(e, rng, lambda r: r.game.decision.kind == "turn"
                      and r._legal_mask()[fam.start:fam.stop].any()
                      and sum(1 for x in r.game.state_dict()["stacks"] if x) >= 2):
            return e
    raise AssertionError("no torch found")


@pytest.mark.parametrize("n", [2, 4])
def test_torch_memory_is_seen_by_the_viewer_only(n):
    e = torch_state(n, 17 + n)
    raw = e.unwrapped
    viewer = e.agent_selection
    vseat = raw.agent_name_mapping[viewer]
    fam = A.FAMILY["use_view"]
    torch = fam.start + int(np.flatnonzero(raw._legal_mask()[fam.start:fam.stop])[0])
    e.step(torch)
    assert raw.game.decision.kind == "view" and e.agent_selection == viewer
    stacks = [s for s, k in enumerate(raw.game.state_dict()["stacks"]) if k]
    s1, s2 = stacks[0], stacks[-1]
    branch = copy.deepcopy(e)
    tops = raw.game.debug_state()["stack_cards"]
    e.step(A.FAMILY["view"].start + s1)
    branch.step(A.FAMILY["view"].start + s2)
    for env_ in (e, branch):
        if env_.unwrapped.game.decision.kind == "view":
            env_.step(A.FAMILY["stop_view"].start)
    assert e.agent_selection == branch.agent_selection == viewer
    for agent in e.agents:
        a, b = e.observe(agent), branch.observe(agent)
        if agent == viewer:
            assert not np.array_equal(a["observation"], b["observation"])
            mem_a, mem_b = view(a["observation"], "memory"), view(b["observation"], "memory")
            assert mem_a[s1, tops[s1][0]] == 1 and not mem_a[s2].any()
            assert mem_b[s2, tops[s2][0]] == 1 and not mem_b[s1].any()
        else:  # what a stack holds and which stack was looked at are hidden from the others
            assert np.array_equal(a["observation"], b["observation"]), agent
            assert np.array_equal(a["action_mask"], b["action_mask"])
            assert not view(a["observation"], "memory").any()
    # remembered across turns until the card leaves its stack (D4)
    mem = raw.game.memory(vseat)
    assert mem == {s1: tops[s1][0]}
    rng = np.random.default_rng(0)
    while not raw.game.over and raw.game.state_dict()["stacks"][s1] == len(tops[s1]):
        random_step(e, rng)
        if raw.game.state_dict()["stacks"][s1] == len(tops[s1]) and not raw._done:
            assert view(e.observe(viewer)["observation"], "memory")[s1, tops[s1][0]] == 1
    if not raw._done:
        assert not view(e.observe(viewer)["observation"], "memory")[s1].any()


# ---------------------------------------------------------------- copies, state, render


def test_state_dict_is_public_json():
    e = ds_env(num_players=4)
    e.reset(seed=8)
    rng = np.random.default_rng(2)
    for _ in range(30):
        random_step(e, rng)
    sd = e.unwrapped.state_dict()
    json.dumps(sd)
    assert len(sd["stacks"]) == 16 and len(sd["players"]) == 4
    assert {"turn", "current_player", "decision", "agent_selection"} <= set(sd)
    for p in sd["players"]:
        for c in p["collection"]:
            assert {"type", "ready"} <= set(c)
    assert "stack_cards" not in sd and "memories" not in sd


def test_render_modes(capsys):
    e = ds_env(num_players=2, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert "DrachenSchatten" in text and "player_1" in text and "decision: pick" in text
    h = ds_env(num_players=2, render_mode="human")
    h.reset(seed=0)
    h.step(h.unwrapped.legal_actions()[0])
    assert "player_0" in capsys.readouterr().out
    assert ds_env(num_players=2).unwrapped.render() is None
