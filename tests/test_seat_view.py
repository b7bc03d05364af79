"""A policy sees every table as it saw its own (F43's two observation modes).

Evaluations, the app and the league's pool play at recall tables (every coin a player with perfect
recall knows). A policy trained in Fist's table mode learnt without the others' coins: its card records
the env options it learnt with, and the game's ``seat_view`` hides those coins before it decides.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dragonstones_env import env, games
from dragonstones_env.games.dragonstones.observation import hide_coins, seat_view
from dragonstones_env.policies import load_policy
from dragonstones_env.policies.base import PolicyError
from dragonstones_env.policies.checkpoint import CheckpointPolicy, card_view, save_mlp, trained_options
from tests.checkpoints import random_actor, write_checkpoint


def observations_in_both_modes(seed: int, num_players: int):
    """(recall, table) observations of every seat at every decision of one random game, played alike."""
    tables = [env(num_players=num_players, observation_mode=m) for m in ("recall", "table")]
    for t in tables:
        t.reset(seed=seed)
    rng = np.random.default_rng(seed)
    recall, table = tables
    while recall.agents:
        for agent in recall.agents:
            yield recall.observe(agent), table.observe(agent)
        mask = recall.observe(recall.agent_selection)["action_mask"]
        action = None if recall.terminations[recall.agent_selection] or recall.truncations[recall.agent_selection] \
            else int(rng.choice(np.flatnonzero(mask)))
        for t in tables:
            t.step(action)


@pytest.mark.parametrize("seed,num_players", [(0, 3), (1, 4), (2, 6)])
def test_table_mode_is_recall_mode_with_the_coins_hidden(seed, num_players):
    differ = 0
    for recall, table in observations_in_both_modes(seed, num_players):
        np.testing.assert_array_equal(hide_coins(recall["observation"]), table["observation"])
        np.testing.assert_array_equal(recall["action_mask"], table["action_mask"])
        differ += not np.array_equal(recall["observation"], table["observation"])
    assert differ > 0  # the modes do differ: the test would catch a view that hides nothing


def test_hide_coins_takes_a_batch_and_leaves_its_input_alone():
    batch = np.ones((3, games.get("dragonstones").raw_env.OBS_SIZE), np.float32)
    hidden = hide_coins(batch)
    assert hidden.shape == batch.shape and (hidden == 0).any() and (batch == 1).all()
    np.testing.assert_array_equal(hidden[0], hide_coins(batch[0]))


def test_each_game_says_what_a_seat_of_its_options_sees():
    assert seat_view({}) is None and seat_view({"observation_mode": "recall"}) is None
    assert seat_view({"observation_mode": "table", "reward_shaping": 0.1}) is hide_coins
    with pytest.raises(ValueError, match="observation_mode must be 'recall' or 'table', got 'full'"):
        seat_view({"observation_mode": "full"})
    fist, ds = games.get("dragonstones"), games.get("drachenschatten")
    assert fist.seat_view({"observation_mode": "table"}) is hide_coins
    assert ds.seat_view({}) is None  # one mode: a DrachenSchatten policy sees the whole observation


def card_with(folder, **keys):
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, **keys}))
    return folder


@pytest.mark.parametrize("keys", [{"env_options": {"observation_mode": "table"}},
                                  {"config": {"observation_mode": "table", "seed": 3}}])  # cards before env_options
def test_a_table_mode_checkpoint_sees_a_recall_table_as_its_own(tmp_path, keys):
    table_policy = load_policy(str(card_with(write_checkpoint(tmp_path / "t", seed=4), **keys)), seed=0)
    recall_policy = load_policy(str(write_checkpoint(tmp_path / "r", seed=4)), seed=0)  # same weights
    assert table_policy.view is hide_coins and recall_policy.view is None
    pairs = [(r, t) for r, t in observations_in_both_modes(5, 4) if r["action_mask"].any()][:60]  # deciders
    recall = np.stack([r["observation"] for r, _ in pairs])
    table = np.stack([t["observation"] for _, t in pairs])
    masks = np.stack([r["action_mask"] for r, _ in pairs])
    np.testing.assert_array_equal(table_policy.probabilities(recall, masks), recall_policy.probabilities(table, masks))
    # and the coins do move a policy that sees them: without its view the table-mode policy would play otherwise
    assert not np.allclose(recall_policy.probabilities(recall, masks), recall_policy.probabilities(table, masks))


def test_the_critic_sees_what_the_actor_sees(tmp_path):
    rng = np.random.default_rng(7)
    size = games.get("dragonstones").raw_env.OBS_SIZE
    critic = tmp_path / "value.npz"
    save_mlp(critic, [(rng.normal(size=(size, 8)).astype(np.float32), np.zeros(8, np.float32)),
                      (rng.normal(size=(8, 1)).astype(np.float32), np.zeros(1, np.float32))], "tanh")
    table_policy = CheckpointPolicy(random_actor(1), critic_file=critic, view=hide_coins)
    plain = CheckpointPolicy(random_actor(1), critic_file=critic)
    recall, table = next((r, t) for r, t in observations_in_both_modes(8, 4)
                         if not np.array_equal(r["observation"], t["observation"]))
    assert table_policy.value(recall) == plain.value(table) != plain.value(recall)


@pytest.mark.parametrize("keys,message", [
    ({"env_options": {"observation_mode": "full"}}, "observation_mode must be 'recall' or 'table', got 'full'"),
    ({"env_options": ["table"]}, "'env_options' must be an object, got list"),
])
def test_a_card_with_options_the_game_does_not_know_is_refused(tmp_path, keys, message):
    folder = card_with(write_checkpoint(tmp_path / "c", seed=2), **keys)
    with pytest.raises(PolicyError, match=message) as err:
        load_policy(str(folder))
    assert "card.json" in str(err.value)


def test_card_view_of_a_card_built_in_memory():
    assert card_view({}) is None  # no game named: nothing to hide
    assert card_view({"env": "dragonstones_v1", "env_options": {"observation_mode": "table"}}) is hide_coins
    ds = games.get("drachenschatten").name  # a game of one mode ignores the option
    assert card_view({"env": ds, "env_options": {"observation_mode": "table"}}) is None


def test_trained_options_are_the_games_options_from_either_place():
    fist = games.get("dragonstones").name
    old = {"env": fist, "config": {"observation_mode": "table", "seed": 3, "ppo": {}}}  # a card before env_options
    assert trained_options(old) == {"observation_mode": "table"}
    assert trained_options({"env": fist, "env_options": {"reward_shaping": 0.1}, "config": old["config"]}) \
        == {"reward_shaping": 0.1}  # env_options, when written, are what the run learnt with
    assert trained_options({"config": old["config"]}) == {}  # no game named: no option is known
