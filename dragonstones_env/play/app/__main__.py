"""``python -m dragonstones_env.play.app [--host 127.0.0.1] [--port 8000] ...``: the same as ``dragonstones serve``."""

import argparse
import sys

from dragonstones_env.extras import missing_message

from .options import add_serve_arguments, serve_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dragonstones_env.play.app", description="the browser table")
    add_serve_arguments(parser)
    return parser


if __name__ == "__main__":
    args = build_parser().parse_args()
    message = missing_message("app", "python -m dragonstones_env.play.app")
    if message:  # on the core install: which extra, in one line, before the server module imports Starlette
        print(message, file=sys.stderr)
        raise SystemExit(2)
    from .server import serve

    raise SystemExit(serve(args.host, args.port, **serve_options(args)))
