from __future__ import annotations

import itertools
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.errors import BadInput
from vision.sources import (
    FrameSource,
    SourceConfig,
    SourceStatus,
    open_source,
    parse_source,
)

W, H = 64, 48
N = 12
WAIT = 20.0  # generous timeout for every wait: the machine is shared


def _level(i: int) -> int:
    return 20 + 15 * i


def _frame(i: int) -> np.ndarray:
    image = np.full((H, W, 3), _level(i), np.uint8)
    image[:, :, 2] = 200  # red channel constant: proves BGR order survives
    return image


def _index_of(image: np.ndarray) -> int:
    return round((float(image[:, :, 0].mean()) - 20) / 15)


def _write_video(path: Path, fourcc: str, n: int = N, fps: float = 10.0) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), fps, (W, H))
    assert writer.isOpened(), f"OpenCV cannot write {fourcc} here"
    for i in range(n):
        writer.write(_frame(i % N))
    writer.release()
    return path


def _drain(src: FrameSource, limit: int) -> list:
    frames, seq = [], 0
    while len(frames) < limit:
        frame = src.next_frame(after=seq, timeout=WAIT)
        if frame is None:
            break
        frames.append(frame)
        seq = frame.seq
    return frames


# ---------------------------------------------------------------- parsing
@pytest.mark.parametrize(("text", "kind", "name"), [
    ("0", "webcam", "webcam 0"),
    (" 2 ", "webcam", "webcam 2"),
    ("http://192.168.1.20:8080/video", "stream", "http://192.168.1.20:8080/video"),
    ("rtsp://admin:hunter2@10.0.0.5:554/live", "stream", "rtsp://admin:***@10.0.0.5:554/live"),
    ("HTTPS://cam.local/mjpg", "stream", "HTTPS://cam.local/mjpg"),
])
def test_parse_source_kinds(text, kind, name):
    spec = parse_source(text)
    assert (spec.kind, spec.name) == (kind, name)


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("ftp://host/file.mp4", "unsupported URL scheme"),
    ("http://", "needs a host"),
    ("no/such/video.mp4", "no such file or folder"),
])
def test_parse_source_refuses_bad_input(text, message):
    with pytest.raises(BadInput, match=message):
        parse_source(text)


def test_folder_is_played_in_natural_name_order(tmp_path):
    for name in ("frame10.png", "frame2.png", "frame1.png", "notes.txt"):
        (tmp_path / name).write_bytes(b"x")
    spec = parse_source(str(tmp_path))
    assert spec.kind == "folder"
    assert [Path(f).name for f in spec.files] == ["frame1.png", "frame2.png", "frame10.png"]


def test_empty_folder_is_bad_input(tmp_path):
    (tmp_path / "readme.txt").write_text("no images here")
    with pytest.raises(BadInput, match="holds no images"):
        parse_source(str(tmp_path))


@pytest.mark.parametrize("content", [b"", b"this is not a video at all" * 100,
                                     b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 500])
def test_corrupt_video_file_is_bad_input_naming_the_file(tmp_path, content):
    path = tmp_path / "broken.mp4"
    path.write_bytes(content)
    with pytest.raises(BadInput, match=r"broken\.mp4: not a video"):
        open_source(str(path))


@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty file"),
    (b"this is not an image", "not an image"),
    (b"\x89PNG\r\n\x1a\n garbage", "photo.png: truncated image file"),
])
def test_an_image_file_that_cannot_be_read_is_bad_input_at_once(tmp_path, content, message):
    """As a video file whose first frame cannot be decoded: one image that will never be read
    is the user's mistake, not a capture to retry for ever ("no image in the folder could be
    read" on the dashboard, of a file that is no folder)."""
    path = tmp_path / "photo.png"
    path.write_bytes(content)
    with pytest.raises(BadInput, match=message):
        open_source(str(path))
    cv2.imwrite(str(path), _frame(1))
    with open_source(str(path), SourceConfig(realtime=False)) as src:
        assert _index_of(src.next_frame(timeout=WAIT).image) == 1


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"fps": 0}, "fps"), ({"backoff_initial": 0}, "backoff"), ({"backoff_factor": 0.5}, "backoff"),
    ({"max_retries": 0}, "max_retries"), ({"fps_window": 1}, "fps_window"),
])
def test_config_refuses_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SourceConfig(**kwargs)


