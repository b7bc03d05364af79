"""A rule-based DrachenSchatten player that acts from the AEC observation dict only.

It never reads the engine: :func:`read` turns the game's ``decode(obs)``
(:func:`dragonstones_env.games.drachenschatten.observation.decode`) into a :class:`Table` of counts
(:func:`observe` builds the same one through the game's fast ``observation.reader``), and every
decision is made from those (rulebook ``seeds/002_868a28ab297ac500.txt``, rulings D1-D7 in
``shared/RULINGS.md``). The numbers it plays by are the constants under "values";
each decision kind has its scorer in :data:`SCORERS`.

How it plays:

* **Value of a collection.** :func:`potential` scores a player's collection: convex in the number
  of distinct object kinds, treasures and beasts (a win, D6, is worth :data:`WIN`), plus ready
  protection against dragons and hydras (what makes the caves safe, D5), a little per card (D7),
  a little per ready object still to use, minus a little per *used* object that is the only one
  of its kind (only used objects can be traded, stolen, destroyed or decayed away, D4).
* **Turning over.** Every stack is valued by the expected change of that score: a stack the bot
  remembers (its own torch memory) by its known top card, any other by the distribution of the
  cards nobody has seen, per deck (D1: beasts and treasures are in the caves only). A beast it
  cannot fight costs the whole collection, so without ready protection it keeps to the village
  once it has something to lose, never turns over a remembered beast it cannot fight, and goes
  for remembered treasures, beasts it can slay and new object kinds. The mandatory turn-over
  takes the best stack; boots and wands turn over more only while that is worth more than the
  boots kept ready (which "ends the turn when further play is risky").
* **Torches** are used when the value of the information (the expected gain of being able to
  pick a better stack) beats keeping the torch ready; they look at unknown stacks of the deck
  where looking pays most.
* **Trade, steal, destroy, decay, restore** are each simulated on both collections and used when
  ``my gain - beta x the opponents' gain`` is positive: gaining a missing kind, taking or
  destroying an opponent's only object of a kind (most of all when he is close to seven), keys
  restoring protection first. A decay is valued with every opponent forfeiting his least useful
  used object.
* **Battles and decays.** It protects with the object whose loss of readiness costs least, and
  forfeits the used object whose loss costs least (a duplicate kind before a unique one).

Equally good actions are broken by the bot's seeded ``numpy`` generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dragonstones_env.games.drachenschatten import actions as A
from dragonstones_env.games.drachenschatten.cards import CARDS, NUM_CARD_TYPES, OBJECT_KINDS, PROTECTS
from dragonstones_env.games.drachenschatten.observation import LAYOUT, reader
from dragonstones_env.games.drachenschatten.rules import NUM_STACKS, VILLAGE_STACKS
from dragonstones_env.policies.base import Policy

# ---------------------------------------------------------------------------- card data (D1)
_T = NUM_CARD_TYPES
_IS_OBJECT = tuple(c.category == "object" for c in CARDS)
_COUNT = np.array([c.count for c in CARDS], np.float64)
_VILLAGE_SHARE = np.array([c.village / c.count for c in CARDS])
_PROTECTORS = {beast: tuple(types) for beast, types in PROTECTS.items()}
_BEAST_OF = tuple(c.beast for c in CARDS)
_TURN_OVER_TYPES = tuple(c.index for c in CARDS if c.action == "turn-over")

# ---------------------------------------------------------------------------- values
WIN = 40.0
KIND_V = (0.0, 1.5, 3.0, 4.5, 6.5, 9.5, 14.0)  # by distinct object kinds (7 wins)
TREASURE_V = (0.0, 4.0, 10.0)  # by treasures (3 win)
BEAST_V = (0.0, 3.5, 9.0)  # by beasts (3 win)
DRAGON_GUARD = (0.0, 2.5, 3.2)  # by ready protect-dragon objects (0, 1, 2+)
HYDRA_GUARD = (0.0, 1.2, 1.5)  # by ready protect-hydra objects
CARD_V = 0.15  # per card (D7 counts cards)
EXPOSED = 0.4  # per used object that is its kind's only card
_READY_BY_ACTION = {"turn-over": 0.5, "view-1": 0.3, "view-2": 0.4, "view-3": 0.5, "trade": 0.4, "steal": 0.4,
                    "destroy": 0.3, "decay": 0.3, "restore": 0.3}
_READY_V = tuple(_READY_BY_ACTION.get(c.action, 0.0) for c in CARDS)
USE_THRESHOLD = 0.05  # an optional object is used only for more than this
INFO_LATER = 0.5  # what a torch memory is worth on later turns, relative to this turn's use


_KIND_OF = tuple(OBJECT_KINDS.index(c.kind) if c.kind is not None else -1 for c in CARDS)
_IS_BEAST = tuple(c.category == "beast" for c in CARDS)
_DRAGON_GUARDS = frozenset(PROTECTS["dragon"])
_HYDRA_GUARDS = frozenset(PROTECTS["hydra"])
_KIND_SLOT = tuple(k if k >= 0 else len(OBJECT_KINDS) for k in _KIND_OF)
_GUARD = tuple(1 if t in _DRAGON_GUARDS else 2 if t in _HYDRA_GUARDS else 0 for t in range(_T))  # 1 dragon, 2 hydra
_TYPES = range(_T)


_DELTAS: dict[tuple[int, ...], np.ndarray] = {}  # _Evaluator.deltas() by the viewer's collection
_POTENTIALS: dict[tuple[int, ...], float] = {}  # potential() by collection: the bot values the same few again and again


def potential(ready: list[int], other: list[int]) -> float:
    """How good a collection is: ``ready`` objects and ``other`` cards (used objects, beasts, treasures),
    each a count per card type."""
    # Every decision values the collection after each card type it could turn over, and the
    # collections change a card at a time: most are valued again decisions later. A pure
    # function of the counts, so the cache changes no decision; bounded, as a long run meets many.
    key = (*ready, *other)
    v = _POTENTIALS.get(key)
    if v is None:
        if len(_POTENTIALS) >= 200_000:
            _POTENTIALS.clear()
        v = _POTENTIALS[key] = _potential(ready, other)
    return v


def _potential(ready: list[int], other: list[int]) -> float:
    # Per-kind lists and per-type tuples, not dicts and set look-ups: the same sums in the same
    # order as before, at a fraction of the cost.
    per_kind = [0] * (len(OBJECT_KINDS) + 1)  # the last slot: anything not an object held ready
    used_per_kind = [0] * len(OBJECT_KINDS)
    beasts = treasures = dragon = hydra = cards = 0
    ready_v = 0.0
    for t in _TYPES:
        c = ready[t]
        if c:
            per_kind[_KIND_SLOT[t]] += c
            cards += c
            ready_v += _READY_V[t] * c
            guard = _GUARD[t]
            if guard == 1:
                dragon += c
            elif guard == 2:
                hydra += c
    for t in _TYPES:
        c = other[t]
        if c:
            cards += c
            k = _KIND_OF[t]
            if k >= 0:
                per_kind[k] += c
                used_per_kind[k] += c
            elif _IS_BEAST[t]:
                beasts += c
            else:
                treasures += c
    kinds = len(per_kind) - per_kind.count(0)
    if kinds >= 7 or beasts >= 3 or treasures >= 3:  # D6
        return WIN
    exposed = sum(1 for u, c in zip(used_per_kind, per_kind, strict=False) if u == 1 and c == 1)  # not the last slot
    return (KIND_V[kinds] + TREASURE_V[treasures] + BEAST_V[beasts] + DRAGON_GUARD[min(2, dragon)]
            + HYDRA_GUARD[min(2, hydra)] + CARD_V * cards - EXPOSED * exposed + ready_v)


# ---------------------------------------------------------------------------- reading the observation
@dataclass
class Table:
    """The observation turned back into counts; seat 0 is the viewer, seats are relative."""

    n: int
    decision: str | None
    card: int | None  # the card type the decision is about
    turned_over: bool
    view_left: int
    stacks: np.ndarray  # (16,) cards left per stack
    ready: np.ndarray  # (n, T) ready objects per seat and type
    other: np.ndarray  # (n, T) used objects, beasts, treasures
    removed: np.ndarray  # (T,) cards out of the game
    memory: list[int | None]  # the top card type of each stack the viewer remembers


# The pieces read() uses: the bot decodes only these (not the seats' totals, the turn, who acts).
PIECES = ("seat_present", "decision", "card", "turned_over", "view_left", "stacks", "removed_cards", "collection",
          "memory")


def read(d: dict[str, Any]) -> Table:
    """The :class:`Table` of a decoded observation (``d = decode(obs)`` or ``decode(obs, PIECES)``)."""
    n = int(d["seat_present"].sum())
    coll = d["collection"]
    return Table(
        n=n,
        decision=None if d["decision"] == "none" else d["decision"],
        card=d["card"],
        turned_over=bool(d["turned_over"][0]),
        view_left=int(d["view_left"][0]),
        stacks=d["stacks"].astype(np.int64),
        ready=coll["ready"][:n].astype(np.int64),
        other=coll["other"][:n].astype(np.int64),
        removed=d["removed_cards"].astype(np.int64),
        memory=d["memory"],
    )


_SMALL = ("seat_present", "decision", "card", "turned_over", "view_left")
_ARRAYS = ("stacks", "removed_cards", "collection", "memory")
assert set(_SMALL + _ARRAYS) == set(PIECES)
_READER = reader(_SMALL, arrays=_ARRAYS)
_AT = _READER.at


def _label(values: list, name: str) -> Any:
    """A one-hot piece's label (or index), as decode reads it: the first maximum, if above 0.5."""
    width = _READER.shape[name][0]
    row = values[_AT[name] : _AT[name] + width]
    top = max(row)
    if top <= 0.5:
        return None
    labels = _READER.labels[name]
    return row.index(top) if labels is None else labels[row.index(top)]


