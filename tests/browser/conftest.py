"""The browser test's set-up: Debian's chromium (Playwright cannot download its own browser here)
and the app served by uvicorn on a free port in a thread.

Without chromium the tests skip with the reason, unless ``BROWSER_REQUIRED=1`` (set by
``make test-browser``, which CI runs), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

REQUIRED = os.environ.get("BROWSER_REQUIRED") == "1"


def _missing(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"{why} (BROWSER_REQUIRED=1: the browser test must run)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        _missing("no chromium on PATH: `apt-get install chromium` (make test-browser does it)")
    return path


@pytest.fixture(scope="session")
def browser_type_launch_args(chromium_path):
    """pytest-playwright's launch arguments: the system chromium; no sandbox (CI runs as root)."""
    return {"executable_path": chromium_path, "args": ["--no-sandbox", "--disable-gpu"]}


@pytest.fixture(scope="session")
def browser_context_args():
    return {"viewport": {"width": 1400, "height": 900}, "accept_downloads": True}


class LiveServer:
    """The app under uvicorn in a thread on a fixed port and SQLite file: ``restart()`` stops it and
    starts a new server on the same file (the tables resume from the store), as a restart does."""

    def __init__(self, store: Path, **options):
        self.store, self.options = store, options
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = self.thread = None

    def start(self) -> None:
        import uvicorn

        from dragonstones_env.play.app.server import create_app

        app = create_app(store=self.store, **self.options)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                return
            time.sleep(0.05)
        raise RuntimeError(f"the test server did not start on port {self.port}")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def live_server(tmp_path):
    """A server of its own (not shared with the other tests), to restart mid-game."""
    try:
        import uvicorn  # noqa: F401

        from dragonstones_env.play.app.server import create_app  # noqa: F401
    except ImportError as err:
        _missing(f"the [app] extra is not installed ({err})")
    server = LiveServer(tmp_path / "tables.sqlite")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def server_url(tmp_path_factory) -> str:
    try:
        import uvicorn

        from dragonstones_env.play.app.server import create_app
    except ImportError as err:
        _missing(f"the [app] extra is not installed ({err})")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    examples = Path(__file__).resolve().parents[2] / "examples"
    app = create_app(store=tmp_path_factory.mktemp("store") / "tables.sqlite", decks=examples)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=5)
