"""TorchRL on a dragonstones_env game, through TorchRL's own PettingZoo adapter: rollouts and REINFORCE.

``torchrl.envs.PettingZooWrapper(dragonstones_env.env(...), use_mask=True, return_state=True)`` with no
wrapper of ours: one group per agent, each with its observation, its ``action_mask`` and its infos
(the same keys at every step), the global ``state`` (the env's ``state_space``: a centralised
critic's input, never a policy's) beside them. One shared policy network plays every seat; after
each rollout it takes one REINFORCE step on the acting seats' decisions (return: the rest of the
game's reward). Afterwards it plays as one seat against ``load_policy("random")`` in the others,
the seat rotating (``seat_rotated_match``), and the win rate is printed.

    pip install torchrl tensordict -e .       # or: make test-libraries (the .venv-libraries venv)
    python examples/torchrl_rollout.py --game drachenschatten --players 2 --steps 20000

Read top to bottom: hyperparameters, environment, policy, training, export, evaluation.
"""

from __future__ import annotations

import argparse

import torch
from torchrl.envs import PettingZooWrapper

from dragonstones_env import games
from dragonstones_env.play.arena import seat_rotated_match
from dragonstones_env.policies import from_torch, load_policy

# ---------------------------------------------------------------- hyperparameters
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--game", default="drachenschatten", help="a registered game id (dragonstones, drachenschatten)")
parser.add_argument("--players", type=int, default=2, help="table size")
parser.add_argument("--steps", type=int, default=20_000, help="environment steps of training (every seat's)")
parser.add_argument("--rollout", type=int, default=500, help="steps per rollout (one gradient step each)")
parser.add_argument("--hidden", type=int, default=128, help="policy network width")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--eval-games", type=int, default=20, help="games against random after training")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

torch.manual_seed(args.seed)
spec = games.get(args.game)

# ---------------------------------------------------------------- environment: TorchRL's own adapter
env = PettingZooWrapper(env=spec.env(num_players=args.players), use_mask=True, return_state=True, seed=args.seed)
groups = list(env.group_map)  # one group per agent: player_0, player_1, ...
size = env.observation_spec[groups[0], "observation", "observation"].shape[-1]
actions = env.full_action_spec[groups[0], "action"].space.n

# ---------------------------------------------------------------- policy: one network for every seat
net = torch.nn.Sequential(torch.nn.Linear(size, args.hidden), torch.nn.Tanh(), torch.nn.Linear(args.hidden, actions))
optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)


def masked_logits(observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The network's logits with illegal actions at -inf; a seat not to act (no legal action) gets zeros."""
    logits = net(observation).masked_fill(~mask, -torch.inf)
    return torch.where(mask.any(-1, keepdim=True), logits, torch.zeros_like(logits))


def policy(td):
    """Samples every group's action (the env applies the acting agent's only)."""
    with torch.no_grad():
        for g in groups:
            logits = masked_logits(td[g, "observation", "observation"], td[g, "action_mask"])
            td[g, "action"] = torch.distributions.Categorical(logits=logits).sample()
    return td


def returns_to_go(reward: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
    """Each step's reward to the end of its game (a game's rewards come at its end in both games)."""
    out, running = torch.zeros_like(reward), torch.zeros_like(reward[0])
    for t in reversed(range(len(reward))):
        running = reward[t] + running * (~done[t]).float()
        out[t] = running
    return out


# ---------------------------------------------------------------- training: rollouts and REINFORCE
steps = 0
while steps < args.steps:
    td = env.rollout(min(args.rollout, args.steps - steps), policy=policy, break_when_any_done=False)
    steps += td.batch_size[0]
    assert td["state"].shape[-1] == env.state_space.shape[0]  # the centralised critic's input, there for the taking
    loss, decisions = 0.0, 0
    for g in groups:
        acted = td[g, "mask"].squeeze(-1) & td[g, "action_mask"].any(-1).squeeze(-1)  # this seat decided here
        if not acted.any():
            continue
        reward = td["next", g, "reward"].reshape(-1)
        done = td["next", g, "done"].reshape(-1)
        ret = returns_to_go(reward, done)[acted]
        observation = td[g, "observation", "observation"][acted].squeeze(1)
        logits = masked_logits(observation, td[g, "action_mask"][acted].squeeze(1))
        logp = torch.log_softmax(logits, -1).gather(-1, td[g, "action"][acted].reshape(-1, 1)).squeeze(-1)
        loss = loss - (logp * ret).sum()
        decisions += int(acted.sum())
    optimizer.zero_grad()
    (loss / max(decisions, 1)).backward()
    optimizer.step()
print(f"trained {steps} steps of {spec.title} at {args.players} players with TorchRL")


# ---------------------------------------------------------------- export: something the package can seat
# a live policy of the package: the legal action of highest logit (deterministic), one forward pass a batch
hero = from_torch(net.eval(), game=spec.id, deterministic=True)

# ---------------------------------------------------------------- evaluation: one seat against random
opponents = [load_policy("random", seed=args.seed + i) for i in range(args.players - 1)]
match = seat_rotated_match(lambda: spec.env(num_players=args.players), hero, opponents, games=args.eval_games,
                           seed=args.seed)
low, high = match["ci95"]
print(f"win rate against random: {match['rate']:.3f} [{low:.3f}, {high:.3f}] over {match['games']} games "
      f"(parity {1 / args.players:.3f})")
