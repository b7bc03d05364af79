"""The guide and the docs: the README opens with the two commands; the env reference's layout tables
are the generated ones; every link between the docs resolves."""

import re
from pathlib import Path

from dragonstones_env import games
from tools.gen_docs import ENVIRONMENTS, INPUTS, render

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_readme_opens_with_make_train_and_make_test():
    text = (ROOT / "README.md").read_text()
    commands = [line.strip() for line in text.splitlines() if line.strip().startswith("make ")]
    assert commands[:2] == ["make train", "make test"]


def test_generated_sections_are_up_to_date():
    text = ENVIRONMENTS.read_text()
    for spec in games.all():  # every game's tables are in the env reference
        assert f"<!-- BEGIN {spec.id}-action-layout -->" in text
        assert f"<!-- BEGIN {spec.id}-observation-layout -->" in text
        assert f"<!-- BEGIN {spec.id}-state-layout -->" in text
    assert render(text) == text, "docs/environments.md is out of date: run python -m tools.gen_docs"


def test_the_bounds_tables_in_the_docs_are_the_codes():
    text = INPUTS.read_text()
    for name in ("bounds-shared", "bounds-training", "bounds-rllib", "file-limits"):
        assert f"<!-- BEGIN {name} -->" in text
    assert render(text, INPUTS) == text, "docs/inputs.md is out of date: run python -m tools.gen_docs"


def test_every_relative_link_in_the_docs_resolves():
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
