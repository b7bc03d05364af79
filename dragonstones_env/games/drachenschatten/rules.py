"""The DrachenSchatten rules engine: pure Python, no RL imports.

Rulebook: ``seeds/002_868a28ab297ac500.txt``; rulings D1-D7 in ``RULINGS.md`` settle its gaps.
The engine follows the protocol of :mod:`dragonstones_env.core` (decision / legal_options /
apply / state_dict / record / replay / deepcopy).

Decisions (``game.decision.kind``) and their options:

* ``"pick"`` (D2, opening, seats in order 0..n-1): ``("pick", village_stack)``, stack 0..7.
* ``"turn"`` (D3, the active player's main decision):

  - ``("turn_over", stack)`` -- the mandatory turn-over, stack 0..15 (village 0..7, caves 8..15),
    offered until it is done;
  - ``("use", card_type, *target)`` -- use a ready object, with its whole target (D4):

    * torch (view-N): ``("use", t)``, then ``"view"`` decisions; only while a stack is non-empty;
    * boots / wand turn-over: ``("use", t, stack)``;
    * trade: ``("use", t, own_used_type, other_seat, their_used_type)`` (``own_used_type`` may be
      ``t``: the trading card itself);
    * steal, destroy: ``("use", t, other_seat, their_used_type)``;
    * decay: ``("use", t)``, then ``"forfeit"`` decisions of the other players;
    * restore (key): ``("use", t, own_used_type)``;
  - ``("end_turn",)`` -- once the mandatory turn-over is done, or once every stack is empty.

  D7 end phase: the player who turns over the last card (the mandatory turn-over or a boots /
  wand one) resolves its battle and goes on with his turn: he may use ready objects that need no
  stack (trade, steal, destroy, decay, restore; not a torch or a turn-over object) until he ends
  his turn (``("end_turn",)``, offered even when the last card was turned over by an object
  before the mandatory turn-over, which can no longer be done) or loses a battle. A D6 win in
  that time ends the game at once; otherwise D7 is scored when the turn ends.
* ``"view"`` (D4, after using a torch): ``("view", stack)`` for a non-empty stack not yet viewed
  with this torch; ``("stop_view",)`` once at least one card was viewed.
* ``"protect"`` (D5, a dragon or hydra was turned over and the player has a ready protecting
  object): ``("protect", card_type)``.
* ``"forfeit"`` (D4 decay, decided by each OTHER player who has a used object, clockwise from the
  active player's left): ``("forfeit", card_type)``.

Auto-applied decisions: only ``"protect"`` and ``"forfeit"`` decisions with exactly one legal
option (one type of protecting object ready / one type of used object) are applied by the engine
itself; they reveal nothing hidden. They are recorded as ``"auto"`` events and do not count as
applied options (``steps``). A torch view ends by itself when the torch's count is reached or no
unviewed non-empty stack is left.

Objects are named in options by card type index (:data:`~.cards.CARDS`): cards of one type are
interchangeable, but ready/used state is kept per physical card (ids 0..63). Where several
physical cards fit, the engine takes the lowest id.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from dragonstones_env.bounds import check as check_bound
from dragonstones_env.core import (
    Decision,
    IllegalOptionError,
    Option,
    ReplayError,
    as_option,
    check_seed,
    verify_replay,
)
from dragonstones_env.core.records import KIND_KEY, RECORD_VERSION, read_record, start_v2

from .cards import (
    CARD_NAMES,
    CARD_TYPE_OF_ID,
    CARDS,
    CAVES_IDS,
    NUM_CARDS,
    PROTECTS,
    TYPE_INDEX,
    VILLAGE_IDS,
)

NUM_STACKS = 16
VILLAGE_STACKS: tuple[int, ...] = tuple(range(8))
CAVES_STACKS: tuple[int, ...] = tuple(range(8, 16))
MIN_PLAYERS, MAX_PLAYERS = 2, 4  # D2
# A game has 64 cards and at most ~3 explicit options per card in ordinary play; 1000 leaves
# room for long object chains while still cutting off endless key-restores-key loops.
DEFAULT_MAX_STEPS = 1000

# D4: one small method per action symbol; data, not closures, so deepcopy stays trivial.
_USE_METHODS: dict[str, str] = {
    "view-1": "_use_torch",
    "view-2": "_use_torch",
    "view-3": "_use_torch",
    "turn-over": "_use_turn_over",
    "trade": "_use_trade",
    "steal": "_use_steal",
    "destroy": "_use_destroy",
    "decay": "_use_decay",
    "restore": "_use_restore",
}

WIN_REASONS: tuple[str, ...] = ("seven_kinds", "three_beasts", "three_treasures")
END_REASONS: tuple[str, ...] = (*WIN_REASONS, "stacks_empty", "truncated")


def _is_int(x: Any) -> bool:
    """An integer that is not a bool (True == 1 must not pass for a seat or stack)."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _type_index(t: Any) -> int:
    """A card type given as index or name -> index (test setup convenience)."""
    if isinstance(t, str):
        if t not in TYPE_INDEX:
            raise ValueError(f"unknown card type {t!r}; known: {', '.join(CARD_NAMES)}")
        return TYPE_INDEX[t]
    if _is_int(t) and 0 <= int(t) < len(CARDS):
        return int(t)
    raise ValueError(f"a card type is an index 0..{len(CARDS) - 1} or a name, not {t!r}")


