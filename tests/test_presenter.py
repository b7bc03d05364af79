"""The presenter protocol (``GameSpec.presenter``): every registered game provides one, the table
(play/table.py) shows any game through it alone, and the terminal and GIF writer need nothing of
the web app (an import-linter contract). One lookup (``registry.get``) and one table-size check
(``GameSpec.check_players``) serve every layer that shows a game."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomllib

pytest.importorskip("rich")  # the terminal's (the app extra)

from rich.console import Console

from dragonstones_env import games
from dragonstones_env.play import gif, terminal
from dragonstones_env.play.refusals import Refused
from dragonstones_env.play.table import LiveGame, Replay, shown, shown_games
from dragonstones_env.registry import Presenter, TableSizeError
from tests.contract import toy_auction

ROOT = Path(__file__).resolve().parents[1]
CALLABLES = [f.name for f in dataclasses.fields(Presenter) if f.name not in ("how_to", "kind_key", "input_events",
                                                                               "table_options", "make_env")]


# ------------------------------------------------------------------ a test game's presenter
def _toy_view(env: Any, seat: int | None) -> dict[str, Any]:
    """What a seat sees of the toy auction: from its observation (who has bid; its own bid)."""
    d = toy_auction.OBSERVATION.decode(env.observe(env.possible_agents[seat or 0])["observation"])
    n = env.num_players
    has_bid = [bool(d["has_bid"][(p - (seat or 0)) % n]) for p in range(n)]
    acting = np.flatnonzero(d["acting_seat"])
    return {"acting": None if not len(acting) else (int(acting[0]) + (seat or 0)) % n, "has_bid": has_bid,
            "own": None if seat is None or not has_bid[seat] else round(float(d["own_bid"][0]))}


class ToyTable(toy_auction.raw_env):
    """The toy's env with a picture (the GIF writer draws ``picture``): one shade per bid sealed."""

    def picture(self, seat: int) -> np.ndarray:
        return np.full((4, 4, 3), 60 * sum(b is not None for b in self.game.bids), np.uint8)


def _toy_env_for_record(start: dict[str, Any]) -> Any:
    env = ToyTable(num_players=start["num_players"])
    env.reset(seed=start["seed"])
    return env


def _toy_groups(env: Any, seat: int, legal: Any, names: list[str]) -> list[dict[str, Any]]:
    return [{"kind": "buttons", "title": "Your bid",
             "actions": [{"action": int(a), "text": env.describe_action(int(a))} for a in legal]}]


def _toy_outcome(env: Any, names: list[str]) -> dict[str, Any]:
    winners = list(env.game.winners)
    return {"winners": winners, "points": list(env.game.bids), "unit": "coins", "truncated": False,
            "text": f"{' and '.join(names[w] for w in winners)} bid the most."}


TOY_PRESENTER = Presenter(
    how_to=("Seal a bid of 0 to 5 coins; the highest bid wins.",), kind_key="type", input_events=("choice",),
    env_for_record=_toy_env_for_record,
    encode=lambda option, actor, n: toy_auction.CODEC.encode(tuple(option), actor, n),
    rules=lambda: {}, goal=lambda env: "Bid the most.", view=_toy_view, public_view=lambda env: _toy_view(env, None),
    hidden=lambda env: env.game.state_dict(), race=lambda v: [[] for _ in v["has_bid"]],
    prompt=lambda v, names: None if v["acting"] is None else "Seal your bid",
    action_text=lambda env, action, names: env.describe_action(action), groups=_toy_groups,
    log_line=lambda ev, viewer, names: f"{names[ev['player']]} seals a bid." if ev["type"] == "choice" else None,
    outcome=_toy_outcome, headline=lambda v: "Toy auction",
    seat_line=lambda v, p: "has bid" if v["has_bid"][p] else "to bid", make_env=ToyTable,
)
TOY = dataclasses.replace(toy_auction.SPEC, presenter=TOY_PRESENTER)


@pytest.fixture
def toy():
    games.register(TOY)
    yield TOY
    games.unregister(TOY.id)


@pytest.fixture
def bare():
    """The toy game registered without a presenter: it cannot be shown."""
    games.register(toy_auction.SPEC)
    yield toy_auction.SPEC
    games.unregister(toy_auction.SPEC.id)


# ------------------------------------------------------------------ every game provides one
@pytest.mark.parametrize("spec", games.all(), ids=lambda s: s.id)
def test_every_registered_game_provides_a_presenter(spec):
    show = spec.presenter
    assert isinstance(show, Presenter), f"{spec.id} has no presenter: the app, terminal and GIF cannot show it"
    assert show.how_to and all(isinstance(line, str) and line for line in show.how_to)
    assert all(callable(getattr(show, name)) for name in CALLABLES)
    assert set(show.table_options) <= set(spec.options), "a table option the env does not take"
    assert spec in shown_games()
    # a table of its default bots, played to the end through the presenter alone, and replayed
    n = spec.default_players
    live = LiveGame({"game": spec.id, "players": n, "seats": [spec.default_bot] * n, "seed": 3})
    assert live.over and live.state(0)["result"]["text"]
    replay = Replay(live.saved())
    assert replay.steps > 0 and replay.state(replay.steps, "all")["result"] == live.state(None)["result"]


