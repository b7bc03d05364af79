"""Fist of Dragonstones: the rules engine (pure Python) and its PettingZoo AEC environment.

| module | holds |
|---|---|
| ``cards`` | the characters and the stock (data) |
| ``engine`` | players, bank, auctions, turn flow and tie-breaks (F1-F18); the powers are passed in |
| ``powers`` | one function per character power (F19-F42) and the ``POWERS`` table |
| ``actions`` | the action families (the codec's table) |
| ``observation`` | the observation layout, the observer, ``decode`` |
| ``custom`` | custom characters as data or Python, the deck option (issue #16) |
| ``sampler`` | determinizations: the game as one seat may imagine it (the search's sampler, F43) |
| ``env`` | the PettingZoo env (``dragonstones_v1``) |

The package ends by registering the game (``dragonstones_env.games.get("dragonstones")``).
"""

from typing import Any

from dragonstones_env.registry import GameSpec, register

from . import actions, observation
from .custom import replay  # engine.replay, rebuilding a custom deck too (#16)
from .engine import Game
from .env import env, raw_env
from .observation import decode
from .sampler import sample_state


def figures(game: Game) -> dict[str, Any]:
    """Evaluation figures of a finished game: turns, auctions, auctions nobody won."""
    # An auction settles with one "outcome" event; winner None when passed, cursed or tied.
    outcomes = [ev for ev in game.record if ev.get("type") == "outcome"]
    return {"turns": game.turn, "auctions": len(outcomes), "unwon": sum(ev["winner"] is None for ev in outcomes)}


SPEC = register(GameSpec(
    id="dragonstones", title="Fist of Dragonstones", raw_env=raw_env, env=env, engine=Game, replay=replay,
    decode=decode, default_bot="heuristic", gym_id="Dragonstones-v0", default_players=4,
    action_table=actions.layout_table, observation_table=observation.layout_table,
    zoo=("value", "aggressor", "miser", "collector"), figures=figures,
    stall="share of auctions nobody wins (passed, cursed, or tied with no tie-break winner)",
    sample_state=sample_state,
))

__all__ = ["SPEC", "Game", "decode", "env", "figures", "raw_env", "replay", "sample_state"]
