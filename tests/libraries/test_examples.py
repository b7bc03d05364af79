"""The examples of the third-party learners run to the end at a tiny budget and print their win rate."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RATE = re.compile(r"^win rate against random: (\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\] over (\d+) games", re.M)


@pytest.mark.parametrize(("script", "args"), [
    ("tianshou_selfplay.py", ["--game", "drachenschatten", "--players", "2", "--steps", "200"]),
    ("torchrl_rollout.py", ["--game", "drachenschatten", "--players", "2", "--steps", "300", "--rollout", "150"]),
    ("torchrl_rollout.py", ["--game", "dragonstones", "--players", "3", "--steps", "200", "--rollout", "200"]),
], ids=["tianshou-drachenschatten", "torchrl-drachenschatten", "torchrl-dragonstones"])
def test_the_example_trains_exports_and_evaluates(script, args):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args, "--eval-games", "3"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^trained \d+ steps of .+ players with (Tianshou|TorchRL)$", done.stdout, re.M), done.stdout
    rate, low, high, games = RATE.search(done.stdout).groups()
    assert int(games) == 3 and float(low) <= float(rate) <= float(high)
