"""The trainers' own evaluations (training/train.py, training/train_rllib.py, training/exploit.py).

Both play at the run's evaluation table: ``eval.players`` seats with the run's deck (its
``characters`` and ``exclude``, checked; rule bots are told the deck), the learner seeing it as it
learns (``cfg.learner_view()``: a table-mode learner's view of a recall table). A trainer hands in
the learner as ``learner(seed=...) -> CheckpointPolicy``, its weights wrapped its own way (an SB3
model, RLlib's plain weights): the only thing the two trainers do differently here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from dragonstones_env.core.seeding import seat_seed
from dragonstones_env.evaluation.facts import checked_options
from dragonstones_env.play.arena import copies_match, seat_rotated_match
from dragonstones_env.policies import load_policy
from dragonstones_env.policies.checkpoint import CheckpointPolicy

from .config import RunConfig

Learner = Callable[..., CheckpointPolicy]  # learner(seed=...): the learner's current weights as a policy


def deck_options(cfg: RunConfig) -> dict[str, Any]:
    """The config's custom deck (``characters``, ``exclude``) as env options; empty for the box's deck."""
    return {k: v for k, v in cfg.env_options().items() if k in ("characters", "exclude")}


def eval_table(cfg: RunConfig) -> tuple[Callable[[], Any], Any]:
    """What the evaluations play at: ``eval.players`` seats with the config's deck (checked), and that
    deck (None: the box's), which rule bots are told."""
    options, deck = checked_options(cfg.game, cfg.eval.players, deck_options(cfg))
    return partial(cfg.spec.env, num_players=cfg.eval.players, **options), deck


def against_bots(learner: Learner, cfg: RunConfig, games: int, opponent: str, seed: int,
                 on_game: Callable[[], None] | None = None) -> dict[str, Any]:
    """The learner (sampling) in one seat against ``opponent`` bots in the others, seats rotated
    (``on_game`` after each game: a progress bar)."""
    make, _ = eval_table(cfg)
    # the arena seats them at the deck's table (a rule bot values the custom cards), reseeded per game
    others = [load_policy(opponent, seed=seat_seed(seed, i)) for i in range(1, cfg.eval.players)]
    return seat_rotated_match(make, learner(seed=seed), others, games, seed=seed, on_game=on_game)


def copies(learner: Learner, cfg: RunConfig, games: int, seed: int,
           on_game: Callable[[], None] | None = None) -> dict[str, Any]:
    """``eval.players`` copies of the learner (sampling, each seat its own seed) at one table: how many
    games they leave to the step limit, which no table of bots shows."""
    make, _ = eval_table(cfg)
    return copies_match(make, [learner(seed=seat_seed(seed, i)) for i in range(cfg.eval.players)], games, seed=seed,
                        on_game=on_game)
