"""DrachenSchatten rules engine: one test per object action and per ruling D1-D7."""

from __future__ import annotations

import copy
import json

import pytest

from dragonstones_env.core import Decision, IllegalOptionError
from dragonstones_env.games.drachenschatten import (
    CARD_TYPE_OF_ID,
    CARDS,
    DECK_OF_ID,
    NUM_CARDS,
    TYPE_INDEX,
    DrachenSchattenGame,
    replay,
)
from dragonstones_env.games.drachenschatten.cards import OBJECT_KINDS

T = TYPE_INDEX
TORCH1, TORCH2, TORCH3 = T["torch view-1"], T["torch view-2"], T["torch view-3"]
BOOTS, WAND_TURN = T["boots turn-over"], T["magic wand turn-over"]
GEM, WAND_TRADE, SWORD_TRADE = T["gem trade"], T["magic wand trade"], T["sword trade"]
STEAL, BOOK, SWORD_DESTROY = T["magic wand steal"], T["spell book destroy"], T["sword destroy"]
WAND_DECAY, SWORD_DECAY, KEY = T["magic wand decay"], T["sword decay"], T["key restore"]
SHIELD, HELMET = T["shield protect-dragon"], T["helmet protect-dragon"]
SWORD_DRAGON = T["sword protect-dragon"]
POTION, SWORD_HYDRA = T["magic potion protect-hydra"], T["sword protect-hydra"]
DRAGON, HYDRA, TREASURE = T["dragon"], T["hydra"], T["treasure"]
FILLER = 15  # a stack kept non-empty so D7 does not end the arranged games


def make(n: int = 2, stacks: dict | None = None, colls: list | None = None, current: int = 0,
         turned_over: bool = False) -> DrachenSchattenGame:
    """A game arranged with DrachenSchattenGame.arrange: stacks {index: [types, top first]}."""
    g = DrachenSchattenGame(n, seed=0)
    st: list[list] = [[] for _ in range(16)]
    st[FILLER] = [BOOTS, BOOTS]
    for k, v in (stacks or {}).items():
        st[k] = list(v)
    g.arrange(st, colls if colls is not None else [[] for _ in range(n)], current, turned_over)
    return g


def coll(g: DrachenSchattenGame, p: int) -> list[tuple[int, bool]]:
    return sorted((c["type"], c["ready"]) for c in g.state_dict()["players"][p]["collection"])


def conserved(g: DrachenSchattenGame) -> bool:
    sd = g.state_dict()
    return sum(sd["stacks"]) + sum(len(p["collection"]) for p in sd["players"]) + sd["removed"] == NUM_CARDS


# ---------------------------------------------------------------- D1 cards


def test_d1_card_table():
    assert sum(c.village for c in CARDS) == 32 and sum(c.caves for c in CARDS) == 32
    assert len(CARD_TYPE_OF_ID) == NUM_CARDS == 64
    assert {c.kind for c in CARDS if c.kind} == set(OBJECT_KINDS)
    assert CARDS[TREASURE].caves == 7 and CARDS[DRAGON].caves == 5 and CARDS[HYDRA].caves == 2
    assert CARDS[BOOTS].village == 4 and CARDS[BOOTS].caves == 1
    assert all(c.village == 0 for c in CARDS if c.category != "object")
    assert [c.index for c in CARDS] == list(range(len(CARDS)))
    # ids 0..31 are village cards, 32..63 caves cards, and each id maps to its type.
    assert DECK_OF_ID[:32] == ("village",) * 32 and DECK_OF_ID[32:] == ("caves",) * 32
    for t in CARDS:
        assert CARD_TYPE_OF_ID[:32].count(t.index) == t.village
        assert CARD_TYPE_OF_ID[32:].count(t.index) == t.caves


def test_wrong_player_count_raises():
    for n in (0, 1, 5, True, "3", 2.0):
        with pytest.raises(ValueError, match="2 to 4 players"):
            DrachenSchattenGame(n)


# ---------------------------------------------------------------- D2 setup


