"""The tables and replays a server holds (issue #29).

**Tables** live in a SQLite file (the standard library's ``sqlite3``; ``dragonstones serve --store
PATH``, a temporary file by default): one row per table (its setup, the hashes of its tokens) and
its engine record, event by event, appended at every request that moved the game. A restarted
server resumes every unfinished table from its stored record through the engine's verified replay
(:meth:`LiveGame.resume`), with the same seat tokens. At most ``max_loaded`` tables are held in
memory; one not used lately is unloaded (it stays in the file, and the next request loads it again).

**Tokens.** Creating a table gives a secret token per human seat and one to its creator
(``secrets.token_urlsafe``, 192 bits); only their SHA-256 hashes are kept, in memory and in the
file. A request without a token is a spectator's; a seat's token acts for that seat alone; only
the creator's deletes the table.

**Expiry.** A finished table, or one of bots only, expires ``idle_seconds`` after its last
request; an unfinished table with human seats ``human_idle_seconds`` after, one of human seats only
``all_human_idle_seconds`` after (an hour: one client made 1,000 of them in 5 s). A human seat that made
a request within ``connected_seconds`` is connected: its table is never expired, unloaded or
evicted. When ``max_tables`` are stored, a new table first evicts the least recently used finished
or all-bot table; failing that it is refused (503).

**Creator links.** A seat's token is derived from the creator's (:func:`seat_token`, an HMAC), so
the creator's link alone gives back every invite link (:meth:`Tables.invites`) in any browser.

**Deleted tables** leave a tombstone (their id, when), so a seat still polling is told "this table
was deleted" (410) instead of "unknown game id"; tombstones go with the expiry of unfinished tables.

**Replays** are kept in memory, the ``max_replays`` most recently used, and their checked records
in the same SQLite file (:class:`StoredReplays`, at most ``MAX_STORED_REPLAYS``), so a replay's
link survives a restart.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import stat
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dragonstones_env.bounds import check
from dragonstones_env.play.refusals import Refused, Unplayable
from dragonstones_env.play.sources import Sources
from dragonstones_env.play.table import LiveGame, Replay, check_setup

from .errors import AppError, message_of

MAX_TABLES = 1000  # stored
MAX_LOADED = 128  # in memory
MAX_REPLAYS = 64
MAX_STORED_REPLAYS = 500
CONNECTED_SECONDS = 120.0  # the page polls at least every 20 s while a seat's tab is open
IDLE_SECONDS = 3600.0  # finished or all-bot tables
HUMAN_IDLE_SECONDS = 7 * 24 * 3600.0  # unfinished tables with human seats
ALL_HUMAN_IDLE_SECONDS = 3600.0  # unfinished tables of human seats only (issue #49)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    setup TEXT NOT NULL,
    creator TEXT NOT NULL,
    tokens TEXT NOT NULL,
    created REAL NOT NULL,
    touched REAL NOT NULL,
    over INTEGER NOT NULL,
    humans INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS set_aside (
    id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    setup TEXT,
    creator TEXT,
    tokens TEXT,
    created REAL,
    touched REAL
);
CREATE TABLE IF NOT EXISTS events (
    id TEXT NOT NULL,
    n INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (id, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deleted (
    id TEXT PRIMARY KEY,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS replays (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    touched REAL NOT NULL
);
"""


class StoreError(ValueError):
    """A store file the server cannot use (not SQLite, not a store of tables, readable by others):
    the message names the file and what to do."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def seat_token(creator: str, seat: int) -> str:
    """A seat's token, derived from the creator's: whoever holds the creator's link can give out
    the invite links again (from any browser), and nobody else can (HMAC-SHA256, 192 bits kept)."""
    mac = hmac.new(creator.encode("utf-8", "replace"), f"seat {seat}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:24]).decode()


# ---------------------------------------------------------------------------- the file (issue #49)
_COLUMNS = {"tables": {"id", "setup", "creator", "tokens", "created", "touched", "over", "humans"},
            "events": {"id", "n", "event"}}


def open_store(path: Path) -> sqlite3.Connection:
    """The SQLite connection of a store file, created 0600 with its ``-wal`` and ``-shm`` (they hold
    the live seeds and sealed bids); a :class:`StoreError` for an existing file readable by group or
    others (refused, not fixed: who could read it may have read it), one that is not SQLite, or a
    SQLite file whose tables are not a store's."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise StoreError(f"the store {path} is readable by group or others (mode {mode:04o}); it holds "
                             f"every unfinished table's seed and sealed bids: chmod 600 {path}, or give another "
                             "--store") from None
    for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):  # left by a crash: made private too
        if side.exists():
            side.chmod(0o600)
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    try:
        # WAL and synchronous=NORMAL: a commit appends to the log without waiting for the disk; a
        # crash of the server loses nothing committed (a power cut may lose the last commits).
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        for table, columns in _COLUMNS.items():
            found = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if found and found != columns:
                raise StoreError(f"{path} is a SQLite file but not a store of dragonstones tables (its table "
                                 f"{table!r} has the columns {sorted(found)}); give another --store")
        db.executescript(_SCHEMA)
    except sqlite3.DatabaseError as err:
        db.close()
        raise StoreError(f"{path} is not a SQLite database ({err}); give another --store") from None
    except StoreError:
        db.close()
        raise
    # SQLite gives the -wal and -shm the main file's mode: 0600, whatever the umask
    for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        if side.exists() and stat.S_IMODE(side.stat().st_mode) & 0o077:
            side.chmod(0o600)
    return db


