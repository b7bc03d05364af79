"""DrachenSchatten's observation v1 (issue 52): the active player's object uses this turn.

Why v1: a key may restore another key for ever (D4); v0 saw every state of that loop alike but
for the step fraction, so a policy could not tell its hundredth restore from its first. The
sufficiency test below shows the two states v0 confuses; the others pin the new piece, the v0
view older checkpoints get (policies/ds-champion-v2, the v0 champion, plays on exactly as before: its
actions on fixed seeds were recorded with the v0 code in tests/golden/ds_champion_v0.json) and the zero-weight
widening of a v0 start (training/start.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import games
from dragonstones_env.games.drachenschatten import TYPE_INDEX as T
from dragonstones_env.games.drachenschatten import observation as O
from dragonstones_env.games.drachenschatten.env import LAYOUT_SIGNATURE, LAYOUT_SIGNATURE_V0
from dragonstones_env.play.arena import play_game
from dragonstones_env.policies import PolicyError, load_policy
from dragonstones_env.policies.checkpoint import card_view, expected_layout, game_spaces, read_card
from tests.aec_support import act_ds, arranged_ds
from training.config import ConfigError
from training.start import read_start, widen

KEY = T["key restore"]
CHAMPION = Path(__file__).resolve().parents[1] / "policies" / "ds-champion-v2"
GOLDEN = Path(__file__).resolve().parent / "golden" / "ds_champion_v0.json"
STEPS = O.LAYOUT_V0["progress"].slice.start + 1  # the step fraction, v0's only trace of a loop


def key_loop():
    """Player 0 with two key restores, one ready: each restore readies the other key (D4)."""
    return arranged_ds(2, {0: ["treasure"]}, [["key restore", ("key restore", False)], ["treasure"]], 0)


def obs(e, seat=0):
    return e.observe(f"player_{seat}")["observation"]


def test_v0_cannot_tell_the_key_loops_states_apart_and_v1_can():
    e = key_loop()
    seen = []
    for _ in range(4):
        seen.append(obs(e).copy())
        act_ds(e, ("use", KEY, KEY))
    seen.append(obs(e).copy())
    v0 = [O.v0_view(o) for o in seen]
    # the same legal options after 1 and 3 restores, and v0 differs only in the step fraction
    assert np.flatnonzero(v0[1] != v0[3]).tolist() == [STEPS]
    assert np.flatnonzero(v0[0] != v0[2]).tolist() == [STEPS]
    # v1 counts the restores: 1 and 3 uses of the key this turn, the fact the loop is made of
    uses = [O.decode(o, ("object_uses",))["object_uses"] for o in seen]
    assert [u[KEY] for u in uses] == [0, 1, 2, 3, 4]
    assert not any(np.delete(u, KEY).any() for u in uses)
    assert e.unwrapped.game.turn_uses[KEY] == 4


def test_the_uses_are_the_active_players_seen_by_every_seat_and_reset_each_turn():
    e = key_loop()
    act_ds(e, ("use", KEY, KEY))
    act_ds(e, ("use", KEY, KEY))
    for seat in (0, 1):  # public: the other seat sees the same count (no seat axis)
        assert O.view(obs(e, seat), "object_uses")[KEY] == pytest.approx(2 / O.COUNT_SCALE)
    act_ds(e, ("turn_over", 0))
    act_ds(e, ("end_turn",))
    assert not O.view(obs(e, 1), "object_uses").any()  # player 1's turn: nothing used yet


def test_the_count_is_capped_at_the_observation_high():
    e = key_loop()
    for _ in range(20):
        act_ds(e, ("use", KEY, KEY))
    o = obs(e)
    assert O.view(o, "object_uses")[KEY] == O.OBS_HIGH and o.max() <= O.OBS_HIGH
    assert e.unwrapped.game.turn_uses[KEY] == 20


def test_no_uses_in_the_picks_nor_after_the_game():
    e = games.get("drachenschatten").env(num_players=3)
    e.reset(seed=5)
    assert not O.view(obs(e), "object_uses").any()
    rng = np.random.default_rng(0)
    while not all(e.terminations.values()) and not all(e.truncations.values()):
        agent = e.agent_selection
        e.step(int(rng.choice(np.flatnonzero(e.observe(agent)["action_mask"]))))
    assert not O.view(obs(e), "object_uses").any()


def test_v0_is_the_first_floats_of_v1_and_its_layout_is_unchanged():
    assert O.OBS_SIZE_V0 + len(T) == O.OBS_SIZE
    assert list(O.LAYOUT)[: len(O.LAYOUT_V0)] == list(O.LAYOUT_V0)
    assert all(O.LAYOUT[k].slice == p.slice for k, p in O.LAYOUT_V0.items())
    assert LAYOUT_SIGNATURE.startswith("drachenschatten_v1:")
    card = read_card(CHAMPION, "ds-champion-v2")
    assert card["layout"] == LAYOUT_SIGNATURE_V0 == expected_layout("drachenschatten_v0")
    assert game_spaces("drachenschatten_v0")[0] == O.OBS_SIZE_V0
    assert game_spaces("drachenschatten_v1")[0] == O.OBS_SIZE


def test_a_v0_checkpoint_sees_the_v0_view_and_a_wrong_v0_layout_is_still_refused(tmp_path):
    card = read_card(CHAMPION, "ds-champion-v2")
    assert card_view(card) is O.v0_view
    assert load_policy("ds-champion-v2").game == "drachenschatten_v0"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "card.json").write_text(json.dumps({**card, "layout": LAYOUT_SIGNATURE}))
    (bad / "policy.npz").write_bytes((CHAMPION / "policy.npz").read_bytes())
    with pytest.raises(PolicyError, match="layout"):
        load_policy(str(bad))


def champion_games():
    """ds-champion-v2 (sampling, seeded) against ds-heuristic and random at 3 and 4 players."""
    out = {}
    for n, seed in ((3, 1), (4, 2), (4, 3)):
        names = ["ds-champion-v2", "ds-heuristic", "ds-champion-v2", "random"][:n]
        policies = [load_policy(s, seed=100 * seed + i) for i, s in enumerate(names)]
        actions: list[int] = out.setdefault(f"{n}p/s{seed}", [])
        play_game(lambda n=n: games.get("drachenschatten").env(num_players=n), policies, names, seed,
                  on_action=lambda agent, a, actions=actions: actions.append(int(a)))
    return out


def test_ds_champion_v2_plays_exactly_as_it_did_at_v0_tables():
    want = json.loads(GOLDEN.read_text())
    got = champion_games()
    for k, actions in want.items():
        n = next((i for i, (a, b) in enumerate(zip(got[k], actions, strict=False)) if a != b), None)
        assert n is None and len(got[k]) == len(actions), f"{k}: action {n} differs"


def test_a_v0_start_is_widened_with_zero_weights_and_plays_as_before():
    start = read_start(str(CHAMPION), "drachenschatten_v1")
    champion = load_policy("ds-champion-v2", deterministic=True)
    (w, _), *_ = start["actor"][0]
    assert w.shape[0] == O.OBS_SIZE and not w[O.OBS_SIZE_V0:].any()
    assert np.array_equal(w[: O.OBS_SIZE_V0], champion.weights[0][0])
    assert start["critic"][0][0][0].shape[0] == O.OBS_SIZE
    e = key_loop()
    o = obs(e)

    def forward(layers, x):
        for i, (wi, bi) in enumerate(layers):
            x = x @ wi + bi
            x = np.tanh(x) if i < len(layers) - 1 else x
        return x

    assert start["actor"][1] == "tanh"
    assert np.allclose(forward(start["actor"][0], o), forward(champion.weights, O.v0_view(o)), atol=1e-5)


def test_widen_refuses_a_first_layer_of_another_size():
    with pytest.raises(ConfigError, match="inputs"):
        widen([(np.zeros((3, 2), np.float32), np.zeros(2, np.float32))], (0, 1), 5)


def test_a_start_of_another_game_is_refused():
    with pytest.raises(ConfigError, match="plays drachenschatten_v0"):
        read_start(str(CHAMPION), "dragonstones_v1")