def test_the_app_reads_the_facts_from_the_spec():
    """/api/meta's table sizes, default size and opponent are the spec's, not a copy of them."""
    pytest.importorskip("starlette")
    from dragonstones_env.play.app.server import meta_data
    from dragonstones_env.play.sources import Sources

    for entry in meta_data(Sources())["games"]:
        spec = games.get(entry["name"])
        assert (entry["min_players"], entry["max_players"]) == (spec.players.start, spec.players.stop - 1)
        assert entry["default_players"] == spec.default_players and entry["default_opponent"] == spec.default_bot
        assert entry["options"] == list(spec.presenter.table_options) and entry["title"] == spec.title


# ------------------------------------------------------------------ a test game, shown without the app
def test_a_game_registered_by_a_test_is_shown_by_the_terminal(toy):
    out = io.StringIO()
    code = terminal.play("toyauction", players=3, opponents=["random"], seed=1, stdin=io.StringIO("3\n"),
                         console=Console(file=out, width=100))
    text = out.getvalue()
    assert code == 0, text
    assert "Toy auction" in text and "Seal your bid" in text and "Game over" in text and "bid the most" in text


def test_a_game_registered_by_a_test_is_drawn_as_frames(toy):
    live = LiveGame({"game": "toyauction", "players": 2, "seats": ["random", "random"], "seed": 2})
    pictures = list(gif.frames(live.saved(), 0))
    assert len(pictures) == 3  # before each of the two bids, and the end


def test_the_terminal_and_gif_import_nothing_of_the_web_app():
    """In a fresh interpreter: a toy game registered, played in the terminal and replayed for a GIF;
    not one module of play/app (nor Starlette) is imported."""
    script = f"""
import io, sys
sys.path.insert(0, {str(ROOT)!r})
from rich.console import Console
from dragonstones_env import games
from dragonstones_env.play import gif, terminal
from tests.test_presenter import TOY
games.register(TOY)
assert terminal.play("toyauction", players=2, opponents=["random"], seed=4, stdin=io.StringIO("2\\n"),
                     console=Console(file=io.StringIO())) == 0
print(sorted(m for m in sys.modules if m.startswith(("dragonstones_env.play.app", "starlette", "uvicorn"))))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_the_import_contract_is_declared_and_kept():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c.get("id") == "table-without-app")
    assert contract["type"] == "forbidden" and "dragonstones_env.play.app" in contract["forbidden_modules"]
    assert {"dragonstones_env.play.terminal", "dragonstones_env.play.gif",
            "dragonstones_env.play.table"} <= set(contract["source_modules"])
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--contract", "table-without-app", "--no-cache"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and "1 kept, 0 broken" in done.stdout, done.stdout + done.stderr


# ------------------------------------------------------------------ one lookup, one table-size check
def test_a_game_without_a_presenter_is_not_offered(bare):
    assert bare not in shown_games()
    with pytest.raises(Refused, match="has no presenter"):
        shown("toyauction")
    with pytest.raises(Refused, match="has no presenter"):
        LiveGame({"game": "toyauction", "players": 2, "seats": ["random", "random"]})


def test_an_unknown_game_is_reported_by_the_registry():
    with pytest.raises(games.UnknownGameError, match=r"unknown game 'chess'; the games are dragonstones, drachen"):
        shown("chess")
    out = io.StringIO()
    assert terminal.play("chess", console=Console(file=out)) == 2
    assert "unknown game 'chess'" in out.getvalue()


@pytest.mark.parametrize("spec", games.all(), ids=lambda s: s.id)
def test_check_players_names_the_allowed_range(spec):
    low, high = spec.players.start, spec.players.stop - 1
    assert spec.check_players(low) == low and spec.check_players(high) == high
    for bad in (low - 1, high + 1, True, "3", None):
        with pytest.raises(TableSizeError, match=rf"players must be an integer from {low} to {high} for {spec.title}"):
            spec.check_players(bad, "players")
    with pytest.raises(TableSizeError, match="players"):
        LiveGame({"game": spec.id, "players": high + 1, "seats": ["random"] * (high + 1)})
    out = io.StringIO()
    assert terminal.play(spec.id, players=high + 1, console=Console(file=out)) == 2
    assert f"--players must be an integer from {low} to {high}" in out.getvalue()


def test_a_record_of_a_game_with_a_presenter_only_is_replayed(toy):
    live = LiveGame({"game": "toyauction", "players": 2, "seats": ["random", "random"], "seed": 5})
    saved = json.loads(json.dumps(live.saved()))
    replay = Replay(saved)
    assert replay.summary()["game"] == "toyauction" and replay.steps == 2
    assert replay.state(0, 0)["prompt"].endswith("Seal your bid")