def observe(obs: np.ndarray) -> Table:
    """``read(decode(obs, PIECES))``, field for field, through the game's fast ``observation.reader``
    (the small pieces as one list, the counts as arrays): what the bot reads at every decision."""
    v = _READER(obs)
    n = sum(v[_AT["seat_present"] : _AT["seat_present"] + _READER.shape["seat_present"][0]])
    decision = _label(v, "decision")
    coll = _READER.array(obs, "collection")
    memory = _READER.array(obs, "memory")
    hot = (memory.max(axis=1) > 0.5).tolist()
    return Table(
        n=n,
        decision=None if decision == "none" else decision,
        card=_label(v, "card"),
        turned_over=bool(v[_AT["turned_over"]]),
        view_left=int(v[_AT["view_left"]]),
        stacks=_READER.array(obs, "stacks").astype(np.int64),
        ready=coll[:n, :, 0].astype(np.int64),
        other=coll[:n, :, 1].astype(np.int64),
        removed=_READER.array(obs, "removed_cards").astype(np.int64),
        memory=[i if on else None for i, on in zip(memory.argmax(axis=1).tolist(), hot, strict=True)],
    )


# Every action as its engine option with RELATIVE seats (decoded for actor 0 at a 4-seat table).
_OPTION = tuple(A.decode(a, 0, A.MAX_SEATS) for a in range(A.NUM_ACTIONS))
_FAMILY = tuple(A.family_of(a).name for a in range(A.NUM_ACTIONS))
assert LAYOUT["memory"].shape == (NUM_STACKS, _T)


