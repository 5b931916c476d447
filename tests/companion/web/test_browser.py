"""The dashboard in a real browser (Playwright driving Debian's Chromium)."""

from __future__ import annotations

import re

import pytest

from companion.web import WebConfig, create_app

from .browser import serve, shot
from .conftest import counter_hub

pytestmark = pytest.mark.browser


@pytest.fixture
def served(tmp_path):
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"),
                     hub=counter_hub(tmp_path / "g.sqlite"))
    with serve(app) as s:
        yield s


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
