"""Train a MaskablePPO briefly, export it, and evaluate it with ``dragonstones evaluate``; and seat an
arbitrary torch module in the same evaluation through ``--policy-factory``.

    python examples/sb3_export.py --steps 20000 --games 100

1. ``gymnasium.make("Dragonstones-v0", ...)``: one learner against ``random`` bots; sb3-contrib's
   MaskablePPO reads the env's ``action_masks()``.
2. ``export_sb3(model, folder)``: card.json + policy.npz + value.npz, which ``load_policy(folder)`` plays
   with numpy only (model.zip, SB3's pickle, is not written: nobody needs to unpickle it to play).
3. ``dragonstones evaluate --policies FOLDER tiny heuristic --policy-factory tiny=sb3_export:make_tiny``:
   the folder by its path, and ``make_tiny`` below (any torch module, live through ``from_torch``) by
   the name the factory gives it. ``--policy-factory`` RUNS that code: this file is imported by the
   evaluation (and by each worker process), which is why the training sits under ``__main__``.

Docs: docs/bring-your-own-learner.md.
"""

import argparse
import sys
from pathlib import Path

import torch
from torch import nn

from dragonstones_env.policies import from_torch

# ---------------------------------------------------------------- hyperparameters
GAME_ID = "Dragonstones-v0"
GAME = "dragonstones"
NUM_PLAYERS = 4
SEED = 0
NET_ARCH = [64, 64]
N_STEPS = 256
BATCH_SIZE = 64


class TinyNet(nn.Module):
    """Any torch module from observation batches to logits: not a plain MLP (a skip connection), so it
    cannot be a checkpoint folder, but from_torch seats it live."""

    def __init__(self, obs_size: int = 1194, num_actions: int = 1552, hidden: int = 32):
        super().__init__()
        self.encode = nn.Linear(obs_size, hidden)
        self.head = nn.Linear(hidden, num_actions)
        self.skip = nn.Linear(obs_size, num_actions, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.encode(x))) + 0.1 * self.skip(x)


def make_tiny(seed: int | None = None):
    """The factory ``--policy-factory tiny=sb3_export:make_tiny`` calls: a policy (here an untrained
    TinyNet, standing in for yours; load your weights here)."""
    torch.manual_seed(0)  # the same weights in every worker process
    return from_torch(TinyNet(), game=GAME, seed=seed)


def main() -> int:
    import gymnasium
    from sb3_contrib import MaskablePPO

    from dragonstones_env.cli import main as dragonstones  # `dragonstones ...` without a shell
    from dragonstones_env.policies import export_sb3, load_policy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="MaskablePPO's training steps")
    parser.add_argument("--games", type=int, default=100, help="evaluation games")
    parser.add_argument("--workers", type=int, default=1, help="evaluation worker processes")
    parser.add_argument("--out", default="runs/sb3-export", help="folder for the checkpoint and the evaluation")
    args = parser.parse_args()

    env = gymnasium.make(GAME_ID, num_players=NUM_PLAYERS, opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=N_STEPS, batch_size=BATCH_SIZE, seed=SEED,
                        policy_kwargs={"net_arch": NET_ARCH}, verbose=0)
    model.learn(args.steps)

    folder = export_sb3(model, Path(args.out) / "checkpoint", game=GAME, card={"steps": model.num_timesteps})
    print(f"exported to {folder}/: {sorted(p.name for p in folder.iterdir())}; loads as {load_policy(folder)!r}")

    # The factory's module must be importable by the evaluation: this file's folder, on sys.path as
    # `python examples/sb3_export.py` puts it (for the `dragonstones` command: run it from that folder).
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    return dragonstones(["evaluate", "--policies", str(folder), "tiny", "heuristic",
                         "--policy-factory", "tiny=sb3_export:make_tiny", "--players", str(NUM_PLAYERS),
                         "--games", str(args.games), "--workers", str(args.workers),
                         "--out", str(Path(args.out) / "evaluation"), "--no-progress"])


if __name__ == "__main__":
    sys.exit(main())
