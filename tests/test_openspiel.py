"""The OpenSpiel wrapper (dragonstones_env.openspiel): both games as pyspiel Python games.

It needs the openspiel extra; ``make test`` installs it and sets OPENSPIEL_REQUIRED=1, which turns a
missing pyspiel into a failure instead of a skip (on Python 3.11 and later, which the wheel is built for).
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

try:
    import pyspiel
except ImportError:
    if os.environ.get("OPENSPIEL_REQUIRED") == "1" and sys.version_info >= (3, 11):  # the wheel's Pythons
        pytest.fail("pyspiel is missing (OPENSPIEL_REQUIRED=1): pip install -e '.[openspiel]'", pytrace=False)
    pytest.skip("needs the openspiel extra: pip install -e '.[openspiel]'", allow_module_level=True)

from open_spiel.python import rl_environment
from open_spiel.python.algorithms import ismcts, mcts, outcome_sampling_mccfr

from dragonstones_env import games, openspiel

FIST = games.get("dragonstones")
DS = games.get("drachenschatten")
SPECS = [FIST, DS]
SHORT = {FIST.id: {"max_turns": 3}, DS.id: {}}  # Fist games cut to 3 turns keep the tests quick


def load(spec, players, seed=1, **params):
    return pyspiel.load_game(openspiel.short_name(spec), {"players": players, "seed": seed, **params})


def started(game):
    state = game.new_initial_state()
    state.apply_action(0)
    return state


def record(state) -> str:
    return json.dumps(state.engine.record, sort_keys=True)


# ------------------------------------------------------------------ what OpenSpiel is told
def test_every_game_with_bounds_is_registered_with_its_type():
    assert openspiel.register() == ["python_dragonstones", "python_drachenschatten"] == openspiel.NAMES
    assert openspiel.register() == openspiel.NAMES  # again: nothing registered twice
    for spec in SPECS:
        game = load(spec, spec.default_players)
        t = game.get_type()
        assert t.short_name == f"python_{spec.id}"
        assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
        assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL
        assert t.provides_information_state_string and t.provides_information_state_tensor
        assert t.provides_observation_string and t.provides_observation_tensor
        assert (t.min_num_players, t.max_num_players) == (spec.players.start, spec.players.stop - 1)
        assert game.num_distinct_actions() == spec.raw_env.NUM_ACTIONS
        assert game.observation_tensor_shape() == [spec.raw_env.OBS_SIZE]
        assert game.information_state_tensor_shape() == [spec.raw_env.OBS_SIZE + 2 * spec.raw_env.NUM_ACTIONS]
        assert game.max_chance_outcomes() == 1
        for n in spec.players:
            g = load(spec, n)
            assert (g.min_utility(), g.max_utility()) == spec.reward_range(n)
            assert g.utility_sum() == 0.0
            assert g.max_game_length() == spec.max_decisions(n, g.env_options)
    assert set(openspiel.parameters(FIST)) == {"players", "seed", "observation_mode", "max_turns"}
    assert set(openspiel.parameters(DS)) == {"players", "seed", "max_steps"}
    assert load(FIST, 4).env_options["illegal_action"] == "raise"
    assert load(FIST, 4).env_options["reward_shaping"] == 0.0


@pytest.mark.parametrize(("spec", "players", "params", "sims"), [
    (FIST, 3, {"max_turns": 4}, 3), (FIST, 4, {}, 1), (FIST, 6, {"max_turns": 2, "observation_mode": "table"}, 2),
    (DS, 2, {}, 3), (DS, 3, {}, 2), (DS, 4, {}, 2),
], ids=["fist-3p", "fist-4p-whole", "fist-6p-table", "ds-2p", "ds-3p", "ds-4p"])
def test_openspiels_random_simulation_test(spec, players, params, sims):
    """OpenSpiel's own checks: clones, legal-action masks, observations and information states of every
    player, returns within the utilities summing to 0, game length within max_game_length. (Not OpenSpiel's
    serialization, which pickles: see test_no_pickling; ours is checked by the serialization tests below.)"""
    pyspiel.random_sim_test(load(spec, players, **params), num_sims=sims, serialize=False, verbose=False)


# ------------------------------------------------------------------ the same game as the env
@pytest.mark.parametrize(("spec", "players"), [(FIST, 3), (FIST, 5), (DS, 2), (DS, 4)],
                         ids=["fist-3p", "fist-5p", "ds-2p", "ds-4p"])
def test_a_game_through_the_wrapper_is_the_envs_game_with_the_same_seed(spec, players):
    """The k-th game of a wrapper loaded with seed=s is the env's after reset(seed=s) and k-1 reset(): same
    legal actions, observations and action names at every step, same record and returns."""
    game = load(spec, players, seed=11)  # whole games: a winner's returns
    env = spec.env(num_players=players)
    rng = np.random.default_rng(players)
    won = 0
    for k in range(2):
        state = started(game)
        env.reset(seed=11) if k == 0 else env.reset()
        while not state.is_terminal():
            agent = env.agent_selection
            p = env.unwrapped.agent_name_mapping[agent]
            assert state.current_player() == p
            obs = env.observe(agent)
            legal = state.legal_actions()
            assert legal == np.flatnonzero(obs["action_mask"]).tolist()
            assert state.legal_actions_mask(p) == obs["action_mask"].tolist()
            for q, other in enumerate(env.possible_agents):
                assert np.array_equal(np.asarray(state.observation_tensor(q), np.float32),
                                      env.observe(other)["observation"])
                if q != p:
                    assert state.legal_actions(q) == []
            action = int(rng.choice(legal))
            assert state.action_to_string(p, action) == env.unwrapped.describe_action(action)
            state.apply_action(action)
            env.step(action)
        assert env.unwrapped.game.over
        assert record(state) == json.dumps(env.unwrapped.game.record, sort_keys=True)
        assert state.returns() == env.unwrapped.outcome()
        assert sum(state.returns()) == pytest.approx(0.0)
        won += max(state.returns()) > 0
        for q in range(players):  # the final observation too
            assert np.array_equal(np.asarray(state.observation_tensor(q), np.float32),
                                  env.observe(env.possible_agents[q])["observation"])
    assert won


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_same_seed_and_actions_give_the_same_game_and_a_clone_goes_on_alike(spec):
    def play(seed):
        state = started(load(spec, spec.players.start, seed=seed, **SHORT[spec.id]))
        rng = np.random.default_rng(5)
        clone = None
        while not state.is_terminal():
            if len(state.history()) == 10:
                clone = state.clone()
            state.apply_action(int(rng.choice(state.legal_actions())))
        return state, clone

    first, clone = play(3)
    second, _ = play(3)
    assert record(first) == record(second) and str(first) == str(second) and first.history() == second.history()
    assert record(play(4)[0]) != record(first)
    assert clone.history() == first.history()[:10]
    for action in first.history()[10:]:
        clone.apply_action(action)
    assert record(clone) == record(first) and clone.returns() == first.returns()


def test_seed_minus_one_draws_fresh_games():
    records = {record(started(load(DS, 2, seed=-1))) for _ in range(3)}
    assert len(records) == 3


# ------------------------------------------------------------------ resampling (the determinization sampler)
def _positions(spec, players, seed, every=7):
    """Random play through the wrapper; every ``every``-th live state, cloned."""
    state = started(load(spec, players, seed=seed, **SHORT[spec.id]))
    rng = np.random.default_rng(seed)
    out = []
    while not state.is_terminal():
        if len(state.history()) % every == 0:
            out.append(state.clone())
        state.apply_action(int(rng.choice(state.legal_actions())))
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_resampling_keeps_every_players_own_view(spec):
    """OpenSpiel's resampling test, on observations (what the game offers): the resampled state shows the
    player the same observation, the same player to act and, to the player to act, the same legal actions."""
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    checked = 0
    for n in spec.players:
        for state in _positions(spec, n, seed=n):
            for p in range(n):
                other = state.resample_from_infostate(p, sampler)
                assert other.current_player() == state.current_player()
                assert other.observation_string(p) == state.observation_string(p)
                assert other.observation_tensor(p) == state.observation_tensor(p)
                if p == state.current_player():
                    assert other.legal_actions() == state.legal_actions()
                checked += 1
    assert checked > 50


def test_resampling_draws_nothing_from_a_sealed_bid_the_seat_has_not_seen():
    """Branch a Fist game on the first bidder's sealed bid: the second bidder's resampled states, drawn with
    identically seeded samplers, play on identically (the sampler's own no-leak test, through the wrapper)."""
    checked = 0
    for seed in range(12):
        state = started(load(FIST, 4, seed=seed))
        legal = state.legal_actions()
        left, right = state.clone(), state.clone()
        left.apply_action(legal[-1])
        right.apply_action(legal[len(legal) // 2])
        assert record(left) != record(right)  # a real difference, in the omniscient record
        futures = []
        for branch in (left, right):
            other = branch.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
            for _ in range(12):  # the reveal shows the redrawn bid
                other.apply_action(other.legal_actions()[0])
            futures.append(record(other))
        assert futures[0] == futures[1]
        checked += 1
    assert checked == 12


def test_resampling_is_deterministic_with_a_seeded_sampler_and_draws_afresh_otherwise():
    state = _positions(DS, 3, seed=2)[3]
    def play_on(s):
        while not s.is_terminal():
            s.apply_action(s.legal_actions()[0])
        return record(s)

    same = [play_on(state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(9, 0.0, 1.0)))
            for _ in range(2)]
    assert same[0] == same[1]
    sampler = pyspiel.UniformProbabilitySampler(9, 0.0, 1.0)
    assert len({play_on(state.resample_from_infostate(0, sampler)) for _ in range(4)}) > 1


# ------------------------------------------------------------------ OpenSpiel's ISMCTS bot
@pytest.mark.parametrize(("spec", "players", "params", "observations"), [
    (FIST, 3, {"max_turns": 2}, True), (DS, 2, {}, True), (DS, 4, {}, True),
    (FIST, 3, {"max_turns": 2}, False), (DS, 2, {}, False),
], ids=["fist-3p", "ds-2p", "ds-4p", "fist-3p-information-states", "ds-2p-information-states"])
def test_openspiels_ismcts_bot_plays_whole_games_with_legal_moves_only(spec, players, params, observations):
    """Keyed on observations (use_observation_string=True) or, by default, on information states."""
    game = load(spec, players, seed=5, **params)

    def play(seed):
        rs = np.random.RandomState(seed)
        bots = []
        for _ in range(players):
            bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, 4, random_state=rs,
                                   use_observation_string=observations)
            sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)  # seeded: the bot is deterministic
            bot.set_resampler(lambda s, p, sampler=sampler: s.resample_from_infostate(p, sampler))
            bots.append(bot)
        state = game.new_state_at(started(load(spec, players, seed=5, **params)).engine)
        moves = 0
        while not state.is_terminal():
            p = state.current_player()
            action = int(bots[p].step(state))
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
        return record(state), moves, state.returns()

    first = play(0)
    assert first[1] > 5 and sum(first[2]) == pytest.approx(0.0)
    assert play(0) == first  # seeded bot and sampler: the same game


