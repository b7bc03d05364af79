"""Self-play with masked REINFORCE in plain torch, CleanRL style: one file, top to bottom.

The learner plays every seat of the package's PettingZoo AEC env; each seat's decisions are scored by
that seat's final reward (+1 a win, -1/(n-1) a loss) minus the batch's mean. Then the actor is exported
as a checkpoint folder (``export_torch``), loaded back with ``load_policy(folder)`` (numpy only, as anyone
you send it to would) and seated against ``random`` and ``heuristic`` with the seats rotated.

    python examples/cleanrl_selfplay.py --steps 20000 --games 200

Docs: docs/bring-your-own-learner.md.
"""

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from dragonstones_env import games
from dragonstones_env.play.arena import seat_rotated_match
from dragonstones_env.policies import export_torch, load_policy

# ---------------------------------------------------------------- hyperparameters (all of them)
GAME = "dragonstones"  # a registry id: "dragonstones" or "drachenschatten"
NUM_PLAYERS = 4
SEED = 1
HIDDEN = 64  # one hidden layer of this width, Tanh
LEARNING_RATE = 3e-3
STEPS_PER_UPDATE = 2048  # decisions (of all seats) per gradient step; whole games are played
ENTROPY_COEF = 0.01
MAX_GRAD_NORM = 0.5
EVAL_GAMES = 40  # games against each bot (seat rotated); --games overrides
OUT = "runs/cleanrl-selfplay"  # the exported checkpoint folder; --out overrides

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=20_000, help="decisions to train on (all seats together)")
parser.add_argument("--games", type=int, default=EVAL_GAMES, help="evaluation games against each bot")
parser.add_argument("--out", default=OUT, help="where the checkpoint folder is written")
args = parser.parse_args()

# ---------------------------------------------------------------- env, network, optimizer
spec = games.get(GAME)
torch.manual_seed(SEED)
rng = np.random.default_rng(SEED)
make_env = lambda: spec.env(num_players=NUM_PLAYERS)  # noqa: E731 -- a factory, as the arena takes it
env = make_env()
obs_size, num_actions = spec.raw_env.OBS_SIZE, spec.raw_env.NUM_ACTIONS
actor = nn.Sequential(nn.Linear(obs_size, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, num_actions))  # a plain MLP
optimizer = torch.optim.Adam(actor.parameters(), lr=LEARNING_RATE)


def masked_logits(observations, masks):
    logits = actor(torch.as_tensor(observations, dtype=torch.float32))
    return logits.masked_fill(torch.as_tensor(masks) == 0, -1e9)  # an illegal action gets no probability


# ---------------------------------------------------------------- training loop
step, game_seed, start = 0, SEED, time.time()
while step < args.steps:
    observations, masks, actions, returns = [], [], [], []
    while len(actions) < STEPS_PER_UPDATE and step + len(actions) < args.steps:
        env.reset(seed=game_seed)
        game_seed += 1
        mine = {agent: [] for agent in env.possible_agents}  # each seat's decisions in this game
        final = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            final[agent] += reward
            if terminated or truncated:
                env.step(None)
                continue
            with torch.no_grad():
                logits = masked_logits(observation["observation"][None], observation["action_mask"][None])
            action = int(torch.distributions.Categorical(logits=logits).sample())
            mine[agent].append(len(actions))
            observations.append(observation["observation"])
            masks.append(observation["action_mask"])
            actions.append(action)
            env.step(action)
        returns += [0.0] * (len(actions) - len(returns))
        for agent, indices in mine.items():
            for i in indices:
                returns[i] = final[agent]  # the game's end is the only reward: every decision gets it
    batch_returns = torch.as_tensor(returns, dtype=torch.float32)
    advantages = batch_returns - batch_returns.mean()
    dist = torch.distributions.Categorical(logits=masked_logits(np.array(observations), np.array(masks)))
    log_probs = dist.log_prob(torch.as_tensor(actions))
    loss = -(log_probs * advantages).mean() - ENTROPY_COEF * dist.entropy().mean()
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(actor.parameters(), MAX_GRAD_NORM)
    optimizer.step()
    step += len(actions)
    print(f"step {step:>7}  loss {loss.item():+.4f}  entropy {dist.entropy().mean().item():.3f}  "
          f"{step / (time.time() - start):.0f} steps/s")

# ---------------------------------------------------------------- export, load back, evaluate
folder = export_torch(actor, Path(args.out), game=GAME, card={"algorithm": "cleanrl-reinforce", "steps": step})
print(f"exported to {folder}/ (card.json, policy.npz)")
for bot in ("random", spec.default_bot):  # spec.default_bot: the game's own heuristic
    hero = load_policy(folder, seed=SEED)
    opponents = [load_policy(bot, seed=SEED + i) for i in range(NUM_PLAYERS - 1)]
    result = seat_rotated_match(make_env, hero, opponents, args.games, seed=10_000)
    low, high = result["ci95"]
    print(f"vs {NUM_PLAYERS - 1} x {bot}: win rate {result['rate']:.3f} [{low:.3f}, {high:.3f}] over "
          f"{result['games']} games (parity {1 / NUM_PLAYERS:.3f})")
