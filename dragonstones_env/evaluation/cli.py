"""``python -m dragonstones_env.evaluation``: the tournament and the panel from the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dragonstones_env import games
from dragonstones_env.bounds import flag
from dragonstones_env.extras import missing_message
from dragonstones_env.games import load_plugins
from dragonstones_env.policies import PolicyError

from .factories import FORM, parse_factories
from .facts import PANEL_GAMES, EvaluationError
from .panel import panel, panel_opponents
from .report import format_panel, format_table
from .tournament import evaluate


# ---------------------------------------------------------------------------- command line
# Every number is checked against the bounds table (dragonstones_env/bounds.py) as it is parsed.
def build_parser(prog: str = "python -m dragonstones_env.evaluation") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Play policies against each other (seats rotated) and report win rates with 95% intervals "
                    "and OpenSkill ratings; or, with --panel, play one candidate against every opponent in "
                    "every mix and report its robustness.",
    )
    p.add_argument("--policies", nargs="+", default=[], metavar="SPEC",
                   help="policy specs: random, heuristic, ds-heuristic, a shipped name or a checkpoint folder; "
                        "repeat a spec to seat it several times")
    p.add_argument("--panel", default=None, metavar="CANDIDATE",
                   help="the panel: CANDIDATE (any policy spec) against the game's zoo bots, its heuristic, "
                        "random and any --baseline, k copies against n-k for every k and table size")
    p.add_argument("--baseline", nargs="+", action="extend", default=[], metavar="SPEC",
                   help="with --panel: more opponents (checkpoints, shipped names)")
    p.add_argument("--k", nargs="+", type=flag("k"), default=None, metavar="K",
                   help="with --panel: only these candidate counts (default: every k = 1..n-1)")
    p.add_argument("--copies", nargs="*", default=None, metavar="SPEC",
                   help="with --panel: the opponents whose all-copies table is played (default: every one; "
                        "give the flag alone for none)")
    p.add_argument("--players", nargs="+", type=flag("players"), default=[4],
                   help="seats at the table (default: 4); --panel takes several sizes, e.g. 3 4 6")
    p.add_argument("--games", type=flag("games"), default=None,
                   help=f"games to play (default: 1000); with --panel, games per mix (default: {PANEL_GAMES}; "
                        "claims need at least 1000)")
    p.add_argument("--workers", type=flag("workers"), default=1, help="worker processes (default: 1)")
    p.add_argument("--seed", type=flag("seed"), default=0, help="base seed; game g uses seed+g (default: 0)")
    p.add_argument("--lineup", default=None, metavar="SPEC,SPEC,...",
                   help="one spec per seat, comma-separated, rotated across seats from game to game "
                        "(e.g. champion,heuristic,heuristic,heuristic)")
    p.add_argument("--game", choices=games.ids(), default="dragonstones", help="which game (default: dragonstones)")
    p.add_argument("--out", default=None,
                   help="folder for results.md, games.csv, games.json, summary.json and ratings.png "
                        "(default: runs/eval-<policies>); with --panel for panel.md, panel.csv, panel.json "
                        "and panel_<n>p.png (default: runs/panel-<candidate>)")
    p.add_argument("--characters", default=None, metavar="FILE",
                   help="Fist: custom characters (YAML/TOML) added to the special pile (docs/custom-characters.md)")
    p.add_argument("--exclude", nargs="+", default=[], metavar="NAME",
                   help="Fist: standard specials taken out of the special pile, e.g. Troll")
    p.add_argument("--run-dir", default=None,
                   help="a training run folder: plot its eval.csv into training_curve.png")
    p.add_argument("--resume", action="store_true",
                   help="play on from the journal an interrupted run of the same evaluation left in --out "
                        "(without it, a journal there is an error)")
    p.add_argument("--policy-factory", action="append", default=[], metavar=FORM,
                   help="RUNS YOUR CODE: imports package.module (from sys.path or the current directory) and "
                        "calls function() (or function(seed=...)) for a policy, usable as NAME among --policies, "
                        "--lineup, --panel and --baseline; each worker process imports it itself. Repeatable")
    p.add_argument("--deterministic", action="store_true",
                   help="checkpoints take their most likely action instead of sampling")
    p.add_argument("--no-progress", "--quiet", action="store_true",
                   help="no progress bar (there is none either when stderr is not a terminal)")
    return p


def default_out(specs: Sequence[str]) -> Path:
    name = "-".join(Path(s).name for s in dict.fromkeys(specs)) or "policies"
    return Path("runs") / f"eval-{name[:80]}"


def deck_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The env options of --characters and --exclude (Fist's custom deck), or None."""
    options = {"characters": args.characters} if args.characters else {}
    if args.exclude:
        options["exclude"] = list(args.exclude)
    return options or None


def main(argv: Sequence[str] | None = None, prog: str = "python -m dragonstones_env.evaluation") -> int:
    load_plugins()  # games of other distributions join --game's choices (docs/adding-a-game.md)
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    message = missing_message("eval", prog)  # before any game: no journal left behind (issue 48)
    if message:
        print(message, file=sys.stderr)
        return 2
    progress = not args.no_progress and sys.stderr.isatty()
    if args.panel is not None:
        return panel_main(parser, args, progress)
    if args.baseline or args.k:
        parser.error("--baseline and --k go with --panel")
    lineup = None if args.lineup is None else [s.strip() for s in args.lineup.split(",") if s.strip()]
    if not args.policies and not lineup:
        parser.error("give --policies (and/or --lineup), or --panel CANDIDATE")
    if len(args.players) != 1:
        parser.error(f"--players takes one table size here (several go with --panel), got {args.players}")
    games = 1000 if args.games is None else args.games
    out = Path(args.out) if args.out else default_out(args.policies or lineup)
    try:
        factories = parse_factories(args.policy_factory)
        summary = evaluate(args.policies, args.players[0], games, workers=args.workers, seed=args.seed,
                           lineup=lineup, game=args.game, deterministic=args.deterministic, out=out,
                           run_dir=args.run_dir, progress=progress, env_options=deck_options(args),
                           resume=args.resume, factories=factories)
    except (EvaluationError, PolicyError, ValueError) as err:
        parser.error(str(err))
    print(format_table(summary))
    resumed = f" ({summary['resumed']} of them from the journal)" if summary["resumed"] else ""
    print(f"\n{summary['games']} games{resumed} in {summary['seconds']:.1f} s with {args.workers} worker(s); "
          f"results in {out}/")
    return 0


def panel_main(parser: argparse.ArgumentParser, args: argparse.Namespace, progress: bool) -> int:
    if args.policies or args.lineup or args.run_dir:
        parser.error("--panel plays its own line-ups: drop --policies, --lineup and --run-dir")
    out = Path(args.out) if args.out else Path("runs") / f"panel-{Path(args.panel).name}"
    try:
        factories = parse_factories(args.policy_factory)
        opponents = panel_opponents(args.game, args.baseline)
        result = panel(args.panel, opponents, args.players, PANEL_GAMES if args.games is None else args.games,
                       args.workers, args.seed, game=args.game, ks=args.k, deterministic=args.deterministic,
                       progress=progress, out=out, copies=args.copies, env_options=deck_options(args),
                       resume=args.resume, factories=factories)
    except (EvaluationError, PolicyError, ValueError) as err:
        parser.error(str(err))
    print(format_panel(result))
    resumed = f" ({result['resumed']} of them from the journal)" if result["resumed"] else ""
    print(f"\n{sum(r['games'] for r in result['mixes'] + result['tables'])} games{resumed} in "
          f"{result['seconds']:.1f} s with {args.workers} worker(s); results in {out}/")
    return 0

