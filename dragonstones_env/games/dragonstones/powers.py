"""The characters' powers (F19-F42): one small function per power.

A power is ``power(game, player, auction)``: ``player`` uses it, and ``auction`` is the
auction it was won in (the Thief's second bidders and the Necromancer's coins come from
it; through the Ghost, Imp or Goblin it is that card's auction, F31). A power either acts
at once or asks its user a decision with :meth:`Game.ask`, naming the function that
resolves the answer: ``resolve(game, player, option, data)``. A decision's kind says what is
chosen (:data:`.decisions.KINDS`: ``choose_colour``, ``yes_no``, ...); its card says who asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cards import COLOURS, MERCHANT_COINS

if TYPE_CHECKING:
    from .engine import Auction, Game

Power = Callable[["Game", int, "Auction"], None]
RED, BLUE, YELLOW = 0, 1, 2


# ---------------------------------------------------------------------------- helpers
def stone_payments(stones: list[int], total: int) -> list[tuple[int, int, int]]:
    """Every way to pay ``total`` stones out of ``stones`` (the payer picks the colours)."""
    out = []
    for r in range(min(total, stones[0]) + 1):
        for b in range(min(total - r, stones[1]) + 1):
            y = total - r - b
            if y <= stones[2]:
                out.append((r, b, y))
    return out


def _pay_or_take(
    g: Game, p: int, card: str, payments: list[tuple[int, int, int]], points: int, coin: str, amount: int
) -> None:
    """F15: pay stones to score, or take coins; where the stones can't be paid, take."""
    options = [("pay", *s) for s in payments] + [("take",)]
    g.ask("pay_or_take", p, card, options, _resolve_pay_or_take, {"points": points, "coin": coin, "n": amount})


def _resolve_pay_or_take(g: Game, p: int, option: tuple, data: dict) -> None:
    if option[0] == "pay":
        g.pay_stones(p, option[1:])
        g.log("paid_stones", player=p, stones=list(option[1:]))
        g.score(p, data["points"])
    else:
        got = g.gain(p, data["coin"], data["n"])
        g.log("took", player=p, coin=data["coin"], amount=got)


def _take(g: Game, p: int, coin: str, amount: int) -> None:
    got = g.gain(p, coin, amount)
    g.log("took", player=p, coin=coin, amount=got)


# ---------------------------------------------------------------------------- standard
def witch(g: Game, p: int, auction: Auction) -> None:
    """F19: a black coin (the bank always has one, F2)."""
    g.players[p].black += 1
    g.log("black_coin", player=p)


def magician(g: Game, p: int, auction: Auction) -> None:
    """F20: any 4 stones -> +1 point, or 3 silver."""
    _pay_or_take(g, p, "Magician", stone_payments(g.players[p].stones, 4), 1, "silver", 3)


def wizard(g: Game, p: int, auction: Auction) -> None:
    """F21: one stone of each colour -> +1 point, or 3 silver."""
    payable = min(g.players[p].stones) >= 1
    _pay_or_take(g, p, "Wizard", [(1, 1, 1)] if payable else [], 1, "silver", 3)


def sorcerer(g: Game, p: int, auction: Auction) -> None:
    """F22: 4 stones of one colour -> +2 points, or 1 common gold."""
    stones = g.players[p].stones
    payments = [tuple(4 if i == c else 0 for i in range(3)) for c in range(3) if stones[c] >= 4]
    _pay_or_take(g, p, "Sorcerer", payments, 2, "common", 1)


def second_bidders(g: Game, p: int, auction: Auction) -> list[int]:
    """F23: the players with the best bid among those who did not win.

    After a tie-break, the best silver among its losers. Where only the winner bid more
    than 0, everyone else ties at 0 and so is second.
    """
    if auction.silver:
        losers = [q for q in auction.tied if q != p]
        values = {q: auction.silver[q][0] * (2 if auction.silver[q][1] else 1) for q in losers}
    else:
        losers = [q for q in range(g.num_players) if q != p]
        values = {q: auction.values[q] for q in losers}
    best = max(values.values())
    return [q for q in losers if values[q] == best]


