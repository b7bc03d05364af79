"""DrachenSchatten: the rules engine (pure Python) and its PettingZoo AEC environment.

>>> from dragonstones_env import drachenschatten
>>> e = drachenschatten.env(num_players=3)
>>> e.reset(seed=0)

The package ends by registering the game (``dragonstones_env.games.get("drachenschatten")``).
"""

from dragonstones_env.registry import GameSpec, LoopGuard, OlderVersion, register

from . import actions, guard, observation, present
from .cards import (
    CARD_NAMES,
    CARD_TYPE_OF_ID,
    CARDS,
    DECK_OF_ID,
    NUM_CARD_TYPES,
    NUM_CARDS,
    TYPE_INDEX,
    CardType,
)
from .env import LAYOUT_SIGNATURE_V0, env, raw_env
from .observation import decode
from .rules import DEFAULT_MAX_STEPS, GAME, NUM_STACKS, DrachenSchattenGame, read, replay
from .sampler import sample_state

Game = DrachenSchattenGame  # the engine under the name every game's engine has

SPEC = register(GameSpec(
    read_record=read, id=GAME, title="DrachenSchatten", raw_env=raw_env, env=env, engine=DrachenSchattenGame,
    replay=replay, decode=decode, default_bot="ds-heuristic", gym_id="DrachenSchatten-v0", default_players=2,
    action_table=actions.layout_table, observation_table=observation.layout_table,
    stall="n/a: DrachenSchatten has no auctions and cannot stall by passing (every turn must turn over a card "
          "of a finite deck); only object chains drag a game out, and the truncation rate counts those",
    sample_state=sample_state,
    # D6/D7: k winners +1/k each, the others -1/(n-k); at most k = n - 1 winners lose -1
    reward_range=lambda n: (-1.0, 1.0),
    # every decision is one applied option, and the game is truncated after max_steps of them
    max_decisions=lambda n, options: int(options["max_steps"]),
    presenter=present.PRESENTER,
    # v0 had no per-turn object uses (issue 52); its vector is v1's first floats, so its checkpoints
    # (policies/ds-champion-v2) play on at v1 tables through this view
    older=(OlderVersion("drachenschatten_v0", LAYOUT_SIGNATURE_V0, observation.OBS_SIZE_V0, observation.v0_view,
                        tuple(range(observation.OBS_SIZE_V0))),),
    # D4 lets two keys restore each other for ever; a card's "loop_guard" caps a type's uses a turn
    loop_guard=LoopGuard(guard.loop_guard, guard.LIMITS),
))

__all__ = [
    "CARDS",
    "CARD_NAMES",
    "CARD_TYPE_OF_ID",
    "DECK_OF_ID",
    "DEFAULT_MAX_STEPS",
    "NUM_CARDS",
    "NUM_CARD_TYPES",
    "NUM_STACKS",
    "SPEC",
    "TYPE_INDEX",
    "CardType",
    "DrachenSchattenGame",
    "Game",
    "decode",
    "env",
    "raw_env",
    "replay",
    "sample_state",
]
