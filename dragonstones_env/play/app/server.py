"""The web app: a Starlette ASGI app serving the table page and its JSON API.

Endpoints (every refusal is a 4xx JSON ``{"error": message}`` and changes nothing; a token goes in
the ``Authorization: Bearer TOKEN`` header):

* ``GET /`` the page; ``GET /static/...`` its CSS and JavaScript;
* ``GET /api/meta``: the games, their table sizes, the policies that play each, the cards' rules
  text, and this server's decks;
* ``POST /api/games`` ``{"game", "players", "seats": ["human" | policy, ...], "names", "pace_ms",
  "seed", "insight"}`` and the game's table options (its ``options`` in ``/api/meta``) starts a table
  and returns ``{"id", "creator", "tokens": {seat: token}}``; ``GET /api/games`` lists the tables (no secret);
* ``GET /api/games/{id}[?log_from=k&insight=1]``: what the token's seat sees, or without a seat's
  token what a spectator sees (bots due to move move first);
* ``POST /api/games/{id}/actions`` ``{"action"}`` with a seat's token: its move, then the bots'
  up to the next human decision (at pace 0), or up to a search's (``ismcts``): a search decides in
  a bot thread while the state says ``"thinking": seat``, and moves on its own (the page polls);
* ``POST /api/games/{id}/pace`` ``{"pace_ms"}`` with the creator's or a seat's token;
  ``GET /api/games/{id}/record`` (once over); ``DELETE /api/games/{id}`` with the creator's token
  (the seats are then told 410 "this table was deleted");
* ``GET /api/games/{id}/invites`` with the creator's token: each human seat's token (the creator's
  link gives the invites back in any browser); ``POST /api/games/{id}/name`` ``{"name"}`` with a
  seat's token: that seat's name;
* ``POST /api/replays`` a record (the engine's JSON list, or a file saved by the app) returns
  ``{"id", "steps", ...}``; ``GET /api/replays/{id}?step=k&seat=k|all[&insight=policy]``.

Every request's ``Host`` must be an IP address, ``localhost`` or a name the server was given
(``--allow-host``), and every state-changing request must say ``Content-Type: application/json``
(so that another site's page can neither rebind a name to this server nor post to it). Bodies are
read as a stream and cut at a limit; parsing, checking and playing run in worker threads, so no
request holds up the others (issue #29), and no request waits for a search bot's decision
(issue #27): two bot threads decide those, off the table's lock, on a copy of the game.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import signal
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from threadpoolctl import threadpool_limits

from dragonstones_env.bounds import FILE_BYTES
from dragonstones_env.play.sources import Sources
from dragonstones_env.play.table import MAX_PACE_MS, REGENERATE_SECONDS, LiveGame, Replay, check_int, shown_games

from .errors import REFUSALS, AppError, message_of, status_of
from .limits import WATCH_SECONDS, Admission, SearchScheduler
from .store import Replays, StoredReplays, StoreError, Table, Tables

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = min(4_000_000, FILE_BYTES["record"])  # bytes of a replay's body: a long record is about 150 kB
MAX_TABLE_BODY = 200_000  # bytes of a new table's body (a deck's text is at most 64,000 characters)
MAX_SMALL_BODY = 4_000  # bytes of an action's or a pace's body
LOCAL_NAMES = ("localhost",)
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@dataclass
class Settings:
    """A server's options (``dragonstones serve --help``)."""

    store: str | Path | None = None  # the SQLite file of the tables (None: a new temporary file)
    decks: str | Path | None = None  # the folder of the decks a table may name
    policies: str | Path | None = None  # a folder of checkpoints a seat may name
    hosts: tuple[str, ...] = ()  # names the Host header may carry besides localhost and IP addresses
    regenerate_seconds: float = REGENERATE_SECONDS
    tables: dict[str, Any] = field(default_factory=dict)  # Tables' keyword options (limits, clock)
    limits: dict[str, Any] = field(default_factory=dict)  # limits.Admission's keyword options (issue #49)


def _json(data: Any, status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)


