"""Frame sources: webcam, video file, folder of images, network stream; one capture thread each.

A source is opened from the string the user gives to ``serve --source``:

=====================================  ==========  ===============================================
text                                   kind        how it is read
=====================================  ==========  ===============================================
``"0"``, ``"1"``                       webcam      ``cv2.VideoCapture(index)`` (V4L2 on Linux)
``table.mp4`` (avi, webm, mkv, mov)    file        ``cv2.VideoCapture(path, cv2.CAP_FFMPEG)``
``shots/`` (a folder)                  folder      images in natural name order, via
                                                   :func:`vision.imageio.read_image`
``one.png`` (an image file)            folder      that single image
``http://phone:8080/video``, rtsp://   stream      ``cv2.VideoCapture(url, cv2.CAP_FFMPEG)`` with
                                                   open/read timeouts (MJPEG over HTTP, RTSP, ...)
=====================================  ==========  ===============================================

API for the rest of the program (the web app and the ``serve`` command)::

    from vision.sources import SourceConfig, open_source

    src = open_source("table.mp4", SourceConfig(loop=True))   # BadInput for a bad file / folder
    src.start()
    frame = src.next_frame(after=0, timeout=1.0)   # newest Frame newer than seq 0, or None
    while frame is not None and running:
        reading = read_dice(frame.image)           # readers always get the newest frame ...
        frame = src.next_frame(after=frame.seq, timeout=1.0)   # ... stale ones are dropped
    src.status.to_json()   # {"state": "live", "fps": 9.9, "dropped": 3, "last_error": null, ...}
    src.stop()             # or use ``with open_source(...) as src:`` (starts and stops it)

- **One capture thread per source** decodes frames and keeps only the newest one. A reader takes
  it with :meth:`FrameSource.latest` (no wait) or :meth:`FrameSource.next_frame` (waits for a
  frame newer than the one it has). A frame replaced before any reader took it counts in
  ``status.dropped``. With ``SourceConfig(realtime=False)`` files and folders are read in
  lock-step instead (the next frame is decoded only once the current one was taken: no frame is
  dropped; for tests and offline evaluation).
- **Files and folders** are played at their own frame rate (``SourceConfig.fps`` overrides it;
  folders default to 10 fps) and loop when ``SourceConfig(loop=True)`` (the bundled demo loops);
  otherwise the source ends (state ``"ended"``) after the last frame. A file that ends before
  the frame count its header gives (cut off, or damaged at the end) plays what it holds and
  says so in ``last_error``.
- **Failures** (a camera unplugged, a stream that disconnects or refuses, a file that cannot be
  decoded any more) are retried with exponential backoff: ``backoff_initial * backoff_factor **
  (attempt - 1)`` seconds, at most ``backoff_max``; ``SourceConfig.max_retries`` failed attempts
  in a row (``None``: never give up) end in state ``"failed"``. An exception the capture does
  not expect (a frame :func:`vision.imageio.as_bgr` cannot convert, a bug in a reader) fails
  the attempt the same way, and ``last_error`` names it: its type, its message, what the
  capture was doing and where it was raised.
- **Status** (:class:`SourceStatus`, frozen, ``to_json()``): ``state`` is one of ``connecting``,
  ``live``, ``retrying`` (with ``last_error``, ``attempt`` and ``retry_in`` seconds), ``ended``,
  ``failed``, ``stopped``; plus ``fps`` (measured over the last frames), ``frames`` delivered,
  ``dropped``, ``bad_frames`` (unreadable images skipped in a folder) and ``loops``. Wait on it
  with :meth:`FrameSource.wait_for` or get every change with :meth:`FrameSource.add_listener`.
- **Shutdown**: :meth:`FrameSource.stop` wakes every waiter and the capture thread, which releases
  the capture; it is safe to call twice.

Frame times (``Frame.t``, seconds) are what the tracker is fed: for files and folders the media
time (frame index / fps, continuing across loops, so it never goes back); for webcams and streams
the time since the source started (``time.monotonic``).

Convention: images are OpenCV arrays, BGR ``uint8``, shape ``(H, W, 3)``.
"""

