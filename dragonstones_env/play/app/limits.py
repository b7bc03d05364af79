"""What one client may ask of a server (issue #49): caps and rate limits on new tables, and the fair
scheduling of search seats.

**Admission.** A client is its address (``request.client.host``: the app trusts no forwarded
header). It may hold at most ``tables_per_client`` unfinished tables and ``search_seats_per_client``
search seats (``ismcts``) over them, and create at most ``client_per_minute`` tables a minute; the
whole server at most ``server_per_minute``. A refusal is a 429 naming the limit (one client
created 1,000 tables in 5.4 s before, and every later client got a 503).

**Search seats.** Two bot threads decide the searches (about 0.1 to 1 s a decision). A table with
human seats goes first: its search starts before any queued search of an all-bot table, at once
(all-bot searches run one at a time, so a thread is always free for it), and no all-bot search
starts while a human table's runs (the threads share the interpreter's lock: a second search
would halve the human table's speed), and one under way when a human table's starts waits between
its simulations until the human's ends (``policies.search.giving_way``: the human's search no longer
shares the lock with it for up to a second; no decision changes). Among tables of one kind, first come first
served; a table has at most one search queued, so that is round-robin. An all-bot table nobody
has looked at for ``WATCH_SECONDS`` pauses (the server's :func:`~.server.create_app` stops
re-queueing it; the next request resumes it). Before, 20 all-search tables from one client made a
human table's bot take 23.4 s a move instead of 1.3 s.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from dragonstones_env.bounds import check
from dragonstones_env.policies.search import giving_way

from .errors import AppError

TABLES_PER_CLIENT = 20  # unfinished tables of one client (the bounds table's app.tables_per_client)
SEARCH_SEATS_PER_CLIENT = 6  # two all-search tables of three, or six human tables with a search bot
CLIENT_PER_MINUTE = 30  # new tables a minute from one client
SERVER_PER_MINUTE = 120  # new tables a minute in all
WATCH_SECONDS = 60.0  # an all-bot table nobody asked about for this long pauses its searches
# The bounds table's ceilings: a server of one trusted user, or a test's client that makes many tables
NO_LIMITS = {"tables_per_client": 200, "search_seats_per_client": 64, "client_per_minute": 6000,
             "server_per_minute": 6000}
MAX_CLIENTS = 10_000  # clients whose rate is remembered (the least recently seen are forgotten)


class _Bucket:
    """A token bucket: ``per_minute`` tokens, refilled evenly over a minute."""

    def __init__(self, per_minute: int, now: float):
        self.per_minute, self.tokens, self.last = per_minute, float(per_minute), now

    def wait(self, now: float) -> float:
        """Seconds until a token is there (0: one is)."""
        self.tokens = min(self.per_minute, self.tokens + (now - self.last) * self.per_minute / 60.0)
        self.last = now
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) * 60.0 / self.per_minute


class Admission:
    """The caps and rates of new tables, per client and per server (thread-safe).

    ``live(key)`` says whether a table a client created is still stored and unfinished (its count
    drops when it ends, expires or is deleted)."""

    def __init__(self, live: Callable[[str], bool], *, tables_per_client: int = TABLES_PER_CLIENT,
                 search_seats_per_client: int = SEARCH_SEATS_PER_CLIENT, client_per_minute: int = CLIENT_PER_MINUTE,
                 server_per_minute: int = SERVER_PER_MINUTE, clock: Callable[[], float] = time.monotonic):
        self.live, self.clock = live, clock
        self.tables_per_client = check("app.tables_per_client", tables_per_client)
        self.search_seats_per_client = check("app.search_seats_per_client", search_seats_per_client)
        self.client_per_minute = check("app.tables_per_minute", client_per_minute, "client_per_minute")
        self.server = _Bucket(check("app.tables_per_minute", server_per_minute, "server_per_minute"), clock())
        self._rates: OrderedDict[str, _Bucket] = OrderedDict()
        self._owned: dict[str, dict[str, int]] = {}  # client -> {table id: its search seats}
        self._lock = threading.Lock()

    def rate(self, client: str) -> None:
        """A 429 saying when to retry if ``client`` or the server has started its tables of the last
        minute (a table started takes its token: :meth:`created`; a refused request takes none)."""
        now = self.clock()
        with self._lock:
            bucket = self._bucket(client, now)
            wait = bucket.wait(now)
            if wait:
                raise AppError(429, f"this client may start {self.client_per_minute} tables a minute; try again in "
                                    f"{max(1, round(wait))} s")
            wait = self.server.wait(now)
            if wait:
                raise AppError(429, f"this server starts {self.server.per_minute} tables a minute; try again in "
                                    f"{max(1, round(wait))} s")

    def _bucket(self, client: str, now: float) -> _Bucket:
        bucket = self._rates.get(client)
        if bucket is None:
            bucket = self._rates[client] = _Bucket(self.client_per_minute, now)
            while len(self._rates) > MAX_CLIENTS:
                self._rates.popitem(last=False)
        self._rates.move_to_end(client)
        return bucket

    def _held(self, client: str) -> dict[str, int]:
        owned = self._owned.get(client, {})
        for key in [k for k in owned if not self.live(k)]:
            del owned[key]
        return owned

    def admit(self, client: str, search_seats: int) -> None:
        """A 429 if ``client`` already holds its tables or search seats (call before storing the table)."""
        with self._lock:
            owned = self._held(client)
            if len(owned) >= self.tables_per_client:
                raise AppError(429, f"this client holds {len(owned)} unfinished tables, at most "
                                    f"{self.tables_per_client}; finish or delete one first")
            held = sum(owned.values())
            if search_seats and held + search_seats > self.search_seats_per_client:
                raise AppError(429, f"this client's tables have {held} search seats (ismcts) and this one "
                                    f"{search_seats}; at most {self.search_seats_per_client} in all")

    def created(self, client: str, key: str, search_seats: int) -> None:
        """Count table ``key`` against ``client``: one of its tables, its search seats, a token of its rate."""
        now = self.clock()
        with self._lock:
            self._owned.setdefault(client, {})[key] = search_seats
            for bucket in (self._bucket(client, now), self.server):
                bucket.wait(now)
                bucket.tokens -= 1  # may go below 0 when two requests passed rate() together


class SearchScheduler:
    """The bot threads of the searches: human tables first, at most one all-bot search at a time and
    none beside a human one (so a thread is always free for a human table's search), first come
    first served within a kind (see the module's docstring)."""

    HUMAN, BOTS = 0, 1

    def __init__(self, workers: int = 2, thread_name: str = "dragonstones-search"):
        self.workers, self.thread_name = workers, thread_name
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int, str, Callable[[], Any]]] = []
        self._order = itertools.count()
        self._running = [0, 0]  # human, all-bot
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._no_human = threading.Event()  # set while no human table's search runs: all-bot searches wait
        self._no_human.set()
        self.started: deque[tuple[str, bool]] = deque(maxlen=1000)  # (table id, human) in start order

    def submit(self, key: str, human: bool, run: Callable[[], Any]) -> None:
        """Queue ``run`` (one search decision of table ``key``); a RuntimeError once shut down."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the search threads are shut down")
            heapq.heappush(self._queue, (self.HUMAN if human else self.BOTS, next(self._order), key, run))
            while len(self._threads) < self.workers:
                thread = threading.Thread(target=self._work, name=f"{self.thread_name}-{len(self._threads)}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()
            self._cond.notify_all()

    def pending(self) -> list[tuple[str, bool]]:
        """The queued searches in the order they will start: (table id, human)."""
        with self._cond:
            return [(key, kind == self.HUMAN) for kind, _, key, _ in sorted(self._queue)]

    def _take(self) -> tuple[int, Callable[[], Any]] | None:
        with self._cond:
            while True:
                if self._closed:
                    return None
                if self._queue and (self._queue[0][0] == self.HUMAN or not any(self._running)):
                    kind, _, key, run = heapq.heappop(self._queue)
                    self._running[kind] += 1
                    if kind == self.HUMAN:
                        self._no_human.clear()
                    self.started.append((key, kind == self.HUMAN))
                    return kind, run
                self._cond.wait()

    def _work(self) -> None:
        while (item := self._take()) is not None:
            kind, run = item
            try:
                if kind == self.HUMAN:
                    run()
                else:
                    with giving_way(self._no_human):
                        run()
            finally:
                with self._cond:
                    self._running[kind] -= 1
                    if not self._running[self.HUMAN]:
                        self._no_human.set()
                    self._cond.notify_all()

    def shutdown(self) -> None:
        """Start nothing more (a search under way ends on its own, in about a second)."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._no_human.set()  # a waiting all-bot search ends on its own
            self._cond.notify_all()
