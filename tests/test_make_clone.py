"""training/make_clone.py: chunks of the teacher's games, collected in parallel or not, give the same
clone; it loads as a policy and as a run's start; bad chunks and configs are refused by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

from dragonstones_env.policies import load_policy
from training.make_clone import main, parse_chunk
from training.start import read_start

SMALL = ["--set", "ppo.net_arch=[32]", "--set", "imitate.epochs=1", "--set", "imitate.holdout=0",
         "--set", "imitate.teacher=heuristic", "--set", "num_players=4"]


def test_the_same_chunks_give_the_same_clone_with_one_worker_or_two(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["--chunk", "3:2", "--chunk", "40:1", "--out", str(one), *SMALL]) == 0
    assert main(["--chunk", "3:2", "--chunk", "40:1", "--out", str(two), "--workers", "2", *SMALL]) == 0
    a, b = np.load(one / "policy.npz"), np.load(two / "policy.npz")
    assert all(np.array_equal(a[k], b[k]) for k in a.files)
    card = json.loads((one / "card.json").read_text())
    assert card["imitation"]["games"] == 3 and card["imitation"]["chunks"] == ["3:2", "40:1"]
    assert card["steps"] == 0 and (one / "model.zip").is_file()
    policy = load_policy(str(one))
    assert policy.weights[0][0].shape[1] == 32
    start = read_start(str(one), "dragonstones_v1")  # a run's `start` without unpickling: actor and critic
    assert start["critic"] is not None and start["critic"][0][-1][0].shape == (32, 1)


@pytest.mark.parametrize(("text", "message"), [
    ("5011", "SEED:GAMES"), ("a:3", "SEED:GAMES"), ("5:x", "SEED:GAMES"),
    ("5:0", r"--chunk GAMES: must be an integer in \[1, 1000000\], got 0"),
    ("-1:5", r"--chunk SEED: must be an integer in \[0, 4294967295\], got -1"),  # issue #30: the bounds table
    (f"{2**32}:5", r"--chunk SEED: must be an integer in \[0, 4294967295\]"),
])
def test_a_bad_chunk_is_refused_with_the_format_or_the_range(text, message):
    with pytest.raises(ValueError, match=message):
        parse_chunk(text)


@pytest.mark.parametrize(("argv", "message"), [(["--chunk", "1:1"], "a clone needs a teacher"),
                                               (["--chunk", "7", "--set", "imitate.teacher=heuristic"], "SEED:GAMES")])
def test_bad_input_stops_before_any_game(tmp_path, capsys, argv, message):
    assert main([*argv, "--out", str(tmp_path / "c")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "c").exists()


def test_a_flag_out_of_its_bounds_stops_before_any_game(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--chunk", "1:1", "--set", "imitate.teacher=heuristic", "--workers", "0", "--out", str(tmp_path / "c")])
    assert info.value.code == 2
    assert "argument --workers: must be an integer in [1, 32], got 0" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