# ---------------------------------------------------------------------------- the bot
class DrachenSchattenHeuristic(Policy):
    """Rule-based DrachenSchatten bot (see the module docstring); ``act`` never returns a masked action."""

    game = "drachenschatten"  # seating it at another game's table is refused

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"DrachenSchattenHeuristic(seed={self.seed})"

    # ------------------------------------------------------------------ entry point
    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action in this observation's action_mask")
        if len(legal) == 1:
            return int(legal[0])
        tab = observe(observation["observation"])
        scores = self.scores(tab, legal)
        best = max(scores.values())
        top = [a for a, s in scores.items() if s >= best - 1e-9]
        return int(top[self.rng.integers(len(top))]) if len(top) > 1 else int(top[0])

    def scores(self, tab: Table, legal: np.ndarray) -> dict[int, float]:
        """A score for every legal action; the bot plays the highest."""
        return SCORERS.get(tab.decision, _Evaluator.turn_scores)(_Evaluator(tab), legal)


class _Evaluator:
    """The values of one decision's actions for the viewer (seat 0)."""

    def __init__(self, tab: Table):
        self.tab = tab
        self.stacks = tab.stacks.tolist()  # Python ints: read one stack at a time, many times a decision
        self.ready = [r.tolist() for r in tab.ready]
        self.other = [o.tolist() for o in tab.other]
        self.me_ready, self.me_other = self.ready[0], self.other[0]
        self.now = potential(self.me_ready, self.me_other)
        self.opp_now = [potential(self.ready[q], self.other[q]) for q in range(tab.n)]
        opp = self.opp_now[1:]
        top = max(opp) if opp else 0.0
        # How much an opponent's gain counts against the bot: all of it heads-up, more for the leader.
        self.beta = [0.0] + [1.0 if tab.n == 2 else (0.9 if v >= top else 0.5) for v in opp]
        self._deltas: np.ndarray | None = None
        self._probs: dict[bool, np.ndarray] | None = None
        self._stack_values: list[float] | None = None
        self._view_gains: dict[tuple[bool, float], float] = {}

    # ------------------------------------------------------------------ what the stacks hold
    def probs(self, village: bool) -> np.ndarray:
        """The chance of each card type under an unknown top card of the village (caves)."""
        if self._probs is None:
            tab = self.tab
            seen = tab.ready.sum(0) + tab.other.sum(0) + tab.removed
            for t in tab.memory:
                if t is not None:
                    seen[t] += 1
            unseen = np.maximum(_COUNT - seen, 0.0)
            out = {}
            for vil, share in ((True, _VILLAGE_SHARE), (False, 1.0 - _VILLAGE_SHARE)):
                w = unseen * share
                total = w.sum()
                out[vil] = w / total if total > 0 else np.zeros(_T)
            self._probs = out
        return self._probs[village]

    def deltas(self) -> np.ndarray:
        """The change of the bot's potential if it turned over a card of each type now (read only)."""
        if self._deltas is None:
            # A pure function of the bot's own collection, which changes only on its own turns: most
            # decisions meet one already valued (_DELTAS), so the cache changes no decision.
            key = (*self.me_ready, *self.me_other)
            deltas = _DELTAS.get(key)
            if deltas is None:
                if len(_DELTAS) >= 50_000:
                    _DELTAS.clear()
                deltas = _DELTAS[key] = np.array([self._after_card(t) - self.now for t in range(_T)])
                deltas.flags.writeable = False  # shared by every decision of this collection
            self._deltas = deltas
        return self._deltas

    def _after_card(self, t: int) -> float:
        ready, other = self.me_ready, self.me_other
        if _IS_OBJECT[t]:  # objects are ready at once
            return potential(_plus(ready, t), other)
        beast = _BEAST_OF[t]
        if beast is None:  # a treasure
            return potential(ready, _plus(other, t))
        best = None
        for p in _PROTECTORS[beast]:  # D5: the best protecting object, if any is ready
            if ready[p] > 0:
                v = potential(_plus(ready, p, -1), _plus(_plus(other, t), p))
                best = v if best is None else max(best, v)
        return 0.0 if best is None else best  # a lost battle: the whole collection is gone

    def stack_values(self) -> list[float]:
        """Expected change of potential from turning over the top card of each stack (0 if empty)."""
        if self._stack_values is None:
            d = self.deltas()
            unknown = {True: float(self.probs(True) @ d), False: float(self.probs(False) @ d)}
            tab = self.tab
            self._stack_values = [
                0.0 if self.stacks[s] == 0 else (float(d[tab.memory[s]]) if tab.memory[s] is not None
                                                else unknown[s in VILLAGE_STACKS])
                for s in range(NUM_STACKS)
            ]
        return self._stack_values

    def stack_value(self, s: int) -> float:
        return self.stack_values()[s]

    def best_turn_over(self) -> float:
        vals = [v for s, v in enumerate(self.stack_values()) if self.stacks[s] > 0]
        return max(vals) if vals else 0.0

    # ------------------------------------------------------------------ torches
    def view_gain(self, s: int, best: float) -> float:
        """What seeing stack s is worth when the best turn-over known is worth ``best``."""
        if self.tab.memory[s] is not None or self.stacks[s] == 0:
            return 0.0
        village = s in VILLAGE_STACKS
        # Every unknown stack of the village (of the caves) is worth the same: computed once per ``best``.
        key = (village, best)
        gain = self._view_gains.get(key)
        if gain is None:
            gain = self._view_gains[key] = float(self.probs(village) @ np.maximum(self.deltas() - best, 0.0))
        return gain

    def torch_value(self, views: int, now_turns: int) -> float:
        """The information of ``views`` looks, used on ``now_turns`` turn-overs this turn and later ones."""
        best = self.best_turn_over()
        gains = sorted((self.view_gain(s, best) for s in range(NUM_STACKS)), reverse=True)[:views]
        return sum(gains) * (min(now_turns, 1) + INFO_LATER)

    def view_scores(self, legal: np.ndarray) -> dict[int, float]:
        best = self.best_turn_over()
        out = {}
        for a in legal:
            opt = _OPTION[a]
            if opt[0] == "stop_view":
                out[int(a)] = 0.0
            else:  # any unknown stack beats stopping; a remembered one does not
                s = opt[1]
                out[int(a)] = 1.0 + self.view_gain(s, best) if self.tab.memory[s] is None else -1.0
        return out

    # ------------------------------------------------------------------ battles and decays
    def after_protect(self, t: int) -> float:
        return potential(_plus(self.me_ready, t, -1), _plus(self.me_other, t))

    def after_forfeit(self, t: int) -> float:
        return potential(self.me_ready, _plus(self.me_other, t, -1))

    def pick_scores(self, legal: np.ndarray) -> dict[int, float]:
        """D2: the opening pick of a village stack, by its expected card."""
        return {int(a): self.stack_value(_OPTION[a][1]) for a in legal}

    def protect_scores(self, legal: np.ndarray) -> dict[int, float]:
        """D5: protect with the object whose loss of readiness costs least."""
        return {int(a): self.after_protect(_OPTION[a][1]) for a in legal}

    def forfeit_scores(self, legal: np.ndarray) -> dict[int, float]:
        """D4 (decay): forfeit the used object whose loss costs least."""
        return {int(a): self.after_forfeit(_OPTION[a][1]) for a in legal}

    # ------------------------------------------------------------------ the turn
    def turn_scores(self, legal: np.ndarray) -> dict[int, float]:
        tab = self.tab
        extra = sum(self.me_ready[t] for t in _TURN_OVER_TYPES)
        mandatory: dict[int, float] = {}
        optional: dict[int, float] = {}
        for a in legal:
            a = int(a)
            fam, opt = _FAMILY[a], _OPTION[a]
            if fam == "turn_over":
                mandatory[a] = self.stack_value(opt[1])
            elif fam == "end_turn":
                optional[a] = 0.0
            elif fam == "use_turn_over":
                if tab.turned_over:  # extra turn-overs after the mandatory one
                    optional[a] = self.stack_value(opt[2]) + self._use_cost(opt[1])
            elif fam == "use_view":
                turns = (0 if tab.turned_over else 1) + extra
                optional[a] = self.torch_value(CARDS[opt[1]].view, turns) + self._use_cost(opt[1])
            else:
                optional[a] = self._object_score(fam, opt)
        # Optional uses first (looking, restoring, trading before turning over), then the turn-over.
        if not tab.turned_over:
            good = {a: v for a, v in optional.items() if v > USE_THRESHOLD}
            return good or mandatory
        # After it: a use worth more than the threshold, else end the turn.
        return {a: v if _FAMILY[a] == "end_turn" or v > USE_THRESHOLD else v - 1.0 for a, v in optional.items()}

    def _use_cost(self, t: int) -> float:
        """Change of potential from making the ready object t used."""
        return potential(_plus(self.me_ready, t, -1), _plus(self.me_other, t)) - self.now

    def _object_score(self, fam: str, opt: tuple) -> float:
        """``my gain - beta x opponents' gains`` of a trade, steal, destroy, decay or restore."""
        t = opt[1]
        r, o = _plus(self.me_ready, t, -1), _plus(self.me_other, t)  # D4: the object is now used
        harm = 0.0
        if fam == "use_restore":
            o[opt[2]] -= 1
            r[opt[2]] += 1
        elif fam in ("use_trade", "use_steal", "use_destroy"):
            if fam == "use_trade":
                own, q, theirs = opt[2], opt[3], opt[4]
            else:
                own, q, theirs = None, opt[2], opt[3]
            qo = _plus(self.other[q], theirs, -1)
            if own is not None:
                o[own] -= 1
                qo[own] += 1
            if fam != "use_destroy":
                o[theirs] += 1
            harm = self.beta[q] * (potential(self.ready[q], qo) - self.opp_now[q])
        elif fam == "use_decay":
            for q in range(1, self.tab.n):
                # the opponent forfeits the used object that costs him least
                after = [potential(self.ready[q], _plus(self.other[q], u, -1))
                         for u in range(_T) if _IS_OBJECT[u] and self.other[q][u] > 0]
                if after:
                    harm += self.beta[q] * (max(after) - self.opp_now[q])
        return potential(r, o) - self.now - harm


# Decision kind -> the evaluator's scores of its legal actions; any other kind is the turn (D3).
SCORERS: dict[str, Callable[[_Evaluator, np.ndarray], dict[int, float]]] = {
    "pick": _Evaluator.pick_scores,
    "protect": _Evaluator.protect_scores,
    "forfeit": _Evaluator.forfeit_scores,
    "view": _Evaluator.view_scores,
    "turn": _Evaluator.turn_scores,
}


def _plus(counts: list[int], t: int, k: int = 1) -> list[int]:
    """A copy of ``counts`` with ``k`` added at ``t``."""
    out = list(counts)
    out[t] += k
    return out
