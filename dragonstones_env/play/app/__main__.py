"""``python -m dragonstones_env.play.app [--host 127.0.0.1] [--port 8000] ...``: the same as ``dragonstones serve``."""

import argparse

from .options import add_serve_arguments, serve_options
from .server import serve


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dragonstones_env.play.app", description="the browser table")
    add_serve_arguments(parser)
    return parser


if __name__ == "__main__":
    args = build_parser().parse_args()
    raise SystemExit(serve(args.host, args.port, **serve_options(args)))