def test_backoff_grows_exponentially_up_to_the_cap():
    config = SourceConfig(backoff_initial=0.5, backoff_factor=2.0, backoff_max=3.0)
    assert [config.backoff(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


# ---------------------------------------------------------------- video files
@pytest.mark.parametrize(("suffix", "fourcc"), [("mp4", "mp4v"), ("avi", "MJPG"),
                                                ("webm", "VP80")])
def test_video_file_delivers_every_frame_in_lockstep(tmp_path, suffix, fourcc):
    path = _write_video(tmp_path / f"clip.{suffix}", fourcc)
    with open_source(str(path), SourceConfig(realtime=False)) as src:
        frames = _drain(src, N + 5)
        assert src.wait_for(lambda s: s.state == "ended", WAIT)
        status = src.status
    assert [f.index for f in frames] == list(range(N))
    assert [_index_of(f.image) for f in frames] == list(range(N))
    assert all(f.image.shape == (H, W, 3) and f.image.dtype == np.uint8 for f in frames)
    assert abs(float(frames[0].image[:, :, 2].mean()) - 200) < 8
    assert [f.t for f in frames] == pytest.approx([i / 10.0 for i in range(N)])
    assert (status.frames, status.dropped, status.kind) == (N, 0, "file")
    assert status.state == "ended" and status.to_json()["state"] == "ended"
    assert status.last_error is None   # a whole file is not said to end early


@pytest.mark.parametrize("loop", [False, True])
def test_a_truncated_video_plays_what_it_holds_and_says_it_ends_early(tmp_path, loop):
    full = _write_video(tmp_path / "full.avi", "MJPG", n=40)
    cut = tmp_path / "cut.avi"
    cut.write_bytes(full.read_bytes()[:full.stat().st_size // 2])   # a copy cut off midway
    with open_source(str(full), SourceConfig(realtime=False)) as src:
        assert len(_drain(src, 50)) == 40
        assert src.wait_for(lambda s: s.state == "ended", WAIT)
        assert src.status.last_error is None
    with open_source(str(cut), SourceConfig(realtime=False, loop=loop)) as src:
        frames = _drain(src, 25 if loop else 50)
        if not loop:
            assert src.wait_for(lambda s: s.state == "ended", WAIT)
        assert src.wait_for(lambda s: s.last_error is not None, WAIT)
        status = src.status
    decoded = max(f.index for f in frames) + 1
    assert 5 < decoded < 40
    assert status.last_error == (f"{cut}: the video ends early: frame {decoded + 1} of the 40 "
                                 "its header gives could not be decoded (truncated or damaged "
                                 "file)")


def test_realtime_source_keeps_only_the_newest_frame(tmp_path):
    path = _write_video(tmp_path / "clip.avi", "MJPG")
    seen: list[SourceStatus] = []
    src = open_source(str(path), SourceConfig(fps=1000.0))
    src.add_listener(seen.append)
    with src:
        assert src.wait_for(lambda s: s.state == "ended", WAIT)
        frame = src.latest()
        status = src.status
    assert frame is not None and frame.index == N - 1 and _index_of(frame.image) == N - 1
    assert status.frames == N
    assert status.dropped == N - 1  # nobody read them: every frame but the last went stale
    assert max(s.fps for s in seen if s.state == "live") > 0
    assert status.fps == 0.0  # ended: no frame rate to show


def test_looping_file_restarts_with_time_going_forward(tmp_path):
    path = _write_video(tmp_path / "clip.mp4", "mp4v", n=5)
    with open_source(str(path), SourceConfig(loop=True, realtime=False)) as src:
        frames = _drain(src, 13)
        assert src.status.loops >= 2
    assert [f.index for f in frames] == [0, 1, 2, 3, 4] * 2 + [0, 1, 2]
    assert [f.loop for f in frames] == [0] * 5 + [1] * 5 + [2] * 3
    times = [f.t for f in frames]
    assert all(b > a for a, b in itertools.pairwise(times))


# ---------------------------------------------------------------- folders
def test_folder_of_pngs_skips_a_corrupt_image_and_says_so(tmp_path):
    for i in range(4):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), _frame(i))
    (tmp_path / "f2.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")  # corrupt the third
    with open_source(str(tmp_path), SourceConfig(realtime=False)) as src:
        frames = _drain(src, 10)
        assert src.wait_for(lambda s: s.state == "ended", WAIT)
        status = src.status
    assert [f.index for f in frames] == [0, 1, 3]
    assert [_index_of(f.image) for f in frames] == [0, 1, 3]
    assert status.bad_frames == 1 and "f2.png" in (status.last_error or "")


def test_a_looping_folder_with_a_skipped_image_keeps_its_time_going_forward(tmp_path):
    # f2 is skipped (corrupt): its place still takes its frame's time, so the next pass does
    # not start at the time of this pass's last frame
    for i in range(4):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), _frame(i))
    (tmp_path / "f2.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    with open_source(str(tmp_path), SourceConfig(loop=True, realtime=False, fps=10.0)) as src:
        frames = _drain(src, 7)
    assert [f.index for f in frames] == [0, 1, 3, 0, 1, 3, 0]
    times = [f.t for f in frames]
    assert all(b > a for a, b in itertools.pairwise(times)), times
    assert times[3] == pytest.approx(0.4)   # the second pass starts after the four places


def test_folder_of_only_corrupt_images_retries_then_fails(tmp_path):
    (tmp_path / "a.png").write_bytes(b"not a png")
    config = SourceConfig(backoff_initial=0.001, max_retries=2)
    with open_source(str(tmp_path), config) as src:
        assert src.wait_for(lambda s: s.state == "failed", WAIT)
        status = src.status
    assert status.attempt == 3 and "no image in the folder could be read" in status.last_error


# ---------------------------------------------------------------- threads and shutdown
def test_stop_wakes_a_waiting_reader_and_ends_the_thread(tmp_path):
    path = _write_video(tmp_path / "clip.avi", "MJPG")
    src = open_source(str(path), SourceConfig(realtime=False)).start()
    first = src.next_frame(timeout=WAIT)
    assert first is not None
    returned = threading.Event()
    result: list = []

    def reader() -> None:
        result.append(src.next_frame(after=10_000, timeout=WAIT))
        returned.set()

    threading.Thread(target=reader, daemon=True).start()
    src.stop()
    assert returned.wait(WAIT) and result == [None]
    assert src.status.state == "stopped"
    assert src._thread is not None and not src._thread.is_alive()
    src.stop()  # twice is fine


def test_unreachable_webcam_is_retried_then_fails(tmp_path):
    config = SourceConfig(backoff_initial=0.001, max_retries=2)
    with open_source("97", config) as src:
        assert src.wait_for(lambda s: s.state == "failed", WAIT)
        status = src.status
    assert status.kind == "webcam" and "cannot open the camera" in status.last_error


# ---------------------------------------------------------------- MJPEG over HTTP
class _MjpegServer:
    """A tiny MJPEG-over-HTTP camera on 127.0.0.1 (what phone camera apps serve)."""

    def __init__(self, port: int = 0) -> None:
        self.halt = threading.Event()
        self.sent = 0
        jpegs = [cv2.imencode(".jpg", _frame(i))[1].tobytes() for i in range(N)]
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                i = 0
                try:
                    while not owner.halt.is_set():
                        jpeg = jpegs[i % N]
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n"
                                         b"Content-Length: %d\r\n\r\n" % len(jpeg)
                                         + jpeg + b"\r\n")
                        owner.sent += 1
                        i += 1
                        owner.halt.wait(0.02)  # the camera's frame period
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.halt.set()
        self.server.shutdown()
        self.server.server_close()


