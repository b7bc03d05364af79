"""DrachenSchatten's loop guard (issue 52): a rule a policy may follow where D4 allows a loop.

Two keys may restore each other for ever (D4); a trained policy can come to do it with a
probability of 0.99999 (docs/experiments.md). A card's ``"loop_guard": limit`` makes its policy
leave out the uses of an object type once the acting player used that type ``limit`` times this
turn (games/drachenschatten/guard.py). These tests pin each branch of the rule, the card's
checks, and the guarded policy ending the loop its unguarded twin keeps up.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dragonstones_env import games
from dragonstones_env.games.drachenschatten import actions as A
from dragonstones_env.games.drachenschatten import observation as O
from dragonstones_env.games.drachenschatten.guard import LIMITS, USED_TYPE, loop_guard
from dragonstones_env.policies import PolicyError, decide, information_state, load_policy
from dragonstones_env.policies.checkpoint import CheckpointPolicy, expected_layout, game_spaces
from tests.aec_support import act_ds
from tests.test_ds_observation_v1 import KEY, key_loop
from training.config import ConfigError, load_config
from training.promote import PLAY_KEYS, promote
from training.promote import main as promote_main

SPEC = games.get("drachenschatten")
V1 = SPEC.name
RESTORE = [a for a in range(A.NUM_ACTIONS) if A.FAMILY["use_restore"].start <= a < A.FAMILY["use_restore"].stop]


def uses_obs(counts: dict[int, int]) -> np.ndarray:
    """An observation whose only non-zero piece is ``object_uses`` (card type -> uses this turn)."""
    o = np.zeros(game_spaces(V1)[0], np.float32)
    piece = O.view(o, "object_uses")
    for t, k in counts.items():
        piece[t] = min(k / O.COUNT_SCALE, O.OBS_HIGH)
    return o


def restorer(limit: int | None) -> CheckpointPolicy:
    """A one-layer policy that plays a key restore whenever it may (a bias of 10 on every restore),
    with ``limit`` as its card's loop guard (None: no guard)."""
    obs_size, n = game_spaces(V1)
    bias = np.zeros(n, np.float32)
    bias[RESTORE] = 10.0
    card = {"algorithm": "test", "env": V1, "layout": expected_layout(V1)}
    if limit is not None:
        card["loop_guard"] = limit
    return CheckpointPolicy([(np.zeros((obs_size, n), np.float32), bias)], card=card, seed=0, deterministic=True)


def test_every_use_action_names_its_object_and_nothing_else_does():
    for a in range(A.NUM_ACTIONS):
        option = A.CODEC.relative(a)
        assert USED_TYPE[a] == (option[1] if option[0] == "use" else -1)
    assert {USED_TYPE[a] for a in RESTORE} == {KEY}


def test_the_guard_drops_only_the_spent_types_uses():
    masks = np.ones((2, A.NUM_ACTIONS), np.int8)
    obs = np.stack([uses_obs({KEY: 3}), uses_obs({KEY: 2})])
    guarded = loop_guard(obs, masks, 3)
    assert not guarded[0, RESTORE].any()  # three key uses this turn: no fourth
    others = np.setdiff1d(np.arange(A.NUM_ACTIONS), RESTORE)
    assert guarded[0, others].all() and guarded[1].all()  # other actions, and the row under the limit, kept
    assert masks.all()  # the caller's masks are not written to


def test_the_guard_never_empties_a_decision():
    masks = np.zeros((1, A.NUM_ACTIONS), np.int8)
    masks[0, RESTORE[0]] = 1  # only a restore left (cannot happen in a turn decision, D3): kept
    assert (loop_guard(uses_obs({KEY: 9})[None], masks, 2) == masks).all()


def test_a_saturated_count_still_counts_as_spent():
    # object_uses stops at 16 (OBS_HIGH); the 20th use reads as 16, still >= any limit
    guarded = loop_guard(uses_obs({KEY: 20})[None], np.ones((1, A.NUM_ACTIONS), np.int8), LIMITS.stop - 1)
    assert not guarded[0, RESTORE].any()


@pytest.mark.parametrize("limit", [0, LIMITS.stop, 2.0, True, "3", None])
def test_a_bad_limit_is_refused_by_the_guard(limit):
    with pytest.raises(ValueError, match=r"limit must be an int in 1\.\.16"):
        loop_guard(uses_obs({})[None], np.ones((1, A.NUM_ACTIONS), np.int8), limit)


