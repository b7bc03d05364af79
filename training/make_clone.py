"""A cloned start (``start`` in a config) from more games than an imitate phase plays.

The shipped start, policies/starts/heuristic-clone (12,000 games), was made with:

    python -m training.make_clone --config configs/champion-v2.yaml --chunk 5011:2000 --chunk 20000:3000 \\
        --chunk 40000:3000 --chunk 60000:2000 --chunk 62000:2000 --workers 2 --set imitate.holdout=0 \\
        --set imitate.max_rows=2000000 --set torch_threads=2 --out runs/clone-12k
    python -m training.train --config configs/champion.yaml --set start=runs/clone-12k

A run's ``imitate`` phase collects its teacher's games in one process before PPO starts: champion
v2's 2,000 games (107,539 decisions) took 4-18 minutes, and its clone picks the heuristic's action
in 0.68 of held-out decisions where the heuristic itself, with other random draws, agrees with
itself in 0.85. That clone alone wins 0.055 of games against 3 heuristic bots, and a lone bot
among 3 of its copies wins 0.75-0.85 (docs/results.md). This plays the teacher's
games in chunks (``SEED:GAMES``: games SEED, SEED+1, ..., shared out over ``--workers`` processes), with the
config's environment, teacher and opponents (training/imitate.py's ``collect``), then fits one new
model (the config's ``ppo.net_arch`` and seed) to all of their decisions with the config's
``imitate`` settings (``clone``), and writes ``model.zip``, ``policy.npz``, ``value.npz`` and a card with the
figures into ``--out``. Chunks are concatenated in the order given, so the same arguments give the
same decisions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from dragonstones_env.bounds import check, flag
from dragonstones_env.policies.checkpoint import save_checkpoint
from training import envs
from training.config import Config, ConfigError, load_config
from training.imitate import Demonstrations
from training.train import env_kwargs, fit_clone, new_model, teacher_games


def parse_chunk(text: str) -> tuple[int, int]:
    """``SEED:GAMES`` as two ints within the bounds table's ``seed`` and ``games`` rows, else a
    ValueError naming the format or the range."""
    seed, sep, games = text.partition(":")
    try:
        if not sep:
            raise ValueError
        chunk = int(seed), int(games)
    except ValueError:
        raise ValueError(f"--chunk {text[:40]!r}: expected SEED:GAMES, e.g. 5011:2000") from None
    return check("seed", chunk[0], "--chunk SEED"), check("games", chunk[1], "--chunk GAMES")


def make_clone(cfg: Config, chunks: list[tuple[int, int]], out: str | Path, workers: int = 1) -> dict[str, Any]:
    """Collect every chunk, clone the teacher into a new model, write it to ``out``; returns the card's figures."""
    torch.set_num_threads(cfg.torch_threads)
    started = time.time()
    # each chunk's games shared out over the workers by collect (imitate.workers), the same decisions as one
    cfg = dataclasses.replace(cfg, imitate=dataclasses.replace(cfg.imitate, workers=workers))
    demos = Demonstrations.concatenate([teacher_games(cfg, seed, games) for seed, games in chunks])
    collected = time.time() - started
    print(f"make_clone: {len(demos)} decisions of {cfg.imitate.teacher} over {demos.games} games in {collected:.0f} s")
    venv = envs.make_vec_env(cfg.gym_id, n_envs=1, seed=cfg.seed, subproc=False, **env_kwargs(cfg, "random"))
    try:
        model = new_model(venv, cfg.sb3_ppo(), cfg.seed, cfg.sb3.device, game=cfg.game)
        stats = fit_clone(model, demos, cfg)
        figures = {"teacher": cfg.imitate.teacher, "chunks": [f"{s}:{g}" for s, g in chunks], "decisions": len(demos),
                   "games": demos.games, "teacher_win_rate": demos.wins / demos.games,
                   "seconds": round(time.time() - started, 1), **stats}
        save_checkpoint(model, out, {"steps": 0, "imitation": figures, "config": cfg.to_dict()}, cfg.env_name)
    finally:
        venv.close()
    return figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="the run's YAML config: env, teacher, opponents, network, imitate settings")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one config key")
    parser.add_argument("--chunk", action="append", required=True, metavar="SEED:GAMES",
                        help="GAMES games of the teacher from seed SEED (repeatable)")
    parser.add_argument("--workers", type=flag("workers"), default=1,
                        help="processes playing each chunk's games (default: 1)")
    parser.add_argument("--out", required=True,
                        help="the folder to write (model.zip, policy.npz, value.npz, card.json)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        chunks = [parse_chunk(c) for c in args.chunk]
        cfg = load_config(args.config, args.set)
        if not cfg.imitate.teacher:
            raise ConfigError("imitate.teacher: a clone needs a teacher (e.g. --set imitate.teacher=heuristic)")
    except ValueError as err:  # ConfigError is one
        print(f"make_clone: {err}", file=sys.stderr)
        return 2
    figures = make_clone(cfg, chunks, args.out, args.workers)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
