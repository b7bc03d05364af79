"""The web app: a Starlette ASGI app serving the table page and its JSON API.

Endpoints (every refusal is a 4xx JSON ``{"error": message}`` and changes nothing):

* ``GET /`` the page; ``GET /static/...`` its CSS and JavaScript;
* ``GET /api/meta``: the games, their table sizes and the policies that play each;
* ``POST /api/games`` ``{"game", "players", "seats": ["human" | spec, ...], "pace_ms", "seed", "insight"}``
  starts a table, returns ``{"id"}``; ``GET /api/games`` lists the tables;
* ``GET /api/games/{id}?seat=k``: what seat ``k`` sees (bots due to move move first);
* ``POST /api/games/{id}/actions`` ``{"seat", "action"}``: a human's move, then the bots' up to
  the next human decision (at pace 0);
* ``POST /api/games/{id}/pace`` ``{"pace_ms"}``; ``GET /api/games/{id}/record`` (once over);
  ``DELETE /api/games/{id}``;
* ``POST /api/replays`` a record (the engine's JSON list, or a file saved by the app) returns
  ``{"id", "steps", ...}``; ``GET /api/replays/{id}?step=k&seat=k|all[&insight=spec]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from dragonstones_env.bounds import FILE_BYTES

from . import games
from .sessions import MAX_PACE_MS, AppError, LiveGame, Replay, Store, check_int, parse_json, policies_for

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = FILE_BYTES["record"]  # bytes: a saved game is a record (dragonstones_env/bounds.py; a long one is ~2 MB)


def _json(data: Any, status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)


async def _body(request: Request) -> Any:
    """The JSON body, read up to MAX_BODY bytes: a bigger one stops being read there (a 413)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise AppError(413, f"the body has {declared[:20]} bytes; at most {MAX_BODY}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise AppError(413, f"the body has more than {MAX_BODY} bytes; at most {MAX_BODY}")
        chunks.append(chunk)
    return parse_json(b"".join(chunks))


def _query_int(request: Request, name: str, default: int | None = None) -> Any:
    text = request.query_params.get(name)
    if text is None:
        if default is None:
            raise AppError(400, f"the query parameter {name!r} is missing")
        return default
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise AppError(400, f"the query parameter {name!r} must be an integer, got {text[:40]!r}") from None


def create_app() -> Starlette:
    store = Store()

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def meta(request: Request) -> Response:
        out = []
        for name in games.names():
            mod = games.game(name)
            out.append({"name": name, "title": mod.TITLE, "min_players": mod.MIN_PLAYERS,
                        "max_players": mod.MAX_PLAYERS, "default_players": mod.DEFAULT_PLAYERS,
                        "default_opponent": mod.DEFAULT_OPPONENT, "policies": policies_for(mod),
                        "options": list(mod.ENV_OPTIONS)})
        return _json({"games": out})

    def new_game(body: Any) -> Response:
        if not isinstance(body, dict):
            raise AppError(400, "the body must be a JSON object {\"game\", \"players\", \"seats\", ...}")
        key = store.add(LiveGame(body))
        return _json({"id": key}, 201)

    async def create(request: Request) -> Response:
        return new_game(await _body(request))

    async def list_games(request: Request) -> Response:
        rows = []
        for key, item in list(store.items.items()):
            if isinstance(item, LiveGame):
                rows.append({"id": key, "game": item.mod.GAME_ID, "seats": item.seats, "moves": item.moves,
                             "over": item.over})
        return _json({"games": rows})

    def show(request: Request) -> Response:
        game, lock = store.get(request.path_params["id"], LiveGame)
        seat = _query_int(request, "seat")
        with lock:
            game.advance()
            return _json(game.state(seat))

    async def act(request: Request) -> Response:
        body = await _body(request)
        game, lock = store.get(request.path_params["id"], LiveGame)
        with lock:
            game.act(body)
            game.advance()
            return _json(game.state(body["seat"]))

    async def pace(request: Request) -> Response:
        body = await _body(request)
        game, lock = store.get(request.path_params["id"], LiveGame)
        value = check_int(body.get("pace_ms") if isinstance(body, dict) else None, "pace_ms", 0, MAX_PACE_MS)
        with lock:
            game.pace_ms = value
        return _json({"pace_ms": value})

    def record(request: Request) -> Response:
        game, lock = store.get(request.path_params["id"], LiveGame)
        with lock:
            return _json(game.saved())

    def delete(request: Request) -> Response:
        store.remove(request.path_params["id"], LiveGame)
        return _json({"deleted": request.path_params["id"]})

    async def new_replay(request: Request) -> Response:
        replay = Replay(await _body(request))
        key = store.add(replay)
        return _json({"id": key, "game": replay.mod.GAME_ID, "steps": replay.steps,
                      "players": len(replay.seats), "seats": replay.seats,
                      "turns": {str(t): step for t, step in replay.turns.items()}}, 201)

    def show_replay(request: Request) -> Response:
        replay, lock = store.get(request.path_params["id"], Replay)
        step = _query_int(request, "step", 0)
        seat = _query_int(request, "seat", 0)
        spec = request.query_params.get("insight") or None
        with lock:
            return _json(replay.state(step, seat, spec))

    async def app_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, AppError)
        return _json({"error": exc.message}, exc.status)

    routes = [
        Route("/", index),
        Route("/api/meta", meta),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games", list_games, methods=["GET"]),
        Route("/api/games/{id}", show, methods=["GET"]),
        Route("/api/games/{id}", delete, methods=["DELETE"]),
        Route("/api/games/{id}/actions", act, methods=["POST"]),
        Route("/api/games/{id}/pace", pace, methods=["POST"]),
        Route("/api/games/{id}/record", record),
        Route("/api/replays", new_replay, methods=["POST"]),
        Route("/api/replays/{id}", show_replay),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={AppError: app_error})
    app.state.store = store
    return app


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the app under uvicorn (127.0.0.1 unless told otherwise) and print the URL to open."""
    import uvicorn

    print(f"Dragonstones table: open http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")


__all__ = ["create_app", "serve"]