def test_the_guarded_policy_ends_the_loop_its_unguarded_twin_keeps_up():
    for limit, restores in ((None, 12), (3, 3), (1, 1)):
        e = key_loop()
        policy, done = restorer(limit), 0
        for _ in range(12):
            a = policy.act(e.observe(e.agent_selection))
            if a not in RESTORE:
                break
            e.step(a)
            done += 1
        assert done == restores, limit
        assert e.unwrapped.game.turn_uses[KEY] == restores
        if limit is not None:  # what it plays instead is legal: the mandatory turn-over (D3)
            assert A.CODEC.relative(a)[0] == "turn_over"
            act_ds(e, A.decode(a, 0, 2))


def checkpoint(folder, **card):
    """The restorer saved as a checkpoint folder, its card with ``card``'s keys."""
    policy = restorer(None)
    folder.mkdir()
    policy.save_npz(folder / "policy.npz")
    (folder / "card.json").write_text(json.dumps({**policy.card, **card}))
    return folder


def test_a_card_asks_for_the_guard_by_its_limit(tmp_path):
    assert load_policy(str(checkpoint(tmp_path / "four", loop_guard=4))).guard.keywords == {"limit": 4}
    assert load_policy(str(checkpoint(tmp_path / "none"))).guard is None
    assert load_policy(str(checkpoint(tmp_path / "null", loop_guard=None))).guard is None


@pytest.mark.parametrize("bad", [0, 17, 2.5, True, "4", [4]])
def test_a_card_with_a_bad_limit_is_refused_naming_the_range(tmp_path, bad):
    with pytest.raises(PolicyError, match=r"'loop_guard' must be an int in 1\.\.16, got"):
        load_policy(str(checkpoint(tmp_path / "bad", loop_guard=bad)))


def test_a_card_of_a_game_without_a_loop_is_refused(tmp_path):
    name = games.get("dragonstones").name
    folder = tmp_path / "fist"
    folder.mkdir()
    obs_size, n = game_spaces(name)
    CheckpointPolicy([(np.zeros((obs_size, n), np.float32), np.zeros(n, np.float32))]).save_npz(folder / "policy.npz")
    card = {"algorithm": "test", "env": name, "layout": expected_layout(name), "loop_guard": 4}
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(PolicyError, match="has no loop to guard"):
        load_policy(str(folder))


@pytest.mark.parametrize("override", ["loop_guard=0", "loop_guard=17", "loop_guard=true", "loop_guard=2.5"])
def test_a_run_config_checks_its_loop_guard(override):
    with pytest.raises(ConfigError, match="loop_guard"):
        load_config("configs/ds-champion-v5.yaml", [override])


def test_a_game_without_a_loop_refuses_a_loop_guard_in_a_config():
    with pytest.raises(ConfigError, match="loop_guard: Fist of Dragonstones has no loop to guard"):
        load_config("configs/default.yaml", ["loop_guard=4"])


def test_a_runs_checkpoints_and_its_evaluated_learner_carry_its_loop_guard():
    cfg = load_config("configs/ds-champion-v5.yaml", ["loop_guard=4"])
    assert cfg.card_keys() == {"env_options": cfg.env_options(), "loop_guard": 4}
    assert cfg.learner_card() == {"env": V1, "loop_guard": 4}
    plain = load_config("configs/ds-champion-v5.yaml", ["loop_guard=null"])
    assert "loop_guard" not in plain.card_keys() and plain.learner_card() is None


# ---------------------------------------------------------------------------- shipping how it plays
def test_a_card_may_ask_for_the_most_likely_action(tmp_path):
    sampler = load_policy(str(checkpoint(tmp_path / "sampler")), seed=0)
    argmax = load_policy(str(checkpoint(tmp_path / "argmax", deterministic=True)), seed=0)
    assert not sampler.deterministic and argmax.deterministic
    assert load_policy(str(tmp_path / "sampler"), seed=0, deterministic=True).deterministic  # the loader's word
    e = key_loop()
    o = e.observe(e.agent_selection)
    probs = argmax.probabilities(o["observation"][None], o["action_mask"][None])[0]
    assert all(argmax.act(o) == int(probs.argmax()) for _ in range(20))


@pytest.mark.parametrize("bad", [1, "yes", None, [True]])
def test_a_card_whose_deterministic_is_not_a_bool_is_refused(tmp_path, bad):
    with pytest.raises(PolicyError, match="'deterministic' must be true or false"):
        load_policy(str(checkpoint(tmp_path / "bad", deterministic=bad)))


