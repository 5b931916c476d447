from __future__ import annotations

import errno
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.printing import A4_MM, PNG_DPI, card_pdf, card_png, write_card
from companion.cli import main
from companion.doomcat.layouts import load_layout
from companion.errors import BadInput
from vision.sigil.geometry import card_geometry

LETTERS = ["A", "B", "C", "D"]


def _detect(image: np.ndarray, dictionary: str) -> dict[int, np.ndarray]:
    aruco = cv2.aruco
    det = aruco.ArucoDetector(aruco.getPredefinedDictionary(getattr(aruco, dictionary)),
                              aruco.DetectorParameters())
    corners, ids, _ = det.detectMarkers(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


def _raster_pdf(data: bytes, px_per_mm: float) -> np.ndarray:
    """A minimal rasterizer for the paths our PDF writer emits (enough to check geometry)."""
    stream = re.search(rb"stream\n(.*?)\nendstream", data, re.S).group(1)
    ops = zlib.decompress(stream).decode("latin-1")
    box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    pw, ph = float(box.group(1)), float(box.group(2))
    k = px_per_mm * 25.4 / 72.0        # page points -> pixels
    img = np.full((round(ph * k), round(pw * k), 3), 255, np.uint8)
    ctm = np.eye(3)
    stack: list[np.ndarray] = []
    fill = stroke = (0, 0, 0)
    width = 0.0
    path: list[list[np.ndarray]] = []
    args: list[float] = []
    in_text = False

    def dev(x: float, y: float) -> np.ndarray:
        p = ctm @ np.array([x, y, 1.0])
        return np.array([p[0] * k, (ph - p[1]) * k])

    for tok in ops.split():
        if in_text:
            in_text = tok != "ET"
            continue
        try:
            args.append(float(tok))
            continue
        except ValueError:
            pass
        if tok == "q":
            stack.append(ctm.copy())
        elif tok == "Q":
            ctm = stack.pop()
        elif tok == "cm":
            a, b, c, d, e, f = args
            ctm = ctm @ np.array([[a, c, e], [b, d, f], [0, 0, 1]])
        elif tok == "rg":
            fill = tuple(round(v * 255) for v in args[::-1])
        elif tok == "RG":
            stroke = tuple(round(v * 255) for v in args[::-1])
        elif tok == "w":
            width = args[0] * abs(ctm[0, 0]) * k
        elif tok == "m":
            path.append([dev(*args)])
        elif tok == "l":
            path[-1].append(dev(*args))
        elif tok == "c":
            p0 = path[-1][-1]
            c1, c2, p3 = dev(*args[0:2]), dev(*args[2:4]), dev(*args[4:6])
            for t in np.linspace(0, 1, 9)[1:]:
                path[-1].append((1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * c1
                                + 3 * (1 - t) * t ** 2 * c2 + t ** 3 * p3)
        elif tok == "f":
            cv2.fillPoly(img, [np.round(np.array(p) * 16).astype(np.int32) for p in path],
                         fill, cv2.LINE_AA, 4)
            path = []
        elif tok == "S":
            for p in path:
                cv2.polylines(img, [np.round(np.array(p) * 16).astype(np.int32)], False,
                              stroke, max(1, round(width)), cv2.LINE_AA, 4)
            path = []
        elif tok == "BT":
            in_text = True
        args = []
    return img


@pytest.mark.parametrize("letter", LETTERS)
def test_pdf_is_true_to_size_and_its_markers_decode_where_the_layout_puts_them(letter):
    layout = load_layout(letter)
    geom = card_geometry(layout)
    data = card_pdf(layout)
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    ppm = 6.0
    page = _raster_pdf(data, ppm)
    assert page.shape[:2] == (round(A4_MM[1] * ppm), round(A4_MM[0] * ppm))
    found = _detect(page, geom.marker_dictionary)
    assert set(found) == {m.id for m in geom.markers}
    ox, oy = (A4_MM[0] - geom.width) / 2, (A4_MM[1] - geom.height) / 2
    for m in geom.markers:
        want = (m.corners() + np.array([ox, oy])) * ppm
        assert np.abs(found[m.id] - want).max() < 2.0   # pixels at 6 px/mm: < 0.35 mm


@pytest.mark.parametrize("letter", LETTERS)
def test_png_is_300_dpi_with_its_markers(letter):
    layout = load_layout(letter)
    geom = card_geometry(layout)
    data = card_png(layout)
    assert b"pHYs" in data[:64]
    i = data.index(b"pHYs")
    ppx, ppy, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert (ppx, ppy, unit) == (round(PNG_DPI / 0.0254),) * 2 + (1,)
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    ppm = PNG_DPI / 25.4
    assert img.shape[:2] == (round(geom.height * ppm), round(geom.width * ppm))
    found = _detect(img, geom.marker_dictionary)
    assert set(found) == {m.id for m in geom.markers}
    for m in geom.markers:
        assert np.abs(found[m.id] - m.corners() * ppm).max() < 2.0


@pytest.mark.parametrize(("name", "ok"), [("card.pdf", True), ("card.PNG", True),
                                           ("card.jpg", False), ("card", False),
                                           ("missing/card.pdf", False)])
def test_write_card_by_extension(tmp_path, name, ok):
    out = tmp_path / name
    if ok:
        assert write_card(load_layout("A"), out).stat().st_size > 1000
    else:
        with pytest.raises(BadInput, match=re.escape(str(out))):
            write_card(load_layout("A"), out)


@pytest.mark.parametrize("name", ["card.pdf", "card.png"])
def test_a_card_is_written_whole_or_not_at_all(tmp_path, monkeypatch, name):
    """A disk filling up half-way leaves the card that was there, and no temporary file."""
    out = tmp_path / name
    out.write_bytes(b"the card printed last week")

    def half_then_full(path, data):
        with open(path, "wb") as f:
            f.write(data[:len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", half_then_full)
    with pytest.raises(BadInput, match=re.escape(f"{out}: cannot write: No space left on device")):
        write_card(load_layout("A"), out)
    assert out.read_bytes() == b"the card printed last week"
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize(("out", "message"), [
    ("missing/c.png", "folder {tmp}/missing does not exist"),
    ("afile/c.png", "folder {tmp}/afile is not a folder"),
])
def test_cards_print_into_a_folder_that_is_not_one(tmp_path, capsys, out, message):
    (tmp_path / "afile").write_text("a file")
    assert main(["cards", "print", "--layout", "A", "--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err
    assert err == f"doomcompanion: error: {tmp_path / out}: {message.format(tmp=tmp_path)}\n"


@pytest.mark.parametrize(("argv", "code"), [
    (["--layout", "B", "--out", "{tmp}/b.pdf"], 0),
    (["--layout", "B", "--out", "{tmp}/b.png"], 0),
    (["--layout", "Q", "--out", "{tmp}/q.pdf"], 2),
    (["--layout", "B", "--out", "{tmp}/b.svg"], 2),
])
def test_cards_print_command(tmp_path, capsys, argv, code):
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(["cards", "print", *argv]) == code
    err = capsys.readouterr().err
    assert (err == "") == (code == 0)


@pytest.mark.skipif(shutil.which("pdftoppm") is None,
                    reason="pdftoppm (poppler-utils) is not installed: no real PDF renderer")
def test_a_real_pdf_renderer_shows_the_markers_at_true_size(tmp_path):
    layout = load_layout("C")
    geom = card_geometry(layout)
    pdf = write_card(layout, tmp_path / "c.pdf")
    subprocess.run(["pdftoppm", "-r", "254", "-png", str(pdf), str(tmp_path / "page")],
                   check=True, timeout=60)
    page = cv2.imread(str(next(tmp_path.glob("page*.png"))))
    ppm = 10.0                                   # 254 dpi
    assert abs(page.shape[1] - A4_MM[0] * ppm) <= 1 and abs(page.shape[0] - A4_MM[1] * ppm) <= 1
    found = _detect(page, geom.marker_dictionary)
    assert set(found) == {m.id for m in geom.markers}
    ox, oy = (A4_MM[0] - geom.width) / 2, (A4_MM[1] - geom.height) / 2
    for m in geom.markers:
        assert np.abs(found[m.id] - (m.corners() + np.array([ox, oy])) * ppm).max() < 2.0
