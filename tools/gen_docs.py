"""Regenerate the generated sections of the docs: docs/environments.md (every game's action,
observation and global state layouts) and docs/inputs.md (the bounds table of every numeric input, and the files'
size limits, from dragonstones_env/bounds.py and the trainers' additions).

    python -m tools.gen_docs          # rewrite them in place
    python -m tools.gen_docs --check  # exit 1 if one is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from dragonstones_env import bounds, games
from dragonstones_env.layout import layout_table

DOCS = Path(__file__).resolve().parent.parent / "docs"
ENVIRONMENTS = DOCS / "environments.md"
INPUTS = DOCS / "inputs.md"


def layout_sections() -> dict[str, str]:
    """Every registered game's tables, under the markers ``<game id>-action-layout``,
    ``<game id>-observation-layout`` and, for a game with a global state, ``<game id>-state-layout``."""
    out = {}
    for spec in games.all():
        out[f"{spec.id}-action-layout"] = spec.action_table()
        out[f"{spec.id}-observation-layout"] = spec.observation_table()
        if spec.raw_env.STATE_LAYOUT is not None:
            out[f"{spec.id}-state-layout"] = layout_table(spec.raw_env.STATE_LAYOUT)
    return out


def bounds_table(table: dict[str, bounds.Bound], skip: set[str] = frozenset()) -> str:
    rows = ["| key | allowed | why |", "|---|---|---|"]
    rows += [f"| `{key}` | {b.describe()} | {b.why} |" for key, b in table.items() if key not in skip]
    return "\n".join(rows)


def input_sections() -> dict[str, str]:
    """The bounds table's rows (shared, the trainers', RLlib's) and the files' size limits."""
    from training.config import BOUNDS as TRAINING  # the trainers extend the shared table
    from training.train_rllib import RLLIB_BOUNDS

    files = ["| file | read up to |", "|---|---|"] + [f"| {kind} | {size:,} bytes |"
                                                   for kind, size in bounds.FILE_BYTES.items()]
    return {"bounds-shared": bounds_table(dict(bounds.BOUNDS)),
            "bounds-training": bounds_table(dict(TRAINING), set(bounds.BOUNDS) | set(RLLIB_BOUNDS)),
            "bounds-rllib": bounds_table(RLLIB_BOUNDS),
            "file-limits": "\n".join(files)}


PAGES = {ENVIRONMENTS: layout_sections, INPUTS: input_sections}


def render(text: str, page: Path = ENVIRONMENTS) -> str:
    for name, body in PAGES[page]().items():
        pattern = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    for page in PAGES:
        text = page.read_text()
        new = render(text, page)
        if args.check and new != text:
            sys.exit(f"docs/{page.name} is out of date: run python -m tools.gen_docs")
        if not args.check:
            page.write_text(new)


if __name__ == "__main__":
    main()
