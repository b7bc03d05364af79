"""The global state of every registered game (issue #47): ``state()`` in ``state_space`` at every step,
deterministic, changed by the hidden facts, and seen by no observation.

The leak test draws, for a seat, other games that seat cannot tell from the real one (the game's
determinization sampler, ``GameSpec.sample_state``: the same public history and the seat's own facts,
every hidden fact drawn afresh). The seat's observation must be byte-identical in all of them while
the global state differs: no observation depends on the state beyond its seat's view.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_test

from dragonstones_env import games
from dragonstones_env.games.drachenschatten import global_state as ds_state
from dragonstones_env.games.dragonstones import global_state as fist_state
from tests.aec_support import random_step

SPECS = games.all()


@pytest.fixture(params=SPECS, ids=[s.id for s in SPECS])
def spec(request):
    return request.param


def _states(spec, n: int, seed: int, options: dict | None = None) -> list[bytes]:
    """Random play of one game: the global state after reset and after every step, as bytes."""
    e = spec.env(num_players=n, **(options or {}))
    e.reset(seed=seed)
    raw, rng = e.unwrapped, np.random.default_rng(seed)
    space = raw.state_space
    out = []
    for _ in e.agent_iter():
        s = e.state()
        assert s.dtype == np.float32 and s.shape == space.shape and space.contains(s)
        out.append(s.tobytes())
        random_step(e, rng)
    return out


def test_the_state_is_in_its_space_at_every_step_of_random_games_at_every_table_size(spec):
    for n in spec.players:
        e = spec.env(num_players=n)
        pettingzoo_state_space_test(e.unwrapped)
        assert e.unwrapped.state_space == spec.raw_env(num_players=spec.players[0]).state_space  # every size
        states = _states(spec, n, seed=n)
        assert len(set(states)) > len(states) // 2  # it moves with the game


def test_the_state_layout_names_every_float_once(spec):
    spans = sorted((s.start, s.stop) for s in spec.raw_env.state_layout().values())
    assert spans[0][0] == 0 and spans[-1][1] == spec.raw_env(num_players=spec.default_players).state_space.shape[0]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_the_state_is_deterministic(spec):
    assert _states(spec, spec.default_players, seed=11) == _states(spec, spec.default_players, seed=11)


def test_state_needs_a_game():
    for spec in SPECS:
        with pytest.raises(RuntimeError, match="reset"):
            spec.raw_env().state()


def _sampled_positions(spec, options: dict, games_per_size: int = 2, every: int = 7):
    """Live positions of random games at every table size: (env, its raw env) every ``every`` steps."""
    for n in spec.players:
        for g in range(games_per_size):
            e = spec.env(num_players=n, **options)
            e.reset(seed=100 * n + g)
            rng = np.random.default_rng(g)
            for step in itertools.count():
                if e.unwrapped.game.over:
                    break
                if step % every == 3:
                    yield e, e.unwrapped
                random_step(e, rng)


# every game at its defaults, and at every other observation mode it has (Fist's table mode hides coins, F43)
LEAK_CASES = [(s, {}) for s in SPECS] + [(s, {"observation_mode": "table"}) for s in SPECS
                                         if "observation_mode" in s.options]


@pytest.mark.parametrize(("spec", "options"), LEAK_CASES,
                         ids=[f"{s.id}-{o.get('observation_mode', 'default')}" for s, o in LEAK_CASES])
def test_no_observation_depends_on_the_state_beyond_its_seats_view(spec, options):
    rng = np.random.default_rng(3)
    other = {n: spec.raw_env(num_players=n, **options) for n in spec.players}
    positions = differing = 0
    for _, raw in _sampled_positions(spec, options):
        real_state = raw.state()
        for seat, agent in enumerate(raw.possible_agents):
            seen = raw.observe(agent)
            for _ in range(2):
                copy = other[raw.num_players]
                copy.resume(spec.sample_state(raw.game, seat, rng, raw.options))
                twin = copy.observe(agent)
                assert twin["observation"].tobytes() == seen["observation"].tobytes(), (
                    f"{spec.id}: seat {seat}'s observation changed with facts it cannot know")
                assert np.array_equal(twin["action_mask"], seen["action_mask"])
                positions += 1
                differing += copy.state().tobytes() != real_state.tobytes()
    # The hidden facts (orders, sealed bids, others' memories) differ in almost every draw, and the state says so.
    assert positions > 50 and differing > 0.8 * positions


def test_fist_state_holds_the_hidden_facts():
    e = games.get("dragonstones").env(num_players=5)
    e.reset(seed=4)
    raw = e.unwrapped
    e.step(raw.legal_actions()[5])  # player_0 seals a bid
    g = raw.game
    d = fist_state.decode_state(raw.state())
    assert d["face_down_order"][: len(g.face_down)] == list(reversed(g.face_down))
    assert d["face_down_order"][len(g.face_down) :] == [None] * (10 - len(g.face_down))
    assert d["special_pile_order"][: len(g.special_pile)] == list(reversed(g.special_pile))
    fairy, common, _, _ = g.auction._sealed[0]
    assert (d["sealed_bids"]["fairy"][0], d["sealed_bids"]["common"][0]) == (fairy, common)
    assert d["has_bid"].tolist() == [1, 0, 0, 0, 0, 0]
    assert [int(x) for x in d["seats"]["fairy"][:5]] == [pl.fairy for pl in g.players]
    # what the state leaves out of the observation: only the viewer's piece, "own"
    assert set(raw.LAYOUT) - set(fist_state.STATE_LAYOUT) == {"own"}


def test_drachenschatten_state_holds_the_hidden_facts():
    e = games.get("drachenschatten").env(num_players=3)
    e.reset(seed=2)
    raw, rng = e.unwrapped, np.random.default_rng(0)
    assert _play_until_a_memory(e, rng)
    g = raw.game
    d = ds_state.decode_state(raw.state())
    from_top = [[int(c) for c in reversed(stack)] for stack in g._stacks]
    for s, stack in enumerate(from_top):
        want = [ds_state.CARD_TYPE_OF_ID[c] for c in stack] + [None] * (ds_state.STACK_DEPTH - len(stack))
        assert d["stack_cards"][s * ds_state.STACK_DEPTH : (s + 1) * ds_state.STACK_DEPTH] == want
    memories = np.array(d["memories"], dtype=object).reshape(4, 16)
    for q in range(3):
        assert {s: t for s, t in enumerate(memories[q]) if t is not None} == g.memory(q)
    assert set(raw.LAYOUT) - set(ds_state.STATE_LAYOUT) == {"memory"}


def _play_until_a_memory(e, rng) -> bool:
    for _ in range(2000):
        g = e.unwrapped.game
        if g.over:
            return False
        if any(g._memories):
            return True
        random_step(e, rng)
    return False
