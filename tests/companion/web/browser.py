"""Helpers of the browser tests: a waitress server in a thread and Debian's Chromium."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import waitress
from flask import Flask
from waitress import wasyncore

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(os.environ.get("DOOM_SCREENSHOTS",
                           Path(tempfile.gettempdir()) / "doomcompanion-screenshots"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@dataclass
class Served:
    app: Flask
    url: str


@contextmanager
def serve(app: Flask) -> Iterator[Served]:
    """Serve ``app`` with waitress on a free loopback port in a thread, until the block ends.

    The server's loop runs in slices so that it stops cleanly: the app's streams are ended
    first, then the loop, then every connection is closed.
    """
    server = waitress.create_server(app, host="127.0.0.1", port=0, threads=32,
                                    channel_timeout=30)
    port = server.socket.getsockname()[1]
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            wasyncore.loop(timeout=0.05, map=server._map, use_poll=True, count=1)

    thread = threading.Thread(target=loop, name="waitress", daemon=True)
    thread.start()
    try:
        yield Served(app, f"http://127.0.0.1:{port}")
    finally:
        app.extensions["doom"].close()
        stop.set()
        thread.join(timeout=5)
        for channel in list(server._map.values()):
            channel.close()
        server.task_dispatcher.shutdown(timeout=5)


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def shot(page: Any, name: str) -> None:
    """Save a full-page screenshot (to $DOOM_SCREENSHOTS or the temp folder) to look at."""
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
