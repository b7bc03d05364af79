"""DrachenSchatten rules engine: one test per object action and per ruling D1-D7."""

from __future__ import annotations

import copy
import json

import pytest

from dragonstones_env.core import Decision, IllegalOptionError, ReplayError
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
#
# D7: when every stack is empty, the most cards win (ties: all win). The end is not immediate: the
# player who turned over the last card resolves its battle and may still use ready objects that
# need no stack (D3 "before and/or after" the turn-over) until he ends his turn or loses a battle
# (D5); a D6 win in that time ends the game at once; then D7 is scored.

NO_STACK_ACTIONS = ("trade", "steal", "destroy", "decay", "restore")  # D4 actions that need no stack


def last_card(n: int, card: int, colls: list, current: int = 0, stack: int = 8) -> DrachenSchattenGame:
    """A game arranged with ``card`` as the only card left (on ``stack``): the next turn-over is the last."""
    g = DrachenSchattenGame(n, seed=0)
    st: list[list] = [[] for _ in range(16)]
    st[stack] = [card]
    g.arrange(st, colls, current)
    return g


def needs_no_stack(opt: tuple) -> bool:
    return opt == ("end_turn",) or (opt[0] == "use" and CARDS[opt[1]].action in NO_STACK_ACTIONS)


def test_d7_a_last_card_then_end_turn_scores_d7():
    # D7 (a): after the last turn-over the game goes on until the player ends his turn.
    g = last_card(3, SHIELD, [[TORCH1], [BOOTS, GEM], [KEY, TREASURE]])
    g.apply(("turn_over", 8))
    assert g.state_dict()["stacks"] == [0] * 16
    assert not g.over and g.decision == Decision("turn", 0) and g.end_reason is None
    assert g.legal_options() == [("end_turn",)]  # D7: the torch needs a stack; nothing else is ready
    g.apply(("end_turn",))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [0, 1, 2] and g.decision is None
    assert g.record[-1] == {"event": "end", "reason": "stacks_empty", "winners": [0, 1, 2]}
    assert g.turn == 1  # D7 is scored when the turn ends: no next turn starts
    assert conserved(g) and replay(g.record, test_events=True).debug_state() == g.debug_state()


def test_d7_a_most_cards_wins_after_last_battle():
    g = last_card(2, DRAGON, [[SHIELD, HELMET], [BOOTS, GEM]])
    g.apply(("turn_over", 8))
    assert g.decision.kind == "protect"  # D5/D7: the battle of the last card is resolved first
    g.apply(("protect", SHIELD))
    assert not g.over and g.decision == Decision("turn", 0)
    g.apply(("end_turn",))
    assert g.over and g.winners == [0] and g.end_reason == "stacks_empty"


@pytest.mark.parametrize("use, winners, p1_left", [
    (("use", STEAL, 1, SHIELD), [0], 2),  # steal: 4 cards to 2
    (("use", BOOK, 1, SHIELD), [0], 2),  # destroy: 3 cards to 2
    (("use", GEM, GEM, 1, SHIELD), [0, 1], 3),  # trade: 3 cards each, both win
])
def test_d7_b_objects_that_need_no_stack_count_before_d7(use, winners, p1_left):
    # D7 (b) / D3: after the last turn-over, ready objects that need no stack may still be used;
    # D7 counts the cards once the turn ends. Without the use both hold 3 cards: both would win.
    p0 = {STEAL: [STEAL], BOOK: [BOOK], GEM: [GEM]}[use[1]]
    g = last_card(2, TREASURE, [[*p0, (BOOTS, False)], [(SHIELD, False), (HELMET, False), KEY]])
    g.apply(("turn_over", 8))
    assert not g.over and use in g.legal_options()
    g.apply(use)
    assert not g.over and g.decision == Decision("turn", 0)
    g.apply(("end_turn",))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == winners
    assert g.state_dict()["players"][1]["cards"] == p1_left
    assert conserved(g) and replay(g.record, test_events=True).debug_state() == g.debug_state()


