"""``python -m play.app [--host 127.0.0.1] [--port 8000]``: the same as ``dragonstones serve``."""

from play.cli import main

if __name__ == "__main__":
    main(["serve", *__import__("sys").argv[1:]])