class RowError(ValueError):
    """A malformed stored row (its setup, tokens or events): set aside, never played."""


def _json_row(text: Any, what: str) -> Any:
    if not isinstance(text, str):
        raise RowError(f"its {what} is not JSON text")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:  # RecursionError: nested too deep (json's own guard)
        raise RowError(f"its {what} is not JSON: {str(err)[:100]}") from None


def check_setup_text(text: Any) -> dict[str, Any]:
    """A stored setup, checked as a request's is (:func:`check_setup`: its game, seats, names, pace)."""
    setup = _json_row(text, "setup")
    try:
        return check_setup(setup)
    except Refused as err:
        raise RowError(f"its setup is refused: {err}") from None


def check_row(setup: Any, creator: Any, tokens: Any, touched: Any) -> tuple[dict, str, dict[int, str], float]:
    """A stored table's row, checked: its setup (as a request's), the creator's and seats' token hashes
    (64 hex digits each, one per human seat), its time; else a :class:`RowError` saying what is wrong."""
    checked = check_setup_text(setup)
    digests = _json_row(tokens, "tokens")
    hexes = set("0123456789abcdef")
    humans = {i for i, s in enumerate(checked["seats"]) if s == "human"}
    if (not isinstance(digests, dict) or not all(isinstance(h, str) and len(h) == 64 and set(h) <= hexes
                                                  for h in digests.values())
            or {k for k in digests} != {str(i) for i in humans}):
        raise RowError(f"its tokens are not one SHA-256 hash per human seat {sorted(humans)}")
    if not (isinstance(creator, str) and len(creator) == 64 and set(creator) <= hexes):
        raise RowError("its creator's token is not a SHA-256 hash")
    if isinstance(touched, bool) or not isinstance(touched, (int, float)):
        raise RowError("its time is not a number")
    return checked, creator, {int(s): h for s, h in digests.items()}, float(touched)


def read_events(rows: list[tuple]) -> list[dict]:
    """A stored record's events, each a JSON object."""
    record = []
    for n, (text,) in enumerate(rows):
        event = _json_row(text, f"event {n}")
        if not isinstance(event, dict):
            raise RowError(f"its event {n} is not a JSON object")
        record.append(event)
    if not record:
        raise RowError("it has no events")
    return record


@dataclass
class Table:
    """One stored table: its game (loaded), the hashes of its tokens, when it was last used."""

    id: str
    game: LiveGame
    creator: str
    tokens: dict[int, str]
    touched: float
    seen: dict[int, float] = field(default_factory=dict)  # human seat -> its last request
    saved: int = 0  # record events already in the file
    saved_touch: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def seat_of(self, token: str | None) -> tuple[int | None, bool]:
        """(the seat ``token`` holds or None, whether it is the creator's); a token of nothing here: 403."""
        if token is None:
            return None, False
        digest = token_hash(token)
        creator = hmac.compare_digest(digest, self.creator)
        for seat, h in self.tokens.items():
            if hmac.compare_digest(digest, h):
                return seat, creator
        if creator:
            return None, True
        raise AppError(403, "this token is none of this table's (a seat's token comes with the table's link)")

    def connected(self, now: float) -> bool:
        return any(now - t < CONNECTED_SECONDS for t in self.seen.values())


