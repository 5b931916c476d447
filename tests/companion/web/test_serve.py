"""``doomcompanion serve`` as a user runs it (a real process, a real port)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tmp_path, port, *extra, ignore_sigint=False):
    """``ignore_sigint``: started as a shell starts a background job, SIGINT ignored."""
    def background():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--port", str(port), "--db",
         str(tmp_path / "g.sqlite"), "--source", "none", *extra],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=background if ignore_sigint else None)


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> None:
    """Ctrl-C, as a user stops it (or ``sig``); a server that does not stop in 30 s is killed
    (so that it does not outlive its test) and the test fails."""
    proc.send_signal(sig)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def test_serve_answers_then_stops_on_ctrl_c_and_a_busy_port_is_bad_input(tmp_path):
    port = free_port()
    proc = start(tmp_path, port)
    try:
        first = proc.stdout.readline()   # printed once the port is bound
        assert f"http://localhost:{port}/" in first, proc.stderr.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=10) as res:
            status = json.load(res)
        assert status["token_required"] is False
        busy = start(tmp_path, port)
        _, err = busy.communicate(timeout=60)
        assert busy.returncode == 2 and "cannot listen" in err
    finally:
        stop(proc)
    assert proc.returncode == 0


@pytest.mark.parametrize("host", ["999.1.1.1", "nonexistent.invalid"])
def test_serve_on_a_host_that_is_no_address_is_bad_input(tmp_path, host):
    proc = start(tmp_path, free_port(), "--host", host)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.startswith(f"doomcompanion: error: cannot listen on {host}:")
    assert "--host is not an address" in err and err.count("\n") == 1


def test_serve_off_loopback_prints_a_token(tmp_path):
    port = free_port()
    proc = start(tmp_path, port, "--host", "0.0.0.0")
    try:
        proc.stdout.readline()
        second = proc.stdout.readline()
        assert "?token=" in second
        token = second.split("?token=")[1].split()[0]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/live/feeds",
                                     data=b'{"kind": "cat"}', method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-Doom-Token": token})
        with urllib.request.urlopen(req, timeout=10) as res:
            assert res.status == 200
    finally:
        stop(proc)


@pytest.mark.parametrize("sig, ignore_sigint", [
    (signal.SIGTERM, False),  # a service manager stopping it
    (signal.SIGINT, True),  # Ctrl-C reaching a server started in the background by a script
])
def test_serve_stops_cleanly_on_sigterm_and_on_sigint_in_the_background(tmp_path, sig,
                                                                       ignore_sigint):
    port = free_port()
    proc = start(tmp_path, port, ignore_sigint=ignore_sigint)
    try:
        assert f"http://localhost:{port}/" in proc.stdout.readline(), proc.stderr.read()
    finally:
        stop(proc, sig)
    assert proc.returncode == 0


def test_serve_with_a_source_image_that_cannot_be_read_is_bad_input(tmp_path):
    photo = tmp_path / "table.jpg"
    photo.write_bytes(b"this is not a photo")
    proc = start(tmp_path, free_port(), "--source", str(photo))
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:   # it serves: stop it, not to outlive the test
        stop(proc)
        raise
    assert proc.returncode == 2 and out == ""
    assert err == (f"doomcompanion: error: {photo}: not an image, or a corrupt or truncated "
                   "one\n")


def test_a_page_left_open_does_not_hold_the_server_at_ctrl_c(tmp_path):
    # with a page open, Ctrl-C waited for waitress's 5 s timeout on the page's event stream
    # and printed "1 thread(s) still running" (started again at once, the server found its
    # port still taken): the streams are ended before waitress waits for its threads
    port = free_port()
    proc = start(tmp_path, port)
    try:
        assert f"http://localhost:{port}/" in proc.stdout.readline(), proc.stderr.read()
        res = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stream?view=machine",
                                     timeout=30)
        assert res.read(1)                       # the stream has begun
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.returncode is None:
            stop(proc)
    res.close()
    assert proc.returncode == 0
    assert "still running" not in err, err


def test_serve_says_on_its_terminal_which_game_a_broken_catalogue_keeps_off(tmp_path,
                                                                            monkeypatch, capsys):
    """The owner who edited goals.json started the server from a terminal: the reason is
    said there too, and the server runs with the other game."""
    import waitress

    from companion.cli import main
    from companion.datafiles import DATA_DIR

    doc = json.loads((DATA_DIR / "goals.json").read_text())
    doc[11]["tier"] = 3
    broken = tmp_path / "goals.json"
    broken.write_text(json.dumps(doc))
    monkeypatch.setattr("companion.doomcat.catalogue.GOALS_FILE", broken)

    class Server:   # stands for waitress's: "runs" until Ctrl-C at once
        def run(self):
            raise KeyboardInterrupt

    monkeypatch.setattr(waitress, "create_server", lambda *a, **k: Server())
    monkeypatch.setattr("companion.commands.serve._stop_on_signals", lambda end: None)
    port = free_port()
    assert main(["serve", "--port", str(port), "--db", str(tmp_path / "g.sqlite"),
                 "--source", "none"]) == 0
    out, err = capsys.readouterr()
    assert f"http://localhost:{port}/" in out
    assert err == (f"doomcompanion: Doom Cat is not available: {broken}: at $[11].tier: goal 12 "
                   "is a tier 2 goal (tier 2 holds goals 10-18), the file says 3\n")