def test_mjpeg_stream_disconnect_is_retried_with_backoff_and_recovers():
    server = _MjpegServer()
    url = f"http://127.0.0.1:{server.port}/video"
    config = SourceConfig(backoff_initial=0.05, backoff_factor=2.0, backoff_max=5.0,
                          open_timeout=3.0, read_timeout=3.0)
    seen: list[SourceStatus] = []
    src = open_source(url, config)
    src.add_listener(seen.append)
    restarted = None
    try:
        src.start()
        frames = _drain(src, 5)
        assert len(frames) == 5 and src.status.state == "live"
        assert all(f.image.shape == (H, W, 3) for f in frames)
        assert _index_of(frames[-1].image) in range(N)

        server.stop()  # the phone's camera app closes mid-stream
        assert src.wait_for(lambda s: s.state == "retrying" and s.attempt >= 3, WAIT)
        retrying = [s for s in seen if s.state == "retrying" and s.retry_in is not None]
        delays = []
        for s in retrying:  # one entry per attempt
            if not delays or s.attempt != delays[-1][0]:
                delays.append((s.attempt, s.retry_in))
        assert delays[:3] == [(1, 0.05), (2, 0.1), (3, 0.2)]
        assert "disconnected" in retrying[0].last_error
        assert "cannot connect" in retrying[-1].last_error
        assert src.status.to_json()["last_error"] is not None

        restarted = _MjpegServer(server.port)  # the camera comes back on the same address
        assert src.wait_for(lambda s: s.state == "live" and s.attempt == 0, WAIT)
        before = src.status.frames
        frame = src.next_frame(after=frames[-1].seq, timeout=WAIT)
        assert frame is not None and frame.seq > frames[-1].seq
        assert src.wait_for(lambda s: s.frames > before, WAIT)
    finally:
        src.stop()
        server.stop()
        if restarted is not None:
            restarted.stop()
    assert src.status.state == "stopped"
    assert src._thread is not None and not src._thread.is_alive()


