"""Fist of Dragonstones with the example deck (``examples/characters.yaml``, issue #16), as a
game of its own for the contract tests: the env's options default to the example cards, so
every contract test (API, seeds, masks, determinism, deep copies, replay, Gymnasium and SB3
checkers) runs with custom characters in the special pile. Registered only for the tests
that take it, like the toy auction."""

from __future__ import annotations

from pathlib import Path

from pettingzoo.utils import wrappers

from dragonstones_env.games import dragonstones as fist
from dragonstones_env.games.dragonstones import custom
from dragonstones_env.games.dragonstones.engine import DEFAULT_MAX_TURNS, Game
from dragonstones_env.registry import GameSpec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "characters.yaml"
DECK = custom.make_deck(EXAMPLE)


class ExampleGame(Game):
    """The engine with the example deck."""

    def __init__(self, num_players: int = 4, seed: int | None = None, max_turns: int = DEFAULT_MAX_TURNS):
        super().__init__(num_players, seed=seed, max_turns=max_turns, deck=DECK)


class raw_env(fist.raw_env):
    OPTIONS = {**fist.raw_env.OPTIONS, "characters": str(EXAMPLE)}


def env(**kwargs):
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


SPEC = GameSpec(
    id="dragonstones-examples", title="Fist of Dragonstones, example deck", raw_env=raw_env, env=env,
    engine=ExampleGame, replay=custom.replay, decode=fist.decode, default_bot="random",
    # default_bot "random": the heuristic names its game "dragonstones" (it plays this deck too:
    # tests/test_custom_characters.py)
    gym_id="DragonstonesExamples-v0", default_players=4, action_table=fist.actions.layout_table,
    observation_table=fist.observation.layout_table, zoo=fist.SPEC.zoo, figures=fist.figures,
)