# ------------------------------------------------------------------ bad input
def test_an_illegal_action_is_refused_naming_the_legal_ones_and_changes_nothing():
    state = started(load(FIST, 4))
    before, history = str(state), state.history()
    illegal = next(a for a in range(FIST.raw_env.NUM_ACTIONS) if a not in state.legal_actions())
    with pytest.raises(ValueError, match=rf"illegal action {illegal} by player_0 .* legal actions: \[0, "):
        state.apply_action(illegal)
    with pytest.raises(ValueError, match=r"actions are 0\.\.1551"):
        state.apply_action(99999)
    assert str(state) == before and state.history() == history
    chance = load(FIST, 4).new_initial_state()
    with pytest.raises(ValueError, match="one outcome, action 0"):
        chance.apply_action(1)


@pytest.mark.parametrize(("spec", "params", "words"), [
    (FIST, {"players": 7}, "players must be an integer from 3 to 6 for Fist of Dragonstones, got 7"),
    (FIST, {"players": 2}, "players must be an integer from 3 to 6 for Fist of Dragonstones, got 2"),
    (DS, {"players": 5}, "players must be an integer from 2 to 4 for DrachenSchatten, got 5"),
    (DS, {"seed": -2}, "seed must be -1 .* or a non-negative int, got -2"),
    (FIST, {"max_turns": 0}, r"max_turns: must be an integer in \[1, 1000\], got 0"),
    (FIST, {"observation_mode": "all"}, "observation_mode must be 'recall' or 'table'"),
    (DS, {"max_steps": 10**6}, r"max_steps: must be an integer in \[1, 100000\]"),
])
def test_bad_parameters_are_refused_naming_what_is_allowed(spec, params, words):
    with pytest.raises(ValueError, match=f"python_{spec.id}: {words}"):
        pyspiel.load_game(openspiel.short_name(spec), params)


