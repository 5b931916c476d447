"""Build the live loop from what is installed: a frame source, the readers, the trackers.

Each piece is imported when it exists; a missing one is named in the loop's ``unavailable``
map (the live page lists them) and the rest runs without it. The tracker's events go to the
game the camera feeds (:meth:`Hub.active_kind`), whose adapter turns them into game events
(``from_tracker``); a refusal by the rules shows among the page's tracker events and as that
game's warning.

Convention: frames are OpenCV BGR uint8 arrays; boxes ``[x0, y0, x1, y1]`` and points
``(x, y)`` in pixels of the frame, origin top-left; card geometry in mm on the card.
"""

from __future__ import annotations

import importlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from calibration.references import references
from companion.errors import BadInput
from companion.session.hub import CameraCard, Hub
from companion.session.live import LiveLoop, draw_dice, draw_polygon
from companion.store import StoreUnavailable
from companion.tracker.dice import point_in_polygon

RECT_PX_PER_MM = 4.0
# familiars whose powers break the card's bookkeeping (a number written and a candle showing it
# crossed each turn, one line per turn): the Raven's extra line, the Toad's wild number that
# fills no box, the Owl's candle not knocked over, the Rat's third write. The sigil reader's
# check of those counts (vision.sigil.bookkeeping) is turned off for their cards.
FAMILIARS_BREAKING_COUNTS = frozenset({"F02", "F03", "F04", "F09"})
# While the watched card is not found, the reader's costly recovery of a card whose outline a
# hand hides (vision.sigil.pose.PoseConfig.recover: 0.2-1 s CPU on a frame with card-shaped
# clutter and no card) runs on the first frame that misses it and then on every this many.
RECOVER_EVERY = 10
ROLL_AREA_COLOUR = (255, 255, 0)   # BGR: cyan
# frame seconds between tries to store camera readings the games database could not take
STORE_RETRY_S = 3.0


def _try(module: str) -> tuple[Any, str]:
    try:
        return importlib.import_module(module), ""
    except ImportError as exc:
        return None, f"not installed yet ({exc.name or exc})"


