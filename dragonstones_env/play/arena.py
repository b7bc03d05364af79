"""Play whole games between policies: the building block of evaluations and tournaments.

A policy is a :class:`~dragonstones_env.policies.Policy` (or any object with ``act(observation) -> int``);
before each game every seat's policy is seated (:func:`~dragonstones_env.policies.seat_all`: told the table,
reseeded by the one rule from the game's seed), and it is asked through
:func:`dragonstones_env.policies.decide`, so that a search policy gets its seat's information state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dragonstones_env.policies import decide, seat_all


@dataclass(frozen=True)
class GameResult:
    seed: int
    seats: tuple[str, ...]  # the name of the policy in each seat
    rewards: tuple[float, ...]  # final reward of each seat
    winners: tuple[int, ...]  # seats that won (empty when truncated)
    truncated: bool
    steps: int
    extra: dict[str, Any] = field(default_factory=dict)  # what play_game's ``inspect`` read from the game

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "seats": list(self.seats),
            "rewards": list(self.rewards),
            "winners": list(self.winners),
            "truncated": self.truncated,
            "steps": self.steps,
            **self.extra,
        }


def play_game(make_env: Callable[[], Any], policies: Sequence[Any], names: Sequence[str], seed: int,
              inspect: Callable[[Any], dict[str, Any]] | None = None,
              on_action: Callable[[str, int], None] | None = None) -> GameResult:
    """One game: ``policies[i]`` plays seat ``i`` (agent ``player_i``).

    ``inspect``, if given, is called with the finished game's engine (``env.unwrapped.game``)
    and its dict is kept as ``GameResult.extra``: figures such as game length in turns live in
    the engine, which is gone once this returns. ``on_action``, if given, is told every action
    before it is played, with its agent (the golden streams record them so).
    """
    e = make_env()
    e.reset(seed=seed)
    policies = seat_all(e, policies, seed)  # each seat's seed from the game's: the same game wherever it is played
    totals = dict.fromkeys(e.possible_agents, 0.0)
    steps = 0
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last(observe=False)  # decide() observes
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        # decide: a search policy is handed the seat's information state before it acts
        action = decide(policies[e.possible_agents.index(agent)], e, agent)
        if on_action is not None:
            on_action(agent, int(action))
        e.step(action)
        steps += 1
    rewards = tuple(totals[a] for a in e.possible_agents)
    raw = e.unwrapped
    winners = tuple(raw.game.winners)
    truncated = not winners and bool(raw.game.truncated)
    extra = {} if inspect is None else dict(inspect(raw.game))
    return GameResult(seed, tuple(names), rewards, winners, truncated, steps, extra)


def copies_match(make_env: Callable[[], Any], copies: Sequence[Any], games: int, seed: int = 0,
                 on_game: Callable[[], None] | None = None) -> dict[str, Any]:
    """A table of ``copies`` (one policy instance a seat, the same weights) for ``games`` games
    (``on_game`` is called after each: a progress bar).

    The table a learner never faces alone: copies can stall where no bot would (DrachenSchatten's
    two keys restore each other for ever, D4), so the count of games cut off at the step limit is
    the figure to read; a shipped policy has none (tests/test_policies.py).
    """
    truncated = steps = 0
    for g in range(games):
        result = play_game(make_env, copies, ["copy"] * len(copies), seed + g)
        truncated += result.truncated
        steps += result.steps
        if on_game is not None:
            on_game()
    return {"players": len(copies), "games": games, "truncated": truncated, "mean_steps": steps / max(games, 1)}


def copies_summary(result: dict[str, Any], who: str = "the learner") -> str:
    """One line of :func:`copies_match`'s result, as the trainers print it."""
    stall = " (a stall: a policy shipped here leaves none, tests/test_policies.py)" if result["truncated"] else ""
    return (f"{result['players']} copies of {who} left {result['truncated']} of {result['games']} games to the "
            f"step limit{stall}")


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    # rounding may put a bound a hair on the wrong side of p at 0 or at 1: the interval holds p
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def seat_rotated_match(
    make_env: Callable[[], Any],
    hero: Any,
    opponents: Sequence[Any],
    games: int,
    seed: int = 0,
    on_game: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """``hero`` against ``opponents`` (one per other seat), the hero's seat rotating each game
    (``on_game`` is called after each: a progress bar).

    Returns the hero's wins, games, win rate and its 95% interval.
    """
    n = len(opponents) + 1
    wins = 0.0
    truncated = 0
    for g in range(games):
        seat = g % n
        seats = list(opponents)
        seats.insert(seat, hero)
        names = ["opponent"] * n
        names[seat] = "hero"
        result = play_game(make_env, seats, names, seed + g)
        if seat in result.winners:
            wins += 1.0 / len(result.winners)
        truncated += result.truncated
        if on_game is not None:
            on_game()
    low, high = wilson_interval(wins, games)
    return {"wins": wins, "games": games, "rate": wins / games, "ci95": (low, high), "truncated": truncated}
