"""The bundled demo played end to end: video -> readers -> tracker -> session -> page.

Two variants: with the demo's ground-truth readings standing in for the readers (always runs:
it checks the plumbing), and with the real readers when they are installed.
"""

from __future__ import annotations

import re
import statistics
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from companion.session import Hub
from companion.session.camera import Processor
from companion.session.engine import Unavailable, load_engine
from companion.store import Store
from companion.web import WebConfig, create_app

from .browser import serve, shot
from .test_cat_page import cat_engine

demo = pytest.importorskip("companion.demo", reason="the bundled demo is not on main yet")
pytest.importorskip("companion.tracker", reason="the tracker is not on main yet")
layouts = pytest.importorskip("companion.doomcat.layouts", reason="no layouts on main yet")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class TruthProcessor(Processor):
    """The demo's ground truth in place of the readers (the frame is found by its time)."""

    def __init__(self, hub: Hub) -> None:
        desc = demo.demo_description()
        self.fps, self.count = desc["fps"], desc["frames"]
        self.truth = {f.index: f for f in demo.truth_frames()}
        self.corners = np.array(desc["card"]["corners_px"], np.float32)
        self.index = 0
        super().__init__(hub, read_dice=self._dice, read_sigil=self._sigil,
                         load_layout=layouts.load_layout)

    def __call__(self, image, t):
        self.index = round(t * self.fps) % self.count
        return super().__call__(image, t)

    def _dice(self, image):
        return self.truth[self.index].dice

    def _sigil(self, image, layout, reference=None, *, hint=None):
        w, h = layout.size_mm
        mm = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        homography = cv2.getPerspectiveTransform(mm, self.corners)
        pose = SimpleNamespace(homography=homography, corners=self.corners)
        return SimpleNamespace(state=self.truth[self.index].sigil, pose=pose)


def play_demo_turn(page, url, tmp_path, processor_for):
    """Open the Doom Cat page on the demo and wait for the whole turn; returns the latencies."""
    db = tmp_path / "g.sqlite"
    machine = load_engine("machine")
    hub = Hub(Store(db), {"cat": cat_engine(), "machine": machine})
    app = create_app(WebConfig(db_path=db, source=None), hub=hub,
                     processor=processor_for(hub))
    with serve(app) as served:
        page.goto(served.url + "/", wait_until="domcontentloaded")
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_function("window.__doomLatencies.length >= 20", timeout=30_000)
        latencies = page.evaluate("window.__doomLatencies.slice()")
        shot(page, f"demo-live-{url}")
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#roll button[data-roll='0']:text('3'), "
                               "#roll button[data-roll='0']:text('5')", timeout=30_000)
        card = "svg.sigil[data-player='0'][data-card='0']"
        page.wait_for_selector(f"{card} line[data-line='2-7']", timeout=30_000)
        page.wait_for_selector(f"{card} g.candle.crossed[data-candle='4']", timeout=30_000)
        total = int(page.locator("[data-total='0']").inner_text().split()[0])
        texts = page.locator("#events li .t").all_inner_texts()
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, f"demo-cat-{url}")
        assert page.errors == []
        return latencies, total, texts, isinstance(machine, Unavailable)


def p90(values):
    """The 90th percentile (the printed spread of the latency)."""
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def test_the_demo_plays_a_cat_turn_with_ground_truth_readings(page, tmp_path):
    latencies, total, texts, _ = play_demo_turn(page, "truth", tmp_path, TruthProcessor)
    assert any(t.startswith("roll 3 5 5") for t in texts)
    assert any("line left 3 – lower 5" in t for t in texts)
    assert any("crosses candle upper 5" in t for t in texts)
    assert total > 0
    median = statistics.median(latencies)
    print(f"frame-to-page latency with ground-truth readers: median {1000 * median:.0f} ms, "
          f"p90 {1000 * p90(latencies):.0f} ms over {len(latencies)} frames")
    assert median > 0


def test_the_demo_plays_a_cat_turn_through_the_real_readers(page, tmp_path):
    """The real readers in the loop: the roll, the written digit, the line and the crossed
    candle are read from the video and the turn is scored on the page. (The readers' accuracy
    is measured by ``eval`` and ``companion.demo.check_readers``, which finds these four events
    even when only one frame in eight is read; this checks they are wired.)"""
    pytest.importorskip("vision.dice", reason="the dice reader is not on main yet")
    pytest.importorskip("vision.sigil", reason="the sigil reader is not on main yet")
    db = tmp_path / "g.sqlite"
    hub = Hub(Store(db), {"cat": cat_engine(), "machine": load_engine("machine")})
    app = create_app(WebConfig(db_path=db, source=None), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/", wait_until="domcontentloaded")
        page.wait_for_function("window.__doomLatencies.length >= 20", timeout=60_000)
        latencies = page.evaluate("window.__doomLatencies.slice()")
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        card = "svg.sigil[data-player='0'][data-card='0']"
        page.wait_for_selector(f"{card} line.ink", timeout=90_000)
        page.wait_for_selector(f"{card} g.candle.crossed[data-candle='4']", timeout=60_000)
        page.wait_for_function("Number(document.querySelector(\"[data-total='0']\")"
                               ".innerText.split(' ')[0]) > 0", timeout=10_000)
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, "demo-cat-real")
        page.goto(served.url + "/", wait_until="domcontentloaded")
        page.wait_for_selector("#dice-now .die")
        # the tracker's events say the card as the player knows it, not the hub's card id
        page.wait_for_selector("#events-now li:has-text('lower 5 on Demo witch, card 1')")
        said = page.locator("#events-now").inner_text()
        assert re.search(r"card g\d+p\d+c\d+", said) is None, said
        # the card read now: its lines, crosses and the seven top boxes (· empty, ◯ circled)
        now = page.locator("#sigils-now").inner_text()
        assert re.search(r"Demo witch, card 1 \(A\): \d+ lines?, \d+ crossed, top( (\d◯?|·)){7}$",
                         now.strip()), now
        shot(page, "demo-live-real")
        assert page.errors == []
        events = [e["text"] for e in app.extensions["doom"].live.process.events]
    assert any(t.startswith("roll settled: 3 5 5") for t in events), events
    assert any("new line left 3 – lower 5" in t for t in events), events
    assert any(t.startswith("digit 5 written in top box 1") for t in events), events
    assert any(t.startswith("candle upper 5 crossed") for t in events), events
    print(f"frame-to-page latency with the real readers: median "
          f"{1000 * statistics.median(latencies):.0f} ms, p90 {1000 * p90(latencies):.0f} ms "
          f"over {len(latencies)} frames; "
          f"tracker events: {events}")
