"""Helpers for the AEC environment tests of both games: random play, arranged DrachenSchatten tables."""

from __future__ import annotations

import numpy as np

from dragonstones_env import drachenschatten
from dragonstones_env.games.drachenschatten import actions as ds_actions


def random_step(e, rng: np.random.Generator) -> None:
    """One uniformly random legal action of the agent to move (None for a finished agent)."""
    obs, _, term, trunc, _ = e.last()
    if term or trunc:
        e.step(None)
        return
    e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def live_decisions(e):
    """Walk the game and yield ``(agent, observation)`` at each live decision; the caller steps it
    (an agent that has finished is stepped with None here)."""
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        yield agent, obs


def play_out(e, rng: np.random.Generator) -> dict[str, float]:
    """Random play to the end; every agent's rewards, collected through last()."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        totals[agent] += e.last()[1]
        random_step(e, rng)
    return totals


def play_until(e, rng, predicate, limit=5000) -> bool:
    """Random play until predicate(raw env) holds at a live decision; False if the game ended first."""
    for _ in range(limit):
        if e.unwrapped.game.over:
            return False
        if predicate(e.unwrapped):
            return True
        random_step(e, rng)
    return False


def arranged_ds(n, stacks=None, colls=None, current=0, filler_stack: int | None = 15):
    """A wrapped DrachenSchatten env at the start of ``current``'s turn with these cards (test-only
    ``DrachenSchattenGame.arrange``). ``stacks``: {stack: [card types, top first]}; two boots on
    ``filler_stack`` (None: none) keep D7 from ending the game."""
    e = drachenschatten.env(num_players=n)
    e.reset(seed=0)
    raw = e.unwrapped
    st = [[] for _ in range(16)]
    if filler_stack is not None:
        st[filler_stack] = ["boots turn-over", "boots turn-over"]
    for k, v in (stacks or {}).items():
        st[k] = list(v)
    raw.game.arrange(st, colls or [[] for _ in range(n)], current)
    raw.agent_selection = raw.possible_agents[raw.game.decision.player]
    return e


def act_ds(e, option) -> None:
    """Step the engine option ``option`` (absolute seats) as an action of the agent to move."""
    raw = e.unwrapped
    a = ds_actions.encode(option, raw.game.decision.player, raw.num_players)
    assert a in raw.legal_actions(), (option, raw.game.legal_options())
    e.step(a)
