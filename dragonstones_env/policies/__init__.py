"""Policies that take a seat at the table: bots, trained checkpoints, and the registry.

A policy is any object with ``act(observation) -> int``, where ``observation`` is the AEC
observation dict (``"observation"``, ``"action_mask"``); it never returns a masked action.
It may also have ``act_batch(observations, masks) -> np.ndarray`` for speed, and a policy that
searches (``ismcts``) has ``observe_game(info)``: tables seat policies through :func:`decide`,
which hands it the seat's information state first (:mod:`.information`).

>>> from dragonstones_env.policies import load_policy
>>> bot = load_policy("heuristic")
>>> load_policy("random", seed=3)  # doctest: +ELLIPSIS
RandomPolicy(seed=3)
"""

from .information import InformationState, decide, information_state
from .registry import ZOO, Policy, PolicyError, RandomPolicy, available, load_policy, zoo

__all__ = ["ZOO", "InformationState", "Policy", "PolicyError", "RandomPolicy", "available", "decide",
           "information_state", "load_policy", "zoo"]
