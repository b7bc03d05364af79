"""Ship a run's result: copy a checkpoint folder into ``policies/`` as a name ``load_policy`` knows.

    python -m training.promote runs/policies/champion policies/champion [--force]

Training writes to the git-ignored ``runs/`` (``out_dir``); nothing reaches the shipped checkpoints
but through this step. The source is loaded as any checkpoint is before it plays (card, layout,
weights checked; nothing unpickled), and only what plays and what a new run starts from is
copied: ``card.json``, ``policy.npz``, ``value.npz`` and the training curve if present. SB3's
``model.zip`` (a pickle, 14 MB) and run states stay in ``runs/``: docs/publishing.md says how a
large artifact is published and loaded by path. A mixture (``dragonstones_env/policies/mixture.py``)
is loaded with all its members, and its card and the member folders inside it are copied the same way.

``--half`` stores the weights as float16: half the bytes in git and in the wheel, and the loader
casts them back to the float32 that plays. The rounding moves each weight by at most 1/2048 of its
size (float16's precision), so measure the panel on the shipped folder, not on the run's float32
one (docs/publishing.md).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env.policies import PolicyError, load_policy, mixture, search
from dragonstones_env.policies.checkpoint import (
    CARD_FILE,
    POLICY_FILE,
    VALUE_FILE,
    card_deterministic,
    card_guard,
    game_spaces,
    load_checkpoint,
    read_card,
    read_mlp,
    read_shaped,
    save_mlp,
    save_shaped,
    shape_of,
)
from dragonstones_env.policies.shaped import ShapedNet

# How a shipped network plays, set on its card when it is shipped (its weights are the run's):
# its most likely action instead of a sample, and its game's loop guard (checkpoint.py).
PLAY_KEYS = ("deterministic", "loop_guard")
CURVE_FILE = "training_curve.png"
SHIPPED_FILES = (CARD_FILE, POLICY_FILE, VALUE_FILE, CURVE_FILE)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_FILE_BYTES = 5 * 1024 * 1024  # the repository's limit for one file (tests/test_package.py)


def promote(source: str | Path, dest: str | Path, force: bool = False, half: bool = False,
            play: Mapping[str, Any] | None = None) -> list[Path]:
    """Copy the checked checkpoint ``source`` to ``dest``; returns the files written. ``half``
    writes the weights of ``policy.npz`` and ``value.npz`` as float16. ``play`` sets how the shipped
    network plays, on its card (:data:`PLAY_KEYS`: ``deterministic``, ``loop_guard``)."""
    source, dest = Path(source), Path(dest)
    folders = [Path(".")]  # relative to source: the checkpoint, or a mixture and its member folders
    card = read_card(source, str(source))
    unknown = sorted(set(play or {}) - set(PLAY_KEYS))
    if unknown:
        raise PolicyError(f"promote: unknown play setting(s) {unknown}; known: {', '.join(PLAY_KEYS)}")
    if card.get("algorithm") == mixture.ALGORITHM:
        if play:
            raise PolicyError(f"{source} is a mixture: its members' cards say how each plays, not the mixture's")
        members = load_policy(str(source), seed=0).names  # every member loaded and checked
        folders += [Path(name) for name in members if (source / name).is_dir()]
    elif card.get("algorithm") == search.ALGORITHM:
        if play:
            raise PolicyError(f"{source} names a search: its search spec says how it plays (a search plays its most "
                              "visited action; its guard is the spec's guard=N)")
        load_policy(str(source), seed=0)  # the card's search checked: its options, its rollout by name
    else:
        card = {**card, **(play or {})}
        card_deterministic(card, str(source))  # a PolicyError names a bad play setting before dest is touched
        card_guard(card, str(source))
        load_checkpoint(source, str(source), seed=0, deterministic=True)  # a PolicyError names what is wrong
    files = shipped_files(source, folders)
    for f in files:
        inside_dest(dest, f)
    # float16 weights are made (and refused) in memory, before the sizes are checked and dest is touched
    cards = {folder: read_card(source / folder, str(source / folder)) for folder in folders} if half else {}
    halves = {f: _half(source / f, cards[f.parent]) for f in files if half and f.name in (POLICY_FILE, VALUE_FILE)}
    sizes = {f: len(halves[f]) if f in halves else (source / f).stat().st_size for f in files}
    big = [f"{f} ({size:,} bytes)" for f, size in sizes.items() if size > MAX_FILE_BYTES]
    if big:
        raise PolicyError(f"{source}: {', '.join(big)} over the {MAX_FILE_BYTES:,}-byte limit of a shipped file")
    if dest.exists() and not force:
        raise PolicyError(f"{dest} exists: pass --force to replace it")
    if dest.exists():
        shutil.rmtree(dest)
    written = []
    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        if f in halves:
            (dest / f).write_bytes(halves[f])
            written.append(dest / f)
        else:
            written.append(Path(shutil.copy2(source / f, dest / f)))
    if play:
        (dest / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return written


def shipped_files(source: Path, folders: list[Path]) -> list[Path]:
    """The files of :data:`SHIPPED_FILES` in each folder, relative to ``source``, each a plain
    file checked as what it claims to be: a symbolic link (to a private file, say) is refused,
    never followed; ``value.npz`` is read as a critic, the curve must be a PNG."""
    files = []
    for folder in folders:
        for name in SHIPPED_FILES:
            path = source
            for part in (folder / name).parts:  # the file and every folder between it and source
                path = path / part
                if path.is_symlink():
                    raise PolicyError(f"{path} is a symbolic link; promote copies plain files only (copy the "
                                      "file it points to into the run folder if it belongs there)")
            if not path.exists():
                continue
            if not path.is_file():
                raise PolicyError(f"{path} is not a plain file; promote copies plain files only")
            if name == VALUE_FILE:
                card = read_card(source / folder, str(source / folder))
                if card.get("architecture", "mlp") == "shaped":
                    read_shaped(path, shape_of(card["env"]), game_spaces(card["env"])[1], "critic")
                else:
                    read_mlp(path, game_spaces(card["env"])[0], 1)
            if name == CURVE_FILE:
                with path.open("rb") as f:
                    if f.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
                        raise PolicyError(f"{path} is not a PNG image")
            files.append(folder / name)
    return files


def inside_dest(dest: Path, relative: Path) -> Path:
    """``dest / relative``, refused unless it lies inside ``dest`` (a member named
    ``../champion-mixture/members/v5`` resolves inside the source and would be written beside dest)."""
    root = Path(os.path.abspath(dest))
    target = Path(os.path.normpath(root / relative))
    if root not in target.parents:
        raise PolicyError(f"{relative} would be written to {target}, outside {dest}; a mixture's members are "
                          "folders inside it, named without '..'")
    return target


def _half(npz: Path, card: dict) -> bytes:
    """``npz``'s layers (read through the checked reader of the card's architecture) as a float16 npz file's bytes."""
    env = card["env"]
    obs_size, num_actions = game_spaces(env)
    outputs = 1 if npz.name == VALUE_FILE else num_actions
    if card.get("architecture", "mlp") == "shaped":
        shape = shape_of(env)
        net = read_shaped(npz, shape, num_actions, "critic" if npz.name == VALUE_FILE else "actor")
        layers = [*net.seat, *net.trunk, net.head, *(() if net.flat is None else (net.flat,))]
    else:
        weights, activation = read_mlp(npz, obs_size, outputs)
        layers = weights
    half = [(w.astype(np.float16), b.astype(np.float16)) for w, b in layers]
    if not all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in half):
        raise PolicyError(f"{npz}: a weight is beyond float16's range (65,504); ship it as float32")
    buffer = io.BytesIO()
    if card.get("architecture", "mlp") == "shaped":
        seats, trunk = len(net.seat), len(net.trunk)
        save_shaped(buffer, ShapedNet(net.activation, tuple(half[:seats]), tuple(half[seats:seats + trunk]),
                                      half[seats + trunk], half[seats + trunk + 1] if net.flat is not None else None),
                    shape)
    else:
        save_mlp(buffer, half, activation)
    return buffer.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.promote", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a checkpoint folder written by a run, e.g. runs/policies/champion")
    parser.add_argument("dest", help="where to ship it, e.g. policies/champion (loadable as 'champion')")
    parser.add_argument("--force", action="store_true", help="replace dest if it exists")
    parser.add_argument("--half", action="store_true",
                        help="store the weights as float16 (half the bytes; they play as float32)")
    parser.add_argument("--deterministic", action="store_true",
                        help="the shipped policy plays its most likely action (its card's deterministic)")
    parser.add_argument("--loop-guard", type=int, metavar="N",
                        help="the shipped policy uses an object type at most N times a turn (its card's loop_guard; "
                             "games whose rules allow a loop: DrachenSchatten)")
    args = parser.parse_args(argv)
    play = {**({"deterministic": True} if args.deterministic else {}),
            **({} if args.loop_guard is None else {"loop_guard": args.loop_guard})}
    try:
        written = promote(args.source, args.dest, args.force, args.half, play)
    except PolicyError as err:
        parser.error(str(err))
    print(f"wrote {', '.join(str(p) for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
