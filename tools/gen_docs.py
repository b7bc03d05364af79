"""Regenerate the generated sections of docs/environments.md (every game's action and observation layouts).

    python -m tools.gen_docs          # rewrite docs/environments.md in place
    python -m tools.gen_docs --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from dragonstones_env import games

ENVIRONMENTS = Path(__file__).resolve().parent.parent / "docs" / "environments.md"


def sections() -> dict[str, str]:
    """Every registered game's tables, under the markers ``<game id>-action-layout`` and
    ``<game id>-observation-layout``."""
    out = {}
    for spec in games.all():
        out[f"{spec.id}-action-layout"] = spec.action_table()
        out[f"{spec.id}-observation-layout"] = spec.observation_table()
    return out


def render(text: str) -> str:
    for name, body in sections().items():
        pattern = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = ENVIRONMENTS.read_text()
    new = render(text)
    if args.check:
        if new != text:
            sys.exit("docs/environments.md is out of date: run python -m tools.gen_docs")
        return
    ENVIRONMENTS.write_text(new)


if __name__ == "__main__":
    main()
