"""Writing the printable companion card of a layout: vector PDF or 300 dpi PNG, true to size.

The card is drawn by :mod:`vision.render.cardface` in the ``"companion"`` style: the layout's
candles, stars, dividers and boxes, and its ArUco markers with their white quiet zone. Print the
PDF at 100 % ("actual size"), cut along the card's thin grey outline (the crop marks help), and
laminate it.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import cv2

from calibration.pdf import crop_marks, pdf_bytes
from companion.datafiles import write_whole
from companion.errors import BadInput
from vision.render.cardface import Text, card_face, face_items
from vision.sigil.geometry import card_geometry

__all__ = ["A4_MM", "PNG_DPI", "card_pdf", "card_png", "write_card"]

A4_MM = (210.0, 297.0)
PNG_DPI = 300


def card_pdf(layout: Any) -> bytes:
    """The companion card centred on an A4 page, with crop marks and a caption."""
    geom = card_geometry(layout)
    w, h = geom.size_mm
    ox, oy = (A4_MM[0] - w) / 2, (A4_MM[1] - h) / 2
    caption = [Text((w / 2, h + 12.0), f"DOOM COMPANION SIGIL {geom.name}", 2.5,
                    (120, 120, 120)),
               Text((w / 2, h + 17.0), "PRINT AT 100 PERCENT - CUT ON THE GREY LINE", 2.0,
                    (150, 150, 150))]
    return pdf_bytes([((ox, oy), face_items(geom, "companion") + crop_marks((w, h)) + caption)],
                     A4_MM)


def _png_with_dpi(png: bytes, dpi: int) -> bytes:
    """Insert a pHYs chunk (pixels per metre) after IHDR so printers know the true size."""
    ppm = round(dpi / 0.0254)
    data = struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", len(data)) + b"pHYs" + data
    chunk += struct.pack(">I", zlib.crc32(b"pHYs" + data) & 0xFFFFFFFF)
    ihdr_end = 8 + 4 + 4 + 13 + 4
    return png[:ihdr_end] + chunk + png[ihdr_end:]


def card_png(layout: Any, dpi: int = PNG_DPI) -> bytes:
    """The companion card alone (its edges are the image's edges) as PNG at ``dpi``."""
    face = card_face(layout, "companion", px_per_mm=dpi / 25.4)
    ok, data = cv2.imencode(".png", face.image)
    if not ok:  # pragma: no cover
        raise RuntimeError("PNG encoding failed")
    return _png_with_dpi(data.tobytes(), dpi)


def write_card(layout: Any, out: str | Path) -> Path:
    """Write the card to ``out``: ``.pdf`` (vector, A4) or ``.png`` (300 dpi).

    Raises
    ------
    BadInput
        For another extension, a folder that does not exist or is a file, or a file that
        cannot be written (the card is written whole or not at all: :func:`write_whole`).
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in (".pdf", ".png"):
        raise BadInput(f"{out}: the card is written as .pdf or .png, not {suffix or 'no suffix'!r}")
    if not out.parent.is_dir():
        problem = "is not a folder" if out.parent.exists() else "does not exist"
        raise BadInput(f"{out}: folder {out.parent} {problem}")
    data = card_pdf(layout) if suffix == ".pdf" else card_png(layout)
    write_whole(out, data)
    return out
