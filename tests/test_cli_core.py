"""The ``dragonstones`` command's checks that need no extra: a missing extra is named in one line
before any work (issue 48), and a game another distribution declares joins ``--game``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest

from dragonstones_env import cli, extras, games
from dragonstones_env.evaluation import cli as evaluation_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("argv", "extra", "module"), [
    (["serve", "--port", "8765"], "app", "starlette"),
    (["play", "--opponents", "random"], "app", "rich"),
    (["replay", "game.json", "--gif", "game.gif"], "app", "PIL"),
    (["evaluate", "--policies", "random", "random", "--games", "2", "--out", "ev"], "eval", "openskill"),
])
def test_a_missing_extra_is_named_in_one_line_before_any_work(argv, extra, module, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, module, None)  # find_spec answers None: as if not installed
    assert module in extras.missing(extra)
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1, err
    assert err.startswith(f"dragonstones {argv[0]} needs the [{extra}] extra ({module}")
    assert f"pip install 'dragonstones_env[{extra}]'" in err
    assert list(tmp_path.iterdir()) == []  # no journal, no record, no GIF


def test_help_needs_no_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "openskill", None)
    with pytest.raises(SystemExit) as done:
        evaluation_cli.main(["--help"])
    assert done.value.code == 0 and "--panel" in capsys.readouterr().out


def test_with_every_extra_there_is_no_message():
    for extra in extras.EXTRAS:
        if not extras.missing(extra):
            assert extras.missing_message(extra, "dragonstones x") is None
    with pytest.raises(KeyError):
        extras.missing("nope")


def test_a_game_of_another_distribution_joins_game(tmp_path):
    """A game declared under the entry-point group dragonstones_env.games (docs/adding-a-game.md) is
    known to ``dragonstones evaluate --game`` run from a shell; unknown ids are still refused."""
    (tmp_path / "toyplugin.py").write_text(textwrap.dedent("""
        from dragonstones_env.registry import register
        from tests.contract.toy_auction import SPEC

        register(SPEC)
    """))
    info = tmp_path / "toyplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{games.PLUGIN_GROUP}]\ntoyauction = toyplugin\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    base = [sys.executable, "-m", "dragonstones_env.cli", "evaluate", "--policies", "random", "random",
            "--players", "2", "--games", "2", "--no-progress", "--out", str(tmp_path / "ev")]
    done = subprocess.run([*base, "--game", "toyauction"], capture_output=True, text=True, env=env, timeout=300)
    if extras.missing("eval"):
        assert done.returncode == 2 and "[eval] extra" in done.stderr
    else:
        assert done.returncode == 0, done.stderr[-2000:]
        assert "2 games" in done.stdout
    done = subprocess.run([*base, "--game", "mynim"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2 and "invalid choice: 'mynim'" in done.stderr and "toyauction" in done.stderr





def test_a_policy_of_another_game_is_named_by_its_registry_id():
    assert games.game_id("drachenschatten_v0") == "drachenschatten" and games.game_id("chess_v3") == "chess_v3"
    with pytest.raises(ValueError, match="opponent 'champion' plays dragonstones, not drachenschatten: "):
        gym.make("DrachenSchatten-v0", opponents="champion")


SEE_DOC = re.compile(r"see (docs/[\w-]+\.md), ([A-Z][\w ,'-]+?)[)\"]")


def test_errors_that_send_to_a_doc_name_a_section_that_is_there():
    """"see README" sent people to a page that had moved (issue 48): a message names the doc and its section."""
    found = []
    for folder in ("dragonstones_env", "training"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text()
            assert "see README" not in text and "README, \"Loading" not in text, path
            for doc, section in SEE_DOC.findall(text):
                found.append((path.name, doc, section))
                headings = re.findall(r"^#+ (.+)$", (ROOT / doc).read_text(), re.M)
                assert section in headings, (path, doc, section)
    assert ("checkpoint.py", "docs/training.md", "Loading checkpoints from others") in found