def test_an_unknown_parameter_is_refused_by_openspiel_with_the_known_ones():
    with pytest.raises(pyspiel.SpielError, match=r"Unknown parameter 'bogus'.*max_turns, observation_mode, players"):
        pyspiel.load_game("python_dragonstones", {"bogus": 1})


def test_what_the_game_does_not_offer_is_refused_clearly():
    game = load(DS, 2)
    state = started(game)
    with pytest.raises(ValueError, match="no public-only or private-only view"):
        game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True, public_info=True,
                                                         private_info=pyspiel.PrivateInfoType.NONE))
    with pytest.raises(ValueError, match="player must be an int from 0 to 1, got 2"):
        state.information_text(2)
    with pytest.raises(ValueError, match="player must be an int from 0 to 1, got 2"):
        state.resample_from_infostate(2, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    with pytest.raises(ValueError, match="takes a DrachenSchattenGame of 2 players in progress"):
        game.new_state_at(started(load(DS, 3)).engine)
    over = _finished(state)
    with pytest.raises(ValueError, match="the game is over"):
        over.apply_action(0)
    with pytest.raises(ValueError, match="needs a game in progress"):
        over.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))


def test_no_pickling():
    """OpenSpiel's pickle support and its serialize_game_and_state do not apply to a sampled-stochastic game (it
    must save its random generator's state); under them, its C++ serialization of a Python game's state pickles
    the state's attributes (and unpickles to deserialize): refused, naming the JSON way instead."""
    state = started(load(DS, 2))
    for serialize in (pickle.dumps, lambda s: pyspiel.serialize_game_and_state(s.get_game(), s)):
        with pytest.raises(pyspiel.SpielError, match="GetRNGState unimplemented"):
            serialize(state)
    with pytest.raises(TypeError, match=r"not pickled .* state\.serialize\(\) and game\.deserialize_state"):
        pyspiel.State.serialize(state)  # the C++ method under the Python override
    assert json.loads(state.serialize())["seed"] is not None