def test_d2_setup_and_opening_pick_in_seat_order():
    g = DrachenSchattenGame(3, seed=5)
    sd = g.state_dict()
    assert sd["stacks"] == [4] * 16 and sd["turn"] == 0
    dbg = g.debug_state()
    for s in range(8):
        assert all(CARDS[t].category == "object" for t in dbg["stack_cards"][s])  # D1 village
    for seat in range(3):
        assert g.decision == Decision("pick", seat)
        assert g.legal_options() == [("pick", s) for s in range(8) if g.state_dict()["stacks"][s]]
        top = g.debug_state()["stack_cards"][seat][0]
        g.apply(("pick", seat))
        assert coll(g, seat) == [(top, True)]  # face up, ready
    assert g.state_dict()["stacks"][:3] == [3, 3, 3]
    assert g.decision == Decision("turn", g.first_player)
    assert g.turn == 1
    firsts = {DrachenSchattenGame(4, seed=s).first_player for s in range(40)}
    assert firsts == {0, 1, 2, 3}  # D2: drawn at random


def test_d2_pick_only_village_stacks():
    g = DrachenSchattenGame(2, seed=1)
    with pytest.raises(IllegalOptionError):
        g.apply(("pick", 8))


# ---------------------------------------------------------------- D3 turn


def test_d3_turn_structure():
    g = make(colls=[[TORCH1, TORCH1], []], stacks={0: [SHIELD, HELMET], 8: [TREASURE]})
    opts = g.legal_options()
    assert ("end_turn",) not in opts  # the turn-over is mandatory
    assert ("use", TORCH1) in opts  # objects may be used before it
    with pytest.raises(IllegalOptionError, match="mandatory turn-over"):
        g.apply(("end_turn",))
    g.apply(("use", TORCH1))
    g.apply(("view", 8))
    assert g.decision.kind == "turn"
    g.apply(("turn_over", 0))
    opts = g.legal_options()
    assert not any(o[0] == "turn_over" for o in opts)  # exactly one
    assert ("end_turn",) in opts and ("use", TORCH1) in opts  # ... and objects after it
    with pytest.raises(IllegalOptionError, match="mandatory turn-over is done"):
        g.apply(("turn_over", 0))
    g.apply(("use", TORCH1))
    g.apply(("view", 0))
    g.apply(("end_turn",))
    assert g.decision == Decision("turn", 1) and g.turn == 2 and not g.turned_over
    g.apply(("turn_over", 0))
    g.apply(("end_turn",))
    assert g.decision == Decision("turn", 0)  # clockwise, wrapping


def test_d3_new_objects_usable_the_same_turn():
    g = make(colls=[[], []], stacks={0: [TORCH1]})
    g.apply(("turn_over", 0))
    assert coll(g, 0) == [(TORCH1, True)]
    assert ("use", TORCH1) in g.legal_options()


# ---------------------------------------------------------------- D4 objects


def test_d4_view_torch():
    g = make(colls=[[TORCH2], []], stacks={0: [DRAGON], 3: [SHIELD], 8: [TREASURE]})
    g.apply(("use", TORCH2))
    assert g.decision == Decision("view", 0, "torch view-2")
    assert ("stop_view",) not in g.legal_options()  # at least one card is viewed
    g.apply(("view", 0))
    assert ("view", 0) not in g.legal_options()  # distinct stacks
    assert ("stop_view",) in g.legal_options()
    g.apply(("view", 8))
    assert g.decision.kind == "turn"  # two viewed: the torch is spent
    assert coll(g, 0) == [(TORCH2, False)]
    assert g.memory(0) == {0: DRAGON, 8: TREASURE} and g.memory(1) == {}
    assert g.state_dict()["stacks"][0] == 1  # the dragon went back; no battle
    g.apply(("turn_over", 8))
    assert g.memory(0) == {0: DRAGON}  # the treasure left its stack
    assert "stack_cards" not in g.state_dict() and "memories" not in g.state_dict()


def test_d4_view_can_stop_early_and_ends_when_no_stack_left():
    g = make(colls=[[TORCH3, TORCH3], []], stacks={0: [SHIELD]})
    g.apply(("use", TORCH3))
    g.apply(("view", 0))
    g.apply(("stop_view",))
    assert g.decision.kind == "turn" and g.memory(0) == {0: SHIELD}
    g.apply(("use", TORCH3))
    g.apply(("view", 0))
    g.apply(("view", FILLER))  # only two non-empty stacks: the view ends by itself
    assert g.decision.kind == "turn"