from __future__ import annotations

import os
import re
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import cv2
import numpy as np

from companion.errors import BadInput
from vision.imageio import InvalidImage, as_bgr, opencv_quiet, read_image

__all__ = [
    "IMAGE_EXTENSIONS", "STATES", "VIDEO_EXTENSIONS", "Frame", "FrameSource", "SourceConfig",
    "SourceSpec", "SourceStatus", "open_source", "parse_source",
]

VIDEO_EXTENSIONS = (".mp4", ".avi", ".webm", ".mkv", ".mov", ".m4v", ".mjpeg", ".mjpg")
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
STREAM_SCHEMES = ("http", "https", "rtsp", "rtsps", "rtmp", "udp", "tcp", "srt")
STATES = ("connecting", "live", "retrying", "ended", "failed", "stopped")

# FFmpeg's own log (a "[tcp @ 0x...] Connection ... refused" line at every retry of a stream)
# is not OpenCV's, which opencv_quiet() silences: this variable quietens it, read when OpenCV
# first uses FFmpeg. The source's status says what is wrong, in one line of its own. A level
# the user set is kept (e.g. OPENCV_FFMPEG_LOGLEVEL=32 to see FFmpeg's messages).
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")


@dataclass(frozen=True)
class SourceConfig:
    """How a source is played and retried. Every threshold has a default.

    Parameters
    ----------
    loop : bool
        Files and folders start again after their last frame (the demo loops).
    fps : float or None
        Playback rate of files and folders; ``None`` takes the file's own rate (folders: 10).
    realtime : bool
        ``True``: files and folders are paced at ``fps`` and stale frames are dropped, as with a
        camera. ``False``: lock-step, the next frame is decoded once the current one was taken.
    backoff_initial, backoff_factor, backoff_max : float
        Wait before retry attempt ``n``: ``min(backoff_max, backoff_initial * factor**(n-1))``.
    max_retries : int or None
        Failed attempts in a row before giving up (state ``"failed"``); ``None`` never gives up.
    open_timeout, read_timeout : float
        Seconds FFmpeg may block opening or reading a network stream.
    fps_window : int
        Frames over which the delivered frame rate is measured.
    """

    loop: bool = False
    fps: float | None = None
    realtime: bool = True
    backoff_initial: float = 0.5
    backoff_factor: float = 2.0
    backoff_max: float = 10.0
    max_retries: int | None = None
    open_timeout: float = 5.0
    read_timeout: float = 5.0
    fps_window: int = 30
    folder_fps: float = 10.0

    def __post_init__(self) -> None:
        if self.fps is not None and not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if not self.backoff_initial > 0 or self.backoff_factor < 1 or self.backoff_max <= 0:
            raise ValueError("backoff needs initial > 0, factor >= 1, max > 0")
        if self.max_retries is not None and self.max_retries < 1:
            raise ValueError(f"max_retries must be 1 or more (or None), got {self.max_retries}")
        if self.fps_window < 2 or not self.folder_fps > 0:
            raise ValueError("fps_window must be >= 2 and folder_fps positive")

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry ``attempt`` (1-based)."""
        return min(self.backoff_max,
                   self.backoff_initial * self.backoff_factor ** max(0, attempt - 1))


@dataclass(frozen=True)
class SourceSpec:
    """What a source string names. ``target`` is the webcam index, path or URL."""

    kind: str  # "webcam" | "file" | "folder" | "stream"
    target: int | str
    name: str  # for display: URL credentials are masked
    files: tuple[str, ...] = ()  # folder: the images in play order

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name}


@dataclass(frozen=True, eq=False)
class Frame:
    """One decoded frame.

    ``seq`` counts frames delivered by the source (1, 2, ...); ``index`` is the frame's index in
    its file or folder (live sources: ``seq - 1``); ``t`` its time in seconds (see module notes);
    ``loop`` how many times a file or folder had restarted when it was read.
    """

    image: np.ndarray
    seq: int
    index: int
    t: float
    loop: int = 0


@dataclass(frozen=True)
class SourceStatus:
    """What the page shows about a source. ``retry_in`` and ``attempt`` matter when retrying."""

    source: str
    kind: str
    state: str = "connecting"
    fps: float = 0.0
    frames: int = 0
    dropped: int = 0
    bad_frames: int = 0
    loops: int = 0
    attempt: int = 0
    retry_in: float | None = None
    last_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "kind": self.kind, "state": self.state,
                "fps": round(self.fps, 2), "frames": self.frames, "dropped": self.dropped,
                "bad_frames": self.bad_frames, "loops": self.loops, "attempt": self.attempt,
                "retry_in": None if self.retry_in is None else round(self.retry_in, 3),
                "last_error": self.last_error}


class SourceError(Exception):
    """A failure of the capture that is retried (not the user's input: see ``BadInput``)."""


def _natural_key(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", name)]


def _mask_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def parse_source(text: str) -> SourceSpec:
    """Say what a ``--source`` string names; raise :class:`BadInput` naming what is wrong.

    Examples
    --------
    >>> parse_source("0").kind
    'webcam'
    >>> parse_source("rtsp://user:secret@10.0.0.5/live").name
    'rtsp://user:***@10.0.0.5/live'
    """
    if not isinstance(text, str) or not text.strip():
        raise BadInput("--source: empty; give a webcam index, a video file, a folder or a URL")
    text = text.strip()
    if text.isdigit():
        return SourceSpec("webcam", int(text), f"webcam {int(text)}")
    scheme = urlsplit(text).scheme.lower()
    if scheme in STREAM_SCHEMES:
        if not urlsplit(text).netloc:
            raise BadInput(f"{_mask_url(text)}: a stream URL needs a host")
        return SourceSpec("stream", text, _mask_url(text))
    if "://" in text:
        raise BadInput(f"{text}: unsupported URL scheme {scheme!r} "
                       f"(expected one of {', '.join(STREAM_SCHEMES)})")
    path = Path(text).expanduser()
    if path.is_dir():
        files = sorted((p for p in path.iterdir()
                        if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS),
                       key=lambda p: _natural_key(p.name))
        if not files:
            raise BadInput(f"{path}: folder holds no images ({', '.join(IMAGE_EXTENSIONS)})")
        return SourceSpec("folder", str(path), str(path), tuple(str(p) for p in files))
    if path.is_file():
        if path.suffix.lower() in IMAGE_EXTENSIONS:
            return SourceSpec("folder", str(path), str(path), (str(path),))
        return SourceSpec("file", str(path), str(path))
    raise BadInput(f"{text}: no such file or folder (and not a webcam index or a stream URL)")


class _Reader:
    """An opened capture: ``read()`` returns ``(image, index)``, ``None`` at the end."""

    fps: float | None = None

    def read(self) -> tuple[np.ndarray, int] | None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _CaptureReader(_Reader):
    def __init__(self, cap: cv2.VideoCapture, *, timestamps: bool) -> None:
        self.cap = cap
        self.index = 0
        fps = cap.get(cv2.CAP_PROP_FPS) if timestamps else 0.0
        self.fps = fps if 0 < fps < 1000 else None
        # a file: the frame count its header gives (0: unknown), to tell a cut file's end
        count = cap.get(cv2.CAP_PROP_FRAME_COUNT) if timestamps else 0.0
        self.expected = int(count) if 0 < count < 1e9 else 0

    def read(self) -> tuple[np.ndarray, int] | None:
        ok, image = self.cap.read()
        if not ok or image is None or image.size == 0:
            return None
        self.index += 1
        return as_bgr(image), self.index - 1

    def close(self) -> None:
        self.cap.release()


def _ends_early(name: str, decoded: int, expected: int) -> str | None:
    """What to say of a video file whose pass decoded ``decoded`` frames of the ``expected``
    its header gives, or None. Some containers only estimate their count (duration times
    rate): a frame or two short, or 2%, is taken as the end."""
    if expected <= 0 or decoded + max(2, expected // 50) >= expected:
        return None
    return (f"{name}: the video ends early: frame {decoded + 1} of the {expected} its header "
            f"gives could not be decoded (truncated or damaged file)")


class _FolderReader(_Reader):
    def __init__(self, files: tuple[str, ...], on_bad: Callable[[str], None]) -> None:
        self.files = files
        self.position = 0
        self.on_bad = on_bad

    def read(self) -> tuple[np.ndarray, int] | None:
        while self.position < len(self.files):
            i = self.position
            self.position += 1
            try:
                return read_image(self.files[i]), i
            except InvalidImage as exc:
                self.on_bad(str(exc))
        return None


def _open_capture(spec: SourceSpec, config: SourceConfig) -> cv2.VideoCapture:
    """Open the capture, or raise :class:`SourceError` saying why in one line. OpenCV's own
    log is silenced meanwhile: it would print its warnings about a camera index or a stream
    it cannot open at every retry."""
    with opencv_quiet():
        return _open_capture_quietly(spec, config)


def _open_capture_quietly(spec: SourceSpec, config: SourceConfig) -> cv2.VideoCapture:
    if spec.kind == "webcam":
        cap = cv2.VideoCapture(int(spec.target))
    elif spec.kind == "stream":
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(config.open_timeout * 1000),
                  cv2.CAP_PROP_READ_TIMEOUT_MSEC, int(config.read_timeout * 1000)]
        cap = cv2.VideoCapture(str(spec.target), cv2.CAP_FFMPEG, params)
    else:
        if not Path(str(spec.target)).is_file():
            raise SourceError(f"{spec.name}: no such file (moved or deleted?)")
        cap = cv2.VideoCapture(str(spec.target), cv2.CAP_FFMPEG)
    if not cap.isOpened():
        cap.release()
        what = {"webcam": "cannot open the camera", "stream": "cannot connect to the stream",
                "file": "cannot open the video (corrupt, or a format FFmpeg cannot decode)"}
        raise SourceError(f"{spec.name}: {what.get(spec.kind, 'cannot open')}")
    return cap


def _unexpected(name: str, doing: str, exc: Exception) -> str:
    """One line for an exception the capture did not expect: the source, what it was doing,
    the exception's type and message, and the innermost place it was raised (file:line in
    function), e.g. ``webcam 0: unexpected error while reading frame 3: InvalidImage: ...
    (at imageio.py:53 in as_bgr)``."""
    message = " ".join(str(exc).split())
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return f"{name}: unexpected error while {doing}: {what}{where}"


def _probe_file(spec: SourceSpec) -> None:
    """Open a video file and decode its first frame; raise :class:`BadInput` when that fails."""
    with opencv_quiet():  # the BadInput line below says what is wrong
        cap = cv2.VideoCapture(str(spec.target), cv2.CAP_FFMPEG)
        try:
            ok = cap.isOpened()
            if ok:
                ok, image = cap.read()
                ok = ok and image is not None and image.size > 0
        finally:
            cap.release()
    if not ok:
        raise BadInput(f"{spec.name}: not a video OpenCV can decode (corrupt, empty, or an "
                       f"unsupported format; expected {', '.join(VIDEO_EXTENSIONS)})")


class FrameSource:
    """A frame source with its capture thread. Make one with :func:`open_source`.

    Thread safety: every public method may be called from any thread.
    """

    def __init__(self, spec: SourceSpec, config: SourceConfig | None = None) -> None:
        self.spec = spec
        self.config = config or SourceConfig()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._frame: Frame | None = None
        self._taken = True
        self._status = SourceStatus(source=spec.name, kind=spec.kind)
        self._listeners: list[Callable[[SourceStatus], None]] = []
        self._times: deque[float] = deque(maxlen=self.config.fps_window)
        self._thread: threading.Thread | None = None
        self._seq = 0

    # ----------------------------------------------------------------- public API
    @property
    def status(self) -> SourceStatus:
        with self._cond:
            return self._status

    def start(self) -> FrameSource:
        """Start the capture thread (once); return ``self``."""
        with self._cond:
            if self._thread is not None:
                return self
            self._thread = threading.Thread(target=self._run, name=f"source {self.spec.name}",
                                            daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the capture thread and release the capture; wake every waiter."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._set_status(state="stopped", retry_in=None)

    def __enter__(self) -> FrameSource:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def latest(self) -> Frame | None:
        """The newest frame (``None`` before the first); marks it taken."""
        with self._cond:
            if self._frame is not None:
                self._taken = True
                self._cond.notify_all()
            return self._frame

    def next_frame(self, after: int = 0, timeout: float | None = None) -> Frame | None:
        """Wait for a frame with ``seq > after`` and return the newest; ``None`` on timeout,
        or once the source is stopped, ended or failed with nothing newer."""
        with self._cond:
            self._cond.wait_for(
                lambda: (self._frame is not None and self._frame.seq > after)
                or self._stop.is_set() or self._status.state in ("ended", "failed", "stopped"),
                timeout)
            frame = self._frame
            if frame is None or frame.seq <= after:
                return None
            self._taken = True
            self._cond.notify_all()
            return frame

    def wait_for(self, predicate: Callable[[SourceStatus], bool],
                 timeout: float | None = None) -> bool:
        """Wait until ``predicate(status)`` holds; return whether it did before ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self._status), timeout)

    def add_listener(self, listener: Callable[[SourceStatus], None]) -> None:
        """Call ``listener(status)`` on every status change (from the capture thread: be quick)."""
        with self._cond:
            self._listeners.append(listener)

    # ----------------------------------------------------------------- capture thread
    def _set_status(self, **changes: Any) -> None:
        with self._cond:
            if self._status.state == "stopped" and changes.get("state") != "stopped":
                changes.pop("state", None)
            new = replace(self._status, **changes)
            if new == self._status:
                return
            self._status = new
            listeners = list(self._listeners)
            self._cond.notify_all()
        for listener in listeners:
            listener(new)

    def _bad_frame(self, message: str) -> None:
        self._set_status(bad_frames=self._status.bad_frames + 1, last_error=message)

    def _open(self) -> _Reader:
        if self.spec.kind == "folder":
            return _FolderReader(self.spec.files, self._bad_frame)
        cap = _open_capture(self.spec, self.config)
        return _CaptureReader(cap, timestamps=self.spec.kind == "file")

    def _publish(self, image: np.ndarray, index: int, t: float, loop: int) -> None:
        now = time.monotonic()
        with self._cond:
            self._seq += 1
            dropped = self._status.dropped + (0 if self._taken else 1)
            self._frame = Frame(image=image, seq=self._seq, index=index, t=t, loop=loop)
            self._taken = False
            self._times.append(now)
            span = self._times[-1] - self._times[0]
            fps = (len(self._times) - 1) / span if span > 0 else 0.0
        self._set_status(state="live", frames=self._seq, dropped=dropped, fps=fps, attempt=0,
                         retry_in=None)

    def _wait_taken(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._taken or self._stop.is_set())

    def _frames(self, reader: _Reader) -> Iterator[tuple[np.ndarray, int]]:
        while not self._stop.is_set():
            item = reader.read()
            if item is None:
                return
            yield item

    def _run(self) -> None:
        attempt = 0
        loop = 0
        media_offset = 0.0  # media time at the start of the current pass (files / folders)
        started = time.monotonic()
        offline = self.spec.kind in ("file", "folder")
        while not self._stop.is_set():
            if attempt == 0 and self._seq == 0:
                self._set_status(state="connecting")
            count = 0
            span = 0   # the pass's length in frames: the last delivered index + 1 (a folder's
            # skipped images keep their places, so the next pass starts after them)
            fps = self.config.fps or self.config.folder_fps
            error: str | None = None
            reader: _Reader | None = None
            try:
                reader = self._open()
                fps = self.config.fps or reader.fps or self.config.folder_fps
                period = 1.0 / fps
                due = time.monotonic()
                for image, index in self._frames(reader):
                    t = (media_offset + index * period if offline
                         else time.monotonic() - started)
                    self._publish(image, index if offline else self._seq, t, loop)
                    count += 1
                    span = index + 1
                    attempt = 0
                    if offline and not self.config.realtime:
                        self._wait_taken()
                    elif offline:
                        due += period
                        delay = due - time.monotonic()
                        if delay < -period:  # fell behind (slow decode): don't burst
                            due = time.monotonic()
                        elif delay > 0 and self._stop.wait(delay):
                            break
            except SourceError as exc:
                error = str(exc)
            except Exception as exc:  # a bug in a reader, a frame as_bgr cannot convert, ...
                # fails this attempt like a camera that drops out, instead of ending the
                # thread while the status still says "live"
                doing = "opening" if reader is None else f"reading frame {count + 1}"
                error = _unexpected(self.spec.name, doing, exc)
            finally:
                if reader is not None:
                    try:
                        reader.close()
                    except Exception as exc:
                        error = error or _unexpected(self.spec.name, "closing", exc)
            if self._stop.is_set():
                break
            if offline:  # media time goes on: across a loop, and across a retry
                media_offset += span / fps
            if error is None and count > 0 and offline:  # the pass came to its end
                short = _ends_early(self.spec.name, count, getattr(reader, "expected", 0))
                said = {"last_error": short} if short else {}
                if not self.config.loop:
                    self._set_status(state="ended", retry_in=None, fps=0.0, **said)
                    break
                loop += 1
                self._set_status(loops=loop, **said)
                continue
            if error is None:  # no frame at all, or a camera or stream that stopped sending
                if offline and self.spec.kind == "folder":
                    error = f"{self.spec.name}: no image in the folder could be read"
                elif offline:
                    error = f"{self.spec.name}: no frame could be decoded"
                elif count > 0:
                    error = f"{self.spec.name}: the stream ended or disconnected"
                else:
                    error = f"{self.spec.name}: opened, but no frame could be read"
            attempt += 1
            if self.config.max_retries is not None and attempt > self.config.max_retries:
                self._set_status(state="failed", last_error=error, attempt=attempt,
                                 retry_in=None)
                break
            delay = self.config.backoff(attempt)
            with self._cond:
                self._times.clear()
            self._set_status(state="retrying", last_error=error, attempt=attempt,
                             retry_in=delay, fps=0.0)
            if self._stop.wait(delay):
                break
        if self._stop.is_set():
            self._set_status(state="stopped", retry_in=None)


def open_source(text: str, config: SourceConfig | None = None) -> FrameSource:
    """Open the source a ``--source`` string names (not started: call ``start()``).

    A missing path, an empty folder, a video file whose first frame cannot be decoded or an
    image file that cannot be read raise :class:`companion.errors.BadInput` at once; a webcam
    or stream that cannot be reached is not an input error: it is retried with backoff once
    started, and its status says why.
    """
    spec = parse_source(text)
    if spec.kind == "file":
        _probe_file(spec)
    elif spec.kind == "folder" and Path(str(spec.target)).is_file():
        read_image(spec.target)  # one image, named by the user: InvalidImage says what is wrong
    return FrameSource(spec, config)

