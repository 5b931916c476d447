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


def test_the_roll_area_is_dragged_on_the_camera_image(served, page):
    page.goto(served.url + "/", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready='1']", timeout=10_000)
    page.wait_for_function("document.getElementById('video').naturalWidth > 0", timeout=10_000)
    assert page.locator("#roll-area-text").inner_text() == "the whole image"
    page.click("#roll-draw")
    r = page.locator("#video").bounding_box()   # the 16:9 placeholder fills the element
    page.mouse.move(r["x"] + 0.1 * r["width"], r["y"] + 0.5 * r["height"])
    page.mouse.down()
    page.mouse.move(r["x"] + 0.5 * r["width"], r["y"] + 0.7 * r["height"], steps=4)
    page.mouse.move(r["x"] + 0.9 * r["width"], r["y"] + 0.95 * r["height"], steps=4)
    page.mouse.up()
    page.wait_for_function("document.getElementById('roll-area-text').textContent.startsWith('from')",
                           timeout=10_000)
    stored = served.app.extensions["doom"].hub.roll_area()
    assert stored == pytest.approx((0.1, 0.5, 0.9, 0.95), abs=0.01)
    assert "10%, 50% to 90%, 95%" in page.locator("#roll-area-text").inner_text()
    box = page.locator("#roll-box").bounding_box()
    assert box["width"] == pytest.approx(0.8 * r["width"], abs=3)
    shot(page, "live-roll-area")
    page.click("#roll-clear")
    page.wait_for_function(
        "document.getElementById('roll-area-text').textContent === 'the whole image'",
        timeout=10_000)
    assert served.app.extensions["doom"].hub.roll_area() is None
    assert page.locator("#roll-box").is_hidden()
    assert page.errors == []


def test_a_finger_on_the_camera_image_scrolls_the_page_unless_drawing(served, page):
    # touch-action was "none" on the camera image at all times: on a phone a swipe that
    # began on the image (half the screen's width and more) did not scroll the page
    page.goto(served.url + "/", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready='1']", timeout=10_000)
    touch = "getComputedStyle(document.getElementById('video-wrap')).touchAction"
    assert page.evaluate(touch) == "auto"
    page.click("#roll-draw")
    assert page.evaluate(touch) == "none"       # the drag draws the rectangle
    page.click("#roll-draw")                     # "Cancel"
    assert page.evaluate(touch) == "auto"


def test_history_takes_the_same_file_again_after_a_refused_import(served, page, tmp_path):
    page.goto(served.url + "/history", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready='1']", timeout=10_000)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a game")
    for _ in range(2):
        page.set_input_files("#import-file", str(notes))
        page.wait_for_selector("#toast:has-text('That file is not JSON')")
        # emptied, so that choosing the same file again is a change the page hears
        assert page.eval_on_selector("#import-file", "e => e.value") == ""
        page.evaluate("document.getElementById('toast').hidden = true")
    other = tmp_path / "other.json"
    other.write_text('{"games": []}')
    page.set_input_files("#import-file", str(other))
    page.wait_for_selector("#toast:has-text('not a Doom Companion game export')")
    assert page.eval_on_selector("#import-file", "e => e.value") == ""
