"""The turn flow of Fist of Dragonstones: turns, auctions, tie-breaks, decisions (F7-F18).

:class:`Game` runs a game on the table of :mod:`.state`: the turn's characters (F7, F8), each
sealed auction and its reveal (F10-F14), the powers of the won characters -- given as a table
(``powers.RULES``), never imported back -- and the end (F9, F17, F18). :mod:`.engine` is the
public face. Pure Python and numpy.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dragonstones_env.bounds import check as check_bound
from dragonstones_env.core import (
    _PLAIN,
    Decision,
    IllegalOptionError,
    Option,
    ReplayError,
    as_option,
    check_seed,
    verify_replay,
)
from dragonstones_env.core.records import KIND_KEY, RECORD_VERSION, read_record, renamed, start_v2

from .cards import CARDS_PER_TURN, COLOURS, STANDARD
from .decisions import KINDS, check_kind, v1_name
from .powers import RULES, Powers  # one way: powers name this module's types for type checking only
from .state import (
    DEFAULT_MAX_TURNS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    START,
    TOTALS,
    WIN_SCORE,
    Auction,
    PowerUse,
    Table,
    bid_value,
)

BID = "bid"
TIEBREAK = "tiebreak"
# Every kind of decision the engine asks, named by what is chosen (decisions.KINDS says each).
DECISION_KINDS: tuple[str, ...] = tuple(KINDS)


Handler = Callable[["Game", int, Option, dict], None]


class ConservationError(RuntimeError):
    """A custom Python power created or destroyed coins or stones (F2) in a game: the card is
    named, and the game is stopped (every later ``apply`` raises this again) rather than played
    on a corrupted table."""


@dataclass(slots=True)
class _Pending:
    """The decision the game waits for, and what to do with the answer."""

    decision: Decision
    options: list[Option] | None  # None for bids: too many to list, checked arithmetically
    handler: Handler | None
    data: dict


class Game(Table):
    """A game of Fist of Dragonstones for 3 to 6 players (F1).

    >>> g = Game(4, seed=1)
    >>> g.decision
    Decision(kind='bid', player=0, card='Witch')
    """

    def __init__(self, num_players: int = 4, seed: int | None = None, max_turns: int = DEFAULT_MAX_TURNS,
                 powers: Powers = RULES, deck: Any = None):
        # ``deck`` (a ``custom.Deck``, issue #16): see state.Table; it brings its own powers table.
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be from {MIN_PLAYERS} to {MAX_PLAYERS} (F1), got {num_players}")
        max_turns = check_bound("max_turns", max_turns)  # records' start events come here too
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        super().__init__(num_players, check_seed(seed), deck)
        self.max_turns = max_turns
        self.powers = powers if deck is None else deck.powers  # the powers and the hooks on a won auction
        n = num_players

        self.turn = 0
        self.turn_cards: list[str] = []  # this turn's ten characters
        self.turn_specials: list[str] = []  # specials to discard at F9
        self.face_down: list[str] = []  # not yet auctioned; the next one is at the end (F8)
        self.played: list[tuple[str, str]] = []  # (card, how) in order: won/cursed/passed/tied/imp/goblin
        self.auctions: list[Auction] = []  # this turn's auctions
        self.auction: Auction | None = None  # the auction being bid or resolved
        # Power uses waiting to run: (card, user, auction, the card it is used through or None).
        self.queue: deque[tuple[str, int, Auction, str | None]] = deque()
        self.power: PowerUse | None = None  # the power being used now
        self.pending: _Pending | None = None
        self.winner: int | None = None
        self.truncated = False
        # The deck's Python powers are checked where they run (issue #30): the totals of F2 before
        # each use of one, compared when the use is done. Data cards and the box's powers are
        # conservative by construction (and tested), so they are not checked.
        self._audited: frozenset[str] = frozenset(getattr(deck, "python_cards", ()))
        self._audit: tuple[PowerUse, tuple[int, ...]] | None = None
        self.fault: str | None = None  # why the game was stopped (a ConservationError), if it was

        start = {"game": GAME, "version": RECORD_VERSION, "num_players": n, "seed": self.seed, "max_turns": max_turns}
        if deck is None:  # the box's game
            self.log("start", **start)
        else:  # the deck travels with the record, so that replay() rebuilds it
            self.log("start", **start, deck=deck.to_dict())
        for p in range(n):  # F3: four stones each, drawn at random from the bag of 36
            for _ in range(START["stones"]):
                self.players[p].stones[self.draw_stone(self.bank.stones)] += 1
        self.log("setup", stones=[list(pl.stones) for pl in self.players])
        self._start_turn()
        self._advance()

    # ------------------------------------------------------------------ public API
    record_key = KIND_KEY  # the key naming each record event's kind (the engine protocol, dragonstones_env.core)

    @property
    def over(self) -> bool:
        return self.winner is not None or self.truncated

    @property
    def winners(self) -> list[int]:
        """The winning seats, as every engine names them: the one winner (F3), or none."""
        return [] if self.winner is None else [self.winner]

    @property
    def decision(self) -> Decision | None:
        """The decision the game waits for, or ``None`` once the game is over."""
        return None if self.pending is None else self.pending.decision

    @property
    def current_player(self) -> int | None:
        return None if self.pending is None else self.pending.decision.player

    def legal_options(self) -> list[Option]:
        """Every legal option of the current decision (empty once the game is over)."""
        if self.pending is None:
            return []
        if self.pending.options is not None:
            return list(self.pending.options)
        kind, p = self.pending.decision.kind, self.pending.decision.player
        pl = self.players[p]
        if kind == BID:
            return [
                (BID, f, c, b, a)
                for f in range(pl.fairy + 1)
                for c in range(pl.common + 1)
                for b in range(min(pl.black, 1) + 1)
                for a in range(min(pl.amulets, 1) + 1)
            ]
        return [(TIEBREAK, s, a) for s in range(pl.silver + 1) for a in range(min(pl.amulets, 1) + 1)]

    def bid_limits(self, player: int) -> tuple[int, int, int, int]:
        """What ``player`` may put in a gold bid now: (fairy, common, black, amulet) maxima."""
        pl = self.players[player]
        return pl.fairy, pl.common, min(pl.black, 1), min(pl.amulets, 1)

    def is_legal(self, option: Any) -> bool:
        try:
            return self._why_illegal(as_option(option)) is None
        except TypeError:
            return False

    def apply(self, option: Any) -> None:
        """Apply one legal option of the current decision and run to the next decision.

        Raises :class:`~dragonstones_env.core.IllegalOptionError` (a ``ValueError``) naming
        the decision and the legal options; the state is then unchanged.
        """
        if self.fault is not None:
            raise ConservationError(self.fault)
        try:
            option = as_option(option)
        except TypeError as err:
            raise IllegalOptionError(self.decision, option, self.legal_options(), str(err)) from None
        why = self._why_illegal(option)
        if why is not None:
            raise IllegalOptionError(self.decision, option, self.legal_options(), why)
        pending = self.pending
        assert pending is not None
        self.pending = None
        d = pending.decision
        # The record names the decision in layout v1's words (decisions.v1_name): stored records
        # and the golden streams keep replaying byte for byte.
        self.log("choice", player=d.player, decision=v1_name(d.kind, d.card), option=list(option))
        if d.kind == BID:
            self._seal_bid(d.player, option)
        elif d.kind == TIEBREAK:
            self._seal_tiebreak(d.player, option)
        else:
            assert pending.handler is not None
            pending.handler(self, d.player, option, pending.data)
        self._advance()

    def state_dict(self) -> dict[str, Any]:
        """A JSON-serialisable snapshot of everything on the table.

        Sealed bids and the order of the face-down characters are not in it (F43): it shows
        which players have bid, not what.
        """
        d = self.decision
        a = self.auction
        return {
            "num_players": self.num_players,
            "turn": self.turn,
            "max_turns": self.max_turns,
            "players": [pl.to_dict() for pl in self.players],
            "bank": self.bank.to_dict(),
            "pending_stones": dict(zip(COLOURS, self.pending_stones, strict=True)),
            "special_pile": len(self.special_pile),
            "special_discards": list(self.special_discards),
            "turn_cards": list(self.turn_cards),
            "played": [list(x) for x in self.played],
            "face_down": sorted(self.face_down),
            "auctions": [x.to_dict() for x in self.auctions],
            "auction": None if a is None else {**a.to_dict(), "sealed": sorted(a._sealed)},
            "decision": None if d is None else {"kind": d.kind, "player": d.player, "card": d.card},
            "power": None if self.power is None else self.power.to_dict(self.auctions),
            "winner": self.winner,
            "truncated": self.truncated,
            "over": self.over,
            **({} if self.deck is None else {"deck": self.deck.to_dict()}),
        }

    def to_json(self) -> str:
        return json.dumps(self.state_dict(), sort_keys=True)

    # ------------------------------------------------------------------ decisions and points
    def ask(
        self,
        kind: str,
        player: int,
        card: str | None,
        options: list[Option],
        handler: Handler,
        data: dict | None = None,
    ) -> None:
        """Wait for ``player`` to choose among ``options``; one option is applied at once.

        ``kind`` is one of :data:`decisions.KINDS` (what is chosen), ``card`` the character
        that asks.
        """
        check_kind(kind)
        data = {} if data is None else data
        if len(options) == 1:
            self.log("auto", player=player, decision=v1_name(kind, card), option=list(options[0]))
            handler(self, player, options[0], data)
            return
        assert options, f"no options for decision {kind}"
        self.pending = _Pending(Decision(kind, player, card), options, handler, data)

    def score(self, player: int, points: int) -> None:
        """Score points; F17: reaching 3 ends the game at once."""
        pl = self.players[player]
        pl.score += points
        self.log("score", player=player, points=points, total=pl.score)
        if pl.score >= WIN_SCORE and self.winner is None:
            self.winner = player
            self.pending = None
            self.queue.clear()
            self.log("end", reason="won", winners=[player])

    # ------------------------------------------------------------------ turn flow
    def _advance(self) -> None:
        """Run the game forward until a decision is needed or the game is over."""
        while self.pending is None and not self.over:
            if self._audit is not None:  # the power used before is done: nothing to decide is left
                self._audit_done()
            self.power = None
            if self.queue:
                card, player, auction, source = self.queue.popleft()
                uses_left = sum(1 for q in self.queue if q[0] == card and q[1] == player and q[2] is auction)
                self.power = PowerUse(card, player, auction, source, uses_left)
                if card in self._audited:
                    self._audit = (self.power, self.totals())
                self.powers.use(self, card, player, auction)
            elif self.auction is not None:
                self.auction = None  # its power (if any) is done
            elif self.face_down:
                self._start_auction(self.face_down.pop())
            else:
                self._end_turn()
        if self._audit is not None and self.over:  # a power that won the game is done too
            self._audit_done()

    def _audit_done(self) -> None:
        """F2 after a use of a custom Python power: every total as before it, or the game stops
        with a :class:`ConservationError` naming the card (a few sums per use of such a card)."""
        use, before = self._audit
        self._audit = None
        after = self.totals()
        if after == before:
            return
        diff = ", ".join(f"{w} {a - b:+d}" for w, a, b in zip(TOTALS, after, before, strict=True) if a != b)
        through = f" (through the {use.source})" if use.source else ""
        self.fault = (f"character {use.card!r}{through} broke F2: its use by player {use.player} at turn {self.turn} "
                      f"created or destroyed coins or stones ({diff}); a custom Python power may only move them "
                      "between the bank and the players. The game is stopped")
        self.pending = None
        raise ConservationError(self.fault)

    def _draw_special(self) -> str:
        if not self.special_pile:  # F7: reshuffle the discards, also between the two draws
            self.special_pile, self.special_discards = self.special_discards, []
            self.rng.shuffle(self.special_pile)
            self.log("reshuffle", cards=len(self.special_pile))
        return self.special_pile.pop()

    def _start_turn(self) -> None:
        self.turn += 1
        specials = [self._draw_special(), self._draw_special()]
        self.turn_specials = list(specials)
        others = [c for c in STANDARD if c != "Witch"] + specials
        self.rng.shuffle(others)
        self.face_down = [*others, "Witch"]  # F8: the Witch first, the rest in hidden order
        self.turn_cards = ["Witch", *sorted(others)]
        assert len(self.turn_cards) == CARDS_PER_TURN
        self.played = []
        self.auctions = []
        self.log("turn", turn=self.turn, specials=specials)

    def _end_turn(self) -> None:
        """F9: spent fairy gold goes home, black coins back to the bank, specials discarded."""
        for pl in self.players:
            pl.fairy += pl.fairy_spent
            pl.fairy_spent = 0
            pl.black = 0
        self.special_discards.extend(self.turn_specials)
        self.turn_specials = []
        self.log("end_turn", turn=self.turn)
        if self.turn >= self.max_turns:  # F18
            self.truncated = True
            self.log("end", reason="truncated", winners=[], turn=self.turn)
            return
        self._start_turn()

    # ------------------------------------------------------------------ auctions
    def _start_auction(self, card: str) -> None:
        self.auction = Auction(card)
        self.auctions.append(self.auction)
        self.log("auction", card=card)
        self._ask_bid(0)

    def _ask_bid(self, player: int) -> None:
        self.pending = _Pending(Decision(BID, player, self.auction.card), None, None, {})

    def _why_illegal(self, option: Any) -> str | None:
        """Why ``option`` is not legal now, or None if it is. Never changes the state."""
        if self.pending is None:
            return "the game is over"
        if not isinstance(option, tuple):
            return "an option is a tuple"
        if not all(type(x) in _PLAIN for x in option):
            return "the items of an option are ints and strings"
        kind, p = self.pending.decision.kind, self.pending.decision.player
        if self.pending.options is not None:
            return None if option in self.pending.options else "not among the legal options"
        pl = self.players[p]
        if kind == BID:
            if len(option) != 5 or option[0] != BID or not all(type(x) is int for x in option[1:]):
                return "a gold bid is ('bid', fairy, common, black, amulet) with ints"
            _, f, c, b, a = option
            if not (0 <= f <= pl.fairy and 0 <= c <= pl.common):
                return f"player {p} has {pl.fairy} fairy gold and {pl.common} common gold behind the screen"
            if b not in (0, 1) or b > pl.black:
                return f"black must be 0 or 1 and player {p} holds {pl.black} black coin(s)"
            if a not in (0, 1) or a > pl.amulets:
                return f"amulet must be 0 or 1 and player {p} holds {pl.amulets} amulet(s)"
            return None
        if len(option) != 3 or option[0] != TIEBREAK or not all(type(x) is int for x in option[1:]):
            return "a tie-break bid is ('tiebreak', silver, amulet) with ints"
        _, s, a = option
        if not 0 <= s <= pl.silver:
            return f"player {p} has {pl.silver} silver"
        if a not in (0, 1) or a > pl.amulets:
            return f"amulet must be 0 or 1 and player {p} holds {pl.amulets} amulet(s)"
        return None

    def _seal_bid(self, player: int, option: Option) -> None:
        a = self.auction
        a._sealed[player] = option[1:]
        if player + 1 < self.num_players:
            self._ask_bid(player + 1)
        else:
            self._reveal()

    def _reveal(self) -> None:
        """F11-F14: every bid is revealed and paid, then the outcome is settled."""
        a = self.auction
        bids = [a._sealed[p] for p in range(self.num_players)]
        a._sealed = {}
        a.bids = [list(b) for b in bids]
        a.values = [bid_value(f, c, am) for f, c, _, am in bids]
        for p, (f, c, b, am) in enumerate(bids):
            pl = self.players[p]
            pl.fairy -= f  # F11, F16: spent until the end of the turn
            pl.fairy_spent += f
            self.pay(p, "common", c)
            pl.black -= b  # black coins are unlimited (F2): the bank does not count them
            self.pay(p, "amulets", am)
        self.log("reveal", card=a.card, bids=a.bids, values=a.values)
        if any(b[2] for b in bids):  # F12
            self._settle(a, "cursed")
            return
        best = max(a.values)
        if best == 0:  # F13
            self._settle(a, "passed")
            return
        top = [p for p, v in enumerate(a.values) if v == best]
        if len(top) == 1:
            self._settle(a, "won", top[0])
            return
        a.tied = top  # F14
        a.outcome = "tiebreak"
        a.silver = {}
        self.log("tiebreak", card=a.card, players=top)
        self.pending = _Pending(Decision(TIEBREAK, top[0], a.card), None, None, {})

    def _seal_tiebreak(self, player: int, option: Option) -> None:
        a = self.auction
        a._sealed[player] = option[1:]
        later = [p for p in a.tied if p > player]
        if later:
            self.pending = _Pending(Decision(TIEBREAK, later[0], a.card), None, None, {})
            return
        bids = {p: a._sealed[p] for p in a.tied}
        a._sealed = {}
        a.silver = bids
        for p, (s, am) in bids.items():  # F14: all silver and amulets bid go to the bank
            self.pay(p, "silver", s)
            self.pay(p, "amulets", am)
        values = {p: s * (2 if am else 1) for p, (s, am) in bids.items()}
        self.log("tiebreak_reveal", card=a.card, bids={str(p): list(b) for p, b in bids.items()})
        best = max(values.values())
        top = [p for p in a.tied if values[p] == best]
        if len(top) == 1:
            self._settle(a, "won", top[0])
        else:
            self._settle(a, "tied")

    def _settle(self, a: Auction, outcome: str, winner: int | None = None) -> None:
        a.outcome = outcome
        a.winner = winner
        self.played.append((a.card, outcome))
        self.log("outcome", card=a.card, outcome=outcome, winner=winner)
        if winner is None:
            return
        # A power may step in before the won power is used (the held Doppelganger, F28).
        if not self.powers.after_win(self, a, winner):
            self.queue.append((a.card, winner, a, None))


GAME = "dragonstones"  # the registry id, which records name in their start event (fist/__init__.py's SPEC)


def upgrade_v1(record: list) -> list:
    """A version-1 record (kinds under ``"type"``, the end a ``"win"`` or ``"truncated"`` event) as
    version 2's (:mod:`dragonstones_env.core.records`): the same events, renamed, one for one."""
    start = record[0]
    if start.get("type") != "start":
        raise ReplayError(0, "a 'type': 'start' event (a Fist of Dragonstones record of version 1)", start)
    out = [start_v2(renamed(start, "type"), GAME)]
    for event in record[1:]:
        event = renamed(event, "type")
        if isinstance(event, dict) and event.get(KIND_KEY) == "win" and set(event) == {KIND_KEY, "player"}:
            event = {KIND_KEY: "end", "reason": "won", "winners": [event["player"]]}
        elif isinstance(event, dict) and event.get(KIND_KEY) == "truncated" and set(event) == {KIND_KEY, "turn"}:
            event = {KIND_KEY: "end", "reason": "truncated", "winners": [], "turn": event["turn"]}
        out.append(event)
    return out