def thief(g: Game, p: int, auction: Auction) -> None:
    """F23: one stone of the thief's choice from a second bidder (who has stones, if any does)."""
    seconds = second_bidders(g, p, auction)
    with_stones = [q for q in seconds if sum(g.players[q].stones)]
    options = [("steal", q, COLOURS[c]) for q in with_stones for c in range(3) if g.players[q].stones[c]]
    if not with_stones:
        options = [("steal", q, "coin") for q in seconds]
    g.power.second_bidders = seconds
    g.ask("choose_loot", p, "Thief", options, _resolve_thief)


def _resolve_thief(g: Game, p: int, option: tuple, data: dict) -> None:
    _, q, what = option
    victim, thief_ = g.players[q], g.players[p]
    if what != "coin":
        c = COLOURS.index(what)
        victim.stones[c] -= 1
        thief_.stones[c] += 1
    elif victim.common:
        victim.common -= 1
        thief_.common += 1
        what = "common"
    elif victim.fairy:  # F23: stolen fairy gold is the thief's own from then on
        victim.fairy -= 1
        thief_.fairy += 1
        what = "fairy"
    elif victim.fairy_spent:
        # Unsettled: F23 does not say where stolen spent fairy goes; it is the thief's own,
        # so it goes behind his screen, like the other stolen coins.
        victim.fairy_spent -= 1
        thief_.fairy += 1
        what = "fairy_spent"
    else:
        what = "nothing"
    g.log("stole", player=p, victim=q, what=what)


def _dragon(colour: int) -> Power:
    def dragon(g: Game, p: int, auction: Auction) -> None:
        """F24: one stone of the dragon's colour."""
        got = g.gain_stone(p, colour)
        g.log("took_stone", player=p, colour=COLOURS[colour], amount=got)

    dragon.__name__ = f"{COLOURS[colour]}_dragon"
    return dragon


red_dragon, blue_dragon, yellow_dragon = _dragon(RED), _dragon(BLUE), _dragon(YELLOW)


# ---------------------------------------------------------------------------- special
def alchemist(g: Game, p: int, auction: Auction) -> None:
    """F25: 3 common gold."""
    _take(g, p, "common", 3)


def ancient_dragon(g: Game, p: int, auction: Auction) -> None:
    """F26: one stone of a colour the bank has, of the winner's choice."""
    options = [("colour", c) for i, c in enumerate(COLOURS) if g.bank.stones[i]]
    if not options:
        g.log("no_effect", player=p, card="Ancient Dragon", why="the bank has no stones")
        return
    g.ask("choose_colour", p, "Ancient Dragon", options, _resolve_ancient_dragon)


def _resolve_ancient_dragon(g: Game, p: int, option: tuple, data: dict) -> None:
    g.gain_stone(p, COLOURS.index(option[1]))
    g.log("took_stone", player=p, colour=option[1], amount=1)


def brigand(g: Game, p: int, auction: Auction) -> None:
    """F27: all common gold and silver of another player."""
    options = [("target", q) for q in range(g.num_players) if q != p]
    g.ask("choose_seat", p, "Brigand", options, _resolve_brigand)


def _resolve_brigand(g: Game, p: int, option: tuple, data: dict) -> None:
    q = option[1]
    robber, victim = g.players[p], g.players[q]
    common, silver = victim.common, victim.silver
    robber.common += common
    robber.silver += silver
    victim.common = victim.silver = 0
    g.log("robbed", player=p, victim=q, common=common, silver=silver)


def doppelganger(g: Game, p: int, auction: Auction) -> None:
    """F28: the winner keeps the card.

    Unsettled: through the Ghost (or the Imp or Goblin) the user takes the card only if it
    is still among this turn's cards; a Doppelganger that another player won and holds
    stays with him, and the power has no effect.
    """
    if "Doppelganger" not in g.turn_specials:
        g.log("no_effect", player=p, card="Doppelganger", why="the card is held by a player")
        return
    g.turn_specials.remove("Doppelganger")
    g.players[p].doppelganger = True
    g.log("kept_doppelganger", player=p)


