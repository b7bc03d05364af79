"""``python -m dragonstones_env.play.app [--host 127.0.0.1] [--port 8000]``: the same as ``dragonstones serve``."""

import argparse

from dragonstones_env.bounds import flag

from .server import serve


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dragonstones_env.play.app", description="the browser table")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (127.0.0.1 unless told otherwise)")
    parser.add_argument("--port", type=flag("port"), default=8000)  # the bounds table (dragonstones_env/bounds.py)
    return parser


if __name__ == "__main__":
    args = build_parser().parse_args()
    serve(args.host, args.port)
