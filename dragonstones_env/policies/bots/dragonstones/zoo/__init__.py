"""The zoo: rule-based Fist of Dragonstones bots of recognisable styles (one module each),
built on the heuristic's valuation (:mod:`..common` holds what they share).

``BOTS`` maps each bot's name to its factory ``make(seed) -> ZooPolicy``; the registry
(:mod:`dragonstones_env.policies.registry`) seats them by name.
"""

from __future__ import annotations

from . import aggressor, collector, miser, value

BOTS = {
    "value": value.make,
    "aggressor": aggressor.make,
    "miser": miser.make,
    "collector": collector.make,
}
