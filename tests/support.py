"""Helpers for the rules tests of Fist of Dragonstones (``tests/test_rules_*.py``).

Every state is arranged by moving things between the bank and the players, so the F2 stock
stays whole; :func:`assert_conserved` checks it (the ``conserved`` fixture of each test module
runs it on every game made with :func:`make_game`, at the end of every test).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dragonstones_env.games.dragonstones.cards import COLOURS, SPECIAL_DECK, STANDARD
from dragonstones_env.games.dragonstones.engine import STOCK, Game

COINS = ("fairy", "common", "silver", "amulets")
GAMES: list[Game] = []  # every game made by make_game in the current test


# ---------------------------------------------------------------------------- making states
def make_game(n: int = 4, seed: int = 0, **kwargs: Any) -> Game:
    """A new game, waiting for player 0's bid on the Witch (F8)."""
    game = Game(n, seed=seed, **kwargs)
    GAMES.append(game)
    return game


def set_player(game: Game, p: int, **values: Any) -> None:
    """Give player ``p`` exactly these holdings, taking from (or returning to) the bank.

    Keys: ``fairy``, ``fairy_spent``, ``common``, ``silver``, ``amulets``, ``stones`` (r, b, y)
    move against the bank (F2); ``black`` and ``score`` are set as they are (black coins are
    unlimited, F2).
    """
    pl, bank = game.players[p], game.bank
    for key, value in values.items():
        if key == "stones":
            for c in range(3):
                bank.stones[c] -= value[c] - pl.stones[c]
                pl.stones[c] = value[c]
                assert bank.stones[c] >= 0, f"the bank has too few {COLOURS[c]} stones for this test"
        elif key in (*COINS, "fairy_spent"):
            coin = "fairy" if key == "fairy_spent" else key
            setattr(bank, coin, getattr(bank, coin) - (value - getattr(pl, key)))
            setattr(pl, key, value)
            assert getattr(bank, coin) >= 0, f"the bank has too little {coin} for this test"
        elif key in ("black", "score"):
            setattr(pl, key, value)
        else:
            raise KeyError(key)


def drain_bank(game: Game, what: str, into: int) -> None:
    """Move everything the bank has of ``what`` (a coin or a colour) to player ``into``."""
    pl, bank = game.players[into], game.bank
    if what in COLOURS:
        c = COLOURS.index(what)
        pl.stones[c] += bank.stones[c]
        bank.stones[c] = 0
    else:
        setattr(pl, what, getattr(pl, what) + getattr(bank, what))
        setattr(bank, what, 0)


def give_doppelganger(game: Game, p: int) -> None:
    """Player ``p`` holds the Doppelganger (F28), taken out of the special piles (F7)."""
    for pile in (game.special_pile, game.special_discards):
        if "Doppelganger" in pile:
            pile.remove("Doppelganger")
            game.players[p].doppelganger = True
            return
    raise AssertionError("the Doppelganger is not in a special pile")


def set_specials(game: Game, first: str, second: str) -> None:
    """Make ``first`` and ``second`` this turn's special cards (F7); only before the Witch bids."""
    assert game.auction is not None and game.auction.card == "Witch" and not game.auction._sealed
    game.special_pile.extend(game.turn_specials)
    for card in (first, second):
        pile = game.special_pile if card in game.special_pile else game.special_discards
        pile.remove(card)
    others = [c for c in STANDARD if c != "Witch"] + [first, second]
    game.turn_specials = [first, second]
    game.face_down = others
    game.turn_cards = ["Witch", *sorted(others)]


def next_cards(game: Game, *cards: str) -> None:
    """Arrange the face-down characters so that ``cards`` are auctioned next, in this order."""
    rest = list(game.face_down)
    for card in cards:
        rest.remove(card)
    game.face_down = rest + list(reversed(cards))