def _host_name(header: str) -> str:
    """The host part of a Host header (``[::1]:8000`` -> ``::1``), lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def host_allowed(header: str, names: tuple[str, ...]) -> bool:
    """Whether a request's Host header names this server: an IP address (a DNS rebinding attack
    needs a name of its own), ``localhost``, or one of ``names``."""
    host = _host_name(header)
    if not host:
        return False
    if host in LOCAL_NAMES or host in names:
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class Guard:
    """ASGI middleware: the Host check and the JSON content type of state-changing requests."""

    def __init__(self, app: Any, hosts: tuple[str, ...]):
        self.app, self.hosts = app, tuple(h.lower() for h in hosts)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            host = headers.get("host", "")
            refusal = None
            if not host_allowed(host, self.hosts):
                refusal = (421, f"the Host header {host[:60]!r} does not name this server (it answers to IP "
                                "addresses, localhost and the names given with --allow-host)")
            elif scope["method"] not in _SAFE_METHODS:
                kind = headers.get("content-type", "").split(";")[0].strip().lower()
                if kind != "application/json":
                    refusal = (415, f"a {scope['method']} request must say Content-Type: application/json, "
                                    f"not {kind[:60]!r}")
            if refusal is not None:
                await _json({"error": refusal[1]}, refusal[0])(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def read_body(request: Request, limit: int) -> Any:
    """The body as JSON, read as a stream and refused (413) once it passes ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise AppError(413, f"the body has {declared} bytes; at most {limit}")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise AppError(413, f"the body has more than {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise AppError(400, "the client left before sending the whole body") from None
    raw = b"".join(chunks)
    if size > 100_000:
        return await anyio.to_thread.run_sync(parse_json, raw)
    return parse_json(raw)


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, or a 400 naming the problem."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise AppError(400, f"malformed JSON: {str(err)[:200]}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if not auth:
        return None
    if scheme.lower() != "bearer" or not token.strip():
        raise AppError(401, "a token goes in the header 'Authorization: Bearer TOKEN'")
    return token.strip()


def _not_allowed(token: str | None, why: str) -> AppError:
    """A request refused for its token: 401 without one (authenticate), 403 with another's."""
    return AppError(401 if token is None else 403, why)


def _query_int(request: Request, name: str, default: int | None = None, low: int = 0) -> Any:
    text = request.query_params.get(name)
    if text is None:
        if default is None:
            raise AppError(400, f"the query parameter {name!r} is missing")
        return default
    if text == "all":
        return text
    try:
        value = int(text)
    except ValueError:
        raise AppError(400, f"the query parameter {name!r} must be an integer, got {text[:40]!r}") from None
    if value < low:
        raise AppError(400, f"the query parameter {name!r} must be at least {low}, got {value}")
    return value


def client_of(request: Request) -> str:
    """The client a request counts against (limits.Admission): its address; no forwarded header is
    trusted (any client could write one)."""
    return request.client.host if request.client else "unknown"


def search_seats(game: LiveGame) -> int:
    """The seats of ``game`` played by a search (``ismcts``: a policy that needs the game)."""
    return sum(1 for p in game.policies if p is not None and p.capabilities.information_state)


def _app(request: Request) -> Any:
    """What the routes share (``app.state``): the settings, sources, tables, replays, limits and the
    search starter that :func:`create_app` made."""
    return request.app.state


async def run(fn: Callable, *args: Any, limiter: anyio.CapacityLimiter | None = None) -> Any:
    """``fn(*args)`` in a worker thread (parsing, checking, playing: the event loop only routes)."""
    return await anyio.to_thread.run_sync(partial(fn, *args), limiter=limiter)


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def meta_data(sources: Sources) -> dict[str, Any]:
    """The games people can be shown (those with a presenter, in the registry's order), each with the
    facts of its spec (table sizes, default bot and options) and its presenter's words."""
    out = []
    for spec in shown_games():
        show = spec.presenter
        out.append({"name": spec.id, "title": spec.title, "min_players": spec.players.start,
                    "max_players": spec.players.stop - 1, "default_players": spec.default_players,
                    "default_opponent": spec.default_bot, "policies": sources.policies(spec),
                    "options": list(show.table_options), "rules": show.rules(), "how_to": list(show.how_to)})
    return {"games": out, "decks": list(sources.decks())}


async def meta(request: Request) -> Response:
    return _json(await run(meta_data, _app(request).sources))


def new_table(state: Any, body: Any, client: str) -> dict[str, Any]:
    admission, tables = state.admission, state.tables
    admission.rate(client)
    game = LiveGame(body, state.sources, background=True)
    searches = search_seats(game)
    admission.admit(client, searches)
    key, creator, tokens = tables.add(game)
    admission.created(client, key, searches)
    table = tables.get(key)
    with table.lock:
        state.start_search(table)
    return {"id": key, "creator": creator, "tokens": {str(s): t for s, t in tokens.items()},
            "seeded": game.seeded}


async def create(request: Request) -> Response:
    body = await read_body(request, MAX_TABLE_BODY)
    state = _app(request)
    return _json(await run(new_table, state, body, client_of(request), limiter=state.heavy), 201)


async def list_games(request: Request) -> Response:
    return _json({"games": await run(_app(request).tables.listing)})


async def show(request: Request) -> Response:
    token = _token(request)
    log_from = _query_int(request, "log_from", 0)
    want = request.query_params.get("insight") in ("1", "true")
    asked = request.query_params.get("seat")
    state = _app(request)
    tables = state.tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        seat, _ = table.seat_of(token)
        if asked is not None and asked != str(seat):
            raise AppError(403, f"seat {asked[:10]}'s view needs that seat's token (the seat's link carries "
                                "it); without one, this is the spectators' view")
        with table.lock:
            if seat is not None:
                table.seen[seat] = tables.clock()
            table.game.advance()
            tables.save(table)
            state.start_search(table)
            return table.game.state(seat, log_from, want)

    return _json(await run(work))


async def act(request: Request) -> Response:
    token = _token(request)
    body = await read_body(request, MAX_SMALL_BODY)
    log_from = _query_int(request, "log_from", 0)
    state = _app(request)
    tables = state.tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        seat, _ = table.seat_of(token)
        if seat is None:
            raise _not_allowed(token, "acting needs a seat's token (the seat's link "
                                                          "carries it)")
        with table.lock:
            table.seen[seat] = tables.clock()
            table.game.act(seat, body)
            table.game.advance()
            tables.save(table)
            state.start_search(table)
            return table.game.state(seat, log_from)

    return _json(await run(work))


async def pace(request: Request) -> Response:
    token = _token(request)
    body = await read_body(request, MAX_SMALL_BODY)
    value = check_int(body.get("pace_ms") if isinstance(body, dict) else None, "pace_ms", 0, MAX_PACE_MS)
    tables = _app(request).tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        seat, creator = table.seat_of(token)
        if seat is None and not creator:
            raise _not_allowed(token, "the pace is set by the table's creator or a seat")
        with table.lock:
            table.game.pace_ms = value
            table.saved_touch = 0.0  # the setup changed: write it
            tables.save(table)
        return {"pace_ms": value}

    return _json(await run(work))


async def record(request: Request) -> Response:
    tables = _app(request).tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        with table.lock:
            return table.game.saved()

    return _json(await run(work))


async def delete(request: Request) -> Response:
    token = _token(request)
    tables = _app(request).tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        _, creator = table.seat_of(token)
        if not creator:
            raise _not_allowed(token, "only the table's creator deletes it")
        tables.delete(table.id)
        return {"deleted": table.id}

    return _json(await run(work))


async def invites(request: Request) -> Response:
    token = _token(request)
    tables = _app(request).tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        _, creator = table.seat_of(token)
        if not creator or token is None:
            raise _not_allowed(token, "the invite links are the table's creator's")
        return {"tokens": {str(s): t for s, t in tables.invites(table, token).items()}}

    return _json(await run(work))


async def rename(request: Request) -> Response:
    token = _token(request)
    body = await read_body(request, MAX_SMALL_BODY)
    name = body.get("name") if isinstance(body, dict) else None
    tables = _app(request).tables

    def work() -> dict[str, Any]:
        table = tables.get(request.path_params["id"])
        seat, _ = table.seat_of(token)
        if seat is None:
            raise _not_allowed(token, "a seat's name is set with that seat's token")
        with table.lock:
            table.game.rename(seat, name)
            table.saved_touch = 0.0  # the setup changed: write it
            tables.save(table)
            return {"names": table.game.names}

    return _json(await run(work))


async def new_replay(request: Request) -> Response:
    body = await read_body(request, MAX_BODY)
    state = _app(request)

    def work() -> dict[str, Any]:
        replay = Replay(body, state.sources, state.settings.regenerate_seconds)
        return {"id": state.replays.add(replay), **replay.summary()}

    return _json(await run(work, limiter=state.heavy), 201)


async def show_replay(request: Request) -> Response:
    step = _query_int(request, "step", 0)
    seat = _query_int(request, "seat", 0)
    log_from = _query_int(request, "log_from", 0)
    spec = request.query_params.get("insight") or None
    replays = _app(request).replays

    def work() -> dict[str, Any]:
        replay, lock = replays.get(request.path_params["id"])
        with lock:
            return replay.state(step, seat, spec, log_from)

    return _json(await run(work))


async def refusal(request: Request, exc: Exception) -> Response:
    """A refused request (:data:`errors.REFUSALS`): its status and ``{"error": message}``."""
    return _json({"error": message_of(exc)}, status_of(exc))


ROUTES = [
    Route("/", index),
    Route("/api/meta", meta),
    Route("/api/games", create, methods=["POST"]),
    Route("/api/games", list_games, methods=["GET"]),
    Route("/api/games/{id}", show, methods=["GET"]),
    Route("/api/games/{id}", delete, methods=["DELETE"]),
    Route("/api/games/{id}/actions", act, methods=["POST"]),
    Route("/api/games/{id}/pace", pace, methods=["POST"]),
    Route("/api/games/{id}/record", record),
    Route("/api/games/{id}/invites", invites),
    Route("/api/games/{id}/name", rename, methods=["POST"]),
    Route("/api/replays", new_replay, methods=["POST"]),
    Route("/api/replays/{id}", show_replay),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]


def create_app(settings: Settings | None = None, **options: Any) -> Starlette:
    """The app; ``options`` are :class:`Settings` fields (``create_app(store=path, hosts=("testserver",))``)."""
    settings = settings or Settings(**options)
    sources = Sources(policy_dir=None if settings.policies is None else Path(settings.policies),
                      deck_dir=None if settings.decks is None else Path(settings.decks))
    tables = Tables(settings.store, sources, **settings.tables)
    replays = Replays(stored=StoredReplays(tables))
    # Parsing, checking and simulating: worker threads, two at a time (the other requests are not
    # held up: the event loop only reads bodies and routes, and light requests use their own pool).
    heavy = anyio.CapacityLimiter(2)

    # Search bots' decisions (0.1 to 1 s each): two bot threads, one decision per job, human tables
    # first (limits.SearchScheduler); a request only starts one (with the table's lock) and answers at once.
    bots = SearchScheduler(workers=2)
    admission = Admission(tables.unfinished, **settings.limits)

    def start_search(table: Table) -> None:
        """(with the table's lock) Hand a due search's decision to a bot thread, unless the table is all
        bots and nobody has asked about it lately (it pauses; the next request resumes it)."""
        if search_paused(table):
            return
        job = table.game.think_due()
        if job is None:
            return
        try:
            bots.submit(table.id, bool(table.game.humans), partial(search, table, job))
        except RuntimeError:  # the interpreter is shutting down: the next server resumes the table
            table.game.thinking = None

    def search_paused(table: Table) -> bool:
        return not table.game.humans and tables.clock() - table.touched > WATCH_SECONDS

    def search(table: Table, job: Callable[[], tuple[int, int]]) -> None:
        moves, action = -1, None
        try:
            moves, action = job()
        except Exception as err:  # a broken search must not end the thread; the next request retries it
            print(f"dragonstones serve: table {table.id}: the search failed: {type(err).__name__}: {err}",
                  file=sys.stderr, flush=True)
        with table.lock:
            if not tables.holds(table):  # deleted, expired or unloaded meanwhile
                table.game.thinking = None
                return
            table.game.play_thought(moves, action)
            table.game.advance()
            tables.save(table)
            start_search(table)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        bots.shutdown()  # a search under way ends on its own (about a second)

    app = Starlette(routes=ROUTES, exception_handlers=dict.fromkeys(REFUSALS, refusal), lifespan=lifespan)
    app.state.settings, app.state.heavy, app.state.start_search = settings, heavy, start_search
    app.state.tables, app.state.replays, app.state.sources = tables, replays, sources
    app.state.bots, app.state.admission = bots, admission
    app.add_middleware(Guard, hosts=settings.hosts)
    return app


def serve(host: str = "127.0.0.1", port: int = 8000, **options: Any) -> int:
    """Run the app under uvicorn (127.0.0.1 unless told otherwise) and print the URL to open; returns
    an exit code (2 when a folder is missing or the address cannot be bound, with the reason printed).

    ``options`` are :class:`Settings` fields: ``store`` (the tables' SQLite file), ``decks``,
    ``policies`` (folders), ``hosts`` (names the server answers to besides IP addresses and localhost).
    """
    import uvicorn

    for name in ("decks", "policies"):  # a mistyped folder would otherwise serve an empty list
        folder = options.get(name)
        if folder is not None and not Path(folder).is_dir():
            print(f"dragonstones serve: error: --{name} {folder}: no such folder", file=sys.stderr)
            return 2
    if host not in ("0.0.0.0", "::", "") and not _is_ip(host):
        options["hosts"] = (*options.get("hosts", ()), host)
    # Bind before announcing: a port in use is said at once, not after "open http://...".
    try:
        sock = _bind(host, port)
    except OSError as err:
        print(f"dragonstones serve: error: cannot listen on {host}:{port}: {err.strerror or err}", file=sys.stderr)
        return 2
    # The bots decide one observation at a time in two threads: numpy's OpenBLAS threads would only
    # spin on the cores those need (dragonstones_env.evaluation.tournament.play_tasks' docstring).
    threadpool_limits(1, user_api="blas")
    # Without --store the tables live in a temporary folder (the SQLite file and its WAL files),
    # removed when the server stops.
    with sock, tempfile.TemporaryDirectory(prefix="dragonstones-tables-") as scratch:
        if options.get("store") is None:
            options["store"] = Path(scratch) / "tables.sqlite"
        try:
            app = create_app(Settings(**options))
        except StoreError as err:  # a store readable by others, or not a store: said plainly, no traceback
            print(f"dragonstones serve: {err}", file=sys.stderr, flush=True)
            return 2
        tables = app.state.tables
        # uvicorn stops on SIGTERM as on Ctrl-C, then raises the signal again: exit through the
        # finally clauses (the temporary folder's removal) instead of the default handler's kill.
        previous = signal.signal(signal.SIGTERM, _exit_on_signal)
        try:
            print(f"Dragonstones table: open http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/ "
                  "(Ctrl-C stops)", flush=True)
            print(f"tables kept in {tables.path} ({len(tables.resumed)} unfinished resumed"
                  + (f", {len(tables.refused)} refused: {json.dumps(tables.refused)[:300]}" if tables.refused else "")
                  + (f", {len(tables.set_aside)} set aside" if tables.set_aside else "")
                  + ")" + (" until the server stops (--store FILE keeps them)" if tables.path.parent == Path(scratch)
                           else ""), flush=True)
            uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
        finally:
            signal.signal(signal.SIGTERM, previous)
            tables.close()
    return 0


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (IPv6 for an address with a colon), as uvicorn binds one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


__all__ = ["Settings", "create_app", "host_allowed", "serve"]
