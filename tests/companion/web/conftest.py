"""Fixtures of the dashboard tests: an app over a throw-away store and the counter engine."""

from __future__ import annotations

import pytest

from companion.session import Hub
from companion.session.testing import CounterEngine, testing_hub
from companion.web import WebConfig, create_app

from .browser import CHROMIUM, launch


def counter_hub(path) -> Hub:
    return testing_hub(path, cat=CounterEngine("cat", "Doom Cat"))


@pytest.fixture
def app(tmp_path):
    application = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none",
                                       live=False, max_body_bytes=64 * 1024),
                             hub=counter_hub(tmp_path / "g.sqlite"))
    yield application
    application.extensions["doom"].close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (./dev test installs it with apt)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()
