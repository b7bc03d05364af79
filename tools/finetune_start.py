"""The start of a fine-tuning of champion v2: its actor in its run state's SB3 model.

    python -m tools.finetune_start --out runs/champion-start
    python -m training.train --config configs/champion-examples.yaml \\
        --finetune runs/champion-start --trust-model-zip

``--finetune`` needs a ``model.zip``; v2's actor, ``policies/run-state/champion-v2/actor``, is
``policy.npz`` only (329,532 steps), and ``policies/run-state/champion-v2/checkpoint/model.zip`` is
the same run 231,460 steps later (560,992). This writes that model with v2's actor weights in place
of its own, keeping its critic and optimizer state, so that a fine-tuning starts from the policy
the figures are about. (The shipped champion, ``policies/champion``, needs none of this: its run
state's ``model.zip`` is the shipped actor's own model.) It unpickles the run state's ``model.zip``:
the repository's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from policies.checkpoint import CheckpointPolicy, set_sb3_weights

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for model.zip")
    parser.add_argument("--actor", default=str(ROOT / "policies" / "run-state" / "champion-v2" / "actor"),
                        help="a folder with policy.npz")
    parser.add_argument("--model", default=str(ROOT / "policies" / "run-state" / "champion-v2" / "checkpoint"),
                        help="a folder with the model.zip whose critic is kept")
    args = parser.parse_args(argv)
    from sb3_contrib import MaskablePPO  # the train extra: SB3 models only

    model = MaskablePPO.load(Path(args.model) / "model.zip", device="cpu")
    npz = np.load(Path(args.actor) / "policy.npz")
    set_sb3_weights(model, "actor", [(npz[f"w{i}"], npz[f"b{i}"]) for i in range(int(npz["layers"]))])
    for i, (w, b) in enumerate(CheckpointPolicy.from_sb3(model).weights):
        if not (np.array_equal(w, npz[f"w{i}"]) and np.array_equal(b, npz[f"b{i}"])):
            print(f"layer {i} of {args.actor} does not fit {args.model}", file=sys.stderr)
            return 1
    model.num_timesteps = 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model.zip")
    print(f"wrote {out / 'model.zip'}: the actor of {args.actor}, the critic of {args.model}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
