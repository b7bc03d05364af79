"""How far one trained policy has moved from another, at the states it reaches itself.

    python -m tools.divergence champion runs/champion-anchored/anchor --games 100

Plays ``games`` games (``--game``, Fist by default) of POLICY against ``players - 1`` copies of ``--opponent`` (POLICY's
seat rotates), keeps the observation and action mask of each of POLICY's decisions, and
compares the two masked action distributions there: the mean KL(POLICY || REFERENCE) per decision
in nats, the mean log ratio of the action POLICY took (what ``imitate.anchor_kl`` charges,
training/anchor.py) and how often the two most likely actions agree. Both must be checkpoints
(they need action probabilities, which rule-based bots do not give).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from dragonstones_env import registry
from dragonstones_env.core.seeding import seat_seed
from dragonstones_env.play.arena import play_game
from dragonstones_env.policies import load_policy
from dragonstones_env.policies.checkpoint import CheckpointPolicy
from training.anchor import LOG_FLOOR


class _Recorder:
    """Plays as ``policy`` and keeps every observation and mask it acted on."""

    def __init__(self, policy: CheckpointPolicy):
        self.policy = policy
        self.observations: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.actions: list[int] = []

    def act(self, observation: dict[str, np.ndarray]) -> int:
        action = self.policy.act(observation)
        self.observations.append(np.asarray(observation["observation"], np.float32))
        self.masks.append(np.asarray(observation["action_mask"]).astype(bool))
        self.actions.append(action)
        return action


def _checkpoint(spec: str, seed: int) -> CheckpointPolicy:
    policy = load_policy(spec, seed=seed)
    if not isinstance(policy, CheckpointPolicy):
        raise SystemExit(f"{spec!r} is not a checkpoint: the divergence needs its action probabilities")
    return policy


def divergence(policy: str, reference: str, games: int, players: int = 4, opponent: str | None = None,
               seed: int = 0, game: str = "dragonstones") -> dict[str, Any]:
    """The figures of ``policy`` against ``reference`` over ``games`` seeded games (see the module
    docstring); ``opponent`` defaults to the game's own bot."""
    spec = registry.get(game)
    opponent = opponent or spec.default_bot
    recorder = _Recorder(_checkpoint(policy, seed))
    ref = _checkpoint(reference, seed)
    for g in range(games):
        seat = g % players
        seats = [recorder if i == seat else load_policy(opponent, seed=seat_seed(seed + g, i)) for i in range(players)]
        names = [policy if i == seat else opponent for i in range(players)]
        play_game(lambda: spec.env(num_players=players), seats, names, seed + g)
    obs, masks = np.stack(recorder.observations), np.stack(recorder.masks)
    p = recorder.policy.probabilities(obs, masks)
    q = ref.probabilities(obs, masks)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(p > 0, np.log(p), 0.0)
        log_q = np.maximum(np.log(q), LOG_FLOOR)
    kl = (p * (log_p - log_q)).sum(axis=1)
    taken = np.asarray(recorder.actions)
    rows = np.arange(len(taken))
    return {"policy": policy, "reference": reference, "games": games, "players": players, "opponent": opponent,
            "decisions": len(taken), "kl_mean": float(kl.mean()), "kl_median": float(np.median(kl)),
            "log_ratio_mean": float((log_p[rows, taken] - log_q[rows, taken]).mean()),
            "agreement": float((p.argmax(axis=1) == q.argmax(axis=1)).mean())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policy", help="the checkpoint that plays (any load_policy spec)")
    parser.add_argument("reference", help="the checkpoint it is compared with at the same states")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--opponent", help="the policy in the other seats (default: the game's own bot)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--game", default="dragonstones", choices=registry.ids())
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be >= 1, got {args.games}")
    try:
        registry.get(args.game).env(num_players=args.players)
    except ValueError as err:  # the game's own range, e.g. "num_players must be an int from 3 to 6, got 7"
        parser.error(f"--players: {err}")
    r = divergence(args.policy, args.reference, args.games, args.players, args.opponent, args.seed, args.game)
    print(f"{r['policy']} against {r['reference']} at its own states ({r['decisions']} decisions, {r['games']} "
          f"games of {r['players']} players, the others {r['opponent']}):")
    print(f"  KL(policy || reference) per decision: mean {r['kl_mean']:.3g} nats, median {r['kl_median']:.3g}")
    print(f"  log ratio of the action taken (the leash's charge / anchor_kl): mean {r['log_ratio_mean']:.3g}")
    print(f"  same most likely action: {r['agreement']:.3f}")


if __name__ == "__main__":
    main()
