"""The trainer's bar ends where the run ends: the last whole rollout past total_timesteps, or the
time budget, whichever comes first (issue 48: it counted to 1,000,000 while 600 s stopped it)."""

import pytest

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

from training.progress import final_step, stop_line


def test_the_last_step_is_the_last_whole_rollout():
    assert final_step(0, 4096, 8192) == 8192  # the bar read 8,192/4,096
    assert final_step(0, 1_000_000, 8192) == 1_007_616
    assert final_step(8192, 16384, 8192) == 16384  # a resumed run
    assert final_step(20000, 16384, 8192) == 20000  # nothing left to learn


def test_the_budget_stops_first_when_it_comes_first():
    # make train: 1,000,000 steps at about 1,400 steps/s, a 600 s budget
    done, line = stop_line(140_000, 1_007_616, 100.0, 600.0, 1400.0)
    assert done == pytest.approx(100 / 600)
    assert line == "140,000/1,007,616 steps, 100/600 s budget; ends in 8:20 (budget)"


def test_the_steps_stop_first_when_they_come_first():
    done, line = stop_line(4096, 8192, 10.0, 600.0, 409.6)
    assert done == pytest.approx(0.5)
    assert line.endswith("ends in 0:10 (steps)")
    done, line = stop_line(0, 8192, 0.0, 0.0, 0.0)  # no budget, no rate yet
    assert done == 0.0 and line == "0/8,192 steps"