def test_d4_turn_over_object_is_extra_with_battles():
    g = make(colls=[[BOOTS, WAND_TURN], []], stacks={0: [SHIELD], 1: [DRAGON]})
    g.apply(("use", BOOTS, 0))
    assert coll(g, 0) == sorted([(BOOTS, False), (WAND_TURN, True), (SHIELD, True)])
    assert ("end_turn",) not in g.legal_options()  # not the mandatory turn-over
    g.apply(("use", WAND_TURN, 1))  # a dragon: the shield slays it (auto, one choice)
    assert coll(g, 0) == sorted([(BOOTS, False), (WAND_TURN, False), (SHIELD, False), (DRAGON, False)])
    assert g.decision == Decision("turn", 0) and not g.turned_over


def test_d4_trade():
    g = make(colls=[[GEM, (BOOTS, False)], [(SHIELD, False), HELMET, (TORCH1, False)]])
    opts = [o for o in g.legal_options() if o[:2] == ("use", GEM)]
    # (own used object, other player, their used object); the ready helmet is safe
    assert set(opts) == {("use", GEM, o, 1, u) for o in (BOOTS, GEM) for u in (SHIELD, TORCH1)}
    g.apply(("use", GEM, BOOTS, 1, SHIELD))
    assert coll(g, 0) == sorted([(GEM, False), (SHIELD, False)])
    assert coll(g, 1) == sorted([(BOOTS, False), (HELMET, True), (TORCH1, False)])


def test_d4_trade_the_trading_card_itself():
    g = make(colls=[[SWORD_TRADE], [(KEY, False)]])
    assert [o for o in g.legal_options() if o[0] == "use"] == [("use", SWORD_TRADE, SWORD_TRADE, 1, KEY)]
    g.apply(("use", SWORD_TRADE, SWORD_TRADE, 1, KEY))
    assert coll(g, 0) == [(KEY, False)] and coll(g, 1) == [(SWORD_TRADE, False)]


def test_d4_trade_needs_a_used_object_of_another_player():
    g = make(colls=[[GEM, (BOOTS, False)], [SHIELD]])
    assert not any(o[0] == "use" for o in g.legal_options())


def test_d4_steal():
    g = make(n=3, colls=[[STEAL], [(SHIELD, False), SHIELD], [(KEY, False)]])
    opts = [o for o in g.legal_options() if o[0] == "use"]
    assert set(opts) == {("use", STEAL, 1, SHIELD), ("use", STEAL, 2, KEY)}
    g.apply(("use", STEAL, 1, SHIELD))
    assert coll(g, 0) == sorted([(STEAL, False), (SHIELD, False)])  # in the same used state
    assert coll(g, 1) == [(SHIELD, True)]  # the ready shield stays


def test_d4_destroy():
    for destroyer in (BOOK, SWORD_DESTROY):
        g = make(colls=[[destroyer], [(HELMET, False), TORCH1]])
        assert [o for o in g.legal_options() if o[0] == "use"] == [("use", destroyer, 1, HELMET)]
        removed = g.state_dict()["removed"]
        g.apply(("use", destroyer, 1, HELMET))
        assert coll(g, 1) == [(TORCH1, True)]
        assert g.state_dict()["removed"] == removed + 1 and HELMET in g.state_dict()["removed_cards"]