def test_promote_writes_how_the_shipped_network_plays_on_its_card(tmp_path):
    source = checkpoint(tmp_path / "run")
    promote_main([str(source), str(tmp_path / "shipped"), "--deterministic", "--loop-guard", "4"])
    card = json.loads((tmp_path / "shipped" / "card.json").read_text())
    assert card["deterministic"] is True and card["loop_guard"] == 4
    assert {k: v for k, v in card.items() if k not in PLAY_KEYS} == json.loads((source / "card.json").read_text())
    shipped = load_policy(str(tmp_path / "shipped"))
    assert shipped.deterministic and shipped.guard.keywords == {"limit": 4}
    assert "loop_guard" not in json.loads((source / "card.json").read_text())  # the run's folder is left as it was


def test_promote_refuses_a_bad_play_setting_before_writing_anything(tmp_path, capsys):
    source = checkpoint(tmp_path / "run")
    with pytest.raises(SystemExit):
        promote_main([str(source), str(tmp_path / "shipped"), "--loop-guard", "40"])
    assert "'loop_guard' must be an int in 1..16, got 40" in capsys.readouterr().err
    assert not (tmp_path / "shipped").exists()
    with pytest.raises(PolicyError, match="unknown play setting"):
        promote(source, tmp_path / "shipped", play={"temperature": 0.5})


# ---------------------------------------------------------------------- the search's own guard


def search_at_loop(tmp_path, guard: int | None):
    """The key loop after one restore, and a search over the guarded restorer (so its rollouts end),
    with ``guard`` as the search's own option (None: none)."""
    rollout = checkpoint(tmp_path / f"rollout{guard}", loop_guard=2)
    spec = f"ismcts:simulations=20:rollout={rollout}:horizon=0:seed=1" + ("" if guard is None else f":guard={guard}")
    e = key_loop()
    act_ds(e, ("use", KEY, KEY))
    return load_policy(spec), e


def test_the_search_follows_its_guard_at_the_root(tmp_path):
    # a key restore is a candidate of the unguarded search's root after one use of the key; with guard=1 never
    # (the rollout copies' own guard, at 2, does not reach the search's tree: the 1-of-400 loop of docs/results.md)
    for guard, restores_visited in ((None, True), (1, False)):
        search, e = search_at_loop(tmp_path, guard)
        a = decide(search, e, e.agent_selection)
        assert any(r in search.root_visits for r in RESTORE) is restores_visited, guard
        assert (a in RESTORE) <= restores_visited


def test_the_search_takes_the_one_action_its_guard_leaves_without_searching(tmp_path):
    search, e = search_at_loop(tmp_path, 1)
    agent = e.agent_selection
    observation = e.observe(agent)
    legal = np.flatnonzero(observation["action_mask"])
    kept = [int(legal[np.isin(legal, RESTORE)][0]), int(legal[~np.isin(legal, RESTORE)][0])]
    mask = np.zeros_like(observation["action_mask"])
    mask[kept] = 1  # a restore and one other action: the guard leaves the other
    search.observe_game(information_state(e, agent))
    simulated = search.simulated
    assert search.act({**observation, "action_mask": mask}) == kept[1]
    assert search.root_visits == {kept[1]: 1} and search.simulated == simulated


def test_a_search_guard_is_checked_against_its_game(tmp_path):
    with pytest.raises(PolicyError, match=r"guard=4 asks for a loop_guard, but 'dragonstones_v1' has no loop"):
        load_policy("ismcts:rollout=heuristic:guard=4")
    with pytest.raises(PolicyError, match=r"guard=17: 'loop_guard' must be an int in 1\.\.16, got 17"):
        load_policy("ismcts:rollout=ds-heuristic:guard=17")
    with pytest.raises(PolicyError, match=r"guard='0' is not allowed"):
        load_policy("ismcts:guard=0")
    # without a rollout policy the game is known at the table: refused at the first decision there
    fist = games.get("dragonstones").env(num_players=3)
    fist.reset(seed=0)
    search = load_policy("ismcts:simulations=2:guard=4")
    with pytest.raises(PolicyError, match="has no loop to guard"):
        decide(search, fist, fist.agent_selection)
    assert load_policy("ismcts:rollout=ds-heuristic:guard=4").options.guard == 4
