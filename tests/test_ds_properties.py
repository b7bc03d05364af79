"""DrachenSchatten rules engine: properties over many random games (hypothesis picks seeds)."""

from __future__ import annotations

import copy
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dragonstones_env.games.drachenschatten import CARD_TYPE_OF_ID, CARDS, NUM_CARDS, DrachenSchattenGame, replay

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


NO_STACK_ACTIONS = ("trade", "steal", "destroy", "decay", "restore")  # D4 actions that need no stack


@SETTINGS
@given(seed=SEEDS, n=PLAYERS)
def test_d7_end_phase_offers_only_what_needs_no_stack(seed, n):
    # D7: once every stack is empty the player who turned over the last card may only use ready
    # objects that need no stack (D3) and end his turn; D7 is scored when that turn ends (or a
    # battle is lost, D5), unless a D6 win ended the game before.
    game = DrachenSchattenGame(n, seed=seed)

    def check(g: DrachenSchattenGame) -> None:
        if g.over or any(g.state_dict()["stacks"]):
            return
        assert g.decision.kind in ("turn", "protect", "forfeit")
        if g.decision.kind == "turn":
            opts = g.legal_options()
            assert opts[-1] == ("end_turn",)
            assert all(o == ("end_turn",) or (o[0] == "use" and CARDS[o[1]].action in NO_STACK_ACTIONS)
                       for o in opts)

    play(game, seed, check=check)
    if game.end_reason == "stacks_empty":
        last = game.record[-2]
        assert last.get("option") == ["end_turn"] or (last["event"] == "battle" and not last["won"])
        counts = [p["cards"] for p in game.state_dict()["players"]]
        assert game.winners == [q for q in range(n) if counts[q] == max(counts)]
        assert replay(game.record).debug_state() == game.debug_state()


@SETTINGS
@given(seed=SEEDS, n=PLAYERS, left=st.integers(min_value=1, max_value=3))
def test_d7_random_endings_are_consistent_deterministic_and_replay(seed, n, left):
    # D7 from arranged near-end tables (random play seldom empties every stack): random
    # collections, `left` cards on the stacks; random play to the end keeps the D7 invariants.
    rng = np.random.default_rng(seed)
    ids = [int(i) for i in rng.permutation(NUM_CARDS)]
    stacks: list[list] = [[] for _ in range(16)]
    for cid in ids[:left]:
        stacks[int(rng.integers(16))].append(CARD_TYPE_OF_ID[cid])
    colls, pos = [], left
    for _ in range(n):
        k = int(rng.integers(0, 7))
        colls.append([(CARD_TYPE_OF_ID[c], bool(rng.integers(2))) for c in ids[pos:pos + k]])
        pos += k
    game = DrachenSchattenGame(n, seed=seed)
    game.arrange(stacks, colls, int(rng.integers(n)))
    twin = copy.deepcopy(game)
    checked = []

    def check(g: DrachenSchattenGame) -> None:
        conserved(g)
        if not g.over and not any(g.state_dict()["stacks"]) and g.decision.kind == "turn":
            checked.append(g.legal_options())
            assert all(o == ("end_turn",) or (o[0] == "use" and CARDS[o[1]].action in NO_STACK_ACTIONS)
                       for o in g.legal_options())

    play(game, seed + 1, check=check)
    play(twin, seed + 1)
    assert game.over and twin.debug_state() == game.debug_state() and twin.record == game.record
    if game.end_reason == "stacks_empty":
        counts = [p["cards"] for p in game.state_dict()["players"]]
        assert game.winners == [q for q in range(n) if counts[q] == max(counts)]
    elif not game.truncated:
        assert game.end_reason.split("+")[0] in ("seven_kinds", "three_beasts", "three_treasures")
    r = replay(json.loads(json.dumps(game.record)), test_events=True)  # arranged: a test set-up
    assert r.debug_state() == game.debug_state() and r.record == game.record


def _mutables(value, path="game"):
    """Every mutable object reachable from ``value`` (containers, arrays, generators), with its path."""
    if isinstance(value, (int, float, str, bytes, bool, type(None), tuple, frozenset)):
        if isinstance(value, tuple):
            for i, v in enumerate(value):
                yield from _mutables(v, f"{path}[{i}]")
        return
    yield path, value
    items = (value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list)
             else vars(value).items() if hasattr(value, "__dict__") else ())
    for k, v in items:
        yield from _mutables(v, f"{path}.{k}" if hasattr(value, "__dict__") else f"{path}[{k!r}]")


@SETTINGS
@given(seed=SEEDS, n=PLAYERS, cut=st.integers(min_value=0, max_value=120))
def test_a_deep_copy_shares_no_mutable_object(seed, n, cut):
    """The game's own __deepcopy__ (written out for the search's speed) copies every container,
    including any attribute added later: nothing reachable from the twin is the original's object."""
    game = DrachenSchattenGame(n, seed=seed)
    play(game, seed, stop_at=cut)
    twin = copy.deepcopy(game)
    originals = {id(obj): path for path, obj in _mutables(game)}
    shared = [path for path, obj in _mutables(twin) if id(obj) in originals]
    assert not shared, f"the copy shares {shared}"
    assert twin.debug_state() == game.debug_state() and twin.record == game.record