def test_d7_b_decay_and_restore_after_the_last_card():
    # D7/D4: a decay makes the others forfeit (their decisions, in the end phase), a key restores;
    # then the turn ends and D7 counts the cards.
    g = last_card(3, TREASURE, [[WAND_DECAY, KEY, (SHIELD, False)],
                                [(HELMET, False), (GEM, False), TREASURE],
                                [(BOOTS, False), TORCH1]])
    g.apply(("turn_over", 8))
    g.apply(("use", KEY, SHIELD))  # restoring needs no stack
    g.apply(("use", WAND_DECAY))
    assert g.decision == Decision("forfeit", 1, "magic wand decay")
    g.apply(("forfeit", GEM))  # seat 2 has one used object only: its forfeit is automatic
    assert g.decision == Decision("turn", 0) and not g.over
    assert g.legal_options() == [("end_turn",)]  # a ready shield acts only in a battle (D5)
    g.apply(("end_turn",))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [0]  # 4 cards to 2 and 1
    assert conserved(g) and replay(g.record, test_events=True).debug_state() == g.debug_state()


def test_d7_c_a_d6_win_after_the_last_card_ends_the_game_at_once():
    # D7 (c) / D6: a steal completing seven kinds after the last turn-over wins at once, although
    # the other player holds more cards (D7 would have made him the winner).
    six = [STEAL, TORCH1, SWORD_DRAGON, GEM, KEY, SHIELD]  # magic wand, torch, sword, gem, key, shield
    p1 = [(HELMET, False), (SHIELD, False), (SHIELD, False), (KEY, False), (BOOTS, False), (GEM, False),
          TREASURE, TREASURE, DRAGON, HYDRA]
    g = last_card(2, TREASURE, [six, p1])
    g.apply(("turn_over", 8))
    assert not g.over  # 7 cards to 10: D7 is not scored yet
    g.apply(("use", STEAL, 1, HELMET))
    assert g.over and g.winners == [0] and g.end_reason == "seven_kinds" and g.decision is None
    assert g.record[-1] == {"event": "end", "reason": "seven_kinds", "winners": [0]}
    assert g.legal_options() == []


def test_d7_c_a_d6_win_on_the_last_card_itself():
    # D6 beats D7: the last card is the third beast, protected (auto-applied: one protector).
    g = last_card(2, DRAGON, [[DRAGON, HYDRA, SHIELD], [BOOTS, GEM, KEY, TORCH1]])
    g.apply(("turn_over", 8))
    assert g.over and g.winners == [0] and g.end_reason == "three_beasts"


def test_d7_d_a_lost_battle_on_the_last_card_scores_d7():
    # D7 (d) / D5: with no ready protection the player loses the beast and his whole collection and
    # his turn ends -- that is "loses a battle"; D7 is then scored at once.
    g = last_card(2, DRAGON, [[GEM, TREASURE, TREASURE, (SHIELD, False), KEY], [BOOTS]])
    g.apply(("turn_over", 8))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [1]
    assert g.record[-2]["event"] == "battle" and g.record[-2]["won"] is False
    assert g.state_dict()["players"][0]["cards"] == 0 and g.turn == 1
    assert conserved(g) and replay(g.record, test_events=True).debug_state() == g.debug_state()


def test_d7_d_a_lost_battle_on_a_last_card_turned_by_boots_ties_at_zero():
    # D7/D5: the last card turned over by boots; the lost battle ends the turn; 0 cards each: all win.
    g = last_card(2, HYDRA, [[BOOTS], []])
    g.apply(("use", BOOTS, 8))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [0, 1]


