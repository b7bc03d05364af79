"""The README opens with the two commands, and its layout tables are the generated ones."""

from tools.gen_readme import README, render


def test_readme_opens_with_make_train_and_make_test():
    commands = [line.strip() for line in README.read_text().splitlines() if line.strip().startswith("make ")]
    assert commands[:2] == ["make train", "make test"]


def test_generated_sections_are_up_to_date():
    text = README.read_text()
    assert "<!-- BEGIN action-layout -->" in text and "<!-- BEGIN observation-layout -->" in text
    assert render(text) == text, "README.md is out of date: run python -m tools.gen_readme"