def test_d4_decay_is_the_others_choice():
    # seat 1 has two kinds of used objects: his choice; seat 2 has none and forfeits nothing;
    # seat 3 has one kind: auto; the active player's own used objects are safe.
    g = make(n=4, colls=[[WAND_DECAY, (BOOTS, False)], [(SHIELD, False), (HELMET, False), KEY], [TORCH1],
                         [(GEM, False), (GEM, False)]])
    g.apply(("use", WAND_DECAY))
    assert g.decision == Decision("forfeit", 1, "magic wand decay")
    assert set(g.legal_options()) == {("forfeit", SHIELD), ("forfeit", HELMET)}
    with pytest.raises(IllegalOptionError):
        g.apply(("forfeit", KEY))  # ready objects do not decay
    g.apply(("forfeit", HELMET))
    assert g.decision == Decision("turn", 0)  # seat 2 skipped, seat 3 auto-applied
    assert coll(g, 0) == sorted([(WAND_DECAY, False), (BOOTS, False)])
    assert coll(g, 1) == sorted([(SHIELD, False), (KEY, True)])
    assert coll(g, 2) == [(TORCH1, True)]
    assert coll(g, 3) == [(GEM, False)]
    autos = [e for e in g.record if e["event"] == "auto"]
    assert autos[-1] == {"event": "auto", "player": 3, "decision": "forfeit", "option": ["forfeit", GEM]}


def test_d4_decay_with_nobody_to_forfeit():
    g = make(colls=[[SWORD_DECAY], [SHIELD]])
    g.apply(("use", SWORD_DECAY))
    assert g.decision == Decision("turn", 0) and coll(g, 1) == [(SHIELD, True)]


def test_d4_restore():
    g = make(colls=[[KEY, (BOOTS, False)], []], stacks={0: [SHIELD]})
    assert [o for o in g.legal_options() if o[0] == "use"] == [("use", KEY, BOOTS)]
    g.apply(("use", KEY, BOOTS))
    assert coll(g, 0) == sorted([(KEY, False), (BOOTS, True)])
    g.apply(("use", BOOTS, 0))  # usable at once
    assert coll(g, 0) == sorted([(KEY, False), (BOOTS, False), (SHIELD, True)])


def test_d4_key_cannot_restore_itself():
    g = make(colls=[[KEY], []])
    assert not any(o[0] == "use" for o in g.legal_options())  # no used object at all
    g = make(colls=[[KEY, KEY, (SHIELD, False)], []])
    g.apply(("use", KEY, SHIELD))
    assert [o for o in g.legal_options() if o[0] == "use"] == [("use", KEY, KEY)]  # the other, used key
    g.apply(("use", KEY, KEY))
    assert coll(g, 0) == sorted([(KEY, False), (KEY, True), (SHIELD, True)])


def test_protection_objects_are_not_used_outside_battle():
    # Unsettled choice (see rules._use_options): protect-* objects only act in battles.
    g = make(colls=[[SHIELD, POTION, SWORD_DRAGON], []])
    assert not any(o[0] == "use" for o in g.legal_options())


# ---------------------------------------------------------------- D5 battle


def test_d5_battle_won_with_a_choice():
    g = make(colls=[[SHIELD, HELMET, (SWORD_DRAGON, False), KEY], []], stacks={8: [DRAGON]})
    g.apply(("turn_over", 8))
    assert g.decision == Decision("protect", 0, "dragon")
    assert set(g.legal_options()) == {("protect", SHIELD), ("protect", HELMET)}
    assert conserved(g)
    with pytest.raises(IllegalOptionError, match="no restore"):
        g.apply(("use", KEY, SWORD_DRAGON))  # D5: no restore during a battle
    g.apply(("protect", HELMET))
    assert coll(g, 0) == sorted([(SHIELD, True), (HELMET, False), (SWORD_DRAGON, False), (KEY, True),
                                 (DRAGON, False)])
    assert g.decision == Decision("turn", 0) and g.state_dict()["players"][0]["beasts"] == 1
    ev = [e for e in g.record if e["event"] == "battle"][-1]
    assert ev["won"] and ev["protect"] == HELMET


def test_d5_battle_lost_loses_everything_and_ends_turn():
    g = make(colls=[[TORCH1, TREASURE, (SHIELD, False), KEY], [BOOTS]], stacks={8: [DRAGON]})
    removed = g.state_dict()["removed"]
    g.apply(("turn_over", 8))  # the only shield is used; the key may not restore it (D5)
    assert coll(g, 0) == []
    assert g.state_dict()["removed"] == removed + 5
    assert g.decision == Decision("turn", 1) and g.turn == 2
    assert conserved(g)


