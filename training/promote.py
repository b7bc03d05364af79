"""Ship a run's result: copy a checkpoint folder into ``policies/`` as a name ``load_policy`` knows.

    python -m training.promote runs/policies/champion policies/champion [--force]

Training writes to the git-ignored ``runs/`` (``out_dir``); nothing reaches the shipped checkpoints
but through this step. The source is loaded as any checkpoint is before it plays (card, layout,
weights checked; nothing unpickled), and only what plays and what a new run starts from is
copied: ``card.json``, ``policy.npz``, ``value.npz`` and the training curve if present. SB3's
``model.zip`` (a pickle, 14 MB) and run states stay in ``runs/``: docs/publishing.md says how a
large artifact is published and loaded by path.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from dragonstones_env.policies import PolicyError
from dragonstones_env.policies.checkpoint import CARD_FILE, POLICY_FILE, VALUE_FILE, load_checkpoint

SHIPPED_FILES = (CARD_FILE, POLICY_FILE, VALUE_FILE, "training_curve.png")
MAX_FILE_BYTES = 5 * 1024 * 1024  # the repository's limit for one file (tests/test_package.py)


def promote(source: str | Path, dest: str | Path, force: bool = False) -> list[Path]:
    """Copy the checked checkpoint ``source`` to ``dest``; returns the files written."""
    source, dest = Path(source), Path(dest)
    load_checkpoint(source, str(source), seed=0, deterministic=True)  # a PolicyError names what is wrong
    files = [source / name for name in SHIPPED_FILES if (source / name).is_file()]
    big = [f"{f.name} ({f.stat().st_size:,} bytes)" for f in files if f.stat().st_size > MAX_FILE_BYTES]
    if big:
        raise PolicyError(f"{source}: {', '.join(big)} over the {MAX_FILE_BYTES:,}-byte limit of a shipped file")
    if dest.exists() and not force:
        raise PolicyError(f"{dest} exists: pass --force to replace it")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    return [Path(shutil.copy2(f, dest / f.name)) for f in files]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.promote", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a checkpoint folder written by a run, e.g. runs/policies/champion")
    parser.add_argument("dest", help="where to ship it, e.g. policies/champion (loadable as 'champion')")
    parser.add_argument("--force", action="store_true", help="replace dest if it exists")
    args = parser.parse_args(argv)
    try:
        written = promote(args.source, args.dest, args.force)
    except PolicyError as err:
        parser.error(str(err))
    print(f"wrote {', '.join(str(p) for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