class Processor:
    """Runs the readers and trackers on each frame and routes the trackers' events.

    Parameters
    ----------
    hub : Hub
    read_dice, read_sigil : callable, optional
        Inject readers (tests); by default the installed ``vision.dice`` / ``vision.sigil``.
        ``read_sigil(image, layout, reference, *, hint)`` takes the card's last pose as
        ``hint`` (None when there is none). ``read_dice(image, *, table)`` takes the table's
        plane its readings showed (their ``table``, agreed on over frames by
        ``vision.dice.lean.TableMemory``); a reader whose readings never show one is called
        with the image alone.
    """

    def __init__(self, hub: Hub, *, read_dice: Callable[..., Any] | None = None,
                 read_sigil: Callable[..., Any] | None = None,
                 load_layout: Callable[[str], Any] | None = None) -> None:
        self.hub = hub
        self.unavailable: dict[str, str] = {}
        self.read_dice = read_dice
        if self.read_dice is None:
            mod, why = _try("vision.dice")
            self.read_dice = getattr(mod, "read_dice", None)
            if self.read_dice is None:
                self.unavailable["dice reader"] = why or "vision.dice has no read_dice"
        self.read_sigil = read_sigil
        # the reader's configurations, by (counts checked, recovery on); empty: an injected
        # reader, called as documented, without a configuration
        self.configs: dict[tuple[bool, bool], Any] = {}
        if self.read_sigil is None:
            mod, why = _try("vision.sigil")
            self.read_sigil = getattr(mod, "read_sigil", None)
            if self.read_sigil is None:
                self.unavailable["sigil reader"] = why or "vision.sigil has no read_sigil"
            elif hasattr(mod, "SigilConfig"):
                for counts in (True, False):
                    cfg = mod.SigilConfig(match_written_crossed=counts)
                    self.configs[counts, True] = cfg
                    self.configs[counts, False] = replace(cfg, pose=replace(cfg.pose,
                                                                            recover=False))
        self.load_layout = load_layout
        if self.load_layout is None:
            mod, why = _try("companion.doomcat.layouts")
            self.load_layout = getattr(mod, "load_layout", None)
            if self.load_layout is None and self.read_sigil is not None:
                self.unavailable["sigil layouts"] = why
        tracker, why = _try("companion.tracker")
        self.dice_tracker = tracker.DiceTracker() if tracker else None
        self.sigil_tracker = tracker.SigilTracker() if tracker else None
        if tracker is None:
            self.unavailable["tracker"] = why
        self.director: Any = None                     # the demo director, when it plays
        self.rectified: dict[str, np.ndarray] = {}   # card id -> last rectified card image
        self.events: list[dict[str, Any]] = []       # the last tracker events (for the page)
        # tracker events not yet taken by the games database (it was locked), oldest first,
        # each with its entry in ``events``
        self._pending: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self._retry_at = -math.inf   # frame time of the next try to feed them
        self._layouts: dict[str, Any] = {}
        self._lock = threading.Lock()
        # card id -> the card's last pose (card mm -> px): a card that has not moved is found
        # there again without the outline search, when the reader takes a hint
        self._poses: dict[str, np.ndarray] = {}
        # card id -> frames in a row the card was not found in
        self._misses: dict[str, int] = {}
        # the table's plane the dice showed over the frames, for the dice reader to judge
        # leaning dice by when too few dice of a frame show it
        lean, _ = _try("vision.dice.lean")
        self._table: Any = None if lean is None else lean.TableMemory()

    def layout(self, name: str) -> Any:
        if name not in self._layouts:
            assert self.load_layout is not None
            self._layouts[name] = self.load_layout(name)
        return self._layouts[name]

    def __call__(self, image: np.ndarray, t: float) -> tuple[dict[str, Any], np.ndarray]:
        readings: dict[str, Any] = {}
        overlay = image.copy()
        events: list[Any] = []
        if self.director is not None:
            self.director.on_frame(t)
        outlines: list[list[tuple[float, float]]] = []
        card = self.hub.camera_card()
        if card is not None and self.read_sigil is not None and self.load_layout is not None:
            readings["sigil"] = self._read_card(image, overlay, card, t, events, outlines)
        if self.read_dice is not None:
            reading = (self.read_dice(image) if self._table is None
                       else self._table.read(self.read_dice, image))
            area = roll_area_polygon(self.hub.roll_area(), image.shape[1], image.shape[0])
            # a sigil card's printed candles and markers are not dice; dice outside the roll
            # area (HP dice on the machine's part cards) are seen but not part of any roll
            seen = [d for d in reading.dice
                    if not any(point_in_polygon(d.center, poly) for poly in outlines)]
            # a value read with little confidence is marked for the player, as the tracker
            # marks it in its events
            tracking = None if self.dice_tracker is None else self.dice_tracker.config
            dice = [{**d.to_json(), "check": tracking is not None
                     and tracking.to_check(d.value, d.confidence)}
                    for d in seen if area is None or point_in_polygon(d.center, area)]
            ignored = [d.to_json() for d in seen if area is not None
                       and not point_in_polygon(d.center, area)]
            readings["dice"] = dice
            readings["ignored"] = ignored
            readings["hand"] = bool(getattr(reading, "hand", False))
            if self.dice_tracker is not None:
                events += self.dice_tracker.update(reading, t, hand=readings["hand"],
                                                   exclude=outlines, area=area)
                tracked = [d.to_json() for d in self.dice_tracker.dice()]
                readings["tracked"] = tracked
                readings["settled"] = bool(tracked) and all(
                    d["state"] == "settled" for d in tracked)
            if area is not None:
                draw_polygon(overlay, [list(p) for p in area], ROLL_AREA_COLOUR)
            draw_dice(overlay, ignored, greyed=True)
            draw_dice(overlay, dice)
        for event in events:
            doc = event.to_json()
            entry = {"text": doc.get("text", ""), "kind": doc.get("kind"),
                     "card": doc.get("card"), "check": bool(doc.get("check"))}
            self.events = [*self.events[-19:], entry]
            self._pending.append((doc, entry))
        if t >= self._retry_at:
            self._feed_pending(t)
        readings["events"] = list(self.events)
        return readings, overlay

    def _feed_pending(self, t: float) -> None:
        """Route the tracker's events to the game, in order. An event the games database
        cannot take now (locked by another program) is kept and fed again with the first
        frame ``STORE_RETRY_S`` seconds later (each try may wait for the lock's timeout,
        which the camera view should not do on every frame): the roll is not lost, and the
        page says it is waiting."""
        while self._pending:
            doc, entry = self._pending[0]
            try:
                outcome = self.hub.feed_tracker(doc)
            except StoreUnavailable as exc:
                self._mark(entry, f"not stored yet, kept until it can be: {exc}")
                self._retry_at = t + STORE_RETRY_S
                return
            self._pending.pop(0)
            self._mark(entry, outcome.reason if outcome is not None and not outcome.ok
                       else None)

    def _mark(self, entry: dict[str, Any], refused: str | None) -> None:
        """Show an event's entry with ``refused`` (None: none). The entries already published
        are never changed: a page's thread may be writing them out."""
        marked = {k: v for k, v in entry.items() if k != "refused"}
        if refused is not None:
            marked["refused"] = refused
        for i, e in enumerate(self.events):
            if e is entry:
                self.events[i] = marked
        for i, (doc, e) in enumerate(self._pending):
            if e is entry:
                self._pending[i] = (doc, marked)

    def _read_card(self, image: np.ndarray, overlay: np.ndarray, card: CameraCard,
                   t: float, events: list[Any],
                   outlines: list[list[tuple[float, float]]]) -> dict[str, Any]:
        card_id, letter = card.id, card.layout
        hint = self._poses.pop(card_id, None)
        try:
            layout = self.layout(letter)
            more = {}
            if self.configs:
                counts = self.hub.camera_familiar() not in FAMILIARS_BREAKING_COUNTS
                recover = self._misses.get(card_id, 0) % RECOVER_EVERY == 0
                more["config"] = self.configs[counts, recover]
            reading = self.read_sigil(image, layout, references(letter) or None, hint=hint,
                                      **more)
        except BadInput as exc:
            self._misses[card_id] = self._misses.get(card_id, 0) + 1
            return {"card": card_id, "name": card.name, "layout": letter, "error": str(exc)}
        self._misses.pop(card_id, None)
        state = reading.state
        pose = getattr(reading, "pose", None)
        if pose is not None and getattr(pose, "homography", None) is not None:
            self._poses[card_id] = np.asarray(pose.homography, np.float64)
        if pose is not None:
            outlines.append([(float(x), float(y)) for x, y in np.asarray(pose.corners)])
        if self.sigil_tracker is not None:
            events += self.sigil_tracker.update(card_id, state, t, name=card.name)
            state = self.sigil_tracker.state(card_id)
        if pose is not None:
            self._draw_card(overlay, pose, layout, state)
            self.rectified[card_id] = rectify(image, pose.homography, layout_size(layout))
        return {"card": card_id, "name": card.name, **state.to_json(),
                "unseen": [layout.element_name(e) for e in state.unknown]}

    @staticmethod
    def _draw_card(overlay: np.ndarray, pose: Any, layout: Any, state: Any) -> None:
        draw_polygon(overlay, np.asarray(pose.corners).tolist(), (255, 200, 80))
        centres = np.array([c.center for c in layout.candles], np.float64)
        pts = project(pose.homography, centres)
        for a, b in state.lines:
            cv2.line(overlay, tuple(int(v) for v in pts[a]), tuple(int(v) for v in pts[b]),
                     (60, 60, 255), 3, cv2.LINE_AA)
        for c in state.crossed:
            x, y = (int(v) for v in pts[c])
            for dx, dy in ((1, 1), (1, -1)):
                cv2.line(overlay, (x - 9 * dx, y - 9 * dy), (x + 9 * dx, y + 9 * dy),
                         (0, 220, 255), 3, cv2.LINE_AA)