def test_d5_battle_lost_before_the_mandatory_turn_over_ends_turn():
    g = make(colls=[[BOOTS], []], stacks={8: [HYDRA]})
    g.apply(("use", BOOTS, 8))
    assert g.decision == Decision("turn", 1) and coll(g, 0) == []


def test_d5_hydra_and_dragon_protections():
    # Dragon protections do not help against a hydra ...
    g = make(colls=[[SHIELD, HELMET, SWORD_DRAGON], []], stacks={8: [HYDRA]})
    g.apply(("turn_over", 8))
    assert coll(g, 0) == [] and g.decision.player == 1
    # ... hydra protections (potion, sword protect-hydra) do, and not against a dragon.
    g = make(colls=[[POTION, SWORD_HYDRA], []], stacks={8: [HYDRA], 9: [DRAGON]})
    g.apply(("turn_over", 8))
    assert set(g.legal_options()) == {("protect", POTION), ("protect", SWORD_HYDRA)}
    g.apply(("protect", SWORD_HYDRA))
    assert coll(g, 0) == sorted([(POTION, True), (SWORD_HYDRA, False), (HYDRA, False)])
    g.apply(("end_turn",))
    g.apply(("turn_over", FILLER))
    g.apply(("end_turn",))
    g.apply(("turn_over", 9))
    assert coll(g, 0) == [] and g.decision == Decision("turn", 1)


def test_d5_single_protection_is_auto_applied():
    g = make(colls=[[POTION, (SHIELD, False)], []], stacks={8: [HYDRA]})
    g.apply(("turn_over", 8))
    assert g.decision == Decision("turn", 0)
    auto = {"event": "auto", "player": 0, "decision": "protect", "option": ["protect", POTION]}
    assert g.record[-2] == auto
    assert g.steps == 1  # the auto option is not an applied option


# ---------------------------------------------------------------- D6 win


def test_d6_seven_kinds():
    kinds6 = [TORCH1, (BOOTS, False), GEM, KEY, SHIELD, HELMET]
    g = make(colls=[kinds6, []], stacks={8: [BOOK]})
    assert not g.over
    g.apply(("turn_over", 8))
    assert g.over and g.winners == [0] and g.end_reason == "seven_kinds" and g.decision is None
    assert g.legal_options() == []
    with pytest.raises(IllegalOptionError, match="game is over"):
        g.apply(("end_turn",))


def test_d6_seven_objects_of_fewer_kinds_do_not_win():
    g = make(colls=[[TORCH1, TORCH2, TORCH3, BOOTS, GEM, KEY], []], stacks={8: [SHIELD]})
    g.apply(("turn_over", 8))
    assert not g.over


def test_d6_three_beasts():
    g = make(colls=[[DRAGON, HYDRA, SHIELD], []], stacks={8: [DRAGON]})
    g.apply(("turn_over", 8))
    assert g.winners == [0] and g.end_reason == "three_beasts"


def test_d6_three_treasures():
    g = make(n=3, colls=[[], [TREASURE, TREASURE], []], current=1, stacks={8: [TREASURE]})
    g.apply(("turn_over", 8))
    assert g.winners == [1] and g.end_reason == "three_treasures"


def test_d6_win_by_steal():
    g = make(colls=[[STEAL, TORCH1, BOOTS, GEM, KEY, SHIELD], [(HELMET, False)]])
    g.apply(("use", STEAL, 1, HELMET))
    assert g.winners == [0] and g.end_reason == "seven_kinds"


def test_d6_double_win_by_trade():
    # Six kinds each, no key for 0 and no torch for 1; each gives a used duplicate-kind card.
    p0 = [GEM, BOOTS, SHIELD, HELMET, POTION, (TORCH1, False), TORCH2]
    p1 = [BOOTS, SHIELD, HELMET, POTION, WAND_TURN, (KEY, False), KEY]
    g = make(colls=[p0, p1])
    assert not g.over
    g.apply(("use", GEM, TORCH1, 1, KEY))  # 0 gets a key (7th kind), 1 gets a torch (7th kind)
    assert g.over and g.winners == [0, 1] and g.end_reason == "seven_kinds"


# ---------------------------------------------------------------- D7 end


