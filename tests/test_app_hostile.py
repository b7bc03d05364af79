"""Hostile inputs, round three (issue #49): the app's store, its tables and search seats, the GIF
writer. Each test failed before its fix. No test times anything: the scheduling is shown by the
order the bot threads are given work (tools/app_load.py measures the seconds)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import stat
import tracemalloc
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from dragonstones_env.bounds import FILE_BYTES
from dragonstones_env.games.fist.engine import Game
from dragonstones_env.play.app import sessions
from dragonstones_env.play.app.sessions import AppError, LiveGame, Replay, Sources
from dragonstones_env.play.app.store import StoreError, Tables
from tools.random_games import choose

ROOT = Path(__file__).resolve().parents[1]


def _private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


# ------------------------------------------------------------------ 7. the store's permissions
def test_7_a_new_store_and_its_wal_and_shm_are_private(tmp_path):
    old = os.umask(0o022)  # the usual umask: before the fix, 0644
    try:
        path = tmp_path / "tables.sqlite"
        tables = Tables(path, Sources())
        tables.add(LiveGame({"game": "dragonstones", "players": 3, "seats": ["human", "random", "random"]},
                            Sources(), background=True))
        made = [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]
        assert len(made) == 3 and all(_private(p) for p in made), [oct(p.stat().st_mode) for p in made]
        tables.close()
    finally:
        os.umask(old)


def test_7_a_store_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "tables.sqlite"
    Tables(path, Sources()).close()
    path.chmod(0o644)
    with pytest.raises(StoreError, match=r"readable by group or others.*chmod 600"):
        Tables(path, Sources())
    path.chmod(0o600)
    Tables(path, Sources()).close()


# ------------------------------------------------------------------ 8. a bad row never stops a start
def _good(path: Path) -> str:
    """A store with one unfinished table of 3 seats; its id."""
    tables = Tables(path, Sources())
    key, _, _ = tables.add(LiveGame({"game": "dragonstones", "players": 3, "seats": ["human", "random", "random"],
                                     "seed": 4}, Sources(), background=True))
    tables.close()
    return key


def _copy_row(db, key: str, new: str, **changes) -> None:
    """Table ``key``'s row and events again under the id ``new``, with ``changes`` to its row."""
    cols = ["id", "setup", "creator", "tokens", "created", "touched", "over", "humans"]
    row = dict(zip(cols, db.execute("SELECT * FROM tables WHERE id = ?", (key,)).fetchone(), strict=True))
    row.update(id=new, **changes)
    db.execute("INSERT INTO tables VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [row[c] for c in cols])
    rows = db.execute("SELECT n, event FROM events WHERE id = ? ORDER BY n", (key,)).fetchall()
    db.executemany("INSERT INTO events VALUES (?, ?, ?)", [(new, n, e) for n, e in rows])


def test_8_bad_rows_are_set_aside_and_the_good_ones_resume(tmp_path, capsys):
    path = tmp_path / "tables.sqlite"
    key = _good(path)
    db = sqlite3.connect(path)
    setup = json.loads(db.execute("SELECT setup FROM tables WHERE id = ?", (key,)).fetchone()[0])
    bad = {
        "not-json": {"setup": "{nope"},
        "missing-key": {"setup": json.dumps({k: v for k, v in setup.items() if k != "seats"})},
        "list-setup": {"setup": "[]"},
        "list-tokens": {"tokens": "[]"},
        "huge-pace": {"setup": json.dumps({**setup, "pace_ms": 10**12})},
        "two-seats": {"setup": json.dumps({**setup, "seats": ["human", "random"], "names": ["a", "b"]})},
        "bad-name": {"setup": json.dumps({**setup, "names": ["<script>", "b", "c"]})},
        "other-game": {"setup": json.dumps({**setup, "game": "drachenschatten"})},
    }
    for name, changes in bad.items():
        _copy_row(db, key, name, **changes)
    _copy_row(db, key, "deep")
    db.execute("UPDATE events SET event = ? WHERE id = 'deep' AND n = 2", ("[" * 100_000 + "]" * 100_000,))
    db.commit()
    db.close()
    tables = Tables(path, Sources())  # before the fix: JSONDecodeError, KeyError, ..., RecursionError
    assert tables.resumed == [key]
    assert set(tables.set_aside) == {*bad, "deep"}, tables.set_aside
    assert "pace_ms" in tables.set_aside["huge-pace"] and "seats" in tables.set_aside["two-seats"]
    err = capsys.readouterr().err
    assert all(f"table {name!r}" in err for name in bad) and "set aside" in err
    for name in bad:  # kept out of play: no request reaches them
        with pytest.raises(AppError) as caught:
            tables.get(name)
        assert caught.value.status == 422 and "set aside" in caught.value.message
    assert [t["id"] for t in tables.listing()] == [key]
    kept = sqlite3.connect(path).execute("SELECT id, reason FROM set_aside").fetchall()
    assert {k for k, _ in kept} == {*bad, "deep"}  # the operator can look at them
    tables.close()
    Tables(path, Sources()).close()  # and the next start is clean


def test_8_a_file_that_is_not_a_store_is_refused_clearly(tmp_path):
    path = tmp_path / "tables.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    path.chmod(0o600)
    with pytest.raises(StoreError, match="is not a SQLite database"):
        Tables(path, Sources())
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE tables (id TEXT)")
    db.commit()
    db.close()
    other.chmod(0o600)
    with pytest.raises(StoreError, match="not a store of dragonstones tables"):
        Tables(other, Sources())


# ------------------------------------------------------------------ minor: decks read up to a limit
def test_a_deck_of_the_deck_folder_is_read_up_to_its_limit(tmp_path, monkeypatch, capsys):
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "big.yaml").write_text("# " + "x" * (FILE_BYTES["deck"] + 10) + "\n")
    read = []
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: read.append(self) or "")
    source = Sources(deck_dir=decks)
    with pytest.raises(AppError, match="not a valid deck"):
        source.deck("big", lambda text, fmt, label: pytest.fail("the oversized deck was parsed"))
    assert not read and "more than 1000000 bytes" in capsys.readouterr().err