def roll_area_polygon(area: tuple[float, float, float, float] | None, width: int,
                      height: int) -> list[tuple[float, float]] | None:
    """The roll area (fractions of the image, :meth:`Hub.roll_area`) as a pixel polygon.

    Convention: ``(x, y)`` pixels, origin top-left, corners clockwise from the top-left.

    >>> roll_area_polygon((0.0, 0.5, 0.5, 1.0), 200, 100)
    [(0.0, 50.0), (100.0, 50.0), (100.0, 100.0), (0.0, 100.0)]
    """
    if area is None:
        return None
    x0, y0, x1, y1 = area[0] * width, area[1] * height, area[2] * width, area[3] * height
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def layout_size(layout: Any) -> tuple[float, float]:
    size = getattr(layout, "size_mm", None) or layout["size_mm"]
    return float(size[0]), float(size[1])


def project(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Map card points (mm) through homography ``h`` to image pixels ``(x, y)``."""
    ones = np.ones((len(pts), 1))
    out = (np.asarray(h, np.float64) @ np.hstack([pts, ones]).T).T
    return out[:, :2] / out[:, 2:3]


def rectify(image: np.ndarray, h: np.ndarray, size_mm: tuple[float, float],
            px_per_mm: float = RECT_PX_PER_MM) -> np.ndarray:
    """The card seen straight on: ``h`` maps card mm to image px."""
    scale = np.diag([px_per_mm, px_per_mm, 1.0])
    to_rect = scale @ np.linalg.inv(np.asarray(h, np.float64))
    w, hgt = round(size_mm[0] * px_per_mm), round(size_mm[1] * px_per_mm)
    return cv2.warpPerspective(image, to_rect, (w, hgt), flags=cv2.INTER_AREA)


class SourceAdapter:
    """The live loop's view of a :class:`vision.sources.FrameSource`."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def start(self) -> None:
        self.source.start()

    def stop(self) -> None:
        self.source.stop()

    def latest(self, after: int, timeout: float) -> tuple[int, np.ndarray, float, float] | None:
        frame = self.source.next_frame(after=max(after, 0), timeout=timeout)
        if frame is None:
            return None
        return frame.seq, frame.image, frame.t, time.time()

    def status(self) -> dict[str, Any]:
        return self.source.status.to_json()


def demo_source() -> tuple[str | None, str]:
    """The bundled demo video's path, or None and the reason."""
    demo, why = _try("companion.demo")
    if demo is None:
        return None, "the bundled demo is " + why
    try:
        return str(demo.demo_source_path()), ""
    except (BadInput, OSError) as exc:
        return None, f"the bundled demo cannot be used: {exc}"


def make_live(source: str | None, hub: Hub, *, processor: Processor | None = None) -> LiveLoop:
    """The live loop for a ``--source`` spec (None: the bundled demo; "none": no camera).

    A spec that names nothing usable raises :class:`BadInput` (the command line's exit 2).
    """
    processor = processor or Processor(hub)
    unavailable = processor.unavailable
    if source == "none":
        return LiveLoop(None, processor, hub.live_bus, unavailable=unavailable,
                        placeholder=["No camera source", "live view is off for this server"])
    sources, why = _try("vision.sources")
    if sources is None:
        unavailable["camera pipeline"] = why
        return LiveLoop(None, processor, hub.live_bus, unavailable=unavailable,
                        placeholder=["Camera pipeline not installed yet",
                                     "the games can still be played by clicks"])
    demo = source is None
    if demo:
        source, why = demo_source()
        if source is None:
            unavailable["demo"] = why
            return LiveLoop(None, processor, hub.live_bus, unavailable=unavailable,
                            placeholder=["No camera source and no demo",
                                         "start with --source 0 (webcam), a file or a URL"])
    config = sources.SourceConfig(loop=demo)
    frames = sources.open_source(source, config)
    hub.demo = demo
    if demo and processor.director is None:
        from companion.demo import demo_description
        from companion.session.demo import DemoDirector
        processor.director = DemoDirector(hub, demo_description())
    return LiveLoop(SourceAdapter(frames), processor, hub.live_bus, unavailable=unavailable)
