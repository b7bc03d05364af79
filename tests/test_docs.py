"""The guide and the docs: the README opens with the two commands; the env reference's layout tables
are the generated ones; every link between the docs resolves; every code block runs (or says why not)."""

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from dragonstones_env import extras, games
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


# ---------------------------------------------------------------------------- every code block runs
# ```python blocks run as Python (the blocks of one page in order, in one namespace); shell blocks
# (```bash, ```sh, untagged) whose commands start with these run in a subprocess; a block after the
# line `<!-- no-run: reason -->` is skipped (training for minutes, a cluster, a server that runs
# until stopped, a pip install from the network). Both run in a scratch folder that links the
# checkout's top-level folders, so relative paths (examples/, configs/, policies/) resolve and
# whatever a block writes stays out of the checkout.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^([ \t]*)```([\w-]*)[ \t]*$")
NO_RUN = re.compile(r"^<!-- no-run: (\S.*\S) -->$")
SHELL = ("", "bash", "sh", "shell", "console")
COMMANDS = ("dragonstones ", "python -m ", "make ")
OPTIONAL = {"pyspiel", "open_spiel", "torch", "sb3_contrib", "stable_baselines3", "ray", *extras.EXTRAS["app"],
            *extras.EXTRAS["eval"]}  # import names of the extras: a block needing one is skipped without it
SHELL_BUDGET_S = 60  # a block's commands, each; the blocks pass small budgets through their own flags


def _runs_in_shell(command: str) -> bool:
    """A command the collector runs: one of COMMANDS, maybe fed by a pipe (``printf ... | dragonstones play``)."""
    return command.split("|")[-1].strip().startswith(COMMANDS)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    no_run: str | None  # the reason given, or None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[str]:
        """The shell commands: lines joined at a trailing backslash, comments and blank lines dropped."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]

    @property
    def runs(self) -> bool:
        if self.no_run is not None:
            return False
        if self.lang == "python":
            return True
        return self.lang in SHELL and any(_runs_in_shell(c) for c in self.commands())


def blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        _indent, lang = m.groups()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = textwrap.dedent("\n".join(lines[i + 1:end])) + "\n"
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        reason = NO_RUN.match(before)
        found.append(Block(page, i + 1, lang, body, reason.group(1) if reason else None))
        i = end + 1
    return found


@pytest.fixture
def scratch(tmp_path):
    """A folder linking the checkout's top-level folders and files (not .git, not runs/)."""
    for item in ROOT.iterdir():
        if item.name not in (".git", "runs", ".venv", "build") and not item.name.endswith(".egg-info"):
            (tmp_path / item.name).symlink_to(item)
    return tmp_path


def test_the_collector_finds_the_blocks_and_the_marks():
    every = [b for page in PAGES for b in blocks(page)]
    assert sum(b.lang == "python" and b.runs for b in every) >= 10
    assert sum(b.lang in SHELL and b.runs for b in every) >= 5
    marked = [b for b in every if b.no_run is not None]
    assert marked and len(marked) <= 20, [b.where for b in marked]  # sparingly: training, servers, installs
    for b in every:  # a shell block runs whole or not at all: no line that would be silently left out
        if b.runs and b.lang in SHELL:
            others = [c for c in b.commands() if not _runs_in_shell(c)]
            assert not others, f"{b.where}: {others} would not run; split the block or mark it no-run"


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.runs and b.lang == "python" for b in blocks(p))],
                         ids=lambda p: p.name)
def test_the_python_blocks_of_a_page_run(page, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    monkeypatch.syspath_prepend(str(ROOT))
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks(page):
        if block.runs and block.lang == "python":
            try:
                exec(compile(block.text, block.where, "exec"), namespace)
            except ModuleNotFoundError as err:  # an optional extra (open-spiel, ...) not installed here
                if err.name.split(".")[0] not in OPTIONAL or os.environ.get("OPENSPIEL_REQUIRED"):
                    raise
                pytest.skip(f"{block.where} needs {err.name}, an optional extra")
            except Exception as err:
                raise AssertionError(f"{block.where} fails: {type(err).__name__}: {err}") from err


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.runs and b.lang in SHELL for b in blocks(p))],
                         ids=lambda p: p.name)
def test_the_shell_blocks_of_a_page_run(page, scratch):
    """Each command in a subprocess with a budget, the blocks of a page in order in one folder (a
    record one block saves, the next replays)."""
    for extra in ("app", "eval"):  # what the `dragonstones` commands need, each said by its own test
        if extras.missing(extra):
            pytest.skip(f"needs the {extra} extra")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    bin_dir = Path(sys.executable).parent  # `dragonstones` and `python` of this environment
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    for block in blocks(page):
        if not (block.runs and block.lang in SHELL):
            continue
        for command in block.commands():
            done = subprocess.run(command, shell=True, cwd=scratch, env=env, capture_output=True, text=True,
                                  timeout=SHELL_BUDGET_S, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, f"{block.where}: `{command}` exits {done.returncode}:\n" \
                                         f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}"


# ---------------------------------------------------------------------------- the README's figures are the results'
NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.])")


def readme_results_figures() -> list[tuple[str, str]]:
    """(row, number) for every number in the value and note columns of the README's Results table."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Results\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| figure")]
    return [(row.split("|")[1].strip(), n)
            for row in rows for cell in row.split("|")[2:4] for n in NUMBER.findall(cell)]


def test_every_figure_of_the_readme_results_table_is_in_docs_results():
    """The README retypes no figure: each number of its Results table is one docs/results.md states."""
    results = (ROOT / "docs" / "results.md").read_text()
    stated = set(NUMBER.findall(results))
    figures = readme_results_figures()
    assert len(figures) > 100  # the table is found and read
    missing = [(row[:60], n) for row, n in figures if n not in stated]
    assert not missing, f"README figures not in docs/results.md: {missing}"
