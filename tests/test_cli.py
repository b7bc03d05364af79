"""The ``dragonstones`` command: terminal play driven through piped input, bid parsing, and
``replay --gif``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rich")
pytest.importorskip("starlette")

from dragonstones_env.play.table import LiveGame
from dragonstones_env.play.terminal import parse_bid

ROOT = Path(__file__).resolve().parents[1]
FIELDS = [{"name": "fairy", "max": 8}, {"name": "common", "max": 2}, {"name": "black", "max": 1},
          {"name": "amulet", "max": 0}]


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "dragonstones_env.cli", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


def test_bid_tokens():
    assert parse_bid("3f 1c b", FIELDS) == {"fairy": 3, "common": 1, "black": 1, "amulet": 0}
    assert parse_bid("", FIELDS) == {"fairy": 0, "common": 0, "black": 0, "amulet": 0}
    assert parse_bid("2C, 8F", FIELDS)["fairy"] == 8
    for text, message in [("9f", "at most 8 fairy"), ("a", "at most 0 amulet"), ("3x", "not a bid token"),
                          ("2s", "has no silver"), ("1", "not a bid token")]:
        with pytest.raises(ValueError, match=message):
            parse_bid(text, FIELDS)


@pytest.mark.parametrize(("game", "players", "opponents"),
                         [("dragonstones", 4, "random"), ("drachenschatten", 2, "random")])
def test_a_whole_game_with_piped_input(game, players, opponents):
    # An empty line bids nothing, "1" takes the first choice; each prompt re-asks after input it
    # refuses, so alternating the two always moves on.
    out = _cli("play", "--game", game, "--players", str(players), "--opponents", opponents, "--seed", "3",
               stdin="\n1\n" * 3000)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "Game over:" in out.stdout and "player_1 (random)" in out.stdout


def test_quitting_and_refusals():
    out = _cli("play", "--game", "dragonstones", "--opponents", "champion", stdin="q\n")
    assert out.returncode == 1 and "quit" in out.stdout
    assert _cli("play", "--game", "dragonstones", stdin="").returncode == 1  # the end of the input quits
    bad = _cli("play", "--game", "chess")
    assert bad.returncode == 2 and "invalid choice: 'chess'" in bad.stderr
    bad = _cli("play", "--game", "dragonstones", "--players", "4", "--opponents", "random", "random")
    assert bad.returncode == 2 and "--opponents takes one spec" in bad.stdout


def test_replay_to_gif(tmp_path):
    table = LiveGame({"game": "drachenschatten", "players": 2, "seats": ["ds-heuristic", "random"], "seed": 2})
    record = tmp_path / "game.json"
    record.write_text(json.dumps(table.saved()))
    gif = tmp_path / "game.gif"
    out = _cli("replay", str(record), "--gif", str(gif), "--seat", "1", "--ms", "100")
    assert out.returncode == 0, out.stderr
    from PIL import Image

    with Image.open(gif) as im:
        assert im.size == (800, 500) and im.n_frames > 10
    tampered = json.loads(record.read_text())
    tampered["record"][3]["card"] = (tampered["record"][3]["card"] + 1) % 22
    record.write_text(json.dumps(tampered))
    out = _cli("replay", str(record), "--gif", str(gif))
    assert out.returncode == 2 and "does not replay" in out.stderr and "record event 3" in out.stderr
    record.write_text("{nope")
    assert _cli("replay", str(record), "--gif", str(gif)).returncode == 2


def test_play_records_the_game_replay_draws(tmp_path):
    record, gif = tmp_path / "game.json", tmp_path / "game.gif"
    out = _cli("play", "--game", "drachenschatten", "--players", "2", "--opponents", "random", "--seed", "4",
               "--record", str(record), stdin="\n1\n" * 3000)
    assert out.returncode == 0 and f"record saved to {record}" in out.stdout, out.stdout[-2000:] + out.stderr
    assert json.loads(record.read_text())["game"] == "drachenschatten"
    assert _cli("replay", str(record), "--gif", str(gif)).returncode == 0 and gif.exists()
    quit_early = _cli("play", "--record", str(tmp_path / "none.json"), stdin="q\n")
    assert quit_early.returncode == 1 and "no record saved" in quit_early.stdout
    assert not (tmp_path / "none.json").exists()
    nowhere = _cli("play", "--record", str(tmp_path / "no-such-folder" / "game.json"))
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stdout
    assert "dragonstones play --record" in _cli("replay", "--help").stdout  # where a game.json comes from


def test_serve_refuses_a_missing_folder_and_a_busy_port(tmp_path):
    for flag in ("--policies", "--decks"):
        out = _cli("serve", flag, str(tmp_path / "nope"))
        assert out.returncode == 2 and f"{flag} {tmp_path / 'nope'}: no such folder" in out.stderr, out.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        out = _cli("serve", "--port", str(busy.getsockname()[1]))
    assert out.returncode == 2 and "cannot listen on 127.0.0.1" in out.stderr, out.stderr
    assert "open http" not in out.stdout  # bound first, announced after
    assert "Traceback" not in out.stderr


def test_serve_removes_its_temporary_store_when_stopped(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    server = subprocess.Popen([sys.executable, "-m", "dragonstones_env.cli", "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert "open http://127.0.0.1" in server.stdout.readline()
        assert "until the server stops" in server.stdout.readline()
        assert [p.name.startswith("dragonstones-tables-") for p in tmp_path.iterdir()] == [True]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert list(tmp_path.iterdir()) == []