class DrachenSchattenGame:
    """One game of DrachenSchatten for 2 to 4 players (D2), seats ``0..n-1`` clockwise.

    All randomness comes from one ``numpy.random.Generator`` seeded with ``seed`` (a fresh seed is
    drawn and kept in ``seed`` and the record when ``None``). The game is truncated (``truncated``
    and ``over`` become true, nobody wins) once ``max_steps`` options have been applied.
    """

    record_key = KIND_KEY  # the key naming each record event's kind (the engine protocol, dragonstones_env.core)

    def __init__(self, num_players: int = 2, seed: int | None = None, max_steps: int = DEFAULT_MAX_STEPS):
        if not _is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(
                f"DrachenSchatten is for {MIN_PLAYERS} to {MAX_PLAYERS} players (D2), not {num_players!r}"
            )
        max_steps = check_bound("max_steps", max_steps)  # records' start events come here too
        if seed is None:
            seed = int(np.random.SeedSequence().entropy)
        self.seed: int = check_seed(seed)
        self.num_players: int = int(num_players)
        self.max_steps: int = int(max_steps)
        self._rng: np.random.Generator = np.random.default_rng(self.seed)
        self.record: list[dict[str, Any]] = [
            {"event": "start", "game": GAME, "version": RECORD_VERSION, "seed": self.seed,
             "num_players": self.num_players, "max_steps": self.max_steps}
        ]
        # Hidden: stack contents, bottom first (top = last). Only engine internals read them.
        self._stacks: list[list[int]] = self._deal(VILLAGE_IDS) + self._deal(CAVES_IDS)
        self._collections: list[list[int]] = [[] for _ in range(self.num_players)]
        self._ready: list[bool] = [False] * NUM_CARDS  # per physical card; meaningful for objects in play
        self._removed: list[int] = []
        self._memories: list[dict[int, int]] = [{} for _ in range(self.num_players)]  # D4: stack -> card id
        self.first_player: int = int(self._rng.integers(self.num_players))  # D2
        self.current_player: int = 0
        self.turn: int = 0  # 0 during the opening picks, then 1, 2, ...
        self.turned_over: bool = False  # the mandatory turn-over of this turn is done (D3)
        # Public: how often the active player used each card type's objects this turn (D4: a key may
        # restore another key for ever; the observation shows this so such a loop can be told apart)
        self.turn_uses: list[int] = [0] * len(CARDS)
        self.steps: int = 0  # options applied through apply()
        self._phase: str = "pick"
        self._pick_seat: int = 0
        self._view: dict[str, Any] | None = None  # {"card": type, "left": n, "seen": [stacks]}
        self._battle: int | None = None  # the beast's card id while a protect decision is open
        self._forfeits: list[int] = []  # seats still to forfeit after a decay, in order
        self._decay_card: int | None = None
        self.over: bool = False
        self.truncated: bool = False
        self.winners: list[int] = []
        self.end_reason: str | None = None
        self.record.append({"event": "setup", "first_player": self.first_player})

    def _deal(self, ids: Sequence[int]) -> list[list[int]]:
        """D2: shuffle one deck into 8 stacks of (roughly) equal height."""
        order = [int(i) for i in self._rng.permutation(np.asarray(ids))]
        return [order[k::8] for k in range(8)]

    # ------------------------------------------------------------------ protocol

    @property
    def decision(self) -> Decision | None:
        """Who must decide now and what kind of decision it is; ``None`` once the game is over."""
        if self.over:
            return None
        if self._phase == "pick":
            return Decision("pick", self._pick_seat)
        if self._phase == "view":
            return Decision("view", self.current_player, CARD_NAMES[self._view["card"]])
        if self._phase == "protect":
            return Decision("protect", self.current_player, CARD_NAMES[CARD_TYPE_OF_ID[self._battle]])
        if self._phase == "forfeit":
            return Decision("forfeit", self._forfeits[0], CARD_NAMES[self._decay_card])
        return Decision("turn", self.current_player)

    @property
    def terminated(self) -> bool:
        """The game ended by its rules (D6, D7), not by truncation."""
        return self.over and not self.truncated

    def legal_options(self) -> list[Option]:
        """Every legal option at the current decision, in a fixed order; empty once over."""
        if self.over:
            return []
        p = self.current_player
        if self._phase == "pick":
            return [("pick", s) for s in VILLAGE_STACKS if self._stacks[s]]
        if self._phase == "view":
            opts: list[Option] = [
                ("view", s) for s in range(NUM_STACKS) if self._stacks[s] and s not in self._view["seen"]
            ]
            return [*opts, ("stop_view",)] if self._view["seen"] else opts
        if self._phase == "protect":
            beast = CARDS[CARD_TYPE_OF_ID[self._battle]].beast
            return [("protect", t) for t in self._types(p, ready=True) if t in PROTECTS[beast]]
        if self._phase == "forfeit":
            return [("forfeit", t) for t in self._types(self._forfeits[0], ready=False)]
        opts = [] if self.turned_over else [("turn_over", s) for s in range(NUM_STACKS) if self._stacks[s]]
        for t in self._types(p, ready=True):
            opts.extend(self._use_options(p, t))
        if self.turned_over or not any(self._stacks):
            # D3/D7: with every stack empty the mandatory turn-over cannot be done; the turn may end.
            opts.append(("end_turn",))
        return opts

    def is_legal(self, option: Any) -> bool:
        """Whether ``option`` is legal at the current decision."""
        try:
            return self._canonical(option) is not None
        except TypeError:
            return False

    def apply(self, option: Any) -> None:
        """Apply one legal option and advance to the next decision.

        Raises :class:`IllegalOptionError` (a ``ValueError``) without changing anything if the
        option is not legal now.
        """
        try:
            opt = self._canonical(option)
        except TypeError as err:
            raise IllegalOptionError(self.decision, option, self.legal_options(), str(err)) from None
        if opt is None:
            raise IllegalOptionError(self.decision, option, self.legal_options(), self._why(option))
        self.steps += 1
        self._apply(opt, "option")
        self._settle()

    def memory(self, viewer: int) -> dict[int, int]:
        """D4: the cards ``viewer`` has seen with a torch and that are still on their stack.

        Returns ``{stack: card_type}``; a viewed card stays the top of its stack until it leaves.
        """
        self._check_seat(viewer)
        return {s: CARD_TYPE_OF_ID[cid] for s, cid in sorted(self._memories[viewer].items())}

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable public snapshot: stack sizes only, never stack contents."""
        d = self.decision
        return {
            "game": "drachenschatten",
            "num_players": self.num_players,
            "turn": self.turn,
            "steps": self.steps,
            "current_player": self.current_player,
            "first_player": self.first_player,
            "decision": None if d is None else {"kind": d.kind, "player": d.player, "card": d.card},
            "turned_over": self.turned_over,
            "stacks": [len(s) for s in self._stacks],
            "players": [self._player_dict(q) for q in range(self.num_players)],
            "removed": len(self._removed),
            "removed_cards": sorted(CARD_TYPE_OF_ID[c] for c in self._removed),
            "view": None if self._view is None else {
                "card": self._view["card"], "left": self._view["left"], "seen": list(self._view["seen"])},
            "battle": None if self._battle is None else CARD_TYPE_OF_ID[self._battle],
            "forfeits": list(self._forfeits),
            "winners": list(self.winners),
            "over": self.over,
            "truncated": self.truncated,
            "end_reason": self.end_reason,
        }

    def debug_state(self) -> dict[str, Any]:
        """state_dict plus hidden information (stack contents, torch memories): tests and debugging only."""
        d = self.state_dict()
        d["stack_cards"] = [[CARD_TYPE_OF_ID[c] for c in reversed(s)] for s in self._stacks]  # top first
        d["memories"] = [{str(s): t for s, t in self.memory(q).items()} for q in range(self.num_players)]
        return d

    def clone(self) -> DrachenSchattenGame:
        """An independent copy that continues identically."""
        return copy.deepcopy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> DrachenSchattenGame:
        """The protocol's deep copy, written out: the search copies the game at every simulation, and
        the generic walk over some 260 small objects was an eighth of its time. The record and the
        generator go through ``memo``, so a caller may replace them (the sampler gives an empty record);
        every other attribute holding a container is copied here (tests/test_ds_properties.py checks
        that the copy shares no mutable object with the original)."""
        g = copy.copy(self)
        memo[id(self)] = g
        g.record = copy.deepcopy(self.record, memo)
        g._rng = copy.deepcopy(self._rng, memo)
        g._stacks = [list(s) for s in self._stacks]
        g._collections = [list(c) for c in self._collections]
        g._ready = list(self._ready)
        g._removed = list(self._removed)
        g._memories = [dict(m) for m in self._memories]
        g.turn_uses = list(self.turn_uses)
        g._view = None if self._view is None else {**self._view, "seen": list(self._view["seen"])}
        g._forfeits = list(self._forfeits)
        g.winners = list(self.winners)
        return g

    # ------------------------------------------------------------------ test-only setup

    def arrange(
        self,
        stacks: Sequence[Sequence[Any]] | None = None,
        collections: Sequence[Sequence[Any]] | None = None,
        current_player: int = 0,
        turned_over: bool = False,
    ) -> None:
        """TEST-ONLY: put the game at the start of ``current_player``'s turn with the given cards.

        ``stacks``: 16 lists of card types (index or name), TOP CARD FIRST; ``collections``: one
        list per seat of card types or ``(card_type, ready)`` pairs (objects default to ready).
        Every card not placed is out of the game. Memories, pending decisions and winners are
        cleared; the arrangement is recorded, so :func:`replay` reproduces it. The D6 check runs
        at once. With every stack empty the game is in the D7 end phase of ``current_player``'s
        turn, as if he had just turned over the last card: D7 is scored when that turn ends.
        """
        self._check_seat(current_player)
        stacks = [[] for _ in range(NUM_STACKS)] if stacks is None else stacks
        collections = [[] for _ in range(self.num_players)] if collections is None else collections
        if len(stacks) != NUM_STACKS or len(collections) != self.num_players:
            raise ValueError(f"arrange needs {NUM_STACKS} stacks and {self.num_players} collections")
        pool = {t: [i for i in range(NUM_CARDS) if CARD_TYPE_OF_ID[i] == t] for t in range(len(CARDS))}

        def take(t: Any) -> int:
            ti = _type_index(t)
            if not pool[ti]:
                raise ValueError(
                    f"arrange uses more {CARD_NAMES[ti]!r} cards than the {CARDS[ti].count} there are")
            return pool[ti].pop(0)

        norm_stacks = [[_type_index(t) for t in s] for s in stacks]
        norm_colls: list[list[list[Any]]] = []
        for coll in collections:
            entries = []
            for e in coll:
                t, ready = (e[0], bool(e[1])) if isinstance(e, (tuple, list)) else (e, True)
                ti = _type_index(t)
                entries.append([ti, ready and CARDS[ti].category == "object"])
            norm_colls.append(entries)
        new_stacks = [[take(t) for t in reversed(s)] for s in norm_stacks]
        new_colls = [[take(t) for t, _ in coll] for coll in norm_colls]
        self._stacks = new_stacks
        self._collections = new_colls
        self._ready = [False] * NUM_CARDS
        for coll, entries in zip(new_colls, norm_colls, strict=True):
            for cid, (_, ready) in zip(coll, entries, strict=True):
                self._ready[cid] = ready
        self._removed = sorted(i for t in pool for i in pool[t])
        self._memories = [{} for _ in range(self.num_players)]
        self.current_player = int(current_player)
        self.turn = max(self.turn, 1)
        self.turned_over = bool(turned_over)
        self.turn_uses = [0] * len(CARDS)
        self._phase, self._view, self._battle, self._forfeits, self._decay_card = "turn", None, None, [], None
        self.over, self.truncated, self.winners, self.end_reason = False, False, [], None
        self.record.append({"event": "arrange", "args": {
            "stacks": norm_stacks, "collections": norm_colls,
            "current_player": self.current_player, "turned_over": self.turned_over}})
        self._check_end()

    # ------------------------------------------------------------------ option plumbing

    def _canonical(self, option: Any) -> Option | None:
        """The legal option equal to ``option`` (so records hold plain ints), or None."""
        opt = as_option(option)
        for x in opt:
            if not (isinstance(x, str) or _is_int(x)):
                return None
        for legal in self.legal_options():
            if legal == opt:
                return legal
        return None

    def _why(self, option: Any) -> str:
        """A short reason for an illegal option, for the error message."""
        if self.over:
            return "the game is over"
        try:
            kind = as_option(option)[0] if len(as_option(option)) else None
        except TypeError:
            return "an option is a tuple"
        if self._phase == "turn" and kind == "end_turn" and not self.turned_over:
            return "the mandatory turn-over comes first (D3)"
        if self._phase == "turn" and kind == "turn_over" and self.turned_over:
            return "the one mandatory turn-over is done this turn (D3); more need a turn-over object (D4)"
        if self._phase == "protect" and kind == "use":
            return "in a battle only a protecting object may be used; no restore (D5)"
        if self._phase == "turn" and kind == "use" and not any(self._stacks):
            return "every stack is empty: only ready objects that need no stack may be used (D7)"
        kinds = sorted({o[0] for o in self.legal_options()})
        if kind not in kinds:
            return f"no {kind!r} option at this decision (allowed kinds: {', '.join(kinds)})"
        return "no such target"

    def _apply(self, opt: Option, how: str) -> None:
        d = self.decision
        self.record.append({"event": how, "player": d.player, "decision": d.kind, "option": list(opt)})
        kind = opt[0]
        if kind == "pick":
            self._do_pick(opt[1])
        elif kind == "turn_over":
            self.turned_over = True
            self._turn_over(opt[1], None)
        elif kind == "use":
            self._use(opt[1], opt[2:])
        elif kind == "end_turn":
            self._end_turn()
        elif kind == "view":
            self._do_view(opt[1])
        elif kind == "stop_view":
            self._end_view()
        elif kind == "protect":
            self._do_protect(opt[1])
        elif kind == "forfeit":
            self._do_forfeit(opt[1])
        else:  # pragma: no cover - legal_options never offers another kind
            raise AssertionError(opt)

    def _settle(self) -> None:
        """Auto-apply single-option protect/forfeit decisions; truncate after max_steps."""
        while not self.over and self._phase in ("protect", "forfeit"):
            opts = self.legal_options()
            if len(opts) != 1:
                break
            self._apply(opts[0], "auto")
        if not self.over and self.steps >= self.max_steps:
            self.over, self.truncated, self.end_reason = True, True, "truncated"
            self._phase = "over"
            self.record.append({"event": "end", "reason": "truncated", "winners": []})

    # ------------------------------------------------------------------ helpers

    def _check_seat(self, seat: Any) -> None:
        if not _is_int(seat) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be 0..{self.num_players - 1}, not {seat!r}")

    def _objects(self, p: int, ready: bool) -> list[int]:
        """Ids of p's ready (or used) objects."""
        return [c for c in self._collections[p]
                if CARDS[CARD_TYPE_OF_ID[c]].category == "object" and self._ready[c] == ready]

    def _types(self, p: int, ready: bool) -> list[int]:
        """Sorted distinct types of p's ready (or used) objects."""
        return sorted({CARD_TYPE_OF_ID[c] for c in self._objects(p, ready)})

    def _find(self, p: int, t: int, ready: bool, exclude: int | None = None) -> int:
        """Lowest id of a ready (used) object of type t in p's collection: the types are interchangeable."""
        return min(c for c in self._objects(p, ready) if CARD_TYPE_OF_ID[c] == t and c != exclude)

    def _others(self, p: int) -> list[int]:
        """The other seats, clockwise from p's left."""
        return [(p + k) % self.num_players for k in range(1, self.num_players)]

    def _count(self, p: int, category: str) -> int:
        return sum(CARDS[CARD_TYPE_OF_ID[c]].category == category for c in self._collections[p])

    def _player_dict(self, q: int) -> dict[str, Any]:
        coll = self._collections[q]
        return {
            "seat": q,
            "collection": [
                {"type": CARD_TYPE_OF_ID[c], "name": CARD_NAMES[CARD_TYPE_OF_ID[c]],
                 "category": CARDS[CARD_TYPE_OF_ID[c]].category, "ready": self._ready[c]}
                for c in coll
            ],
            "cards": len(coll),
            "objects": self._count(q, "object"),
            "beasts": self._count(q, "beast"),
            "treasures": self._count(q, "treasure"),
            "kinds": len({CARDS[CARD_TYPE_OF_ID[c]].kind for c in coll if CARDS[CARD_TYPE_OF_ID[c]].kind}),
        }

    def _take_top(self, s: int) -> int:
        """Remove the top card of stack s; every torch memory of it lapses (D4)."""
        cid = self._stacks[s].pop()
        for mem in self._memories:
            mem.pop(s, None)
        return cid

    def _gain(self, p: int, cid: int, ready: bool) -> None:
        self._collections[p].append(cid)
        self._ready[cid] = ready and CARDS[CARD_TYPE_OF_ID[cid]].category == "object"

    def _lose(self, p: int, cid: int) -> None:
        self._collections[p].remove(cid)
        self._ready[cid] = False

    def _event(self, **kw: Any) -> None:
        self.record.append(kw)

    # ------------------------------------------------------------------ setup and turns

    def _do_pick(self, s: int) -> None:
        """D2: the opening pick of a village card, face up into the collection."""
        p = self._pick_seat
        cid = self._take_top(s)
        # Unsettled: D1's village holds objects only; with a replacement table a picked beast or
        # treasure is simply laid down (the rulebook says "draw one card ... lay it down"), no battle.
        self._gain(p, cid, True)
        self._event(event="pick", player=p, stack=s, card=CARD_TYPE_OF_ID[cid])
        self._check_end()
        if self.over:
            return
        if self._pick_seat + 1 < self.num_players:
            self._pick_seat += 1
        else:
            self._start_turn(self.first_player)

    def _start_turn(self, p: int) -> None:
        self.current_player = p
        self.turn += 1
        self.turned_over = False
        self.turn_uses = [0] * len(CARDS)
        self._phase = "turn"
        self._event(event="turn", turn=self.turn, player=p)

    def _next_turn(self) -> None:
        """D3: play passes clockwise."""
        self._start_turn((self.current_player + 1) % self.num_players)

    def _turn_over(self, s: int, by: int | None) -> None:
        """Turn over the top card of stack s (the mandatory action, or an object's, D3/D4)."""
        p = self.current_player
        cid = self._take_top(s)
        t = CARDS[CARD_TYPE_OF_ID[cid]]
        self._event(event="turn_over", player=p, stack=s, card=t.index, name=t.name, by=by)
        if t.category == "beast":
            self._start_battle(p, cid)
            return
        self._gain(p, cid, True)  # objects are ready at once; treasures are collected
        self._check_end()

    # ------------------------------------------------------------------ battle (D5)

    def _start_battle(self, p: int, beast: int) -> None:
        """D5: a battle starts at once; with a protecting object ready the player must use one."""
        protectors = PROTECTS[CARDS[CARD_TYPE_OF_ID[beast]].beast]
        if any(CARD_TYPE_OF_ID[c] in protectors for c in self._objects(p, ready=True)):
            # The rulebook lays every turned-over card in the collection; the beast waits there
            # (so the 64 cards stay accounted for) until the protect decision, which cannot fail.
            self._gain(p, beast, False)
            self._battle = beast
            self._phase = "protect"
            return
        lost = [CARD_TYPE_OF_ID[c] for c in self._collections[p]]
        self._removed.extend([*self._collections[p], beast])
        for c in self._collections[p]:
            self._ready[c] = False
        self._collections[p] = []
        self._event(event="battle", player=p, beast=CARD_TYPE_OF_ID[beast], won=False, protect=None,
                    lost=lost)
        self._check_end()
        if not self.over:
            self._end_turn()  # D3/D5: a lost battle ends the turn (and D7 is scored if it was the last card)

    def _do_protect(self, t: int) -> None:
        p = self.current_player
        cid = self._find(p, t, ready=True)
        self._ready[cid] = False
        beast, self._battle = self._battle, None
        self._phase = "turn"
        self._event(event="battle", player=p, beast=CARD_TYPE_OF_ID[beast], won=True, protect=t, lost=[])
        self._check_end()

    # ------------------------------------------------------------------ objects (D4)

    def _use_options(self, p: int, t: int) -> list[Option]:
        """Every full ``use`` option of p's ready object type t."""
        action = CARDS[t].action
        others = self._others(p)
        if action in ("view-1", "view-2", "view-3"):
            # D7: a torch needs a stack to look at; once every stack is empty it cannot be used.
            return [("use", t)] if any(self._stacks) else []
        if action == "decay":
            return [("use", t)]
        if action == "turn-over":
            return [("use", t, s) for s in range(NUM_STACKS) if self._stacks[s]]
        if action == "trade":
            own = sorted({*self._types(p, ready=False), t})  # the trading card itself may be traded (D4)
            return [("use", t, o, q, u) for q in others for u in self._types(q, ready=False) for o in own]
        if action in ("steal", "destroy"):
            return [("use", t, q, u) for q in others for u in self._types(q, ready=False)]
        if action == "restore":
            # Any used key is another card than the ready key being used, so it may be restored (D4).
            return [("use", t, o) for o in self._types(p, ready=False)]
        # Unsettled: protect-dragon/protect-hydra objects act only in a battle (D5); the rulebook
        # defines their action only there, so they cannot be "used" (and so turned used) otherwise.
        return []

    def _use(self, t: int, target: tuple) -> None:
        """D4: using an object makes it used, then its action happens."""
        p = self.current_player
        cid = self._find(p, t, ready=True)
        self._ready[cid] = False
        self.turn_uses[t] += 1
        getattr(self, _USE_METHODS[CARDS[t].action])(p, cid, *target)

    def _use_torch(self, p: int, cid: int) -> None:
        """View-N: look at up to N top cards of distinct stacks, one ``view`` decision each."""
        t = CARD_TYPE_OF_ID[cid]
        self._view = {"card": t, "left": CARDS[t].view, "seen": []}
        self._phase = "view"
        self._event(event="use", player=p, card=t, action=CARDS[t].action)

    def _do_view(self, s: int) -> None:
        p = self.current_player
        top = self._stacks[s][-1]
        self._memories[p][s] = top  # D4: remembered until the card leaves its stack
        self._view["seen"].append(s)
        self._view["left"] -= 1
        self._event(event="view", player=p, stack=s, card=CARD_TYPE_OF_ID[top])  # the record is omniscient
        if self._view["left"] == 0 or not any(
            self._stacks[x] and x not in self._view["seen"] for x in range(NUM_STACKS)
        ):
            self._end_view()

    def _end_view(self) -> None:
        self._view = None
        self._phase = "turn"

    def _use_turn_over(self, p: int, cid: int, s: int) -> None:
        """Boots / wand: an extra turn-over, with battles; not the mandatory one (D4)."""
        t = CARD_TYPE_OF_ID[cid]
        self._event(event="use", player=p, card=t, action="turn-over", stack=s)
        self._turn_over(s, t)

    def _use_trade(self, p: int, cid: int, own: int, q: int, theirs: int) -> None:
        """Swap one of p's used objects (maybe this card) for q's used object; both stay used (D4)."""
        mine = cid if CARD_TYPE_OF_ID[cid] == own else self._find(p, own, ready=False)
        other = self._find(q, theirs, ready=False)
        self._lose(p, mine)
        self._lose(q, other)
        self._gain(p, other, False)
        self._gain(q, mine, False)
        self._event(event="use", player=p, card=CARD_TYPE_OF_ID[cid], action="trade",
                    gave=own, other=q, got=theirs)
        self._check_end()  # D6: a trade may complete seven kinds for both players

    def _use_steal(self, p: int, cid: int, q: int, theirs: int) -> None:
        """Take q's used object, still used (D4)."""
        other = self._find(q, theirs, ready=False)
        self._lose(q, other)
        self._gain(p, other, False)
        self._event(event="use", player=p, card=CARD_TYPE_OF_ID[cid], action="steal", other=q, got=theirs)
        self._check_end()

    def _use_destroy(self, p: int, cid: int, q: int, theirs: int) -> None:
        """Remove q's used object from the game (D4)."""
        other = self._find(q, theirs, ready=False)
        self._lose(q, other)
        self._removed.append(other)
        self._event(event="use", player=p, card=CARD_TYPE_OF_ID[cid], action="destroy", other=q,
                    target=theirs)
        self._check_end()

    def _use_decay(self, p: int, cid: int) -> None:
        """Every other player with a used object forfeits one of his choice (D4)."""
        # Unsettled: the rulebook gives no order; the others decide one after the other, clockwise
        # from the active player's left (the choices cannot interact: each loses only his own card).
        self._forfeits = [q for q in self._others(p) if self._objects(q, ready=False)]
        self._decay_card = CARD_TYPE_OF_ID[cid]
        self._event(event="use", player=p, card=self._decay_card, action="decay",
                    forfeits=list(self._forfeits))
        self._phase = "forfeit" if self._forfeits else "turn"

    def _do_forfeit(self, t: int) -> None:
        q = self._forfeits.pop(0)
        cid = self._find(q, t, ready=False)
        self._lose(q, cid)
        self._removed.append(cid)
        self._event(event="forfeit", player=q, card=t)
        if not self._forfeits:
            self._decay_card = None
            self._phase = "turn"

    def _use_restore(self, p: int, cid: int, own: int) -> None:
        """Key: make one of p's used objects ready again; never the key itself (D4)."""
        target = self._find(p, own, ready=False, exclude=cid)
        self._ready[target] = True
        self._event(event="use", player=p, card=CARD_TYPE_OF_ID[cid], action="restore", target=own)

    # ------------------------------------------------------------------ end (D6, D7)

    def _win_reasons(self, q: int) -> list[str]:
        coll = [CARDS[CARD_TYPE_OF_ID[c]] for c in self._collections[q]]
        reasons = []
        if len({c.kind for c in coll if c.kind}) >= 7:
            reasons.append("seven_kinds")
        if sum(c.category == "beast" for c in coll) >= 3:
            reasons.append("three_beasts")
        if sum(c.category == "treasure" for c in coll) >= 3:
            reasons.append("three_treasures")
        return reasons

    def _check_end(self) -> None:
        """D6 at once for every player, also in the D7 end phase after the last card (D7)."""
        reasons = {q: r for q in range(self.num_players) if (r := self._win_reasons(q))}
        if reasons:
            kinds = sorted({x for r in reasons.values() for x in r}, key=WIN_REASONS.index)
            self._finish(sorted(reasons), "+".join(kinds))

    def _end_turn(self) -> None:
        """D3: the turn ends (the player ends it, or loses a battle, D5); D7 is scored if no card is left.

        D7 is not immediate: the player who turned over the last card resolves its battle and may
        still use ready objects that need no stack (D3 "before and/or after" the turn-over) until
        his turn ends here; a D6 win in that time has already ended the game (:meth:`_check_end`).
        Players tied for most cards (objects, beasts, treasures) all win, even at zero cards.
        """
        if any(self._stacks):
            self._next_turn()
            return
        counts = [len(c) for c in self._collections]
        self._finish([q for q in range(self.num_players) if counts[q] == max(counts)], "stacks_empty")

    def _finish(self, winners: list[int], reason: str) -> None:
        self.over, self.winners, self.end_reason = True, winners, reason
        self._phase = "over"
        self._view, self._battle, self._forfeits, self._decay_card = None, None, [], None
        self._event(event="end", reason=reason, winners=list(winners))