class Tables:
    """The live tables: in memory (at most ``max_loaded``) and in the SQLite file at ``path``."""

    def __init__(self, path: str | Path | None, sources: Sources, *, max_tables: int = MAX_TABLES,
                 max_loaded: int = MAX_LOADED, idle_seconds: float = IDLE_SECONDS,
                 human_idle_seconds: float = HUMAN_IDLE_SECONDS, clock: Callable[[], float] = time.time,
                 all_human_idle_seconds: float = ALL_HUMAN_IDLE_SECONDS):
        if path is None:
            handle, path = tempfile.mkstemp(prefix="dragonstones-tables-", suffix=".sqlite")
            os.close(handle)
        self.path = Path(path)
        self.sources, self.clock = sources, clock
        self.max_tables, self.max_loaded = max_tables, max_loaded
        self.idle_seconds, self.human_idle_seconds = idle_seconds, human_idle_seconds
        self.all_human_idle_seconds = check("app.all_human_idle_seconds", float(all_human_idle_seconds),
                                            "all_human_idle_seconds")
        self.db = open_store(self.path)
        self._db_lock = threading.Lock()
        self._lock = threading.Lock()
        self.items: OrderedDict[str, Table] = OrderedDict()  # loaded, least recently used first
        self.resumed: list[str] = []
        self.refused: dict[str, str] = {}
        self.set_aside: dict[str, str] = {}  # id -> why (malformed rows, moved to the set_aside table)
        self._set_aside_malformed()
        self._expire()
        rows = self._query("SELECT id FROM tables WHERE over = 0 ORDER BY touched DESC LIMIT ?", (self.max_loaded,))
        for (key,) in rows:
            try:
                self._load(key)
                self.resumed.append(key)
            except (AppError, Refused) as err:
                self.refused[key] = message_of(err)

    # ---------------------------------------------------------------- the file
    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._db_lock:
            return self.db.execute(sql, args).fetchall()

    def _write(self, statements: list[tuple[str, Any]]) -> None:
        """Statements in one transaction: ``(sql, args)`` or ``(sql, [args, ...])`` for executemany."""
        with self._db_lock:
            self.db.execute("BEGIN")
            try:
                for sql, args in statements:
                    if isinstance(args, list):
                        self.db.executemany(sql, args)
                    else:
                        self.db.execute(sql, args)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _load(self, key: str) -> Table:
        """A stored table made again from its record (the engine's verified replay); a malformed row
        is set aside (:meth:`_set_aside`) and answered as unknown."""
        rows = self._query("SELECT setup, creator, tokens, touched FROM tables WHERE id = ?", (key,))
        if not rows:
            self._refuse_deleted(key)
            aside = self._query("SELECT reason FROM set_aside WHERE id = ?", (key,))
            if aside:
                raise AppError(422, f"the table {key[:40]!r} was set aside, out of play: {aside[0][0]}")
            raise AppError(404, f"unknown game id {key[:40]!r}")
        try:
            setup, creator, tokens, touched = check_row(*rows[0])
            record = read_events(self._query("SELECT event FROM events WHERE id = ? ORDER BY n", (key,)))
            game = LiveGame.resume(setup, record, self.sources, background=True)
        except Unplayable as err:  # a record that does not replay; a policy that no longer loads is kept
            self._set_aside(key, str(err))
            raise
        except Refused:
            raise
        except (RowError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as err:
            # what the engine's replay raises on a malformed event it does not name itself
            reason = str(err) if isinstance(err, RowError) else f"{type(err).__name__}: {err}"
            self._set_aside(key, reason)
            raise AppError(422, f"the table {key[:40]!r} was set aside, out of play: {reason[:300]}") from None
        table = Table(key, game, creator, tokens, touched, saved=len(record), saved_touch=touched)
        with self._lock:
            if key in self.items:  # another request loaded it meanwhile: one table, one lock
                return self.items[key]
            self.items[key] = table
            self._unload_some()
        return table

    def _unload_some(self) -> None:
        """Unload the least recently used tables beyond ``max_loaded``: never one with a connected human,
        nor one a request is using, a search is deciding for, or a request has just fetched (two copies of
        a table must not both play)."""
        now = self.clock()
        for key in list(self.items):
            if len(self.items) <= self.max_loaded:
                return
            table = self.items[key]
            if (not table.connected(now) and not table.lock.locked() and table.game.thinking is None
                    and now - table.touched > 10):
                del self.items[key]

    def _expire(self) -> None:
        now = self.clock()
        old = self._query("SELECT id FROM tables WHERE (touched < ? AND (over = 1 OR humans = 0)) OR touched < ?",
                          (now - self.idle_seconds, now - self.human_idle_seconds)) + self._idle_all_human(now)
        keys = [k for (k,) in old if not (k in self.items and self.items[k].connected(now))]
        if keys:
            self._write([("DELETE FROM events WHERE id = ?", [(k,) for k in keys]),
                         ("DELETE FROM tables WHERE id = ?", [(k,) for k in keys])])
            with self._lock:
                for k in keys:
                    self.items.pop(k, None)

    # ---------------------------------------------------------------- tables
    def add(self, game: LiveGame) -> tuple[str, str, dict[int, str]]:
        """Store a new table; returns its id, the creator's token and each human seat's token."""
        self._expire()
        count = self._query("SELECT COUNT(*) FROM tables")[0][0]
        if count >= self.max_tables:
            now = self.clock()
            spare = [k for (k,) in self._query(
                "SELECT id FROM tables WHERE over = 1 OR humans = 0 ORDER BY touched LIMIT 8")
                if not (k in self.items and self.items[k].connected(now))]
            if not spare:
                raise AppError(503, f"this server holds {count} tables, each unfinished with human seats; "
                                    "try again once some are finished")
            self.remove(spare[0])
        key = secrets.token_hex(8)
        creator = secrets.token_urlsafe(24)
        tokens = {seat: seat_token(creator, seat) for seat in game.humans}
        now = self.clock()
        table = Table(key, game, token_hash(creator), {s: token_hash(t) for s, t in tokens.items()}, now)
        self._write([("INSERT INTO tables VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      (key, json.dumps(game.setup()), table.creator, json.dumps(table.tokens), now, now,
                       int(game.over), len(game.humans)))])
        self.save(table)
        with self._lock:
            self.items[key] = table
            self._unload_some()
        return key, creator, tokens

    def get(self, key: str) -> Table:
        """The table ``key`` (loaded from the file if it is not in memory); a 404 if there is none."""
        with self._lock:
            table = self.items.get(key)
            if table is not None:
                self.items.move_to_end(key)
                table.touched = self.clock()
                return table
        table = self._load(key)
        table.touched = self.clock()
        return table

    def save(self, table: Table) -> None:
        """Append the record's new events and the table's state to the file (call with the table's lock)."""
        record = table.game.env.game.record
        new = record[table.saved:]
        if not new and table.touched - table.saved_touch < 60:
            return
        statements: list[tuple[str, Any]] = []
        if new:
            statements.append(("INSERT INTO events VALUES (?, ?, ?)",
                               [(table.id, table.saved + i, json.dumps(ev)) for i, ev in enumerate(new)]))
        statements.append(("UPDATE tables SET setup = ?, touched = ?, over = ? WHERE id = ?",
                           (json.dumps(table.game.setup()), table.touched, int(table.game.over), table.id)))
        self._write(statements)
        table.saved, table.saved_touch = len(record), table.touched

    def holds(self, table: Table) -> bool:
        """Whether ``table`` is still this store's loaded copy (not deleted, expired or unloaded)."""
        with self._lock:
            return self.items.get(table.id) is table

    def remove(self, key: str) -> None:
        self._write([("DELETE FROM events WHERE id = ?", (key,)), ("DELETE FROM tables WHERE id = ?", (key,))])
        with self._lock:
            self.items.pop(key, None)

    # ---------------------------------------------------------------- deleting and the creator's link
    def delete(self, key: str) -> None:
        """Remove the table at its creator's request and leave a tombstone for the seats still polling."""
        self.remove(key)
        now = self.clock()
        self._write([("INSERT OR REPLACE INTO deleted VALUES (?, ?)", (key, now)),
                     ("DELETE FROM deleted WHERE at < ?", (now - self.human_idle_seconds,))])

    def _refuse_deleted(self, key: str) -> None:
        """A 410 if the table ``key`` was deleted by its creator."""
        if self._query("SELECT 1 FROM deleted WHERE id = ?", (key,)):
            raise AppError(410, "this table was deleted by its creator")

    @staticmethod
    def invites(table: Table, creator: str) -> dict[int, str]:
        """Each human seat's token, given back to the creator's token (a table made before seat
        tokens were derived gives none back: only their hashes are kept)."""
        return {seat: t for seat, h in table.tokens.items()
                if hmac.compare_digest(token_hash(t := seat_token(creator, seat)), h)}

    def listing(self) -> list[dict[str, Any]]:
        """Every stored table, without a secret: id, game, seats, whether it is over."""
        rows = self._query("SELECT id, setup, over FROM tables ORDER BY created DESC LIMIT 200")
        out = []
        for key, setup, over in rows:
            try:
                s = check_setup_text(setup)
            except RowError as err:  # stored since the start (another process wrote it): set aside
                self._set_aside(key, str(err))
                continue
            table = self.items.get(key)
            out.append({"id": key, "game": s["game"], "seats": s["seats"], "names": s["names"], "over": bool(over),
                        "moves": None if table is None else table.game.moves})
        return out

    def close(self) -> None:
        with self._db_lock:
            self.db.close()

    def _idle_all_human(self, now: float) -> list[tuple]:
        """Unfinished tables of human seats only that nobody asked about for ``all_human_idle_seconds``
        (issue #49: such tables cost nothing to make, and one client filled a server with them)."""
        return self._query("SELECT id FROM tables WHERE over = 0 AND touched < ? AND humans > 0 "
                           "AND json_valid(setup) AND humans = json_array_length(setup, '$.seats')",
                           (now - self.all_human_idle_seconds,))

    def unfinished(self, key: str) -> bool:
        """Whether table ``key`` is stored and not over (a client's count of tables: limits.Admission)."""
        with self._lock:
            table = self.items.get(key)
        if table is not None:
            return not table.game.over
        return bool(self._query("SELECT 1 FROM tables WHERE id = ? AND over = 0", (key,)))

    # ---------------------------------------------------------------- malformed rows (issue #49)
    def _set_aside_malformed(self) -> None:
        """Set aside every row whose setup or tokens are malformed (checked as a request is); the
        events of the tables resumed are checked as they load."""
        for row in self._query("SELECT id, setup, creator, tokens, touched FROM tables"):
            try:
                check_row(*row[1:])
            except RowError as err:
                self._set_aside(row[0], str(err))

    def _set_aside(self, key: str, reason: str) -> None:
        """Move a malformed row out of play into the ``set_aside`` table (its events stay, for the
        operator to look at), and say so in the server's log: one bad row never stops a start."""
        reason = reason[:500]
        self._write([("INSERT OR REPLACE INTO set_aside SELECT id, ?, setup, creator, tokens, created, touched "
                      "FROM tables WHERE id = ?", (reason, key)),
                     ("DELETE FROM tables WHERE id = ?", (key,))])
        with self._lock:
            self.items.pop(key, None)
        self.set_aside[key] = reason
        print(f"dragonstones serve: table {key[:40]!r} of {self.path} set aside (kept in its set_aside table, out "
              f"of play): {reason}", file=sys.stderr, flush=True)