def offer_doppelganger(g: Game, auction: Auction, winner: int) -> bool:
    """F28: the held Doppelganger may be played right after winning, except on the Necromancer.

    Asks its holder (and returns True: the engine queues nothing, :func:`resolve_doppelganger`
    does) or returns False. The Doppelganger asks; the won card is the auction's.
    """
    if not g.players[winner].doppelganger or auction.card == "Necromancer":
        return False
    g.ask("yes_no", winner, "Doppelganger", [("yes",), ("no",)], resolve_doppelganger)
    return True


def resolve_doppelganger(g: Game, p: int, option: tuple, data: dict) -> None:
    """F28: playing the held Doppelganger uses the won power twice, then it is discarded."""
    auction = g.auction
    uses = 1
    if option == ("yes",):
        g.players[p].doppelganger = False
        g.special_discards.append("Doppelganger")
        g.log("played_doppelganger", player=p, card=auction.card)
        uses = 2
    for _ in range(uses):
        g.queue.append((auction.card, p, auction, None))


def _silver(amount: int) -> Power:
    def dwarf(g: Game, p: int, auction: Auction) -> None:
        """F6: the Dwarves give 4 and 5 silver."""
        _take(g, p, "silver", amount)

    dwarf.__name__ = f"dwarf_{amount}"
    return dwarf


dwarf_4, dwarf_5 = _silver(4), _silver(5)


def enchantress(g: Game, p: int, auction: Auction) -> None:
    """F29: any 5 stones -> +2 points, or 1 fairy gold."""
    _pay_or_take(g, p, "Enchantress", stone_payments(g.players[p].stones, 5), 2, "fairy", 1)


def fairy(g: Game, p: int, auction: Auction) -> None:
    """F30: 1 fairy gold, the player's own for good."""
    _take(g, p, "fairy", 1)


def ghost(g: Game, p: int, auction: Auction) -> None:
    """F31: the power of a character already auctioned this turn, other than the Ghost."""
    names = sorted({card for card, _ in g.played if card != "Ghost"})
    options = [("character", name) for name in names]
    g.ask("choose_card", p, "Ghost", options, _resolve_ghost, {"auction": auction})


def _resolve_ghost(g: Game, p: int, option: tuple, data: dict) -> None:
    g.log("ghost_copies", player=p, card=option[1])
    g.queue.appendleft((option[1], p, data["auction"], "Ghost"))


def gnome(g: Game, p: int, auction: Auction) -> None:
    """F32: 2 common gold and 2 silver."""
    _take(g, p, "common", 2)
    _take(g, p, "silver", 2)


def goblin(g: Game, p: int, auction: Auction) -> None:
    """F33: the power of a random character not yet auctioned; it leaves the turn."""
    if not g.face_down:
        g.log("no_effect", player=p, card="Goblin", why="no character left this turn")
        return
    card = g.face_down.pop(int(g.rng.integers(len(g.face_down))))
    g.played.append((card, "goblin"))
    g.log("goblin_draws", player=p, card=card)
    g.queue.appendleft((card, p, auction, "Goblin"))


def goldsmith(g: Game, p: int, auction: Auction) -> None:
    """F34: 1 amulet, if the bank has one."""
    _take(g, p, "amulets", 1)


def imp(g: Game, p: int, auction: Auction) -> None:
    """F35: the power of a chosen character not yet auctioned; the rest are reshuffled."""
    if not g.face_down:
        g.log("no_effect", player=p, card="Imp", why="no character left this turn")
        return
    options = [("character", name) for name in sorted(set(g.face_down))]
    g.ask("choose_card", p, "Imp", options, _resolve_imp, {"auction": auction})


def _resolve_imp(g: Game, p: int, option: tuple, data: dict) -> None:
    card = option[1]
    g.face_down.remove(card)
    g.rng.shuffle(g.face_down)
    g.played.append((card, "imp"))
    g.log("imp_picks", player=p, card=card)
    g.queue.appendleft((card, p, data["auction"], "Imp"))


COIN_PRICES = {"common": 1, "fairy": 1, "silver": 3}  # F36


def merchant(g: Game, p: int, auction: Auction) -> None:
    """F36: buy stones one at a time; stop at any time."""
    pl = g.players[p]
    options: list[tuple] = [("stop",)]
    for i, colour in enumerate(COLOURS):
        if g.bank.stones[i]:
            options += [("buy", colour, coin) for coin, price in COIN_PRICES.items() if getattr(pl, coin) >= price]
    g.ask("buy_or_stop", p, "Merchant", options, _resolve_merchant)