def test_d7_empty_stacks_tie():
    g = DrachenSchattenGame(3, seed=0)
    st = [[] for _ in range(16)]
    st[8] = [SHIELD]
    g.arrange(st, [[TORCH1], [BOOTS, GEM], [KEY, TREASURE]], 0)
    g.apply(("turn_over", 8))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [0, 1, 2]
    assert g.state_dict()["stacks"] == [0] * 16


def test_d7_most_cards_wins_after_last_battle():
    g = DrachenSchattenGame(2, seed=0)
    st = [[] for _ in range(16)]
    st[8] = [DRAGON]
    g.arrange(st, [[SHIELD, HELMET], [BOOTS, GEM]], 0)
    g.apply(("turn_over", 8))
    assert g.decision.kind == "protect"  # the battle comes first
    g.apply(("protect", SHIELD))
    assert g.over and g.winners == [0] and g.end_reason == "stacks_empty"


# ---------------------------------------------------------------- protocol


def test_illegal_options_leave_state_unchanged():
    g = make(colls=[[GEM, (BOOTS, False)], [(SHIELD, False), HELMET]], stacks={0: [SHIELD]})
    before, record = json.dumps(g.debug_state()), list(g.record)
    bad = [("end_turn",), ("turn_over", 3), ("turn_over", 16), ("use", GEM, BOOTS, 1, HELMET),
           ("use", GEM, BOOTS, 0, BOOTS), ("use", SHIELD), ("view", 0), ("pick", 0), ("turn_over", True),
           ("turn_over", 0.0), ("bogus",), ()]
    for opt in bad:
        assert not g.is_legal(opt)
        with pytest.raises(ValueError) as err:
            g.apply(opt)
        assert isinstance(err.value, IllegalOptionError)
        assert "decision 'turn' of player 0" in str(err.value) and "legal options" in str(err.value)
        assert json.dumps(g.debug_state()) == before and g.record == record
    with pytest.raises(IllegalOptionError):
        g.apply("turn_over")  # not a tuple
    assert json.dumps(g.debug_state()) == before
    g.apply(["turn_over", 0])  # a JSON list is fine
    assert g.record[-2]["option"] == ["turn_over", 0]


def test_state_dict_shape_and_json():
    g = DrachenSchattenGame(4, seed=3)
    sd = g.state_dict()
    json.dumps(sd)
    for key in ("turn", "current_player", "stacks", "players", "removed", "winners", "over"):
        assert key in sd
    assert len(sd["stacks"]) == 16 and len(sd["players"]) == 4
    for opt in g.legal_options():
        json.dumps(opt)


def test_truncation():
    g = DrachenSchattenGame(2, seed=0, max_steps=3)
    for _ in range(3):
        g.apply(g.legal_options()[0])
    assert g.over and g.truncated and not g.terminated and g.winners == [] and g.decision is None
    assert g.end_reason == "truncated"
    with pytest.raises(ValueError):
        DrachenSchattenGame(2, max_steps=0)


def test_memory_seat_checked():
    g = DrachenSchattenGame(2, seed=0)
    with pytest.raises(ValueError):
        g.memory(2)


def test_replay_of_arranged_game_and_deepcopy():
    g = make(colls=[[TORCH2, KEY, (BOOTS, False)], [(SHIELD, False)]], stacks={0: [DRAGON, GEM]})
    g.apply(("use", TORCH2))
    g.apply(("view", 0))
    g.apply(("stop_view",))
    h = copy.deepcopy(g)
    for game in (g, h):
        game.apply(("use", KEY, BOOTS))
        game.apply(("turn_over", FILLER))
    assert g.debug_state() == h.debug_state() and g.record == h.record
    r = replay(json.loads(json.dumps(g.record)))
    assert r.debug_state() == g.debug_state()
    assert r.memory(0) == {0: DRAGON}
    broken = [*g.record[:-1], {"event": "end", "reason": "x", "winners": []}]
    with pytest.raises(ValueError):
        replay(broken)


def test_arrange_rejects_too_many_cards():
    g = DrachenSchattenGame(2, seed=0)
    with pytest.raises(ValueError, match="more 'hydra' cards"):
        g.arrange([[HYDRA] * 3] + [[] for _ in range(15)], [[], []], 0)
