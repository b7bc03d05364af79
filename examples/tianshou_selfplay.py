"""Tianshou self-play on a dragonstones_env game, through Tianshou's own PettingZoo adapter.

Every seat is played by ONE shared DQN (Tianshou's ``MultiAgentOffPolicyAlgorithm`` given the same
algorithm for each agent), on ``tianshou.env.PettingZooEnv(dragonstones_env.env(...))`` with no wrapper
of ours: the env's masks become Tianshou's ``obs.mask`` and its infos keep the same keys at every
step, which Tianshou's replay buffer needs. Afterwards the learnt Q-network plays as one seat against
``load_policy("random")`` in the others, the seat rotating (``seat_rotated_match``), and the win rate
is printed.

    pip install "tianshou==2.0.1" -e .        # or: make test-libraries (the .venv-libraries venv)
    python examples/tianshou_selfplay.py --game drachenschatten --players 2 --steps 20000

Read top to bottom: hyperparameters, environment, learner, training, export, evaluation.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from dragonstones_env import games
from dragonstones_env.play.arena import seat_rotated_match
from dragonstones_env.policies import from_torch, load_policy

# ---------------------------------------------------------------- hyperparameters
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--game", default="drachenschatten", help="a registered game id (dragonstones, drachenschatten)")
parser.add_argument("--players", type=int, default=2, help="table size")
parser.add_argument("--steps", type=int, default=20_000, help="environment steps of training (every seat's)")
parser.add_argument("--envs", type=int, default=2, help="tables collected in lockstep")
parser.add_argument("--hidden", type=int, nargs="*", default=[128, 128], help="Q-network hidden sizes")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--gamma", type=float, default=0.99)
parser.add_argument("--eps", type=float, default=0.2, help="epsilon-greedy exploration while training")
parser.add_argument("--buffer", type=int, default=20_000, help="replay buffer size (all tables)")
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--updates-per-step", type=float, default=0.1, help="gradient steps per environment step")
parser.add_argument("--target-update", type=int, default=200, help="gradient steps between target-net copies")
parser.add_argument("--eval-games", type=int, default=20, help="games against random after training")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

np.random.seed(args.seed)
torch.manual_seed(args.seed)
spec = games.get(args.game)


# ---------------------------------------------------------------- environment: Tianshou's own adapter
def make_env() -> PettingZooEnv:
    return PettingZooEnv(spec.env(num_players=args.players))


env = make_env()
observation_space = env.observation_space["observation"]  # the Dict's vector; the mask is Tianshou's obs.mask
training_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
training_envs.seed(args.seed)

# ---------------------------------------------------------------- learner: one DQN for every seat
net = Net(state_shape=observation_space.shape, action_shape=env.action_space.n, hidden_sizes=args.hidden)
dqn = DQN(
    policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=args.eps,
                                   eps_inference=0.0),
    optim=AdamOptimizerFactory(lr=args.lr),
    gamma=args.gamma,
    target_update_freq=args.target_update,
)
algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn] * args.players, env=env)  # self-play: shared weights

# ---------------------------------------------------------------- training
collector = Collector[CollectStats](algorithm, training_envs, VectorReplayBuffer(args.buffer, args.envs),
                                    exploration_noise=True)
collector.reset()
result = algorithm.run_training(OffPolicyTrainerParams(
    training_collector=collector,
    test_collector=None,
    max_epochs=1,
    epoch_num_steps=args.steps,
    collection_step_num_env_steps=10,
    batch_size=args.batch,
    update_step_num_gradient_steps_per_sample=args.updates_per_step,
    test_in_training=False,
    show_progress=False,
    multi_agent_return_reduction=lambda returns: returns[:, 0],  # player_0's (zero-sum: every seat's sum to 0)
))
print(f"trained {args.steps} steps of {spec.title} at {args.players} players with Tianshou")


# ---------------------------------------------------------------- export: something the package can seat
class QValues(torch.nn.Module):
    """Tianshou's Net returns ``(values, state)``: the values alone, the logits ``from_torch`` reads."""

    def __init__(self, net: torch.nn.Module):
        super().__init__()
        self.net = net

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)[0]


# a live policy of the package: the legal action of highest value (deterministic), one forward pass a batch
hero = from_torch(QValues(net).eval(), game=spec.id, deterministic=True)

# ---------------------------------------------------------------- evaluation: one seat against random
opponents = [load_policy("random", seed=args.seed + i) for i in range(args.players - 1)]
match = seat_rotated_match(lambda: spec.env(num_players=args.players), hero, opponents, games=args.eval_games,
                           seed=args.seed)
low, high = match["ci95"]
print(f"win rate against random: {match['rate']:.3f} [{low:.3f}, {high:.3f}] over {match['games']} games "
      f"(parity {1 / args.players:.3f})")
