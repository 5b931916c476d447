"""``doomcompanion serve``: the dashboard, served by waitress."""

from __future__ import annotations

import argparse

from companion.errors import BadInput
from companion.store import default_db_path
from companion.web.config import WebConfig, is_loopback

THREADS = 48   # each open page holds one thread for its event stream and one for the video


def run(args: argparse.Namespace) -> int:
    import waitress

    from companion.web import create_app

    if not 0 < args.port < 65536:
        raise BadInput(f"--port must be 1-65535, got {args.port}")
    config = WebConfig(db_path=args.db or default_db_path(), source=args.source,
                       host=args.host, port=args.port)
    app = create_app(config)
    runtime = app.extensions["doom"]
    shown = "localhost" if is_loopback(args.host) else args.host
    print(f"Doom Companion: http://{shown}:{args.port}/   (games in {config.db_path})",
          flush=True)
    if config.token:
        print(f"Access token (other devices): open http://{shown}:{args.port}/?token="
              f"{config.token}", flush=True)
    try:
        waitress.serve(app, host=args.host, port=args.port, threads=THREADS,
                       channel_timeout=60, ident="doomcompanion", _quiet=True)
    except OSError as exc:
        raise BadInput(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") \
            from None
    finally:
        runtime.close()
    return 0
