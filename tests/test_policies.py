"""load_policy: every spec form, its errors, and checkpoints that plug in as opponents."""

from __future__ import annotations

import json
import shutil
from functools import partial

import numpy as np
import pytest

from dragonstones_env import env, games
from dragonstones_env.games.dragonstones.env import LAYOUT_SIGNATURE
from dragonstones_env.play.arena import play_game
from dragonstones_env.play.single_agent import make as make_gym
from dragonstones_env.policies import PolicyError, RandomPolicy, available, load_policy, registry
from dragonstones_env.policies.checkpoint import CheckpointPolicy, masked_softmax, save_checkpoint
from tests.extras import TRAIN, TRAIN_MODULE


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny MaskablePPO checkpoint, trained for a few hundred steps."""
    pytest.importorskip(TRAIN_MODULE, reason=TRAIN)
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    model = MaskablePPO("MlpPolicy", make_gym("dragonstones", num_players=3), n_steps=128, batch_size=64, n_epochs=1,
                        seed=0, device="cpu")
    model.learn(256)
    folder = tmp_path_factory.mktemp("ckpt") / "tiny"
    save_checkpoint(model, folder, {"steps": 256})
    return folder


def test_masked_softmax_keeps_overflowed_logits_numbers():
    """Logits a relu network overflowed to inf (or NaN) still give a distribution over the legal actions."""
    logits = np.array([[np.inf, 1.0, np.nan, -np.inf, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0]], np.float32)
    masks = np.array([[1, 1, 1, 1, 0], [0, 1, 0, 1, 0]], np.int8)
    probs = masked_softmax(logits, masks)
    assert np.isfinite(probs).all() and np.allclose(probs.sum(axis=1), 1.0)
    assert probs[0].argmax() == 0 and probs[0, 4] == 0 and probs[0, 3] == 0  # -inf: legal, never played
    assert probs[1, [0, 2, 4]].sum() == 0 and probs[1, 3] > probs[1, 1]


@pytest.mark.parametrize("name", ["champion", "ds-champion"])
def test_a_checkpoint_computes_only_its_legal_actions_logits(name):
    """A search's rollouts pay a forward pass a step, most of it the head; the head's columns of illegal
    actions are skipped, and the distribution is the full pass's (float32 summation order aside)."""
    policy = load_policy(name, seed=0)
    spec = games.get(policy.game)
    e = spec.env(num_players=4)
    e.reset(seed=3)
    bots = [load_policy(spec.default_bot, seed=i) for i in range(4)]
    observations, masks = [], []
    while e.unwrapped.game.decision is not None and len(observations) < 64:
        obs = e.observe(e.agent_selection)
        observations.append(obs["observation"])
        masks.append(obs["action_mask"])
        e.step(int(bots[e.unwrapped.agent_name_mapping[e.agent_selection]].act(obs)))
    x, m = np.array(observations), np.array(masks)
    for rows in (slice(0, 1), slice(5, 6), slice(0, len(x))):  # alone, as a search asks, and a batch
        legal = m[rows].any(axis=0)
        part, full = policy.legal_logits(x[rows], m[rows]), policy.logits(x[rows])
        assert legal.sum() < legal.size // 4 and not part[:, ~legal].any()
        np.testing.assert_allclose(part[:, legal], full[:, legal], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(policy.probabilities(x[rows], m[rows]), masked_softmax(full, m[rows]),
                                   rtol=1e-5, atol=1e-7)


def test_random_is_uniform_over_legal_actions_and_seeded():
    e = env(num_players=4)
    e.reset(seed=0)
    obs = e.observe("player_0")
    a, b = RandomPolicy(5), load_policy("random", seed=5)
    picks = [a.act(obs) for _ in range(300)]
    assert picks == [b.act(obs) for _ in range(300)]
    assert all(obs["action_mask"][p] for p in picks)
    assert set(picks) == set(np.flatnonzero(obs["action_mask"]).tolist())  # all 27 opening bids drawn


def test_random_batch_form_respects_masks():
    masks = np.zeros((64, 20), np.int8)
    rng = np.random.default_rng(0)
    for row in masks:
        row[rng.choice(20, size=3, replace=False)] = 1
    actions = RandomPolicy(0).act_batch(np.zeros((64, 4)), masks)
    assert all(masks[i, a] for i, a in enumerate(actions))


def test_builtins_are_available():
    assert {"random", "heuristic", "ds-heuristic"} <= set(available())


def test_a_policy_object_is_returned_as_is():
    bot = RandomPolicy(1)
    assert load_policy(bot) is bot


def test_unknown_name_is_named_with_what_is_available():
    with pytest.raises(PolicyError, match=r"'champignon'.*random"):
        load_policy("champignon")
    with pytest.raises(PolicyError, match="policy spec"):
        load_policy(42)


def test_folder_without_card_is_refused(tmp_path):
    with pytest.raises(PolicyError, match=r"card\.json"):
        load_policy(str(tmp_path))


def test_unreadable_card_is_refused(tmp_path):
    (tmp_path / "card.json").write_text("{not json")
    with pytest.raises(PolicyError, match="not readable JSON"):
        load_policy(str(tmp_path))


def test_checkpoint_round_trip_plays_as_an_opponent(checkpoint):
    policy = load_policy(str(checkpoint), seed=0)
    assert isinstance(policy, CheckpointPolicy)
    assert isinstance(load_policy(str(checkpoint / "model.zip")), CheckpointPolicy)
    result = play_game(lambda: env(num_players=3), [policy, RandomPolicy(1), RandomPolicy(2)], ["ckpt", "r1", "r2"],
                       seed=3)
    assert result.winners or result.truncated
    gym_env = make_gym("dragonstones", num_players=3, opponents=str(checkpoint), seat=0)
    gym_env.reset(seed=0)
    gym_env.step(int(np.flatnonzero(gym_env.action_masks())[0]))


def test_checkpoint_is_reproducible_per_seed(checkpoint):
    e = env(num_players=3)
    e.reset(seed=0)
    obs = e.observe("player_0")
    a, b = load_policy(str(checkpoint), seed=9), load_policy(str(checkpoint), seed=9)
    assert [a.act(obs) for _ in range(20)] == [b.act(obs) for _ in range(20)]
    greedy = load_policy(str(checkpoint), deterministic=True)
    assert len({greedy.act(obs) for _ in range(5)}) == 1


def test_checkpoint_for_another_layout_is_refused(checkpoint, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(checkpoint, other)
    card = json.loads((other / "card.json").read_text())
    card["layout"] = "dragonstones_v0:000000000000"
    (other / "card.json").write_text(json.dumps(card))
    with pytest.raises(PolicyError, match=r"'dragonstones_v0:000000000000'.*retrain"):
        load_policy(str(other))


def test_corrupt_or_missing_model_is_refused(checkpoint, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(checkpoint, broken)
    (broken / "policy.npz").write_bytes(b"PK\x03\x04 these are not weights")
    with pytest.raises(PolicyError, match=r"broken.*policy\.npz"):
        load_policy(str(broken))
    (broken / "policy.npz").unlink()
    (broken / "model.zip").write_bytes(b"PK\x03\x04 this is not a model")
    with pytest.raises(PolicyError, match=r"broken.*model\.zip"):
        load_policy(str(broken))
    (broken / "model.zip").unlink()
    with pytest.raises(PolicyError, match="missing"):
        load_policy(str(broken))


def test_numpy_actor_matches_the_torch_policy(checkpoint):
    """policy.npz plays exactly the distribution of the SB3 model it was taken from."""
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(checkpoint / "model.zip", device="cpu")
    policy = load_policy(str(checkpoint))
    rng = np.random.default_rng(0)
    e = env(num_players=3)
    e.reset(seed=1)
    obs, masks = [], []
    for _ in range(40):
        o = e.observe(e.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        e.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    obs, masks = np.stack(obs), np.stack(masks)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks.astype(bool))
        want = dist.distribution.probs.numpy()
    got = policy.probabilities(obs, masks)
    assert np.allclose(got, want, atol=1e-5)
    assert (got[masks == 0] == 0).all()


def test_the_numpy_critic_matches_the_torch_value_and_is_read_when_asked(checkpoint, tmp_path):
    """value.npz judges a position as the SB3 critic does (what a search reads at its horizon); a
    checkpoint without it, or with a broken one, plays as before and says so only when asked."""
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(checkpoint / "model.zip", device="cpu")
    policy = load_policy(str(checkpoint))
    assert policy.has_value
    rng = np.random.default_rng(3)
    e = env(num_players=3)
    e.reset(seed=2)
    for _ in range(30):
        o = e.observe(e.agent_selection)
        with torch.no_grad():
            want = float(model.policy.predict_values(torch.as_tensor(o["observation"][None]))[0, 0])
        assert policy.value(o) == pytest.approx(want, abs=1e-5)
        e.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    no_critic = tmp_path / "no-critic"
    shutil.copytree(checkpoint, no_critic)
    (no_critic / "value.npz").unlink()
    bare = load_policy(str(no_critic))
    assert not bare.has_value and o["action_mask"][bare.act(o)]  # it still plays
    with pytest.raises(PolicyError, match=r"no value\.npz \(the critic\)"):
        bare.value(o)
    broken = tmp_path / "broken-critic"
    shutil.copytree(checkpoint, broken)
    (broken / "value.npz").write_bytes(b"not a zip")
    policy = load_policy(str(broken))  # the actor loads; the critic is checked when first read
    with pytest.raises(PolicyError, match=r"value\.npz: not an npz archive"):
        policy.value(o)


def test_model_zip_alone_is_refused(checkpoint, tmp_path):
    """Issue #14: model.zip unpickles (it can run code), so it never plays; policy.npz does."""
    only_zip = tmp_path / "zip-only"
    shutil.copytree(checkpoint, only_zip)
    (only_zip / "policy.npz").unlink()
    with pytest.raises(PolicyError, match=r"no policy\.npz.*model\.zip is never loaded"):
        load_policy(str(only_zip))


def test_shipped_checkpoints_load_by_name(checkpoint, tmp_path, monkeypatch):
    shutil.copytree(checkpoint, tmp_path / "tiny")
    monkeypatch.setattr(registry, "shipped_dir", lambda: tmp_path)
    assert "tiny" in available()
    assert isinstance(load_policy("tiny"), CheckpointPolicy)


def test_the_shipped_champion_loads_by_name_and_plays_legal_actions():
    assert "champion" in available()
    champion = load_policy("champion", seed=0)
    assert isinstance(champion, CheckpointPolicy) and champion.card["steps"] > 0
    assert champion.card["layout"] == LAYOUT_SIGNATURE and champion.game == "dragonstones_v1"
    # the card carries the panel its README figures come from (tools/champion_card.py)
    panels = [v for k, v in champion.card["evaluation_panel"].items() if k.startswith("panel_4p_")]
    assert panels, "the card has no 4-player panel"
    for panel in panels:
        assert panel["games"] >= 200 and {m["k"] for m in panel["mixes"]} >= {1, 3}
        assert panel["robustness"]["ratio"] == min(m["ratio"] for m in panel["mixes"])
    for n in (3, 6):
        result = play_game(lambda n=n: env(num_players=n), [champion] + [RandomPolicy(i) for i in range(1, n)],
                           ["champion"] + ["random"] * (n - 1), seed=n)
        assert result.winners or result.truncated


@pytest.mark.parametrize("name", registry.shipped())
def test_a_shipped_policy_finishes_its_games_at_a_table_of_its_own_copies(name):
    """Four copies of a shipped policy end their games before the turn limit.

    A table of copies can loop where no bot would: in DrachenSchatten two keys can restore each
    other's cards forever (D4), and an experimental run's copies did so in 1.5% of its games, which
    the card's panel only shows if someone reads it. Shipping such a policy should fail here: by
    the card's own all-copies tables (the panel's figures, one of at least 1,000 games among them)
    and by a few games played here, which check the policy itself and not only its card.
    """
    copies = [t for p in load_policy(name).card["evaluation_panel"].values() if isinstance(p, dict)
              for t in p.get("tables", ()) if t["role"] == "candidate"]
    assert max((t["games"] for t in copies), default=0) >= 1000, f"{name}: no all-copies table of 1,000 games"
    assert all(t["truncated"] == 0 for t in copies), f"{name}: its copies stalled in its card's panel: {copies}"
    spec = games.get(load_policy(name).game)
    players = min(4, max(spec.players))
    for seed in range(12):
        seats = [load_policy(name, seed=100 * seed + i) for i in range(players)]
        result = play_game(partial(spec.env, num_players=players), seats, [name] * players, seed=seed)
        assert result.winners and not result.truncated, f"{name}: four copies stalled at seed {seed}"