def _resolve_merchant(g: Game, p: int, option: tuple, data: dict) -> None:
    if option[0] == "stop":
        g.log("merchant_stops", player=p)
        return
    _, colour, coin = option
    g.pay(p, coin, COIN_PRICES[coin])  # fairy gold paid is lost for good (F36)
    g.gain_stone(p, COLOURS.index(colour))
    g.power.bought[COLOURS.index(colour)] += 1
    g.power.paid[MERCHANT_COINS.index(coin)] += COIN_PRICES[coin]
    g.log("bought", player=p, colour=colour, coin=coin)
    merchant(g, p, g.auction)


def necromancer(g: Game, p: int, auction: Auction) -> None:
    """F37: may pay every coin bid in this auction (fairy gold included) for 1 point.

    Unsettled: the coins of one auction can be paid only once; a second Necromancer use on
    the same auction (a doubled Ghost copying it twice) has nothing left to pay and no effect.
    """
    if auction.necromancer_paid:
        g.log("no_effect", player=p, card="Necromancer", why="the coins of this auction are paid")
        return
    g.power.price = min(auction.bids[p][0], g.players[p].fairy_spent)
    g.ask("yes_no", p, "Necromancer", [("yes",), ("no",)], _resolve_necromancer, {"auction": auction})


def _resolve_necromancer(g: Game, p: int, option: tuple, data: dict) -> None:
    if option == ("no",):
        g.log("declined", player=p, card="Necromancer")
        return
    auction = data["auction"]
    pl = g.players[p]
    # Common gold, silver, amulets and black coins bid are in the bank already (F11, F14).
    fairy_ = min(auction.bids[p][0], pl.fairy_spent)
    pl.fairy_spent -= fairy_
    g.bank.fairy += fairy_
    auction.necromancer_paid = True
    g.log("necromancer_pays", player=p, fairy=fairy_)
    g.score(p, 1)


def quack_wizard(g: Game, p: int, auction: Auction) -> None:
    """F38: pay all stones (possibly none) -> +1 point."""
    stones = list(g.players[p].stones)
    g.pay_stones(p, stones)
    g.log("paid_stones", player=p, stones=stones)
    g.score(p, 1)


def rainbow_dragon(g: Game, p: int, auction: Auction) -> None:
    """F39: name a colour the bank has, then draw from the bank's stones until stop or bust."""
    options = [("colour", c) for i, c in enumerate(COLOURS) if g.bank.stones[i]]
    if not options:
        g.log("no_effect", player=p, card="Rainbow Dragon", why="the bank has no stones")
        return
    g.ask("choose_colour", p, "Rainbow Dragon", options, _resolve_rainbow_colour)


def _resolve_rainbow_colour(g: Game, p: int, option: tuple, data: dict) -> None:
    g.log("rainbow_names", player=p, colour=option[1])
    g.power.named = COLOURS.index(option[1])
    _rainbow_draw(g, p, COLOURS.index(option[1]))


def _rainbow_draw(g: Game, p: int, named: int) -> None:
    # The bag is the bank's stones; drawn stones wait in pending_stones until kept or returned.
    colour = g.draw_stone(g.bank.stones)
    g.pending_stones[colour] += 1
    g.log("rainbow_draws", player=p, colour=COLOURS[colour])
    if colour == named:
        for c in range(3):
            g.bank.stones[c] += g.pending_stones[c]
        g.pending_stones = [0, 0, 0]
        g.log("rainbow_bust", player=p)
    else:
        # F39's "an empty bag keeps them" cannot happen: the named colour is in the bag
        # until it is drawn, which busts. So there is always a stone left to draw here.
        g.ask("draw_or_stop", p, "Rainbow Dragon", [("draw",), ("stop",)], _resolve_rainbow_continue,
              {"named": named})


def _resolve_rainbow_continue(g: Game, p: int, option: tuple, data: dict) -> None:
    if option == ("draw",):
        _rainbow_draw(g, p, data["named"])
    else:
        _rainbow_keep(g, p)


