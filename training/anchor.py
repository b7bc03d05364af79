"""A KL leash to the clone: PPO's reward pays for every nat the learner moves from where it started.

Why: champion v2 starts from a clone of the heuristic bot, and the league's PPO then drifts away
from it. The drift makes it stronger alone (0.40-0.83 against 3 of a zoo bot, 4 players) but
makes its crowd weak: one zoo bot among 3 copies wins 0.66-0.85, where among 3 heuristic bots
it wins 0.36-0.56 (docs/results.md, the crowd matrix). The same happened when the teacher was the
value bot. AlphaStar kept its league agents near their supervised start with a KL term; here
the term is in the reward, as in KL-regularised fine-tuning of language models (Ziegler et al.
2019, InstructGPT): at each of the learner's decisions

    reward -= anchor_kl * (log pi(a|s) - log pi_anchor(a|s))

whose expectation under pi is ``anchor_kl`` times KL(pi || pi_anchor) at that state. PPO then
maximises the return minus the summed divergence along the game: it leaves the clone only where
winning pays for it.

The anchor is the policy as it was before PPO's first step (the clone, or the model a
``--finetune`` run starts from), saved as an ordinary checkpoint folder (``<run>/anchor``: numpy
weights, read back with the same checks as any checkpoint) so that ``--resume`` uses the same one.
:func:`penalty` is numpy only; ``training/train.py`` applies it to the rollout buffer at the end
of each rollout and recomputes the advantages.
"""

from __future__ import annotations

import numpy as np

from dragonstones_env.policies.checkpoint import CheckpointPolicy

# The anchor's probability of an action it finds very unlikely underflows to 0: its log is
# floored here, so that one such decision costs at most anchor_kl * 46 (and never inf).
LOG_FLOOR = float(np.log(1e-20))


def penalty(anchor: CheckpointPolicy, observations: np.ndarray, masks: np.ndarray, actions: np.ndarray,
            log_probs: np.ndarray, coef: float) -> tuple[np.ndarray, float]:
    """The reward to subtract at each decision of a rollout, and the mean log ratio (an
    estimate of KL(pi || anchor) per decision).

    Shapes are the rollout buffer's: observations ``(steps, envs, obs)``, masks ``(steps, envs,
    actions)``, actions ``(steps, envs[, 1])``, log_probs ``(steps, envs)`` (the learner's, when
    it acted); the penalty has the shape of ``log_probs``.
    """
    shape = np.shape(log_probs)
    obs = np.asarray(observations).reshape(-1, np.shape(observations)[-1])
    legal = np.asarray(masks).reshape(-1, np.shape(masks)[-1])
    taken = np.asarray(actions).reshape(-1).astype(np.int64)
    if not (len(obs) == len(legal) == len(taken) == int(np.prod(shape))):
        raise ValueError(f"rollout arrays disagree: {len(obs)} observations, {len(legal)} masks, "
                         f"{len(taken)} actions, {int(np.prod(shape))} log-probabilities")
    probs = anchor.probabilities(obs, legal)[np.arange(len(taken)), taken]
    with np.errstate(divide="ignore"):
        anchor_log = np.maximum(np.log(probs), LOG_FLOOR)
    ratio = np.asarray(log_probs, np.float64).reshape(-1) - anchor_log
    return (coef * ratio).reshape(shape).astype(np.float32), float(ratio.mean())