UPGRADES = {1: upgrade_v1}


def read(record: list) -> list:
    """A record of this game, of any version, in today's format (:func:`~dragonstones_env.core.records.read_record`)."""
    return read_record(record, GAME, UPGRADES)


def replay(record: list[dict[str, Any]], load_deck: Callable[[dict], Any] | None = None) -> Game:
    """Rebuild a game from its record, checking every event against what the engine produces.

    The record is re-simulated from its ``start`` event (seed, players, max_turns) by applying
    its ``choice`` events in order; every event, choices and engine effects alike, must be the
    event the engine produces at that position. Accepted: the complete record of a game, or the
    record of a game in progress (it ends right before a pending decision). Anything else --
    an edited, added or missing event, a record cut inside a run of engine events, a record
    that goes on after the game ended, a bad seed -- raises
    :class:`~dragonstones_env.core.ReplayError` (a ``ValueError``) naming the first event that
    differs (index, expected, found).

    A game with a custom deck has a ``deck`` in its start event: ``load_deck`` rebuilds it
    (``custom.replay`` passes ``Deck.from_dict``; it refuses a card it does not know).
    """

    def new_game(start: dict[str, Any]) -> Game:
        extra = sorted(set(start) - {KIND_KEY, "game", "version", "num_players", "seed", "max_turns", "deck"})
        if extra:
            raise ValueError(f"unknown start field(s) {extra}")
        deck = None
        if "deck" in start:
            if load_deck is None:
                raise ValueError("the record has a custom deck: replay it with games.dragonstones.custom.replay")
            deck = load_deck(start["deck"])
        return Game(start["num_players"], seed=start["seed"], max_turns=start["max_turns"], deck=deck)

    def choose(game: Game, event: dict[str, Any]) -> None:
        option = event["option"]
        if not isinstance(option, list):
            raise TypeError(f"a recorded option is a list, not {type(option).__name__}")
        game.apply(tuple(option))

    return verify_replay(read(record), KIND_KEY, new_game, {"choice": choose})

