"""tools/divergence.py: a policy does not diverge from itself, does from another, and bad input is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.extras import TRAIN, TRAIN_MODULE

pytest.importorskip(TRAIN_MODULE, reason=TRAIN)

from dragonstones_env.policies.checkpoint import CheckpointPolicy, expected_layout, game_spaces
from tools.divergence import divergence, main


def random_checkpoint(folder):
    """A checkpoint of random weights (the only other one, policies/default, is made by `make train`)."""
    obs_size, actions = game_spaces("dragonstones_v1")
    rng = np.random.default_rng(0)
    folder.mkdir()
    CheckpointPolicy([(rng.normal(0, 0.05, (obs_size, 16)), np.zeros(16)),
                      (rng.normal(0, 0.05, (16, actions)), np.zeros(actions))]).save_npz(folder / "policy.npz")
    card = {"algorithm": "test", "env": "dragonstones_v1", "layout": expected_layout("dragonstones_v1"), "steps": 0}
    (folder / "card.json").write_text(json.dumps(card))
    return str(folder)


def test_a_policy_does_not_diverge_from_itself():
    r = divergence("champion", "champion", games=2)
    assert r["decisions"] > 0 and r["kl_mean"] == pytest.approx(0, abs=1e-9)
    assert r["log_ratio_mean"] == pytest.approx(0, abs=1e-9) and r["agreement"] == 1.0


def test_drachenschatten_checkpoints_are_compared_against_its_own_bot():
    r = divergence("ds-champion", "ds-champion", games=2, players=3, game="drachenschatten")
    assert r["opponent"] == "ds-heuristic" and r["decisions"] > 0 and r["agreement"] == 1.0


def test_two_checkpoints_diverge_and_the_figures_are_seeded(tmp_path):
    other = random_checkpoint(tmp_path / "random")
    r = divergence("champion", other, games=2)
    assert r["kl_mean"] > 0.01 and r["kl_median"] >= 0 and 0 <= r["agreement"] < 1
    assert r == divergence("champion", other, games=2)


@pytest.mark.parametrize(("argv", "message"), [(["champion", "heuristic", "--games", "1"], "not a checkpoint"),
                                               (["champion", "champion", "--games", "0"], "--games must be >= 1"),
                                               (["champion", "champion", "--players", "7"], "from 3 to 6, got 7"),
                                               (["ds-champion", "ds-champion", "--game", "drachenschatten",
                                                 "--players", "5"], "from 2 to 4, got 5")])
def test_bad_input_is_refused_by_name(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert message in str(exit_.value) + capsys.readouterr().err
