"""Drawing a sigil reading over the photo it came from (for looking at failures, and the
dashboard's overlay).

Convention: the photo is BGR uint8; the reading's pose maps card mm to photo px.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from vision.readings import SigilState
from vision.sigil.geometry import card_geometry, project
from vision.sigil.reader import SigilReading

__all__ = ["draw_reading"]

GREEN, RED, MAGENTA, YELLOW, GREY = (60, 200, 60), (40, 40, 230), (220, 60, 220), \
    (0, 220, 240), (150, 150, 150)


def draw_reading(image: np.ndarray, reading: SigilReading, layout: Any,
                 truth: SigilState | None = None) -> np.ndarray:
    """The photo with the card's outline, the candles, and the reading drawn on it.

    Lines read are green (magenta when ``truth`` says they are not drawn), lines missed are
    red; crossed candles get an X (same colours); unknown elements are yellow; each top box
    shows what was read (and the truth after a slash when it differs).
    """
    geom = card_geometry(layout)
    out = image.copy()
    h = reading.pose.homography
    cs = np.array([c.center for c in geom.candles])
    pc = project(h, cs)
    cv2.polylines(out, [np.round(reading.pose.corners).astype(np.int32)], True, GREY, 1,
                  cv2.LINE_AA)
    st = reading.state
    read_lines, true_lines = set(st.lines), set(truth.lines) if truth else set(st.lines)
    for a, b in sorted(read_lines | true_lines):
        colour = GREEN if (a, b) in read_lines and (a, b) in true_lines else \
            MAGENTA if (a, b) in read_lines else RED
        cv2.line(out, tuple(np.round(pc[a]).astype(int)), tuple(np.round(pc[b]).astype(int)),
                 colour, 2, cv2.LINE_AA)
    for name in st.unknown:
        if name.startswith("line"):
            a, b = (int(x) for x in name.split()[1].split("-"))
            cv2.line(out, tuple(np.round(pc[a]).astype(int)),
                     tuple(np.round(pc[b]).astype(int)), YELLOW, 1, cv2.LINE_AA)
    read_x, true_x = set(st.crossed), set(truth.crossed) if truth else set(st.crossed)
    for i, c in enumerate(geom.candles):
        ring = project(h, np.array([[c.center[0] + c.radius * np.cos(t),
                                     c.center[1] + c.radius * np.sin(t)]
                                    for t in np.linspace(0, 2 * np.pi, 24)]))
        unk = f"candle {i}" in st.unknown
        cv2.polylines(out, [np.round(ring).astype(np.int32)], True,
                      YELLOW if unk else GREY, 1, cv2.LINE_AA)
        cv2.putText(out, str(i), tuple(np.round(pc[i] + [6, -6]).astype(int)),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
        if i in read_x or i in true_x:
            colour = GREEN if i in read_x and i in true_x else MAGENTA if i in read_x else RED
            r = c.radius * 0.7
            for d in ((-r, -r, r, r), (-r, r, r, -r)):
                p = project(h, np.array([[c.center[0] + d[0], c.center[1] + d[1]],
                                         [c.center[0] + d[2], c.center[1] + d[3]]]))
                cv2.line(out, tuple(np.round(p[0]).astype(int)),
                         tuple(np.round(p[1]).astype(int)), colour, 2, cv2.LINE_AA)
    for k, box in enumerate(geom.top_boxes):
        x0, y0, x1, y1 = box
        p = project(h, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
        r, t = st.top[k], truth.top[k] if truth else st.top[k]

        def txt(v: Any) -> str:
            return "." if v is None else f"({v.value})" if v.circled else str(v.value)

        label = "?" if f"top {k}" in st.unknown else txt(r)
        ok = label == txt(t) or (truth is not None and f"top {k}" in truth.unknown)
        if not ok:
            label += "/" + txt(t)
        colour = YELLOW if label.startswith("?") else GREEN if ok else RED
        cv2.polylines(out, [np.round(p).astype(np.int32)], True, colour, 1, cv2.LINE_AA)
        cv2.putText(out, label, tuple(np.round(p[3] + [0, 14]).astype(int)),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
    return out