def _finished(state):
    state = state.clone()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    return state


def test_new_state_at_copies_the_engine():
    env = DS.raw_env(num_players=2)
    env.reset(seed=3)
    game = load(DS, 2)
    state = game.new_state_at(env.game)
    assert state.engine is not env.game and state.history() == []
    before = copy.deepcopy(env.game.record)
    state.apply_action(state.legal_actions()[0])
    assert env.game.record == before


def test_the_observation_string_tells_apart_what_the_vector_does_not_the_legal_actions():
    """DrachenSchatten's torch: a stack shown in this use is not legal again, one shown in an earlier use is,
    and the observation vector (the seat's torch memory) does not say which is which. The string adds the
    legal actions of the player to act, so a search keying nodes on it meets the same actions at each visit
    (OpenSpiel's ISMCTSBot raised a KeyError at such a node before)."""
    rng = np.random.default_rng(0)
    for seed in range(200):
        state = started(load(DS, 3, seed=seed))
        while not state.is_terminal():
            engine = state.engine
            view = engine._view
            if engine.decision.kind == "view" and view and len(view["seen"]) == 1 and view["left"] >= 1:
                break
            state.apply_action(int(rng.choice(state.legal_actions())))
        else:
            continue
        p = state.current_player()
        shown = view["seen"][0]
        other = next(s for s in range(16) if s != shown and engine._stacks[s])
        a, b = copy.deepcopy(engine), copy.deepcopy(engine)
        for g in (a, b):  # both remember both stacks; a saw ``shown`` in this use, b ``other``
            g._memories[p][other] = g._stacks[other][-1]
        b._view["seen"] = [other]
        sa, sb = load(DS, 3).new_state_at(a), load(DS, 3).new_state_at(b)
        assert sa.observation_tensor(p) == sb.observation_tensor(p)  # the vector cannot tell them apart
        assert sa.legal_actions() != sb.legal_actions()
        assert sa.observation_string(p) != sb.observation_string(p)
        return
    pytest.fail("no torch use with two views in 200 random games")


