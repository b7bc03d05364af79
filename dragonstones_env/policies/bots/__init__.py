"""The rule-based bots, by game: ``dragonstones`` (the heuristic and its zoo) and ``drachenschatten``.

``BOTS`` maps each bot's registry name to its factory ``make(seed) -> policy``; the registry
(:mod:`dragonstones_env.policies.registry`) seats them by name. ``ZOO_BOTS`` is the Fist zoo alone.
"""

from __future__ import annotations

from .drachenschatten import DrachenSchattenHeuristic
from .dragonstones import HeuristicPolicy
from .dragonstones.zoo import BOTS as ZOO_BOTS

BOTS = {
    "heuristic": HeuristicPolicy,
    "ds-heuristic": DrachenSchattenHeuristic,
    **ZOO_BOTS,
}

__all__ = ["BOTS", "ZOO_BOTS", "DrachenSchattenHeuristic", "HeuristicPolicy"]
