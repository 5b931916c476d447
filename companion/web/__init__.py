"""The dashboard: a Flask app factory (served by waitress in ``doomcompanion serve``).

Pages (plain HTML, CSS and JS, no build step): ``/`` live view, ``/cat`` Doom Cat, ``/machine``
Doom Machine, ``/history``. The JSON API lives under ``/api``; the pages get their state pushed
by server-sent events (``/api/stream``); the camera with the readings drawn over it is an MJPEG
stream (``/video.mjpg``).

Safety: every request body is size-limited and checked against a JSON Schema before use;
state-changing requests must be JSON (``Content-Type: application/json``, which a foreign web
page cannot send without the browser asking first) and, when a token is configured (any
non-loopback host), carry it in the ``X-Doom-Token`` header. No endpoint takes a file path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask

from companion.session.hub import Hub
from companion.session.live import LiveLoop
from companion.store import Store
from companion.web.config import WebConfig, is_loopback

__all__ = ["Runtime", "WebConfig", "create_app", "is_loopback"]


@dataclass
class Runtime:
    """What the app's routes share: config, store, hub and live loop."""

    config: WebConfig
    store: Store
    hub: Hub
    live: LiveLoop

    def end_streams(self) -> None:
        """End the pages' event and video streams now (their server threads return); quick,
        so that a stop signal can call it before the server waits for its threads."""
        self.hub.close()
        self.live.halt()

    def close(self) -> None:
        self.live.stop()
        self.hub.close()
        self.store.close()


def create_app(config: WebConfig | Mapping[str, Any] | None = None, *,
               hub: Hub | None = None, processor: Any = None) -> Flask:
    """Make the dashboard app.

    Parameters
    ----------
    config : WebConfig or mapping, optional
        A mapping is passed to :class:`WebConfig` as keyword arguments.
    hub : Hub, optional
        Inject a hub (tests use engines of their own); by default one is made over a store at
        ``config.db_path`` with the installed engines.
    processor : companion.session.camera.Processor, optional
        Inject the per-frame readers (tests); by default the installed readers.

    Returns
    -------
    Flask
        ``app.extensions["doom"]`` is the :class:`Runtime`; call its ``close()`` at shutdown.
    """
    if config is None:
        config = WebConfig()
    elif not isinstance(config, WebConfig):
        config = WebConfig(**dict(config))
    from companion.session.camera import make_live
    from companion.web import api, pages

    store = hub.store if hub is not None else Store(config.db_path)
    hub = hub or Hub(store)
    live = make_live(config.source, hub, processor=processor)
    app = Flask(__name__, static_folder="static", template_folder="templates")
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    app.config["JSON_SORT_KEYS"] = False
    app.extensions["doom"] = Runtime(config, store, hub, live)
    api.register(app)
    pages.register(app)
    if config.live:
        live.start()
    return app


def runtime(app: Flask) -> Runtime:
    return app.extensions["doom"]
