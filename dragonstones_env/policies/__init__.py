"""Policies that take a seat at the table: bots, trained checkpoints, and the registry.

A policy is a :class:`Policy`: ``act(observation) -> int``, where ``observation`` is the AEC
observation dict (``"observation"``, ``"action_mask"``); it never returns a masked action. What else
it may offer (a reset per game, batched acting, action probabilities, a critic, the seat's
information state) are the named methods of :class:`Policy`, with defaults; see
:mod:`dragonstones_env.policies.base`. Tables seat a policy for each game with :func:`seat` and a
:class:`Table`, and ask it through :func:`decide`.

>>> from dragonstones_env.policies import load_policy
>>> bot = load_policy("heuristic")
>>> load_policy("random", seed=3)  # doctest: +ELLIPSIS
RandomPolicy(seed=3)

Your own network: :func:`export_sb3` and :func:`export_torch` write a checkpoint folder that
``load_policy(folder)`` plays; :func:`from_torch` and :func:`from_callable` seat a live one
(docs/bring-your-own-learner.md).
"""

from .base import Capabilities, Policy, PolicyError, RandomPolicy, Table, as_policy, seat, seat_seed
from .export import export_sb3, export_torch, from_callable, from_torch
from .information import InformationState, decide, information_state, seat_all, table_of
from .registry import ZOO, available, load_policy, zoo

__all__ = ["ZOO", "Capabilities", "InformationState", "Policy", "PolicyError", "RandomPolicy", "Table",
           "as_policy", "available", "decide", "export_sb3", "export_torch", "from_callable", "from_torch",
           "information_state", "load_policy", "seat", "seat_all", "seat_seed", "table_of", "zoo"]
