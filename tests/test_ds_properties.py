"""DrachenSchatten rules engine: properties over many random games (hypothesis picks seeds)."""

from __future__ import annotations

import copy
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dragonstones_env.games.drachenschatten import NUM_CARDS, DrachenSchattenGame, replay

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
PLAYERS = st.integers(min_value=2, max_value=4)
SETTINGS = settings(max_examples=150, deadline=None)


def play(game: DrachenSchattenGame, policy_seed: int, stop_at: int | None = None, check=None) -> list:
    """Play uniformly random legal options; return the options applied."""
    rng = np.random.default_rng(policy_seed)
    applied = []
    while not game.over and (stop_at is None or len(applied) < stop_at):
        opts = game.legal_options()
        assert opts, "a live decision always has a legal option"
        opt = opts[int(rng.integers(len(opts)))]
        game.apply(opt)
        applied.append(opt)
        if check:
            check(game)
    return applied


def conserved(game: DrachenSchattenGame) -> None:
    sd = game.state_dict()
    total = sum(sd["stacks"]) + sum(len(p["collection"]) for p in sd["players"]) + sd["removed"]
    assert total == NUM_CARDS
    assert sd["over"] == (game.decision is None)


@SETTINGS
@given(seed=SEEDS, n=PLAYERS)
def test_cards_conserved_and_games_end(seed, n):
    game = DrachenSchattenGame(n, seed=seed)
    conserved(game)
    play(game, seed, check=conserved)
    assert game.over
    if game.truncated:
        assert game.winners == [] and game.steps == game.max_steps
    else:
        assert game.winners and game.end_reason is not None
        if game.end_reason == "stacks_empty":
            assert sum(game.state_dict()["stacks"]) == 0
    json.dumps(game.state_dict())
    json.dumps(game.record)


@SETTINGS
@given(seed=SEEDS, n=PLAYERS, max_steps=st.integers(min_value=1, max_value=60))
def test_truncation(seed, n, max_steps):
    game = DrachenSchattenGame(n, seed=seed, max_steps=max_steps)
    play(game, seed, check=conserved)
    assert game.over and game.steps <= max_steps
    if game.truncated:
        assert game.winners == [] and game.steps == max_steps and game.decision is None
        assert game.record[-1] == {"event": "end", "reason": "truncated", "winners": []}
    assert replay(game.record).state_dict() == game.state_dict()


@SETTINGS
@given(seed=SEEDS, n=PLAYERS)
def test_determinism_and_replay(seed, n):
    a = DrachenSchattenGame(n, seed=seed)
    options = play(a, seed + 1)
    b = DrachenSchattenGame(n, seed=seed)
    for opt in options:
        b.apply(json.loads(json.dumps(opt)))  # options survive a JSON round trip
    assert a.state_dict() == b.state_dict() and a.record == b.record
    r = replay(json.loads(json.dumps(a.record)))
    assert r.debug_state() == a.debug_state() and r.record == a.record


@SETTINGS
@given(seed=SEEDS, n=PLAYERS, cut=st.integers(min_value=0, max_value=80))
def test_deepcopy_continues_identically(seed, n, cut):
    game = DrachenSchattenGame(n, seed=seed)
    play(game, seed, stop_at=cut)
    twin = copy.deepcopy(game)
    assert twin.debug_state() == game.debug_state()
    play(game, seed + 7)
    play(twin, seed + 7)
    assert twin.debug_state() == game.debug_state() and twin.record == game.record


@SETTINGS
@given(seed=SEEDS, n=PLAYERS, cut=st.integers(min_value=0, max_value=80))
def test_legal_options_are_legal_and_others_rejected(seed, n, cut):
    game = DrachenSchattenGame(n, seed=seed)
    play(game, seed, stop_at=cut)
    if game.over:
        return
    opts = game.legal_options()
    assert len(set(opts)) == len(opts) and all(game.is_legal(o) for o in opts)
    before = json.dumps(game.debug_state())
    for bad in (("turn_over", 99), ("use", 0, 0, 0, 0, 0), ("end_turn", 1), ("protect", -1)):
        assert not game.is_legal(bad)
        try:
            game.apply(bad)
        except ValueError:
            pass
        else:  # pragma: no cover
            raise AssertionError(f"{bad} was accepted")
        assert json.dumps(game.debug_state()) == before


@SETTINGS
@given(seed=SEEDS, n=PLAYERS)
def test_memory_only_shows_current_tops(seed, n):
    game = DrachenSchattenGame(n, seed=seed)

    def check(g: DrachenSchattenGame) -> None:
        tops = g.debug_state()["stack_cards"]
        for viewer in range(g.num_players):
            for stack, card in g.memory(viewer).items():
                assert tops[stack] and tops[stack][0] == card

    play(game, seed, check=check)
