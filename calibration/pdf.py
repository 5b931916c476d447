"""A tiny vector PDF writer for the card display list (no dependency beyond the standard library).

It writes one page, paints :mod:`vision.render.cardface` items (polylines, polygons, circles,
short texts in the standard Helvetica-Bold font) with exact millimetre geometry, so that the
printed card is true to size when printed at 100 % ("actual size").

Convention: item coordinates are millimetres with the origin at the top-left of the card, y down;
``origin_mm`` places the card's top-left corner on the page, measured from the page's top-left.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from vision.render.cardface import Disc, Item, Poly, Text, _dashes

__all__ = ["MM_TO_PT", "crop_marks", "pdf_bytes"]

MM_TO_PT = 72.0 / 25.4
_KAPPA = 0.5522847498


def _num(v: float) -> str:
    text = f"{v:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _rgb(c: tuple[int, int, int]) -> str:
    return " ".join(_num(v / 255.0) for v in c)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _path(points: Iterable[tuple[float, float]], closed: bool) -> list[str]:
    pts = list(points)
    ops = [f"{_num(pts[0][0])} {_num(pts[0][1])} m"]
    ops += [f"{_num(x)} {_num(y)} l" for x, y in pts[1:]]
    if closed:
        ops.append("h")
    return ops


def _circle(cx: float, cy: float, r: float) -> list[str]:
    k = _KAPPA * r
    return [f"{_num(cx + r)} {_num(cy)} m",
            f"{_num(cx + r)} {_num(cy + k)} {_num(cx + k)} {_num(cy + r)} {_num(cx)} "
            f"{_num(cy + r)} c",
            f"{_num(cx - k)} {_num(cy + r)} {_num(cx - r)} {_num(cy + k)} {_num(cx - r)} "
            f"{_num(cy)} c",
            f"{_num(cx - r)} {_num(cy - k)} {_num(cx - k)} {_num(cy - r)} {_num(cx)} "
            f"{_num(cy - r)} c",
            f"{_num(cx + k)} {_num(cy - r)} {_num(cx + r)} {_num(cy - k)} {_num(cx + r)} "
            f"{_num(cy)} c", "h"]


def _items_ops(items: Iterable[Item]) -> list[str]:
    ops: list[str] = ["1 j 1 J"]
    for it in items:
        if isinstance(it, Poly):
            if it.fill is not None:
                ops += [f"{_rgb(it.fill)} rg", *_path(it.points, True), "f"]
            if it.width > 0:
                ops += [f"{_rgb(it.color)} RG", f"{_num(it.width)} w"]
                if it.dash is not None:
                    for seg in _dashes(it.points, *it.dash):
                        ops += [*_path(seg, False), "S"]
                else:
                    ops += [*_path(it.points, it.closed), "S"]
        elif isinstance(it, Disc):
            if it.fill is not None:
                ops += [f"{_rgb(it.fill)} rg", *_circle(*it.center, it.radius), "f"]
            if it.width > 0:
                ops += [f"{_rgb(it.color)} RG", f"{_num(it.width)} w",
                        *_circle(*it.center, it.radius), "S"]
        elif isinstance(it, Text):
            size = it.height / 0.72            # Helvetica's cap height is 0.72 em
            width = 0.556 * size * len(it.text)  # digits are 0.556 em wide
            x = it.center[0] - width / 2
            y = it.center[1] + it.height / 2
            ops += [f"{_rgb(it.color)} rg", "BT", f"/F1 {_num(size)} Tf",
                    f"1 0 0 -1 {_num(x)} {_num(y)} Tm", f"({_escape(it.text)}) Tj", "ET"]
    return ops


def pdf_bytes(layers: list[tuple[tuple[float, float], list[Item]]],
              page_mm: tuple[float, float]) -> bytes:
    """One-page PDF of item lists, each placed with its card's top-left at ``origin_mm``.

    Parameters
    ----------
    layers
        ``[(origin_mm, items), ...]`` painted in order.
    page_mm
        Page size ``(width, height)`` in mm.

    Examples
    --------
    >>> from vision.render.cardface import Poly
    >>> pdf_bytes([((10, 10), [Poly(((0, 0), (5, 5)), 0.3)])], (50, 50))[:8]
    b'%PDF-1.4'
    """
    pw, ph = page_mm[0] * MM_TO_PT, page_mm[1] * MM_TO_PT
    ops: list[str] = []
    for (ox, oy), items in layers:
        k = MM_TO_PT
        ops += ["q", f"{_num(k)} 0 0 {_num(-k)} {_num(ox * k)} {_num(ph - oy * k)} cm",
                *_items_ops(items), "Q"]
    stream = zlib.compress("\n".join(ops).encode("latin-1"), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_num(pw)} {_num(ph)}] "
         f"/Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>").encode(),
        f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode() + stream
        + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold "
        b"/Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            f"%%EOF\n").encode()
    return bytes(out)


def crop_marks(card_mm: tuple[float, float], gap: float = 2.0,
               length: float = 6.0) -> list[Item]:
    """Crop marks just outside a card's corners (card coordinates, mm)."""
    w, h = card_mm
    grey = (120, 120, 120)
    items: list[Item] = []
    for x, y in ((0.0, 0.0), (w, 0.0), (w, h), (0.0, h)):
        sx = -1 if x == 0 else 1
        sy = -1 if y == 0 else 1
        items.append(Poly(((x + sx * gap, y), (x + sx * (gap + length), y)), 0.2, grey))
        items.append(Poly(((x, y + sy * gap), (x, y + sy * (gap + length))), 0.2, grey))
    return items

