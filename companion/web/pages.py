"""The dashboard's pages (HTML shells; their scripts render the state the stream pushes)."""

from __future__ import annotations

from typing import Any

from flask import Flask, render_template

PAGES = {
    "live": ("/", "Live table"),
    "cat": ("/cat", "Doom Cat"),
    "machine": ("/machine", "Doom Machine"),
    "history": ("/history", "History"),
}


def register(app: Flask) -> None:
    def page(name: str) -> Any:
        return render_template(f"{name}.html", page=name, pages=PAGES,
                               title=PAGES[name][1])

    app.add_url_rule("/", "live", lambda: page("live"))
    app.add_url_rule("/cat", "cat", lambda: page("cat"))
    app.add_url_rule("/machine", "machine", lambda: page("machine"))
    app.add_url_rule("/history", "history", lambda: page("history"))

    @app.get("/favicon.ico")
    def favicon() -> Any:
        return app.send_static_file("favicon.svg")