def test_d7_e_after_the_last_card_nothing_that_needs_a_stack_is_offered():
    # D7 (e): no turn-over, no torch, no boots or wand turn-over once every stack is empty.
    p0 = [TORCH1, TORCH3, BOOTS, WAND_TURN, KEY, GEM, STEAL, (SHIELD, False)]
    g = last_card(2, TREASURE, [p0, [(HELMET, False), (BOOTS, False)]])
    before = g.legal_options()
    assert ("use", TORCH1) in before and ("use", BOOTS, 8) in before  # while a card is left
    g.apply(("turn_over", 8))
    opts = g.legal_options()
    assert opts and all(needs_no_stack(o) for o in opts) and opts[-1] == ("end_turn",)
    assert {o[1] for o in opts if o[0] == "use"} == {KEY, GEM, STEAL}
    for bad in (("use", TORCH1), ("use", TORCH3), ("use", BOOTS, 8), ("use", WAND_TURN, 8), ("turn_over", 8)):
        assert not g.is_legal(bad)
    with pytest.raises(IllegalOptionError, match="D7"):
        g.apply(("use", TORCH1))
    g.apply(("use", KEY, SHIELD))  # restoring is allowed; a restored turn-over object still has no stack
    assert all(needs_no_stack(o) for o in g.legal_options())
    g.apply(("end_turn",))
    assert g.over and g.end_reason == "stacks_empty"


def test_d7_e_last_card_turned_by_boots_before_the_mandatory_turn_over():
    # D3/D7: boots took the last card before the mandatory turn-over, which can no longer be done:
    # the player may still use objects that need no stack, and may end his turn.
    g = last_card(2, SHIELD, [[BOOTS, STEAL], [(HELMET, False)]])
    g.apply(("use", BOOTS, 8))
    assert not g.over and not g.turned_over
    assert g.legal_options() == [("use", STEAL, 1, HELMET), ("end_turn",)]
    g.apply(("end_turn",))
    assert g.over and g.end_reason == "stacks_empty" and g.winners == [0]


def test_d7_arranged_empty_stacks_is_the_end_phase_of_the_current_turn():
    g = DrachenSchattenGame(2, seed=0)
    g.arrange([[] for _ in range(16)], [[GEM, (BOOTS, False)], [(SHIELD, False), TREASURE]], current_player=1)
    assert not g.over and g.decision == Decision("turn", 1) and g.legal_options() == [("end_turn",)]
    g.apply(("end_turn",))
    assert g.over and g.winners == [0, 1] and g.end_reason == "stacks_empty"


def test_d7_end_phase_is_deterministic_and_replays():
    g = last_card(3, TREASURE, [[STEAL, GEM, (KEY, False)], [(SHIELD, False), (HELMET, False)], [(TORCH1, False)]])
    g.apply(("turn_over", 8))
    twin = copy.deepcopy(g)
    for game in (g, twin):
        game.apply(("use", GEM, KEY, 2, TORCH1))
        game.apply(("use", STEAL, 1, HELMET))
        game.apply(("end_turn",))
    assert g.debug_state() == twin.debug_state() and g.record == twin.record
    assert g.over and g.winners == [0]
    r = replay(json.loads(json.dumps(g.record)), test_events=True)
    assert r.debug_state() == g.debug_state() and r.record == g.record
    # A record of the same game in progress (in the end phase) replays too.
    cut = next(i for i, e in enumerate(g.record) if e.get("option") == ["end_turn"])
    assert replay(g.record[:cut], test_events=True).decision == Decision("turn", 0)


def test_d7_old_record_ending_at_the_last_turn_over_is_refused():
    # Before D7 was refined the engine ended the game right after the last turn-over (and its
    # battle). Such a record now diverges: replay raises the ReplayError naming the old end event.
    g = last_card(2, TREASURE, [[GEM], [(SHIELD, False)]])
    g.apply(("turn_over", 8))
    old = [*g.record, {"event": "end", "reason": "stacks_empty", "winners": [0]}]
    with pytest.raises(ReplayError) as err:
        replay(old, test_events=True)
    assert err.value.index == len(g.record) and "end" in str(err.value)


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
    r = replay(json.loads(json.dumps(g.record)), test_events=True)
    assert r.debug_state() == g.debug_state()
    assert r.memory(0) == {0: DRAGON}
    broken = [*g.record[:-1], {"event": "end", "reason": "x", "winners": []}]
    with pytest.raises(ValueError):
        replay(broken, test_events=True)


def test_arrange_rejects_too_many_cards():
    g = DrachenSchattenGame(2, seed=0)
    with pytest.raises(ValueError, match="more 'hydra' cards"):
        g.arrange([[HYDRA] * 3] + [[] for _ in range(15)], [[], []], 0)
