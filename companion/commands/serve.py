"""``doomcompanion serve``: the dashboard, served by waitress."""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from collections.abc import Callable

from companion.errors import BadInput
from companion.store import default_db_path
from companion.web.config import WebConfig

THREADS = 48   # each open page holds one thread for its event stream and one for the video


def _stop_on_signals(end_streams: Callable[[], None]) -> None:
    """Ctrl-C (SIGINT) and a service manager's SIGTERM stop the server the same clean way, also
    when the shell that started it in the background left SIGINT ignored (Python then installs
    no handler of its own). The pages' streams are ended first: waitress then waits for its
    threads, and a stream left open held it for its whole timeout."""
    def stop(signum: int, frame: object) -> None:
        end_streams()
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)


def run(args: argparse.Namespace) -> int:
    import waitress

    from companion.web import create_app

    if not 0 < args.port < 65536:
        raise BadInput(f"--port must be 1-65535, got {args.port}")
    config = WebConfig(db_path=args.db or default_db_path(), source=args.source,
                       host=args.host, port=args.port, live=False)
    app = create_app(config)
    runtime = app.extensions["doom"]
    try:
        try:
            server = waitress.create_server(app, host=args.host, port=args.port,
                                            threads=THREADS, channel_timeout=60,
                                            ident="doomcompanion")
        except OSError as exc:
            raise BadInput(f"cannot listen on {args.host}:{args.port}: "
                           f"{exc.strerror or exc}") from None
        except ValueError:  # waitress: the host does not resolve to an address
            raise BadInput(f"cannot listen on {args.host}:{args.port}: --host is not an "
                           "address or a host name this machine can resolve") from None
        _stop_on_signals(runtime.end_streams)
        runtime.live.start()
        print(f"Doom Companion: http://localhost:{args.port}/   "
              f"(games in {config.db_path})", flush=True)
        for engine in runtime.hub.engine_status().values():
            if not engine["available"]:   # e.g. a catalogue refused: file, JSON path, rule
                print(f"doomcompanion: {engine['title']} is not available: {engine['reason']}",
                      file=sys.stderr, flush=True)
        if config.token:
            where = args.host if args.host not in ("0.0.0.0", "::") else socket.gethostname()
            print(f"Other devices: open http://{where}:{args.port}/?token={config.token} once "
                  "(the token is needed to change anything)", flush=True)
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        runtime.close()
    return 0
