"""The Fist of Dragonstones bots: the heuristic (:class:`HeuristicPolicy`) and the zoo built on it.

``params`` (the numbers), ``table`` (the observation, read), ``values`` (what each character is
worth), ``bidding``, ``choices`` (every other decision), ``policy`` (the bot), ``zoo`` (styles).
"""

from __future__ import annotations

from .params import PARAMS, Params
from .policy import HeuristicPolicy
from .table import Seat, Table, read

__all__ = ["PARAMS", "HeuristicPolicy", "Params", "Seat", "Table", "read"]