def _rainbow_keep(g: Game, p: int) -> None:
    stones = g.pending_stones
    for c in range(3):
        g.players[p].stones[c] += stones[c]
    g.log("rainbow_keeps", player=p, stones=list(stones))
    g.pending_stones = [0, 0, 0]


def sorcerers_apprentice(g: Game, p: int, auction: Auction) -> None:
    """F40: with a pair, pay 2 stones of one colour (his pick) -> +1 point; not optional."""
    stones = g.players[p].stones
    options = [("pay", *(2 if i == c else 0 for i in range(3))) for c in range(3) if stones[c] >= 2]
    if not options:
        g.log("no_effect", player=p, card="Sorcerer's Apprentice", why="no pair of stones")
        return
    g.ask("choose_payment", p, "Sorcerer's Apprentice", options, _resolve_apprentice)


def _resolve_apprentice(g: Game, p: int, option: tuple, data: dict) -> None:
    g.pay_stones(p, option[1:])
    g.log("paid_stones", player=p, stones=list(option[1:]))
    g.score(p, 1)


def troll(g: Game, p: int, auction: Auction) -> None:
    """F41: everyone, the winner included, returns all stones of the colour picked."""
    g.ask("choose_colour", p, "Troll", [("colour", c) for c in COLOURS], _resolve_troll)


def _resolve_troll(g: Game, p: int, option: tuple, data: dict) -> None:
    c = COLOURS.index(option[1])
    lost = []
    for pl in g.players:
        lost.append(pl.stones[c])
        g.bank.stones[c] += pl.stones[c]
        pl.stones[c] = 0
    g.log("troll", player=p, colour=option[1], lost=lost)


def two_headed_dragon(g: Game, p: int, auction: Auction) -> None:
    """F42: up to 2 bank stones of each colour in the bag, keep 2 drawn at random."""
    bag = [min(2, s) for s in g.bank.stones]
    kept = [0, 0, 0]
    for _ in range(min(2, sum(bag))):
        c = g.draw_stone(bag)
        kept[c] += 1
    for c in range(3):
        g.bank.stones[c] -= kept[c]
        g.players[p].stones[c] += kept[c]
    g.log("took_stones", player=p, stones=kept)


POWERS: dict[str, Power] = {
    "Witch": witch,
    "Magician": magician,
    "Wizard": wizard,
    "Sorcerer": sorcerer,
    "Thief": thief,
    "Red Dragon": red_dragon,
    "Blue Dragon": blue_dragon,
    "Yellow Dragon": yellow_dragon,
    "Alchemist": alchemist,
    "Ancient Dragon": ancient_dragon,
    "Brigand": brigand,
    "Doppelganger": doppelganger,
    "Dwarf (4)": dwarf_4,
    "Dwarf (5)": dwarf_5,
    "Enchantress": enchantress,
    "Fairy": fairy,
    "Ghost": ghost,
    "Gnome": gnome,
    "Goblin": goblin,
    "Goldsmith": goldsmith,
    "Imp": imp,
    "Merchant": merchant,
    "Necromancer": necromancer,
    "Quack Wizard": quack_wizard,
    "Rainbow Dragon": rainbow_dragon,
    "Sorcerer's Apprentice": sorcerers_apprentice,
    "Troll": troll,
    "Two-headed Dragon": two_headed_dragon,
}


WinHook = Callable[["Game", "Auction", int], bool]


@dataclass(frozen=True)
class Powers:
    """What the engine's flow is given: the power of every character, and the hooks that may
    step in when an auction is won (a hook returning True has asked a decision instead).

    The engine never imports this module: a game is built with :data:`RULES` (or another
    table), so adding a character is its power function here and its data row in ``cards``.
    """

    table: dict[str, Power]
    on_win: tuple[WinHook, ...] = ()

    def use(self, g: Game, card: str, player: int, auction: Auction) -> None:
        g.log("power", card=card, player=player)
        self.table[card](g, player, auction)

    def after_win(self, g: Game, auction: Auction, winner: int) -> bool:
        return any(hook(g, auction, winner) for hook in self.on_win)


RULES = Powers(POWERS, on_win=(offer_doppelganger,))


def use_power(g: Game, card: str, player: int, auction: Auction) -> None:
    """Use ``card``'s power (what the engine does with each queued power)."""
    RULES.use(g, card, player, auction)
