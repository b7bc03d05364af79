"""The heuristic's parameters: every number it plays by, in one frozen dataclass.

Utilities are in one unit throughout (a common gold is worth :attr:`Params.common` of them);
a zoo style tilts the valuation with ``dataclasses.replace(PARAMS, ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Params:
    """What the heuristic bot values and how it models its opponents (defaults: the shipped bot)."""

    # ---- the worth of a position (values.py)
    U: tuple[float, ...] = (0.0, 12.0, 28.0, 80.0)
    """Worth of a score of 0, 1, 2, 3 (3 wins, F17)."""
    D: tuple[float, ...] = (0.55, 0.33, 0.18, 0.09, 0.04, 0.02)
    """A scoring route's discount by the stones it still misses (0, 1, 2, ... missing)."""
    second_route: float = 0.25
    """Share of the second best scoring route counted in the stones' potential."""
    stone_base: float = 0.3
    """Worth of every stone for its flexibility (Quack Wizard, Merchant, Troll ...)."""
    common: float = 1.5
    """One common gold (permanent, F11)."""
    silver: float = 0.4
    """One silver."""
    fairy: float = 2.5
    """One fairy gold kept for good (Fairy, Enchantress, Merchant, Necromancer: F30, F36, F37)."""
    amulet: float = 4.0
    """One amulet (F34; lost to the bank when bid, F11)."""
    black: float = 2.0
    """The Witch's black coin before the threats it could curse are counted (F19)."""
    doppelganger: float = 3.0
    """Holding the Doppelganger, and the least second use worth playing it (F28)."""

    # ---- what opponents could do with a character
    threat_point: float = 4.0
    """Denial worth of a point an opponent could score with a character."""
    threat_win: float = 25.0
    """Denial worth of a character that would win an opponent the game."""
    denial: float = 0.5
    """Share of a character's threat added to its worth when bidding (and at the Imp, F35)."""
    harm: float = 0.15
    """Weight of an opponent's loss in a power's choice: ``harm * (1 + his score)``."""

    # ---- bidding (bidding.py)
    tie_share: float = 0.4
    """Share of a gold tie counted as a win (the tie-break may go either way, F14)."""
    opp_black_use: float = 0.5
    """Chance an opponent holding a black coin curses this auction (F12)."""
    curse_min: float = 8.0
    """Least threat worth the bot's own black coin."""
    zero_prior: float = 0.9
    """Prior chance that an opponent bids nothing ..."""
    zero_weight: float = 2.0
    """... worth this many auctions of this turn's evidence."""
    zero_if_scoring: float = 1.0
    """Factor on that chance when he could score with the character (1: no change)."""
    tie_zero: float = 0.3
    """Chance an opponent bids no silver in a tie-break (F14)."""
    jitter: float = 0.1
    """Random spread of the bids' utilities (share of the character's value): copies of the bot rarely tie."""


PARAMS = Params()
"""The shipped heuristic's parameters."""
