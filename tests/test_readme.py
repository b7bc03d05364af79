"""The README opens with the two commands, and its layout tables are the generated ones."""

from dragonstones_env import games
from tools.gen_readme import README, render


def test_readme_opens_with_make_train_and_make_test():
    commands = [line.strip() for line in README.read_text().splitlines() if line.strip().startswith("make ")]
    assert commands[:2] == ["make train", "make test"]


def test_generated_sections_are_up_to_date():
    text = README.read_text()
    for spec in games.all():  # every game's tables are in the README
        assert f"<!-- BEGIN {spec.id}-action-layout -->" in text
        assert f"<!-- BEGIN {spec.id}-observation-layout -->" in text
    assert render(text) == text, "README.md is out of date: run python -m tools.gen_readme"
