"""The web app in a real browser (Playwright + Debian's chromium): a 4-player Fist game against
three random bots played to the end by clicking, a replay stepped back and forth with seat
switching (hidden information only in the whole-table view), a DrachenSchatten game and its
replay; private seats (the seat's link survives a reload, the invited player and a spectator see
only what is theirs); watching a table of bots and changing its pace; the cards' rules on a tap;
and every screen size (1400x900, 1024x700, 390x844) at 3, 4 and 6 players with a custom deck,
checked for overlapping boxes and sideways scrolling. Saves the screenshots the README shows
(docs/app-*.png) and, for each size, one under runs/browser/ (git-ignored) to look at."""

from __future__ import annotations

import json
import random
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("playwright", reason="the [app] extra (pytest-playwright) is not installed")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SHOTS = ROOT / "runs" / "browser"
EXAMPLE = ROOT / "examples" / "characters.yaml"
SIZES = {"1400x900": (1400, 900), "1024x700": (1024, 700), "390x844": (390, 844)}


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))


def _moves(page) -> int:
    return page.evaluate("ui.state ? ui.state.moves : -1")


def _start(page, url, game, players, opponent, seed, seat="0"):
    page.goto(f"{url}/?seed={seed}")
    page.wait_for_selector("#seat-policies select")
    page.select_option("#game", game)
    page.select_option("#players", str(players))
    page.select_option("#my-seat", seat)
    for i in range(players):
        if str(i) != seat:
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
    page.click("#replay-this")  # the record once the game is over, opened as a replay
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
    assert "token=" in page.url and page.is_visible("#seeded")  # the seat's link; the chosen seed announced
    made = _play_by_clicking(page, rng, shot_at=6, shot=DOCS / "app-play.png")
    assert made > 5
    assert " wins " in page.text_content("#winners") and "points" in page.text_content("#result")

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
    gid = _post(f"{server_url}/api/games", {"game": "dragonstones", "players": 4, "seats": ["champion"] * 4,
                                            "seed": 4})["id"]
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
    assert made >= 1 and " wins " in page.text_content("#winners")
    _replay_last(page)
    steps = page.evaluate("ui.replay.steps")
    page.fill("#step-slider", str(steps // 2))
    page.dispatch_event("#step-slider", "change")
    _at(page, steps // 2)
    _check_views(page, steps)


def test_a_seat_link_survives_a_reload_and_is_that_seats_alone(page, server_url, browser):
    """player_0 creates the table and invites player_1; the seat's address keeps the seat over a
    reload; player_1's page and a spectator's never show player_0's sealed bid."""
    page.goto(server_url)
    page.wait_for_selector("#seat-policies select")
    page.select_option("#players", "3")
    page.fill("#my-name", "Ann")
    page.select_option("#policy-1", "human")
    page.select_option("#policy-2", "random")
    page.click("#start")
    page.wait_for_function("ui.state && ui.state.actions")
    assert "token=" in page.url and page.evaluate("ui.state.names[0]") == "Ann"
    page.reload()
    page.wait_for_function("ui.state && ui.state.actions")
    assert page.evaluate("ui.state.seat") == 0 and page.is_visible("#submit-bid")
    invite = page.get_attribute("#invites input.link[data-seat='1']", "value")
    spectate = page.get_attribute("#spectator-link", "value")
    assert "token=" in invite and "token=" not in spectate
    for _ in range(3):
        page.click("[data-inc='fairy']")
    page.click("#submit-bid")
    page.wait_for_function("ui.state.moves === 1")
    assert "your sealed bid: 3 fairy" in page.text_content("#seats-bottom")

    friend = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()  # another person's browser
    friend.goto(invite)
    friend.wait_for_function("ui.state && ui.state.seat === 1 && ui.state.actions")
    assert friend.is_visible("#submit-bid") and friend.is_hidden("#delete-table")  # not the creator
    assert friend.query_selector("#invites input.link[data-seat]") is None  # no other seat's link
    assert friend.get_attribute("#spectator-link", "value") == spectate  # but the spectators' one, to share
    assert "bid sealed" in friend.text_content(".seat[data-seat='0']")
    assert "3 fairy" not in friend.text_content("#board")
    watcher = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    watcher.goto(spectate)
    watcher.wait_for_function("ui.state && ui.state.kind === 'live'")
    assert watcher.evaluate("ui.state.seat") is None and "watching" in watcher.text_content("#status")
    assert watcher.query_selector_all("#submit-bid, button.choice") == []
    assert "3 fairy" not in watcher.text_content("#board")
    # a card's rules text on a tap
    friend.click("#current-card")
    assert friend.is_visible("#rule-tip") and "black coin" in friend.text_content("#rule-tip")  # the Witch


def test_watch_a_table_of_bots_and_change_its_pace(page, server_url):
    page.goto(server_url)
    page.wait_for_selector("#seat-policies select")
    page.select_option("#players", "4")
    page.select_option("#my-seat", "")  # nobody: I watch
    for i in range(4):
        page.select_option(f"#policy-{i}", "champion" if i % 2 else "heuristic")
    page.eval_on_selector("#pace", "el => { el.value = 2000; }")
    page.check("#insight")
    page.click("#start")
    page.wait_for_function("ui.state && ui.state.kind === 'live'")
    assert "token=" not in page.url and page.evaluate("ui.state.seat") is None
    assert page.evaluate("ui.state.moves") <= 1 and page.is_visible("#live-pace")
    page.eval_on_selector("#live-pace", "el => { el.value = 0; el.dispatchEvent(new Event('change')); }")
    page.wait_for_function("ui.state.result !== null", timeout=60_000)
    assert page.evaluate("ui.state.pace_ms") == 0 and page.is_visible("#insight-panel")
    assert "%" in page.text_content("#insight-panel")


# ------------------------------------------------------------------ every screen
_LAYOUT = """() => {
  const boxes = [...document.querySelectorAll('.seat'), document.querySelector('#centre'),
                 document.querySelector('#actions')]
    .filter((e) => e && e.offsetParent !== null)
    .map((e) => { const r = e.getBoundingClientRect();
                  return { id: e.id || 'seat ' + e.dataset.seat, x: r.left, y: r.top + scrollY,
                           w: r.width, h: r.height }; });
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
    const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
    if (dx > 0.5 && dy > 0.5) overlaps.push(a.id + ' / ' + b.id);
  }
  const small = [...document.querySelectorAll('.seat, #centre, #actions, #log')]
    .filter((e) => parseFloat(getComputedStyle(e).fontSize) < 11).map((e) => e.id || e.className);
  const actions = document.querySelector('#actions').getBoundingClientRect();
  // your own seat and the bid builder (or the choices) on one screen together
  const mine = document.querySelector('.seat.me'), move = document.querySelector('#actions .group');
  const span = mine && move ? Math.max(mine.getBoundingClientRect().bottom, move.getBoundingClientRect().bottom)
                              - Math.min(mine.getBoundingClientRect().top, move.getBoundingClientRect().top) : 0;
  return { overlaps, small, boxes: boxes.length, scrollWidth: document.documentElement.scrollWidth,
           width: window.innerWidth, actionsRight: actions.right, actionsTop: actions.top + scrollY, span };
}"""


def _check_layout(page, where: str, height: int) -> None:
    got = page.evaluate(_LAYOUT)
    assert got["overlaps"] == [], (where, got["overlaps"])
    assert got["scrollWidth"] <= got["width"], (where, "sideways scrolling", got)
    assert got["actionsRight"] <= got["width"] and got["small"] == [], (where, got)
    assert got["actionsTop"] < height, (where, "'Your move' starts below the first screen", got)
    assert got["span"] <= height, (where, "your seat and your move do not fit on one screen together", got)


@pytest.mark.parametrize("size", list(SIZES))
def test_every_screen_size_and_table_size(page, server_url, size):
    """3, 4 and 6 players with the example deck, and DrachenSchatten at 4: no two of the seat boxes,
    the centre and the controls overlap, nothing scrolls sideways, and 'Your move' is on the first
    screen; at 6 players after some auctions (revealed bids in the centre) too."""
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    SHOTS.mkdir(parents=True, exist_ok=True)
    deck = {"format": "yaml", "text": EXAMPLE.read_text()}
    for players in (3, 4, 6):
        made = _post(f"{server_url}/api/games", {"game": "dragonstones", "players": players, "seed": 7,
                                                 "seats": ["human"] + ["heuristic"] * (players - 1),
                                                 "characters": deck, "exclude": ["Troll"]})
        page.goto(f"{server_url}/#/game/{made['id']}?token={made['tokens']['0']}")
        page.wait_for_function("ui.state && ui.state.actions")
        _check_layout(page, f"{size} {players} players", height)
        if players == 6:
            for _ in range(6):  # a few auctions: the revealed bids fill the centre
                if not page.is_visible("#submit-bid"):
                    break
                before = _moves(page)
                page.click("#submit-bid")
                page.wait_for_function(f"ui.state.moves > {before} && (ui.state.actions || ui.state.result)")
            assert page.query_selector("#revealed") is not None
            _check_layout(page, f"{size} 6 players after auctions", height)
            page.screenshot(path=str(SHOTS / f"fist-6p-{size}.png"), full_page=True)
        elif players == 3:
            page.screenshot(path=str(SHOTS / f"fist-3p-{size}.png"), full_page=True)
    made = _post(f"{server_url}/api/games", {"game": "drachenschatten", "players": 4, "seed": 3,
                                             "seats": ["human", "ds-heuristic", "ds-heuristic", "random"]})
    page.goto(f"{server_url}/#/game/{made['id']}?token={made['tokens']['0']}")
    page.wait_for_function("ui.state && ui.state.actions")
    _check_layout(page, f"{size} DrachenSchatten 4 players", height)
    page.screenshot(path=str(SHOTS / f"drachenschatten-4p-{size}.png"), full_page=True)


def test_a_search_bot_shows_it_is_thinking(page, server_url):
    """A seat of ``ismcts`` (the menu's slow one, about a second a decision): after the person's move
    the page answers at once and shows "thinking…" on the searching seat, then the game goes on by
    itself (the page polls) to the person's next decision."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    search = "ismcts:simulations=100"
    page.goto(server_url)
    page.wait_for_selector("#seat-policies select")
    offered = page.eval_on_selector_all("#policy-1 option", "els => els.map((e) => e.value)")
    assert {"ismcts", "ismcts:simulations=10", search} <= set(offered), offered  # the seat menu's searches
    made = _post(f"{server_url}/api/games", {"game": "dragonstones", "players": 3, "seed": 7,
                                             "seats": ["human", search, search]})
    page.goto(f"{server_url}/#/game/{made['id']}?token={made['tokens']['0']}")
    seen = False
    for _ in range(6):
        page.wait_for_function("ui.state && (ui.state.actions || ui.state.result)", timeout=120_000)
        if page.is_visible("#result"):
            break
        before = _moves(page)
        (page.query_selector("#submit-bid") or page.query_selector_all("button.choice")[0]).click()
        page.wait_for_function(f"ui.state.moves > {before}")
        # the badge is drawn from the state that says who thinks (checked in one go: no race with the poll)
        seen = page.evaluate("""() => typeof ui.state.thinking === 'number' && !ui.state.actions &&
            !!document.querySelector(`.seat[data-seat="${ui.state.thinking}"] .badge.thinking`) &&
            document.querySelector('#actions').textContent.includes('is thinking')""")
        if seen:
            page.screenshot(path=str(SHOTS / "fist-thinking-1400x900.png"))
            break
    assert seen, "no move of the person's was followed by a search's, shown thinking"
    page.wait_for_function("ui.state.actions || ui.state.result", timeout=120_000)  # it moved on by itself
    assert page.query_selector(".badge.thinking") is None and not page.text_content("#error")
