"""The dashboard in a real browser (Playwright driving Debian's Chromium)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from companion.web import WebConfig, create_app

from .browser import CHROMIUM, launch, serve
from .conftest import counter_hub

pytestmark = pytest.mark.browser
SHOTS = Path(os.environ.get("DOOM_SCREENSHOTS",
                           Path(tempfile.gettempdir()) / "doomcompanion-screenshots"))


@pytest.fixture(scope="module")
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


@pytest.fixture
def served(tmp_path):
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"),
                     hub=counter_hub(tmp_path / "g.sqlite"))
    with serve(app) as s:
        yield s


def shot(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("path", ["/", "/cat", "/machine", "/history"])
def test_every_page_loads_with_no_console_error(served, page, path):
    page.goto(served.url + path, wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready='1']", timeout=10_000)
    assert page.locator("header .brand").inner_text() == "Doom Companion"
    assert page.errors == []
    shot(page, "skeleton" + (path.replace("/", "-") if path != "/" else "-live"))


def test_an_unavailable_engine_is_named_on_its_page(served, page):
    page.goto(served.url + "/machine", wait_until="domcontentloaded")
    notice = page.locator("#unavailable")
    notice.wait_for(state="visible", timeout=10_000)
    assert re.search("not available", notice.inner_text())
    assert "engine is missing" in notice.inner_text()