class Replays:
    """Replays by id, in memory, the ``size`` most recently used (and kept by ``stored`` if given)."""

    def __init__(self, size: int = MAX_REPLAYS, stored: StoredReplays | None = None):
        self.size, self.stored = size, stored
        self.items: OrderedDict[str, tuple[Replay, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, replay: Replay) -> str:
        key = secrets.token_hex(8)
        if self.stored is not None:
            self.stored.put(key, replay)
        with self._lock:
            self.items[key] = (replay, threading.Lock())
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return key

    def get(self, key: str) -> tuple[Replay, threading.Lock]:
        with self._lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        replay = None if self.stored is None else self.stored.get(key)
        with self._lock:
            if replay is not None and key not in self.items:
                self.items[key] = (replay, threading.Lock())
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
            if key not in self.items:
                raise AppError(404, f"unknown replay id {key[:40]!r} (a replay is kept while it is used; open "
                                    "its file again)")
            self.items.move_to_end(key)
            return self.items[key]


class StoredReplays:
    """Replays' checked records in the tables' SQLite file (``{"seats", "names", "record"}``, the
    form a saved record has), the ``size`` most recently used, rebuilt on demand after a restart."""

    def __init__(self, tables: Tables, size: int = MAX_STORED_REPLAYS):
        self.tables, self.size = tables, size

    def put(self, key: str, replay: Replay) -> None:
        body = json.dumps({"seats": replay.seats, "names": replay.names, "record": replay.record})
        now = self.tables.clock()
        self.tables._write([
            ("INSERT OR REPLACE INTO replays VALUES (?, ?, ?)", (key, body, now)),
            ("DELETE FROM replays WHERE id NOT IN (SELECT id FROM replays ORDER BY touched DESC LIMIT ?)",
             (self.size,))])

    def get(self, key: str) -> Replay | None:
        rows = self.tables._query("SELECT body FROM replays WHERE id = ?", (key,))
        if not rows:
            return None
        self.tables._write([("UPDATE replays SET touched = ? WHERE id = ?", (self.tables.clock(), key))])
        try:
            return Replay(json.loads(rows[0][0]), self.tables.sources)
        except Refused:  # a stored replay this version no longer replays: as if it were gone
            return None
