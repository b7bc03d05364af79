"""The web app in a real browser (Playwright + Debian's chromium): a 4-player Fist game against
three random bots played to the end by clicking, a replay stepped back and forth with seat
switching (hidden information only in the whole-table view), a DrachenSchatten game and its
replay. Saves the screenshots the README shows (docs/app-*.png)."""

from __future__ import annotations

import json
import random
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("playwright", reason="the [app] extra (pytest-playwright) is not installed")

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _moves(page) -> int:
    return page.evaluate("ui.state ? ui.state.moves : -1")


def _start(page, url, game, players, opponent, seed):
    page.goto(f"{url}/?seed={seed}")
    page.wait_for_selector("#seat-policies select")
    page.select_option("#game", game)
    page.select_option("#players", str(players))
    for i in range(1, players):
        page.select_option(f"#policy-{i}", opponent)
    page.eval_on_selector("#pace", "el => { el.value = 0; }")  # bots move at once: a fast test
    page.click("#start")
    page.wait_for_function("ui.state && (ui.state.actions || ui.state.result)")


def _play_by_clicking(page, rng, shot_at=None, shot=None, limit=400) -> int:
    """Compose bids and click choices until the result panel shows; returns the decisions made."""
    for made in range(limit):
        page.wait_for_function("ui.state && (ui.state.actions || ui.state.result)")
        if page.is_visible("#result"):
            return made
        before = _moves(page)
        if page.is_visible("#submit-bid"):
            for button in page.query_selector_all("[data-inc]"):
                for _ in range(rng.randrange(3)):
                    button.click()
            if made == shot_at and shot:
                page.screenshot(path=str(shot))
            page.click("#submit-bid")
        elif made % 2 and page.query_selector_all(".stack.clickable"):  # DrachenSchatten: click a stack itself
            if made == shot_at and shot:
                page.screenshot(path=str(shot))
            rng.choice(page.query_selector_all(".stack.clickable")).click()
        else:
            choices = page.query_selector_all("button.choice")
            assert choices, "a decision with neither a bid builder nor choice buttons"
            if made == shot_at and shot:
                page.screenshot(path=str(shot))
            rng.choice(choices).click()
        page.wait_for_function(f"ui.state.moves > {before}")
        assert not page.text_content("#error"), page.text_content("#error")
    raise AssertionError("the game did not end")


def _replay_last(page):
    with page.expect_download():
        page.click("#result button")  # "Save record": downloads it and offers to replay it
    page.click("#tab-replay")
    page.click("#replay-last")
    page.wait_for_function("ui.state && ui.state.kind === 'replay'")


def _at(page, step):
    page.wait_for_function(f"ui.state.kind === 'replay' && ui.state.step === {step}")


def _check_views(page, steps):
    """Whole table: hidden information shown; any seat's view: none of it."""
    page.select_option("#view-select", "all")
    page.wait_for_function("ui.state.seat === 'all'")
    assert page.query_selector_all(".hidden-info")
    for seat in range(page.evaluate("ui.state.players")):
        page.select_option("#view-select", str(seat))
        page.wait_for_function(f"ui.state.seat === {seat}")
        assert not page.query_selector_all(".hidden-info"), f"seat {seat}'s view shows hidden information"


def test_fist_game_against_random_bots_then_its_replay(page, server_url):
    rng = random.Random(0)
    _start(page, server_url, "dragonstones", 4, "random", seed=11)
    made = _play_by_clicking(page, rng, shot_at=6, shot=DOCS / "app-play.png")
    assert made > 5
    assert page.text_content("#winners").startswith("Winner: player_")

    _replay_last(page)
    steps = page.evaluate("ui.replay.steps")
    assert steps > made
    _at(page, 0)
    for _ in range(3):
        page.click("#step-next")
    _at(page, 3)
    page.click("#step-prev")
    _at(page, 2)
    page.select_option("#turn-select", label="2")  # jump to a turn
    _at(page, page.evaluate("ui.replay.turns['2']"))
    _check_views(page, steps)
    page.click("#step-last")
    _at(page, steps)
    assert page.is_visible("#result")


def test_replay_with_checkpoint_insight(page, server_url):
    """A game of four champions (all bots: it plays out when created), opened from pasted JSON."""
    body = json.dumps({"game": "dragonstones", "players": 4, "seats": ["champion"] * 4, "seed": 4}).encode()
    req = urllib.request.Request(f"{server_url}/api/games", body, {"Content-Type": "application/json"})
    gid = json.load(urllib.request.urlopen(req))["id"]
    saved = urllib.request.urlopen(f"{server_url}/api/games/{gid}/record").read().decode()
    page.goto(server_url)
    page.wait_for_selector("#seat-policies select")
    page.click("#tab-replay")
    page.fill("#record-text", saved)
    page.click("#load-replay")
    page.wait_for_function("ui.state && ui.state.kind === 'replay'")
    rid, steps = page.evaluate("ui.replayId"), page.evaluate("ui.replay.steps")

    def top(k):
        state = json.load(urllib.request.urlopen(f"{server_url}/api/replays/{rid}?step={k}&seat=all"))
        return state["insight"][0]["top"]

    # a decision mid-game where the champion hesitates: worth a picture
    step = next((k for k in range(20, steps) if len(top(k)) >= 3 and top(k)[0]["p"] < 0.7), 0)
    page.fill("#step-slider", str(step))
    page.dispatch_event("#step-slider", "change")
    _at(page, step)
    assert page.is_visible("#insight-panel")
    assert "champion" in page.text_content("#insight-panel") and "%" in page.text_content("#insight-panel")
    page.select_option("#view-select", "all")
    page.wait_for_function("ui.state.seat === 'all'")
    page.screenshot(path=str(DOCS / "app-replay.png"))
    page.keyboard.press("ArrowRight")
    _at(page, step + 1)


def test_drachenschatten_game_then_its_replay(page, server_url):
    rng = random.Random(1)
    _start(page, server_url, "drachenschatten", 2, "random", seed=5)
    made = _play_by_clicking(page, rng, shot_at=8, shot=DOCS / "app-drachenschatten.png")
    assert made >= 1 and page.text_content("#winners").startswith("Winner: ")
    _replay_last(page)
    steps = page.evaluate("ui.replay.steps")
    page.fill("#step-slider", str(steps // 2))
    page.dispatch_event("#step-slider", "change")
    _at(page, steps // 2)
    _check_views(page, steps)