GAME = "drachenschatten"  # the registry id, which records name in their start event (__init__.py's SPEC)


def upgrade_v1(record: list) -> list:
    """A version-1 record as version 2's (:mod:`dragonstones_env.core.records`): its start event
    gains the version; DrachenSchatten's events already had today's names."""
    start = record[0]
    if start.get(KIND_KEY) != "start" or start.get("game") != GAME:
        raise ReplayError(0, "a DrachenSchatten start event ('event': 'start', 'game': 'drachenschatten')", start,
                          "this is not a DrachenSchatten record")
    return [start_v2(start, GAME), *record[1:]]


UPGRADES = {1: upgrade_v1}


def read(record: list) -> list:
    """A record of this game, of any version, in today's format (:func:`~dragonstones_env.core.records.read_record`)."""
    return read_record(record, GAME, UPGRADES)


def replay(record: Sequence[dict[str, Any]], *, test_events: bool = False) -> DrachenSchattenGame:
    """Rebuild a game from its record, checking every event against what the engine produces.

    The record is re-simulated from its ``start`` event by applying its ``option`` events in
    order; every event must be the one the engine produces at that position. Accepted: a complete
    record, or the record of a game in progress (it ends right before a pending decision).
    Anything else raises :class:`~dragonstones_env.core.ReplayError` (a ``ValueError``) naming the
    first event that differs (index, expected, found). The test-only ``arrange`` events (set by
    :meth:`DrachenSchattenGame.arrange`, which puts any cards anywhere) replay only with
    ``test_events=True``, which only the tests pass: a forged arrangement is no game (issue #30).
    """

    def new_game(start: dict[str, Any]) -> DrachenSchattenGame:
        extra = sorted(map(str, set(start) - {KIND_KEY, "game", "version", "seed", "num_players", "max_steps"}))
        if extra:
            raise ValueError(f"unknown start field(s) {extra}"[:300])
        return DrachenSchattenGame(start["num_players"], seed=start["seed"], max_steps=start["max_steps"])

    def arrange(game: DrachenSchattenGame, event: dict[str, Any]) -> None:
        args = event["args"]
        if not isinstance(args, dict):
            raise TypeError(f"arrange args are a mapping, not {type(args).__name__}")
        game.arrange(**args)

    return verify_replay(read(record), KIND_KEY, new_game, {"option": lambda game, event: game.apply(event["option"])},
                         test_inputs={"arrange": arrange}, allow_test_events=test_events)
