"""The ``dragonstones`` command: ``serve`` (the browser table), ``play`` (the terminal table),
``replay`` (a record to an animated GIF) and ``evaluate`` (tournaments and panels).

    dragonstones serve [--host 127.0.0.1] [--port 8000] [--store FILE] [--decks DIR] [--policies DIR]
    dragonstones play --game dragonstones --players 4 --opponents champion [--record game.json]
    dragonstones replay game.json --gif out.gif [--seat 0 | --seat all]
    dragonstones evaluate --panel champion --players 4 --games 200 --workers 2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import games
from .bounds import BOUNDS, flag
from .evaluation.cli import main as evaluate_main
from .extras import missing_message
from .play.app.options import add_serve_arguments, serve_options


def _seat_or_all(text: str) -> int | str:
    """``replay --seat``: ``all``, or a seat number within the bounds table (dragonstones_env/bounds.py)."""
    return "all" if text == "all" else flag("seat")(text)


_seat_or_all.bound = BOUNDS["seat"]  # type: ignore[attr-defined]  # a bounded flag (tests/test_bounds.py)


# Every number is checked against the bounds table (dragonstones_env/bounds.py) as it is parsed.
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dragonstones", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="the browser table (binds 127.0.0.1 unless told otherwise)")
    add_serve_arguments(s)
    p = sub.add_parser("play", help="play in the terminal against bots")
    p.add_argument("--game", choices=games.ids(), default="dragonstones", help="which game (default: dragonstones)")
    p.add_argument("--players", type=flag("players"), default=None)
    p.add_argument("--opponents", nargs="+", default=None, help="one policy spec for every other seat, or one per seat")
    p.add_argument("--seat", type=flag("seat"), default=0, help="your seat")
    p.add_argument("--seed", type=flag("seed"), default=None)
    p.add_argument("--record", default=None, metavar="FILE",
                   help="save the finished game's record to FILE (what `dragonstones replay` reads)")
    r = sub.add_parser("replay", help="turn a game record (JSON) into an animated GIF",
                       description="Draw a game record as an animated GIF. A record comes from "
                                   "`dragonstones play --record game.json`, the browser table's Save record, "
                                   "or an evaluation's games.json (docs/app.md, Replays).")
    r.add_argument("record", help="a game.json: saved by `dragonstones play --record`, by the browser table, "
                                  "or the engine's JSON record")
    r.add_argument("--gif", required=True, help="the GIF to write")
    r.add_argument("--seat", type=_seat_or_all, default=0,
                   help="whose view to draw: a seat number, or all (every seat's view side by side)")
    r.add_argument("--ms", type=flag("frame_ms"), default=400, help="milliseconds per frame")
    # listed for --help; its arguments are read by its own parser (python -m dragonstones_env.evaluation)
    sub.add_parser("evaluate", help="tournaments and panels: dragonstones evaluate --help", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    games.load_plugins()  # games of other distributions join --game's choices (docs/adding-a-game.md)
    if argv[:1] == ["evaluate"]:  # it checks its own extra, after its arguments (--help needs none)
        return evaluate_main(argv[1:], prog="dragonstones evaluate")
    args = _parser().parse_args(argv)
    # The app's modules import the app extra (Starlette, uvicorn, rich, Pillow) only when a command
    # runs: on the core install the command says which extra it needs, before doing anything.
    message = missing_message("app", f"dragonstones {args.command}")
    if message:
        print(message, file=sys.stderr)
        return 2
    if args.command == "serve":
        from .play.app.server import serve

        return serve(args.host, args.port, **serve_options(args))
    if args.command == "play":
        from .play.terminal import play

        return play(args.game, args.players, args.opponents, args.seat, args.seed, record=args.record)
    from .play.gif import record_to_gif

    return record_to_gif(args.record, args.gif, args.seat, args.ms)


if __name__ == "__main__":
    sys.exit(main())