# ------------------------------------------------------------------ minor: a replay's step back
def _long_record(steps: int) -> list[dict]:
    game = Game(3, seed=5, max_turns=1000)
    rng = random.Random(5)
    for _ in range(steps):
        if game.decision is None:
            break
        game.apply(choose(game, rng, "realistic"))
    return game.record


def test_a_replay_step_back_replays_at_most_a_keyframe_interval(monkeypatch):
    monkeypatch.setattr(sessions, "KEYFRAME_EVERY", 32)  # a 300-step record stands for a 32k-step one
    record = _long_record(3000)
    replay = Replay(record)
    assert replay.steps > 200
    replay.env_at(replay.steps)
    stepped = []
    real = type(replay._env).step
    monkeypatch.setattr(type(replay._env), "step", lambda self, a: stepped.append(a) or real(self, a))
    for target in (replay.steps - 1, replay.steps // 2 + 5, replay.steps // 2 + 9, 3):
        stepped.clear()
        state = replay.state(target, 0)
        assert len(stepped) <= 32, (target, len(stepped))  # before: `target` steps from the start
        fresh = Replay(record)
        assert fresh.state(target, 0) == state
        assert fresh.env_at(target).game.record == replay._env.game.record
    assert 0 < len(replay._keyframes) <= sessions.MAX_KEYFRAMES


# ------------------------------------------------------------------ 9. the GIF is streamed
def _gif_peak(tmp_path: Path, steps: int) -> int:
    from dragonstones_env.play import gif

    path = tmp_path / f"game-{steps}.json"
    path.write_text(json.dumps(_long_record(steps)))
    tracemalloc.start()
    try:
        assert gif.record_to_gif(str(path), str(tmp_path / f"game-{steps}.gif"), 0, 50) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_9_a_long_gif_is_written_frame_by_frame(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    one = 800 * 500 * 3  # a frame's bytes as drawn
    short, long = _gif_peak(tmp_path, 10), _gif_peak(tmp_path, 120)
    # the peak does not grow with the frames (before: every frame kept, ~110 frames' worth more);
    # what is fixed is the record's read buffer (FILE_BYTES["record"]) and a frame or two
    assert long - short < 2 * one, (short, long)
    with Image.open(tmp_path / "game-120.gif") as im:
        assert im.size == (800, 500) and im.n_frames > 60 and im.info.get("loop") == 0
        im.seek(im.n_frames - 1)
        assert im.info["duration"] == 3000
        im.convert("RGB")  # every frame decodes