def test_a_looping_file_that_disappears_is_retried_and_comes_back(tmp_path):
    path = _write_video(tmp_path / "clip.avi", "MJPG", n=3)
    config = SourceConfig(loop=True, realtime=False, backoff_initial=0.01, backoff_max=0.05)
    with open_source(str(path), config) as src:
        first = _drain(src, 2)
        moved = path.rename(tmp_path / "away.avi")  # the file goes away mid-play
        third = src.next_frame(after=first[-1].seq, timeout=WAIT)  # already being decoded
        assert third is not None and third.index == 2
        assert src.wait_for(lambda s: s.state == "retrying" and s.attempt >= 2, WAIT)
        assert "no such file" in src.status.last_error
        moved.rename(path)  # and comes back
        assert src.wait_for(lambda s: s.state == "live" and s.loops >= 1, WAIT)
        again = src.next_frame(after=third.seq, timeout=WAIT)
    assert again is not None and again.index == 0 and again.t > first[-1].t


# ---------------------------------------------------------------- unexpected errors
class _FakeCapture:
    """A camera whose ``read`` gives a frame ``as_bgr`` cannot convert (int32 pixels) as its
    ``bad``-th frame of every opening, and good frames otherwise."""

    def __init__(self, bad: int) -> None:
        self.bad = bad
        self.reads = 0

    def isOpened(self) -> bool:  # cv2.VideoCapture's name
        return True

    def get(self, prop: int) -> float:
        return 0.0

    def read(self) -> tuple[bool, np.ndarray]:
        self.reads += 1
        if self.reads == self.bad:
            return True, np.zeros((H, W, 3), np.int32)
        return True, _frame(self.reads % N)

    def release(self) -> None:
        pass


def test_an_unexpected_error_in_the_capture_is_retried_and_named(monkeypatch):
    opened: list[_FakeCapture] = []

    def fake_open(spec, config):
        opened.append(_FakeCapture(bad=3))
        return opened[-1]

    monkeypatch.setattr("vision.sources._open_capture", fake_open)
    with open_source("5", SourceConfig(backoff_initial=0.01, backoff_max=0.05)) as src:
        assert src.wait_for(lambda s: s.state == "retrying", WAIT)
        retrying = src.status
        # the thread lives on: the camera is opened again and frames come again
        assert src.wait_for(lambda s: s.state == "live" and s.frames > 2, WAIT)
        assert src._thread is not None and src._thread.is_alive()
    assert len(opened) >= 2
    assert retrying.attempt == 1 and retrying.retry_in == 0.01
    error = retrying.last_error or ""
    assert error.startswith("webcam 5: ") and "reading frame 3" in error
    assert "InvalidImage" in error and "unsupported pixel type int32" in error
    assert "as_bgr" in error  # where it happened
    assert "\n" not in error


def test_an_unexpected_error_opening_a_source_fails_after_max_retries(monkeypatch):
    def broken_open(spec, config):
        raise RuntimeError("a bug in the opener")

    monkeypatch.setattr("vision.sources._open_capture", broken_open)
    with open_source("5", SourceConfig(backoff_initial=0.001, max_retries=2)) as src:
        assert src.wait_for(lambda s: s.state == "failed", WAIT)
        status = src.status
        thread = src._thread
        assert thread is not None
        thread.join(WAIT)
        assert not thread.is_alive()
    assert status.attempt == 3
    assert "RuntimeError: a bug in the opener" in (status.last_error or "")
    assert "opening" in (status.last_error or "")


def test_opening_an_unreachable_webcam_keeps_opencv_quiet_and_restores_its_log(capfd):
    log = cv2.utils.logging
    before = log.getLogLevel()
    config = SourceConfig(backoff_initial=0.001, max_retries=3)
    with open_source("97", config) as src:
        assert src.wait_for(lambda s: s.state == "failed", WAIT)
        status = src.status
    assert "cannot open the camera" in status.last_error  # the project's own line says it
    err = capfd.readouterr().err
    assert "WARN" not in err and "ERROR" not in err  # OpenCV's own lines, once per retry
    assert log.getLogLevel() == before != log.LOG_LEVEL_SILENT


def test_retrying_an_unreachable_stream_prints_no_ffmpeg_lines(tmp_path):
    # FFmpeg's own "[tcp @ 0x...] Connection ... refused" at every retry is not OpenCV's log;
    # the source's status says what is wrong. A fresh process: FFmpeg reads its log level once.
    import subprocess
    import sys

    code = ("from vision.sources import open_source, SourceConfig\n"
            "c = SourceConfig(backoff_initial=0.001, max_retries=2, open_timeout=1.0)\n"
            "with open_source('http://127.0.0.1:9/cam.mjpg', c) as s:\n"
            "    assert s.wait_for(lambda st: st.state == 'failed', 20.0)\n"
            "    print(s.status.last_error)\n")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=root, timeout=60, env={**__import__("os").environ,
                                                     "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert "cannot connect to the stream" in done.stdout
    assert "[tcp" not in done.stderr and "Connection" not in done.stderr, done.stderr
