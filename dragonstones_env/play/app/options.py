"""The command-line options of the server (``dragonstones serve``, ``python -m dragonstones_env.play.app``).

Apart from the server so that the ``dragonstones`` command reads them without importing Starlette.
"""

from __future__ import annotations

import argparse
from typing import Any

from dragonstones_env.bounds import flag


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dragonstones serve`` (and ``python -m dragonstones_env.play.app``)."""
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (127.0.0.1 unless told otherwise)")
    parser.add_argument("--port", type=flag("port"), default=8000)  # the bounds table (dragonstones_env/bounds.py)
    parser.add_argument("--store", default=None, metavar="FILE",
                        help="the SQLite file that keeps the tables across restarts (default: a new temporary file)")
    parser.add_argument("--decks", default=None, metavar="DIR",
                        help="a folder of custom decks (.yaml, .yml, .toml, .json) a table may name (default: none)")
    parser.add_argument("--policies", default=None, metavar="DIR",
                        help="a folder of checkpoint folders a seat may name (default: the built-in and shipped ones)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a host name the server answers to besides IP addresses and localhost (repeatable)")


def serve_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"store": args.store, "decks": args.decks, "policies": args.policies, "hosts": tuple(args.allow_host)}
