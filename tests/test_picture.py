"""``render_mode="rgb_array"``: H x W x 3 uint8 pictures of the current agent's view, for both
games and the Gym wrapper (so Gymnasium's video recorders work)."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("PIL")

from dragonstones_env import drachenschatten, env

GAMES = [(env, 4), (env, 6), (drachenschatten.env, 2), (drachenschatten.env, 4)]


def _random_steps(e, rng, k):
    for _ in range(k):
        if e.unwrapped.game.decision is None:
            return
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))


@pytest.mark.parametrize(("make", "n"), GAMES)
def test_frames_shape_dtype_determinism_and_change(make, n):
    frames = []
    for _ in range(2):
        e = make(num_players=n, render_mode="rgb_array")
        e.reset(seed=3)
        rng = np.random.default_rng(0)
        run = [e.render()]
        for _ in range(4):
            _random_steps(e, rng, 15)
            run.append(e.render())
        frames.append(run)
    first = frames[0][0]
    assert first.shape == (500, 800, 3) and first.dtype == np.uint8 and first.flags.c_contiguous
    for a, b in zip(*frames, strict=True):
        assert np.array_equal(a, b), "the same game gives the same pictures"
    assert len({f.tobytes() for f in frames[0]}) > 1, "the picture changes when the table does"
    assert e.unwrapped.metadata["render_fps"] > 0 and "rgb_array" in e.unwrapped.metadata["render_modes"]


def test_a_picture_is_the_current_agents_view():
    e = env(num_players=4, render_mode="rgb_array")
    e.reset(seed=0)
    raw = e.unwrapped
    seat = raw.agent_name_mapping[e.agent_selection]
    assert np.array_equal(e.render(), raw.picture(seat))
    assert not np.array_equal(raw.picture(seat), raw.picture((seat + 1) % 4))  # the viewer sits at the bottom


def test_a_picture_never_shows_another_seats_sealed_bid():
    """Branch on two bids: the other seats' pictures stay identical until the reveal."""
    e = env(num_players=4, render_mode="rgb_array")
    e.reset(seed=2)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    bidder = e.unwrapped.agent_name_mapping[e.agent_selection]
    left, right = copy.deepcopy(e), copy.deepcopy(e)
    left.step(int(legal[0]))
    right.step(int(legal[-1]))
    for seat in range(4):
        if seat != bidder:
            assert np.array_equal(left.unwrapped.picture(seat), right.unwrapped.picture(seat))


@pytest.mark.filterwarnings("ignore:.*Overwriting existing videos")  # tmp_path exists already
@pytest.mark.parametrize("game_id", ["Dragonstones-v0", "DrachenSchatten-v0"])
def test_the_gym_wrapper_renders_the_learners_view(game_id, tmp_path):
    g = gym.make(game_id, render_mode="rgb_array", opponents="random")
    g.reset(seed=0)
    frame = g.render()
    assert frame.shape == (500, 800, 3) and frame.dtype == np.uint8
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo writes with moviepy")
    rec = gym.wrappers.RecordVideo(g, str(tmp_path), episode_trigger=lambda k: True, disable_logger=True)
    rec.reset(seed=1)
    done = False
    while not done:
        mask = rec.unwrapped.action_masks()
        _, _, term, trunc, _ = rec.step(int(np.flatnonzero(mask)[0]))
        done = term or trunc
    rec.close()
    assert list(tmp_path.glob("*.mp4"))
