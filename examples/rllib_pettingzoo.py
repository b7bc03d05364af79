"""RLlib PPO self-play on a dragonstones_env game, through RLlib's own PettingZoo adapter.

Every seat is played by ONE shared policy (all agents map to the module ``shared``), learnt with PPO on
RLlib's new API stack (RLModule, EnvRunner, Learner) on ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``
around the AEC env, with no wrapper of ours. The learnt actor is then exported to a checkpoint folder
(``card.json`` + ``policy.npz``), loaded back with ``load_policy(folder)`` (numpy only), and seated as one
player against ``load_policy("random")`` in the others, the seat rotating (``seat_rotated_match``).

    pip install torch==2.13.0 && pip install -e ".[rllib]"   # or: make test-rllib (the .venv-rllib venv)
    python examples/rllib_pettingzoo.py --game drachenschatten --iterations 5
    python examples/rllib_pettingzoo.py --tiny                # a smoke run (well under a minute)

Run from a checkout: it uses the repo's masking RLModule (training/rllib_module.py). Read top to bottom:
hyperparameters, environment, learner, training, export, evaluation. A few iterations show the plumbing;
``training/train_rllib.py`` is the trainer for strong policies (league, snapshots, evaluations).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.tune.registry import register_env

# training/ holds the repo's trainers and is not part of the installed package: this example runs from a
# checkout, and finds it (and the checkout's dragonstones_env) from its own location.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dragonstones_env import games
from dragonstones_env.play.arena import seat_rotated_match
from dragonstones_env.policies import export_torch, load_policy
from training.rllib_module import MaskedMLPModule

# ---------------------------------------------------------------- hyperparameters
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--game", default="drachenschatten", help="a registered game id (dragonstones, drachenschatten)")
parser.add_argument("--players", type=int, default=None, help="table size (default: the game's)")
parser.add_argument("--iterations", type=int, default=5, help="PPO iterations (one batch of env steps each)")
parser.add_argument("--batch", type=int, default=2000, help="env steps per iteration (every seat's decisions)")
parser.add_argument("--minibatch", type=int, default=250, help="SGD minibatch size")
parser.add_argument("--epochs", type=int, default=4, help="passes over each batch")
parser.add_argument("--hidden", type=int, nargs="*", default=[128, 128], help="actor (and critic) hidden sizes")
parser.add_argument("--activation", default="tanh", choices=["tanh", "relu"])
parser.add_argument("--lr", type=float, default=3e-4)
parser.add_argument("--gamma", type=float, default=0.995)
parser.add_argument("--gae-lambda", type=float, default=0.95)
parser.add_argument("--clip", type=float, default=0.2, help="PPO ratio clipping")
parser.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
parser.add_argument("--vf-coef", type=float, default=0.5, help="value loss weight")
parser.add_argument("--envs", type=int, default=2, help="tables stepped together by the (one, local) env runner")
parser.add_argument("--eval-games", type=int, default=None, help="games against random after training (20; tiny: 4)")
parser.add_argument("--out", default=None, help="checkpoint folder (default: runs/policies/rllib-pettingzoo-<game>)")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--tiny", action="store_true",
                    help="a smoke run: 1 iteration of 200 env steps, a 32-wide network, 4 evaluation games")
args = parser.parse_args()
if args.iterations < 1:
    parser.error(f"--iterations must be at least 1, got {args.iterations}")
if args.tiny:
    args.iterations, args.batch, args.minibatch, args.epochs, args.hidden = 1, 200, 100, 1, [32]
    args.envs = 1
if args.eval_games is None:
    args.eval_games = 4 if args.tiny else 20

try:
    spec = games.get(args.game)
    players = args.players or spec.default_players
    spec.env(num_players=players)  # a bad game or table size stops here, before Ray starts, with the env's reason
except (KeyError, ValueError) as err:
    parser.error(str(err))
out = Path(args.out or f"runs/policies/rllib-pettingzoo-{spec.id}")
np.random.seed(args.seed)
torch.manual_seed(args.seed)
torch.set_num_threads(1)  # a small MLP: more threads only fight the games for the cores


# ---------------------------------------------------------------- environment: RLlib's own adapter
# PettingZooEnv steps the AEC game one agent at a time: each step returns the observation of the agent to
# act next (and, at the end, every agent's last one), so all seats are agents of one RLlib episode.
def make_env(config: dict) -> PettingZooEnv:
    return PettingZooEnv(spec.env(num_players=config["num_players"]))


register_env("pettingzoo_" + spec.id, make_env)
MODULE = "shared"

# ---------------------------------------------------------------- learner: PPO, one masking module for every seat
# Why not RLlib's own ActionMaskingTorchRLModule (ray.rllib.examples.rl_modules.classes.action_masking_rlm): it
# requires the observation Dict's keys "action_mask" and "observations", and PettingZoo's (this env's) are
# "action_mask" and "observation"; renaming them would need a wrapper of ours around RLlib's adapter.
# MaskedMLPModule reads {"observation", "action_mask"} as they are, gives illegal actions probability 0, and
# its actor is a plain MLP that exports exactly to policy.npz.
config = (
    PPOConfig()
    .framework("torch")
    # RLlib's env checker steps random actions ignoring the mask, which the game refuses (ValueError)
    .environment(env="pettingzoo_" + spec.id, env_config={"num_players": players}, disable_env_checking=True)
    # no actors: sample and learn in this process (a small MLP, a few iterations; the 2-core dev machine)
    .env_runners(num_env_runners=0, num_envs_per_env_runner=args.envs)
    .learners(num_learners=0)
    .multi_agent(policies={MODULE}, policy_mapping_fn=lambda agent_id, episode, **kwargs: MODULE)  # self-play
    .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
        MODULE: RLModuleSpec(module_class=MaskedMLPModule,
                             model_config={"hiddens": args.hidden, "activation": args.activation}),
    }))
    .training(lr=args.lr, train_batch_size_per_learner=args.batch, minibatch_size=args.minibatch,
              num_epochs=args.epochs, gamma=args.gamma, lambda_=args.gae_lambda, clip_param=args.clip,
              entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef)
    .debugging(seed=args.seed, log_level="ERROR")
)

# ---------------------------------------------------------------- training
# address="local": a private Ray instance, never a cluster someone else started on this machine
ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
algo = config.build_algo()
start = time.perf_counter()
for i in range(args.iterations):
    result = algo.train()
    runners = result[ENV_RUNNER_RESULTS]
    steps = int(runners[NUM_ENV_STEPS_SAMPLED_LIFETIME])
    print(f"iteration {i + 1}: {steps} env steps, {int(runners.get('num_episodes_lifetime', 0))} games")
print(f"trained {steps} steps of {spec.title} at {players} players with RLlib PPO "
      f"({time.perf_counter() - start:.1f} s)")

# ---------------------------------------------------------------- export: a checkpoint folder the package loads
# the learner's actor (synced to the driver's env runner after each iteration): a plain MLP, so a
# checkpoint folder that load_policy plays with numpy only
out.mkdir(parents=True, exist_ok=True)
export_torch(algo.get_module(MODULE).actor, out, game=spec.id, env_options={},
             card={"algorithm": "RLlibPPO", "steps": steps, "config": vars(args),
                   "adapter": "ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv",
                   "machine": {"ray": ray.__version__, "torch": torch.__version__}})
algo.stop()
ray.shutdown()
print(f"exported the actor to {out}")

# ---------------------------------------------------------------- evaluation: one seat against random
hero = load_policy(str(out), seed=args.seed)  # numpy only: what a user of the package plays
opponents = [load_policy("random", seed=args.seed + i) for i in range(players - 1)]
match = seat_rotated_match(lambda: spec.env(num_players=players), hero, opponents, games=args.eval_games,
                           seed=args.seed)
low, high = match["ci95"]
print(f"win rate against random: {match['rate']:.3f} [{low:.3f}, {high:.3f}] over {match['games']} games "
      f"(parity {1 / players:.3f})")
