"""The live loop: newest camera frame -> readers -> tracker -> game sessions, plus the overlay.

One thread takes the newest frame of the source (older ones are dropped by the source), runs
the available readers on it, hands the readings to the tracker, routes the tracker's events to
the current game and draws what was read over the frame for the MJPEG stream. Every part is
optional: a reader or a frame source that is not installed is reported in :meth:`status` and the
loop runs without it.

When the source stops sending frames (a camera unplugged, a stream that drops, a video at its
end) the loop publishes a notice in the frame's place, once per change of the source's state:
the last view dimmed with what happened written over it, no dice in view, the tracker's events
kept; the pages are woken so that their source panel says it. The loop picks the frames up
again when the source comes back, and ends once the source has ended or failed for good.

Convention: frames are OpenCV BGR uint8 arrays; boxes ``[x0, y0, x1, y1]`` and points
``(x, y)`` in pixels of the frame, origin top-left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import cv2
import numpy as np

from companion.session.hub import Bus

JPEG_QUALITY = 80
FINAL_STATES = ("ended", "failed", "stopped")   # a source in these sends no frame any more


class FrameSource(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def latest(self, after: int, timeout: float,
               ) -> tuple[int, np.ndarray, float, float] | None:
        """The newest frame newer than ``after``: (sequence, image, frame time ``t``, wall
        clock time it was taken from the source) or None."""
        ...
    def status(self) -> dict[str, Any]: ...


@dataclass
class LiveConfig:
    """Knobs of the live loop."""

    max_width: int = 960          # frames are shrunk to this width for the overlay stream
    jpeg_quality: int = JPEG_QUALITY
    wait_s: float = 0.5           # how long the loop waits for a new frame before re-checking


@dataclass
class LiveFrame:
    seq: int = 0
    jpeg: bytes = b""
    captured_at: float = 0.0
    published_at: float = 0.0
    readings: dict[str, Any] = field(default_factory=dict)


def placeholder_frame(lines: list[str], size: tuple[int, int] = (960, 540)) -> np.ndarray:
    """A dark frame with a few lines of text (what the stream shows without a camera)."""
    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = (38, 30, 30)
    for x in range(0, w, 40):
        cv2.line(img, (x, 0), (x, h), (48, 40, 40), 1)
    for y in range(0, h, 40):
        cv2.line(img, (0, y), (w, y), (48, 40, 40), 1)
    write_lines(img, lines, h // 2 - 20 * len(lines), (200, 200, 200))
    return img


def write_lines(img: np.ndarray, lines: list[str], top: int,
                grey: tuple[int, int, int]) -> None:
    """Write ``lines`` centred on ``img`` in place, from ``top`` down: the first large and
    orange, the others smaller in ``grey``; a line wider than the frame is shrunk to fit."""
    w = img.shape[1]
    y = top
    for i, text in enumerate(lines):
        scale = 1.0 if i == 0 else 0.6
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
        if tw > w - 20:
            scale *= (w - 20) / tw
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
        cv2.putText(img, text, (max(10, (w - tw) // 2), y), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    (150, 200, 255) if i == 0 else grey, 2, cv2.LINE_AA)
        y += th + 22


def encode_jpeg(frame: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


def notice_frame(base: np.ndarray | None, lines: list[str],
                 size: tuple[int, int] = (960, 540)) -> np.ndarray:
    """``base`` (the last view, BGR) dimmed with ``lines`` of text over it; without a base, the
    placeholder frame of ``size``. Each line is shrunk to fit the frame's width."""
    if base is None:
        return placeholder_frame(lines, size)
    img = (base.astype(np.float32) * 0.35).astype(np.uint8)
    write_lines(img, lines, img.shape[0] // 2 - 18 * len(lines), (220, 220, 220))
    return img


def source_notice(status: dict[str, Any]) -> list[str]:
    """What the camera view says about a source that sends no frames (its status JSON)."""
    state, kind = status.get("state"), status.get("kind")
    name, error = str(status.get("source") or ""), status.get("last_error")
    what = {"webcam": "Camera", "stream": "Stream", "file": "Video",
            "folder": "Image folder"}.get(str(kind), "Source")
    if state == "ended":
        lines = [f"{what} ended", name]
    elif state == "failed":
        lines = [f"{what} lost: gave up retrying", name]
    elif state == "retrying":
        lines = [f"{what} lost", name]
    elif state == "connecting":
        lines = [f"Connecting to {name}"]
    else:
        lines = [f"{what} {state}", name]
    if error:
        if name and str(error).startswith(name):
            lines.remove(name)   # the error names the source already
        lines.append(str(error))
    if state == "retrying":
        lines.append(f"retrying in {float(status.get('retry_in') or 0):.1f} s "
                     f"(attempt {status.get('attempt')})")
    return lines


def draw_dice(frame: np.ndarray, dice: list[dict[str, Any]], scale: float = 1.0, *,
              greyed: bool = False) -> None:
    """Draw dice boxes and values (DESIGN.md dice records) on ``frame`` in place; ``greyed``
    draws them grey (dice seen outside the roll area, not read into rolls). A record marked
    ``"check"`` (a value read with little confidence) is drawn yellow with a "?" after it: the
    player should look at that die.

    Convention: ``bbox`` is ``[x0, y0, x1, y1]`` in pixels of the original frame; ``scale``
    maps them to ``frame``.
    """
    for die in dice:
        x0, y0, x1, y1 = (round(v * scale) for v in die["bbox"])
        flat = die.get("value") is not None
        unsure = flat and bool(die.get("check"))
        colour = ((150, 150, 150) if greyed else (40, 230, 255) if unsure
                  else (80, 220, 80) if flat else (0, 165, 255))
        cv2.rectangle(frame, (x0, y0), (x1, y1), colour, 2, cv2.LINE_AA)
        label = f"{die['value']}?" if unsure else str(die["value"]) if flat else "?"
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.8, 2)
        cv2.rectangle(frame, (x0, y0 - th - 8), (x0 + tw + 8, y0), colour, -1)
        cv2.putText(frame, label, (x0 + 4, y0 - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                    (20, 20, 20), 2, cv2.LINE_AA)


def draw_polygon(frame: np.ndarray, points: list[list[float]], colour: tuple[int, int, int],
                 scale: float = 1.0) -> None:
    """Draw a closed outline (e.g. a card's corners, ``(x, y)`` pixels) in place."""
    pts = np.array([[p[0] * scale, p[1] * scale] for p in points], np.int32).reshape(-1, 1, 2)
    cv2.polylines(frame, [pts], True, colour, 2, cv2.LINE_AA)


class LiveLoop:
    """The capture -> read -> track -> route loop, in one thread.

    Parameters
    ----------
    source : FrameSource or None
        None runs no loop; the stream shows ``placeholder`` text instead.
    process : callable
        ``process(image, t) -> (readings, overlay)``: runs the readers and the trackers on one
        frame (``t`` its time in seconds) and routes the trackers' events; returns the JSON
        summary of what was read and the frame with the readings drawn over it.
    bus : Bus
        Woken after every published frame.
    """

    def __init__(self, source: FrameSource | None,
                 process: Callable[[np.ndarray, float], tuple[dict[str, Any], np.ndarray]],
                 bus: Bus, *,
                 config: LiveConfig | None = None,
                 placeholder: list[str] | None = None,
                 unavailable: dict[str, str] | None = None) -> None:
        self.source = source
        self.process = process
        self.bus = bus
        self.config = config or LiveConfig()
        self.unavailable = dict(unavailable or {})
        self._frame = LiveFrame()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error = ""
        self.frames = 0
        self._fps_t0 = time.monotonic()
        self.fps = 0.0
        text = placeholder or ["No camera source", "start with --source to watch the table"]
        self._placeholder = encode_jpeg(placeholder_frame(text))
        self._frame.jpeg = self._placeholder
        self._shown: np.ndarray | None = None   # the last view published (after resizing)
        # the source has ended or failed for good and its last notice is published: the frame
        # will not change any more
        self.finished = False

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        if self.source is None or self._thread is not None:
            return
        self.source.start()
        self._thread = threading.Thread(target=self._run, name="live-loop", daemon=True)
        self._thread.start()

    def halt(self) -> None:
        """Stop taking frames and wake every video stream waiting for one; returns at once
        (:meth:`stop` then waits for the loop and stops the source)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()

    def stop(self) -> None:
        self.halt()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self.source is not None:
            self.source.stop()

    def _run(self) -> None:
        seq = -1
        said: tuple[Any, ...] | None = None   # the source's status last told as a notice
        assert self.source is not None
        while not self._stop.is_set():
            got = self.source.latest(seq, self.config.wait_s)
            if got is None:
                try:
                    status = dict(self.source.status())
                except Exception as exc:
                    status = {"state": "error", "last_error": str(exc)}
                state = status.get("state")
                key = (state, status.get("attempt"), status.get("last_error"))
                if state != "live" and key != said and not self._stop.is_set():
                    said = key
                    self.notice(status)
                if state in FINAL_STATES:
                    with self._cond:   # nothing more will come: the streams may end
                        self.finished = True
                        self._cond.notify_all()
                    return
                continue
            said = None
            seq, frame, t, captured = got
            try:
                readings, overlay = self.process(frame, t)
                self.error = ""
            except Exception as exc:  # a reader bug must not stop the camera
                readings, overlay = {"error": f"{type(exc).__name__}: {exc}"}, frame
                self.error = readings["error"]
            self.publish(seq, overlay, captured, readings)

    def publish(self, seq: int, overlay: np.ndarray, captured: float,
                readings: dict[str, Any]) -> None:
        """Encode and publish one processed frame (also used by tests)."""
        h, w = overlay.shape[:2]
        if w > self.config.max_width:
            overlay = cv2.resize(overlay, (self.config.max_width,
                                           round(h * self.config.max_width / w)),
                                 interpolation=cv2.INTER_AREA)
        self._shown = overlay
        self._put(encode_jpeg(overlay, self.config.jpeg_quality), captured, readings)
        self.frames += 1
        now = time.monotonic()
        if now - self._fps_t0 >= 1.0:
            self.fps = self.frames / (now - self._fps_t0)
            self.frames, self._fps_t0 = 0, now
        self.bus.publish()

    def notice(self, status: dict[str, Any]) -> None:
        """Publish what the source's ``status`` says in the frame's place: the last view
        dimmed with the notice over it, no dice in view, the tracker's events kept (readings
        ``{"dice": [], "events": [...], "source_state": "retrying"}``)."""
        image = notice_frame(self._shown, source_notice(status))
        self.fps, self.frames, self._fps_t0 = 0.0, 0, time.monotonic()   # no frames now
        events = self.frame().readings.get("events", [])
        self._put(encode_jpeg(image, self.config.jpeg_quality), time.time(),
                  {"dice": [], "events": list(events), "source_state": status.get("state")})
        self.bus.publish()

    def _put(self, jpeg: bytes, captured: float, readings: dict[str, Any]) -> None:
        """Make ``jpeg`` the frame every reader of the loop gets next, and wake them."""
        with self._cond:
            self._frame = LiveFrame(seq=self._frame.seq + 1, jpeg=jpeg, captured_at=captured,
                                    published_at=time.time(), readings=readings)
            self._cond.notify_all()

    # -- readers of the loop's output ----------------------------------------------------
    def frame(self) -> LiveFrame:
        with self._cond:
            return self._frame

    def wait_frame(self, after: int, timeout: float) -> LiveFrame:
        with self._cond:
            self._cond.wait_for(lambda: self._frame.seq != after or self._stop.is_set()
                                or self.finished, timeout)
            return self._frame

    def status(self) -> dict[str, Any]:
        frame = self.frame()
        if self.source is None:
            source = {"state": "none", "detail": "no camera source"}
        else:
            try:
                source = dict(self.source.status())
            except Exception as exc:
                source = {"state": "error", "detail": str(exc)}
        return {"source": source, "fps": round(self.fps, 1), "error": self.error,
                "unavailable": self.unavailable, "frame": frame.seq,
                "captured_at": frame.captured_at, "readings": frame.readings}
