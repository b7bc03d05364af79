"""The rules engine of Fist of Dragonstones: state, turn flow, auctions, decisions.

Pure Python (numpy only for the random generator): no RL library is imported here.
The game is a sequence of *decisions*. ``game.decision`` says who must decide, what kind
of decision it is (named by what is chosen, :data:`.decisions.KINDS`) and which character
asks it, ``game.legal_options()`` lists what they may choose, and
``game.apply(option)`` applies one choice and runs the game forward to the next decision.
Every rule is cited by its number in ``shared/RULINGS.md`` (F1-F43).

The engine is two modules: :mod:`.state` (players, bank, auctions, the table primitives) and
:mod:`.flow` (turns, auctions, tie-breaks, decisions: :class:`Game`). This one gathers their
public names, so ``from dragonstones_env.games.dragonstones.engine import Game, replay`` works as before.

Options are tuples whose first item names the option kind:

=================================  ===========================================================
``("bid", fairy, common, black, amulet)``  a gold bid (F10); ``black``/``amulet`` are 0 or 1
``("tiebreak", silver, amulet)``   a silver tie-break bid (F14)
``("pay", red, blue, yellow)``     pay these stones for a power (Magician, Wizard, Sorcerer,
                                   Enchantress, Sorcerer's Apprentice)
``("take",)``                      take the alternative of a pay-or-take power (F15)
``("colour", c)``                  a colour (Ancient Dragon, Rainbow Dragon, Troll)
``("target", seat)``               the Brigand's victim
``("steal", seat, what)``          the Thief's victim and a colour, or ``"coin"`` (F23)
``("character", name)``            the Ghost's or the Imp's pick
``("buy", colour, coin)``          one Merchant purchase, paid in ``"common"``, ``"fairy"``
                                   or ``"silver"`` (F36)
``("draw",)`` / ``("stop",)``      Rainbow Dragon: draw again or keep (F39); Merchant: stop
``("yes",)`` / ``("no",)``         Necromancer (F37), playing the Doppelganger (F28)
=================================  ===========================================================

Bids (gold and silver) are always asked, even when only the empty fist is possible, so
that the order of play never reveals what a player holds. Every other decision with a
single legal option is applied by the engine itself (it is recorded as an effect).
"""

from .flow import BID, DECISION_KINDS, TIEBREAK, ConservationError, Game, Handler, replay
from .state import (
    DEFAULT_MAX_TURNS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    START,
    STOCK,
    TOTALS,
    WIN_SCORE,
    Auction,
    Bank,
    Player,
    PowerUse,
    Table,
    bid_value,
)

__all__ = [
    "BID",
    "DECISION_KINDS",
    "DEFAULT_MAX_TURNS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "START",
    "STOCK",
    "TIEBREAK",
    "TOTALS",
    "WIN_SCORE",
    "Auction",
    "Bank",
    "ConservationError",
    "Game",
    "Handler",
    "Player",
    "PowerUse",
    "Table",
    "bid_value",
    "replay",
]