class RiggedRng:
    """Stands in for ``game.rng``: ``integers`` returns the scripted values in order, and
    ``shuffle`` leaves the order as it is (so cards arranged by :func:`next_cards` stay put)."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)

    def integers(self, high: int, *args: Any, **kwargs: Any) -> int:
        assert self.values, "the test did not script this random draw"
        value = self.values.pop(0)
        assert 0 <= value < high
        return value

    def shuffle(self, x: list) -> None:
        pass


class StoneDraws:
    """The scripted stone draws of :func:`rig_stone_draws`, and the bags they were drawn from."""

    def __init__(self, colours: Iterable[str]) -> None:
        self.left = list(colours)
        self.bags: list[tuple[int, int, int]] = []

    def __call__(self, bag: list[int]) -> int:
        assert self.left, "the test did not script this stone draw"
        self.bags.append(tuple(bag))
        c = COLOURS.index(self.left.pop(0))
        assert bag[c] > 0, f"no {COLOURS[c]} stone in the bag {bag}"
        bag[c] -= 1
        return c


def rig_stone_draws(game: Game, *colours: str) -> StoneDraws:
    """The next stones drawn from a bag (F39, F42) are ``colours``, in this order."""
    draws = StoneDraws(colours)
    game.draw_stone = draws  # type: ignore[method-assign]
    return draws


def set_bank_stones(game: Game, bank: tuple[int, int, int], via: int) -> None:
    """Leave exactly ``bank`` stones in the bank, moving the difference to or from player ``via``."""
    held = game.players[via].stones
    set_player(game, via, stones=tuple(held[c] + game.bank.stones[c] - bank[c] for c in range(3)))


def at(card: str, n: int = 4, partner: str | None = None, **holdings: dict[str, Any]) -> Game:
    """A new game at the auction of ``card`` (the Witch passed unless ``card`` is the Witch).

    A special ``card`` is made one of the turn's two specials, with ``partner`` (default: the
    Fairy, or the Gnome for the Fairy). ``holdings`` give seats their holdings: ``p1={...}``
    is passed to :func:`set_player` for player 1.
    """
    game = make_game(n)
    if card not in STANDARD:
        set_specials(game, card, partner or ("Gnome" if card == "Fairy" else "Fairy"))
    for seat, values in holdings.items():
        set_player(game, int(seat[1:]), **values)
    run_to(game, card)
    return game


# ---------------------------------------------------------------------------- playing
def bid_all(game: Game, bids: Sequence[int | tuple[int, int, int, int]]) -> None:
    """One gold bid per player in seat order (F10): an int is that much fairy gold, a tuple is
    ``(fairy, common, black, amulet)``."""
    card = game.decision.card
    assert len(bids) == game.num_players
    for p, bid in enumerate(bids):
        assert (game.decision.kind, game.decision.player, game.decision.card) == ("bid", p, card)
        game.apply(("bid", *bid) if isinstance(bid, tuple) else ("bid", bid, 0, 0, 0))
        assert_conserved(game)


def tiebreak(game: Game, bids: dict[int, tuple[int, int]]) -> None:
    """The silver bids of the tied players, ``{player: (silver, amulet)}`` (F14)."""
    for p in sorted(bids):
        assert (game.decision.kind, game.decision.player) == ("tiebreak", p)
        game.apply(("tiebreak", *bids[p]))
        assert_conserved(game)


def win(game: Game, p: int, fairy: int = 1) -> None:
    """Player ``p`` wins the open auction with ``fairy`` fairy gold; nobody else bids."""
    bid_all(game, [fairy if q == p else 0 for q in range(game.num_players)])


def pass_auction(game: Game) -> None:
    """Nobody bids: the character is passed (F13)."""
    bid_all(game, [0] * game.num_players)


def run_to(game: Game, card: str) -> None:
    """Pass every auction until ``card`` is up for auction (``card`` is moved up to be next).

    The card after each auction is revealed as soon as it ends: a test that needs several
    cards arranges their order first with :func:`next_cards`.
    """
    if game.auction is None or game.auction.card != card:
        next_cards(game, card)
    while not (game.decision.kind == "bid" and game.decision.card == card and game.decision.player == 0):
        pass_auction(game)


def finish_turn(game: Game) -> None:
    """Pass every remaining auction of this turn (F9 runs at its end)."""
    turn = game.turn
    while game.turn == turn and not game.over:
        pass_auction(game)


def choose(game: Game, option: tuple) -> None:
    """Apply one option and check the stock."""
    game.apply(option)
    assert_conserved(game)


# ---------------------------------------------------------------------------- checks
def assert_conserved(game: Game) -> None:
    """F2: the stock is whole, nobody holds less than nothing, and the 25 specials are all somewhere."""
    pls, bank = game.players, game.bank
    assert sum(pl.fairy + pl.fairy_spent for pl in pls) + bank.fairy == STOCK["fairy"]
    for coin in ("common", "silver", "amulets"):
        assert sum(getattr(pl, coin) for pl in pls) + getattr(bank, coin) == STOCK[coin], coin
    for c in range(3):
        held = sum(pl.stones[c] for pl in pls)
        assert held + bank.stones[c] + game.pending_stones[c] == STOCK["stones"], COLOURS[c]
    for pl in pls:
        assert min(pl.fairy, pl.fairy_spent, pl.common, pl.silver, pl.amulets, pl.black, *pl.stones) >= 0
    assert min(bank.fairy, bank.common, bank.silver, bank.amulets, *bank.stones) >= 0
    cards = [*game.special_pile, *game.special_discards, *game.turn_specials]
    cards += ["Doppelganger"] * sum(pl.doppelganger for pl in pls)
    assert sorted(cards) == sorted(SPECIAL_DECK)


def options_of(game: Game) -> set[tuple]:
    return set(game.legal_options())


def check_games() -> Iterable[None]:
    """Body of the ``conserved`` fixture (tests/conftest.py): check every game made during the test."""
    GAMES.clear()
    yield
    for game in GAMES:
        assert_conserved(game)
    GAMES.clear()


def not_yet_auctioned(game: Game) -> list[str]:
    """The cards of this turn not auctioned yet, the card open for bids included."""
    a = game.auction
    is_open = a is not None and a.outcome == "open"
    return sorted(game.face_down + ([a.card] if is_open else []))


def auction_of(game: Game, card: str):
    """This turn's (latest) auction of ``card``."""
    return [a for a in game.auctions if a.card == card][-1]


def stones(game: Game, p: int) -> tuple[int, int, int]:
    return tuple(game.players[p].stones)


def bank_stones(game: Game) -> tuple[int, int, int]:
    return tuple(game.bank.stones)