def test_the_interpreter_exits_cleanly_once_the_module_is_gone():
    """OpenSpiel's registry lets go of a game's creator after the interpreter has shut down; a creator freed
    then (a function whose module was dropped) aborted the interpreter at exit (code 134), so the full test
    suite's run did. A class is never freed then."""
    script = textwrap.dedent("""
        import gc, sys
        import pyspiel
        from dragonstones_env import openspiel
        state = pyspiel.load_game("python_drachenschatten").new_initial_state()
        state.apply_action(0)
        openspiel._CLASSES.clear()
        del sys.modules["dragonstones_env.openspiel"], openspiel
        gc.collect()
        print("done")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "done", (done.returncode, done.stderr[-2000:])


# ------------------------------------------------------------------ information states
def _random_game(spec, players, seed, ask_every=None, **params):
    """A random game through the wrapper; every state on the way, cloned; if ``ask_every``, every seat's
    information state asked for at every ``ask_every``-th step (the rest untouched: replayed when asked)."""
    state = started(load(spec, players, seed=seed, **{**SHORT[spec.id], **params}))
    rng = np.random.default_rng(seed)
    states = []
    while True:
        if ask_every and len(state.history()) % ask_every == 0:
            for p in range(players):
                state.information_state_string(p)
        states.append(state.clone())
        if state.is_terminal():
            return states
        state.apply_action(int(rng.choice(state.legal_actions())))


def _past(text):
    return text.split(" | past: ", 1)[1]


@pytest.mark.parametrize(("spec", "players"), [(FIST, 3), (FIST, 4), (DS, 2), (DS, 3)],
                         ids=["fist-3p", "fist-4p", "ds-2p", "ds-3p"])
def test_the_information_state_has_perfect_recall_and_replays_as_it_was_kept(spec, players):
    """Each seat's history only grows (a later information state extends every earlier one of the seat), holds
    the seat's own actions in order, and shows his observation and, to the player to act, the legal actions.
    Asked at every step (kept up action by action) or only once (replayed from the seed), it is the same."""
    kept = _random_game(spec, players, seed=players, ask_every=1)
    replayed = _random_game(spec, players, seed=players)
    assert len(kept) == len(replayed) > 10
    size = spec.raw_env.OBS_SIZE
    previous = {p: "" for p in range(players)}
    for a, b in zip(kept, replayed, strict=True):
        for p in range(players):
            text = a.information_state_string(p)
            assert text == b.information_state_string(p)
            assert text.startswith(f"seat {p} | now: {a.observation_string(p)} | past: ")
            assert _past(text).startswith(previous[p])
            previous[p] = _past(text)
            tensor = np.asarray(a.information_state_tensor(p), np.float32)
            assert np.array_equal(tensor, np.asarray(b.information_state_tensor(p), np.float32))
            assert np.array_equal(tensor[:size], np.asarray(a.observation_tensor(p), np.float32))
            own = [act for player, act in ((x.player, x.action) for x in a.full_history()) if player == p]
            assert re.findall(r"did (\d+)", text) == [str(x) for x in own]
            assert np.array_equal(tensor[size:size + spec.raw_env.NUM_ACTIONS],
                                  np.bincount(own, minlength=spec.raw_env.NUM_ACTIONS))
            assert tensor[size + spec.raw_env.NUM_ACTIONS:].sum() == (1 if own else 0)
    # different histories, different information states: the sets are as fine as the seat's view allows
    strings = [s.information_state_string(s.current_player()) for s in kept[:-1]]
    assert len(set(strings)) == len(strings)


def test_an_information_state_does_not_show_another_seats_sealed_bid():
    """Branch a Fist game on the first bidder's sealed bid: the other seats' information states are the same in
    both branches (strings and tensors), the bidder's differ; after the reveal the others' differ too."""
    checked = 0
    for seed in range(6):
        state = started(load(FIST, 4, seed=seed))
        legal = state.legal_actions()
        left, right = state.clone(), state.clone()
        left.apply_action(legal[-1])
        right.apply_action(legal[len(legal) // 2])
        assert left.information_state_string(0) != right.information_state_string(0)
        for p in (1, 2, 3):
            assert left.information_state_string(p) == right.information_state_string(p)
            assert left.information_state_tensor(p) == right.information_state_tensor(p)
        for branch in (left, right):  # the others bid alike, then the bids are revealed
            for _ in range(3):
                branch.apply_action(branch.legal_actions()[0])
        if left.information_state_string(1) != right.information_state_string(1):
            checked += 1
    assert checked == 6


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
@pytest.mark.parametrize("asked_first", [True, False], ids=["kept", "replayed"])
def test_a_resampled_state_keeps_the_seats_information_state(spec, asked_first):
    """ISMCTS keys its tree on information states: a state resampled for a seat shows that seat the same one
    (whether the original's was already kept or must be replayed), and other seats a history that starts
    there (their past is not the seat's to know). A state made at a position starts every history there."""
    sampler = pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)
    checked = 0
    for state in _positions(spec, spec.players.start, seed=4, every=5)[1:]:
        p = state.current_player()
        if asked_first:
            state.information_state_string(p)
        for _ in range(2):
            other = state.resample_from_infostate(p, sampler)
            assert other.information_state_string(p) == state.information_state_string(p)
            assert other.information_state_tensor(p) == state.information_state_tensor(p)
            q = (p + 1) % spec.players.start
            assert _past(other.information_state_string(q)).startswith(openspiel.UNKNOWN_PAST + " ; saw ")
            action = other.legal_actions()[0]
            other.apply_action(action)
            assert _past(other.information_state_string(p)).startswith(_past(state.information_state_string(p)))
            checked += 1
        at = state.get_game().new_state_at(state.engine)
        assert _past(at.information_state_string(p)).startswith(openspiel.UNKNOWN_PAST + " ; saw ")
    assert checked > 4


# ------------------------------------------------------------------ serialization: the seed and the actions
@pytest.mark.parametrize(("spec", "players"), [(FIST, 3), (DS, 2), (DS, 4)], ids=["fist-3p", "ds-2p", "ds-4p"])
def test_a_state_serializes_as_its_seed_and_actions_and_deserializes_to_the_same_game(spec, players):
    game = load(spec, players, seed=21, **SHORT[spec.id])
    chance = game.new_initial_state()
    states = [chance, *_random_game(spec, players, seed=21)[::7]]
    states.append(_finished(states[-1]))
    for state in states:
        text = state.serialize()
        data = json.loads(text)  # JSON, not a pickle
        assert data["game"] == f"python_{spec.id}" and data["actions"] == state.history()[1:]
        again = game.deserialize_state(text)
        assert str(again) == str(state) and again.history() == state.history()
        assert again.is_terminal() == state.is_terminal() and again.returns() == state.returns()
        if not state.is_chance_node():
            assert record(again) == record(state)
            for p in range(players):
                assert again.information_state_string(p) == state.information_state_string(p)
        assert again.serialize() == text
        both = openspiel.serialize_game_and_state(state.get_game(), state)
        other_game, other = openspiel.deserialize_game_and_state(both)
        assert str(other_game) == str(game) and str(other) == str(state)
    live = states[2].clone()  # a deserialized game goes on as the original does
    again = game.deserialize_state(live.serialize())
    for _ in range(5):
        action = live.legal_actions()[-1]
        live.apply_action(action)
        again.apply_action(action)
    assert record(again) == record(live)


def _edit(text, **changes):
    data = json.loads(text)
    data.update(changes)
    return json.dumps(data)


def test_a_malformed_serialization_is_refused_naming_what_is_wrong_and_changes_nothing():
    game = load(DS, 2, seed=8)
    state = started(load(DS, 2, seed=8))
    for _ in range(6):
        state.apply_action(state.legal_actions()[0])
    good = state.serialize()
    actions = json.loads(good)["actions"]
    third = started(load(DS, 2, seed=8))
    for action in actions[:2]:
        third.apply_action(action)
    illegal = next(a for a in range(DS.raw_env.NUM_ACTIONS) if a not in third.legal_actions())
    cases = [
        ("not json", r"not JSON"),
        ("[1, 2]", r"a JSON object with keys \['format', 'game', 'params', 'seed', 'actions', 'record_sha256'\]"),
        (_edit(good, extra=1), r"a JSON object with keys .* got \['actions', 'extra'"),
        (_edit(good, format="pickle"), r"format 'pickle'; this version reads 'dragonstones_env.openspiel/1'"),
        (_edit(good, game="python_dragonstones"), r"a state of 'python_dragonstones', this game is "
                                                  r"'python_drachenschatten'"),
        (_edit(good, params={"players": 3, "max_steps": 1000}), r"other parameters \(\['players'\]\)"),
        (_edit(good, seed=-1), r"seed must be null .* or an int from 0 to 2\*\*63 - 1, got -1"),
        (_edit(good, seed="8"), r"seed must be null"),
        (_edit(good, actions="0,1"), r"actions must be a list of ints"),
        (_edit(good, actions=[*actions[:3], 1.5]), r"actions must be a list of ints"),
        (_edit(good, seed=None), r"actions without a seed"),
        (_edit(good, actions=[*actions[:2], illegal]), rf"action 2 \({illegal}\) is not legal there; the legal "
                                                       r"actions were \["),
        (_edit(good, actions=actions[:-1]), r"does not match the text's digest"),
        (_edit(good, record_sha256="0" * 64), r"does not match the text's digest"),
    ]
    over = _finished(state)
    cases.append((_edit(over.serialize(), actions=[*json.loads(over.serialize())["actions"], 0]),
                  r"the game was over after \d+ actions"))
    for text, words in cases:
        with pytest.raises(ValueError, match=words) as refused:
            game.deserialize_state(text)
        assert str(refused.value).startswith("deserialize_state: ")
    with pytest.raises(ValueError, match=r"takes the text state\.serialize"):
        game.deserialize_state(b"{}")
    # nothing changed: the game's own seeds were not drawn from (its first game is still seed 8's)
    assert record(started(game)) == record(started(load(DS, 2, seed=8)))
    with pytest.raises(ValueError, match="unknown game 'python_chess'"):
        openspiel.deserialize_game_and_state(json.dumps({"format": openspiel.FORMAT, "game": "python_chess",
                                                         "params": {}, "state": {}}))
    with pytest.raises(ValueError, match=r"began at a position .* \(state\.engine\.record"):
        game.new_state_at(state.engine).serialize()


# ------------------------------------------------------------------ OpenSpiel's information-state algorithms
@pytest.mark.parametrize(("spec", "players", "params"), [(FIST, 3, {"max_turns": 2}), (DS, 2, {})],
                         ids=["fist-3p", "ds-2p"])
def test_openspiels_outcome_sampling_mccfr_runs_on_information_state_strings(spec, players, params):
    """OpenSpiel's tabular MCCFR keys its regrets on information-state strings: a few iterations on each game,
    and its average policy is a distribution over the legal actions at every decision of a new game."""
    game = load(spec, players, seed=2, **params)
    np.random.seed(0)  # OpenSpiel's MCCFR samples with numpy's global generator
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(3):
        solver.iteration()
    tables = solver._infostates
    assert len(tables) > 3 * players
    for key, (regrets, average) in tables.items():
        assert re.match(r"seat \d+ \| now: .* \| past: ", key)
        assert regrets.shape == average.shape and np.isfinite(regrets).all()
    policy = solver.average_policy()
    state = started(load(spec, players, seed=2, **params))  # the first game MCCFR sampled (the same seed)
    seen = 0
    while not state.is_terminal():
        probs = policy.action_probabilities(state)
        assert sorted(probs) == state.legal_actions() and sum(probs.values()) == pytest.approx(1.0)
        seen += state.information_state_string(state.current_player()) in tables
        state.apply_action(max(probs, key=probs.get))
    assert seen >= 1  # its first decision was learnt from


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_openspiels_rl_environment_gives_learners_the_information_state_tensor(spec):
    """rl_environment (NFSP, DQN, policy gradients) picks the information-state tensor when a game provides it."""
    game = load(spec, spec.players.start, seed=1, **SHORT[spec.id])
    env = rl_environment.Environment(game, seed=1)
    size = spec.raw_env.OBS_SIZE + 2 * spec.raw_env.NUM_ACTIONS
    assert env.observation_spec()["info_state"] == (size,)
    step = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = step.observations["current_player"]
        assert len(step.observations["info_state"][p]) == size
        step = env.step([int(rng.choice(step.observations["legal_actions"][p]))])
        if step.last():
            break


@pytest.mark.parametrize(("spec", "players", "params"), [(FIST, 3, {"max_turns": 2}), (DS, 2, {})],
                         ids=["fist-3p", "ds-2p"])
def test_openspiels_pytorch_policy_gradient_learns_on_the_information_state_tensor(spec, players, params):
    """A learner on the tensor: OpenSpiel's PyTorch actor-critic (policy_gradient, a2c) plays one game in every
    seat through rl_environment and takes a learning step (a finite critic loss) at its end."""
    game = load(spec, players, seed=4, **params)
    env = rl_environment.Environment(game, seed=4)
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    torch = pytest.importorskip("torch")  # the train extra (make test has it)
    from open_spiel.python.pytorch import policy_gradient  # imports torch

    torch.manual_seed(0)
    agents = [policy_gradient.PolicyGradient(p, size, actions, loss_str="a2c", hidden_layers_sizes=[16],
                                             batch_size=1) for p in range(players)]
    step = env.reset()
    while not step.last():
        p = step.observations["current_player"]
        step = env.step([agents[p].step(step).action])
    for agent in agents:
        assert getattr(agent, "_last_critic_loss_value", None) is None  # set by its first learning step
        agent.step(step)  # the episode's end: a batch of one, learnt from
        assert np.isfinite(agent._last_critic_loss_value.item())


# ------------------------------------------------------------------ OpenSpiel's C++ ISMCTSBot
CPP_ISMCTS = """
import pyspiel
from dragonstones_env import openspiel
game = pyspiel.load_game("python_drachenschatten", {"players": 2, "seed": 1})
state = game.new_initial_state()
state.apply_action(0)
"""


def test_the_cpp_ismcts_bot_crashes_on_a_python_game_and_our_path_refuses_it_clearly():
    """OpenSpiel's C++ ISMCTSBot releases Python's interpreter lock in step() and calls the Python game back
    without it: a segmentation fault, on OpenSpiel's own Python kuhn_poker too, not on its C++ one (open-spiel
    2.0.2; if this starts failing, OpenSpiel fixed it: update ismcts_bot and docs/search.md). The module's
    ismcts_bot refuses it with a clear error and returns the
    Python bot, which plays, in a subprocess that exits cleanly."""
    bot = "bot = pyspiel.ISMCTSBot(0, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 4)\nbot.step(state)\n"
    kuhn = textwrap.dedent('''
        import pyspiel
        from open_spiel.python.games import kuhn_poker  # registers OpenSpiel's own Python game
        state = pyspiel.load_game("python_kuhn_poker").new_initial_state()
        state.apply_action(0)
        state.apply_action(1)
    ''')
    for script in (CPP_ISMCTS + bot, kuhn + bot):  # ours and OpenSpiel's own Python game alike
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
        assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-2000:])
    done = subprocess.run([sys.executable, "-c", kuhn.replace("python_kuhn_poker", "kuhn_poker") + bot],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]  # a C++ game: the bot plays
    ours = CPP_ISMCTS + textwrap.dedent("""
        try:
            openspiel.ismcts_bot(game, simulations=4, cpp=True)
        except ValueError as err:
            print("refused:", err)
        bot = openspiel.ismcts_bot(game, simulations=4, seed=3)
        action = bot.step(state)
        assert action in state.legal_actions()
        print("played", action)
    """)
    done = subprocess.run([sys.executable, "-c", ours], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: OpenSpiel's C++ pyspiel.ISMCTSBot cannot play a Python game" in done.stdout
    assert "played" in done.stdout


def test_ismcts_bot_is_deterministic_and_refuses_bad_arguments():
    game = load(DS, 2, seed=3)
    state = started(game)
    assert openspiel.ismcts_bot(game, simulations=6, seed=1).step(state) == \
        openspiel.ismcts_bot(game, simulations=6, seed=1).step(state)
    with pytest.raises(ValueError, match="simulations must be an int >= 1, got 0"):
        openspiel.ismcts_bot(game, simulations=0)
    with pytest.raises(ValueError, match="takes a game of this module"):
        openspiel.ismcts_bot(pyspiel.load_game("kuhn_poker"), simulations=2)


# ------------------------------------------------------------------ the example and the docs
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args", [["--tiny"], ["--tiny", "--game", "dragonstones", "--players", "3",
                                                "--param", "max_turns=2"]], ids=["ds", "fist"])
def test_the_mccfr_example_runs_at_a_tiny_budget(args):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "openspiel_mccfr.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"MCCFR: 4 iterations, \d+ information states", done.stdout)
    assert re.search(r"against random: \d/2 won", done.stdout)


def test_the_openspiel_sections_code_blocks_run():
    """docs/search.md's OpenSpiel section: every python block runs (in a subprocess, as a reader would)."""
    text = (ROOT / "docs" / "search.md").read_text()
    section = text[text.index("## OpenSpiel"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, (block[:300], done.stderr[-3000:])
