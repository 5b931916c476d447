"""``cards print``, ``cards register`` and ``render sigil``.

- ``cards print --layout L --out FILE``: the printable companion card of a layout, at true size
  (``.pdf``: vector, the card centred on an A4 page with crop marks; ``.png``: the card alone at
  300 dpi).
- ``cards register PHOTO --layout LAYOUT.json --name NAME``: store a printed card design (its
  layout and the rectified blank card the reader subtracts) in the registry.
- ``render sigil OUT --count N --seed S [--layout L]...``: synthetic labelled sigil photos of
  the layouts given (default A-D; see :func:`write_sigil_set`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from companion.errors import BadInput

if TYPE_CHECKING:
    from vision.readings import SigilState

__all__ = ["SIGIL_LETTERS", "print_card", "register", "render_sigil", "write_sigil_set"]

SIGIL_LETTERS = ("A", "B", "C", "D")


def _load_layout(name: str) -> Any:
    try:
        from companion.doomcat.layouts import load_layout
    except ImportError:  # pragma: no cover - until the Doom Cat catalogue is present
        raise BadInput(f"layout {name!r}: the sigil layouts are not installed "
                       "(companion.doomcat.layouts is missing)") from None
    return load_layout(name)


def print_card(args: argparse.Namespace) -> int:
    """Handler of ``cards print``."""
    from calibration.printing import write_card

    out = Path(args.out)
    write_card(_load_layout(args.layout), out)
    print(f"wrote {out}")
    return 0


def register(args: argparse.Namespace) -> int:
    """Handler of ``cards register``."""
    from calibration.register import register_card

    result = register_card(args.photo, args.layout, args.name)
    print(f"registered card {args.name!r} in {result.folder} "
          f"(found by {result.method}, {result.reference_shape[1]}x{result.reference_shape[0]} px)")
    return 0


def render_sigil(args: argparse.Namespace) -> int:
    """Handler of ``render sigil``: the layouts of ``--layout`` (letters, registered cards,
    layout files; A-D when none is given), each resolved before anything is written."""
    from vision.render.sigil import InkStyle, PhotoConditions, fixed_fields

    layouts = [_load_layout(name) for name in (args.layout or SIGIL_LETTERS)]
    fixed = {}
    for flag, kind, items in (("--scene", PhotoConditions, args.scene),
                              ("--ink", InkStyle, args.ink)):
        try:
            fixed[flag] = fixed_fields(kind, items or [])
        except ValueError as exc:
            raise BadInput(f"{flag}: {exc}") from None
    out = Path(args.out)
    labels = write_sigil_set(out, args.count, args.seed, layouts,
                             mid_turn_share=args.mid_turn_share,
                             marker_share=args.marker_share, hand_share=args.hand_share,
                             scene=fixed["--scene"], ink=fixed["--ink"])
    print(f"wrote {len(labels)} photos and labels.json to {out}")
    return 0


def _conditions_doc(info: Any, ink: Any, card: Any, ghosts: list[list[int]],
                    state: SigilState) -> dict[str, Any]:
    c = info.conditions
    written = sum(box is not None for box in state.top)
    return {
        # a card caught between writing a number and crossing out its candle
        "turn": "complete" if written == len(state.crossed) else "mid-turn",
        "tilt_deg": round(c.tilt_deg, 1),
        "rotation_deg": round(c.rotation_deg, 1),
        "fill": round(float(cv2.contourArea(info.card_corners_px.astype(np.float32)))
                      / (1280 * 720), 3),
        "glare": c.glare > 0,
        "glare_strength": round(c.glare, 2),
        "ghosts": bool(ghosts),
        "pen_color": ink.pen_color,
        "pen_width_mm": round(ink.width_mm, 2),
        "hand": c.hand,
        "markers": card.markers,
        "art": card.style.art,
        "design": card.style.design,
        "shadow": c.shadow > 0,
        "defocus_px": round(c.defocus_px, 2),
        "motion_px": round(c.motion_px, 2),
        "noise": round(c.noise, 2),
        "background": c.background,
        "jpeg_quality": c.jpeg_quality,
        # share of the card's area outside the frame (only for a card allowed to run out)
        **({} if c.keep_in_view else {"out_of_view": _out_of_view(info.card_corners_px)}),
    }


def _out_of_view(corners: np.ndarray) -> float:
    """Share of the quadrilateral ``corners`` (frame px) outside the rendered frame."""
    from vision.render.sigil import FRAME_H, FRAME_W

    quad = np.asarray(corners, np.float32).reshape(-1, 2)
    area = float(cv2.contourArea(quad))
    inside, _ = cv2.intersectConvexConvex(
        quad, np.array([[0, 0], [FRAME_W, 0], [FRAME_W, FRAME_H], [0, FRAME_H]], np.float32))
    return round(1.0 - float(inside) / area, 3) if area > 0 else 1.0


def _label_names(layouts: list[Any]) -> tuple[list[str | None], dict[str, Any]]:
    """The name each label gives its layout (None: the state's own). A-D stay letters; any
    other layout (a layout file, a registered card) is written to ``out/layouts/<name>.json``
    and named by that path relative to ``out``, which ``eval sigil`` resolves in the folder of
    ``labels.json``: the folder reads back with the layout it was drawn with, wherever it is
    moved, and nothing needs registering. Returns the names and the layouts to write."""
    from companion.doomcat.layouts import BUILTIN, Layout

    names: list[str | None] = []
    written: dict[str, Layout] = {}
    for layout in layouts:
        if not isinstance(layout, Layout) or (layout.name in BUILTIN
                                              and layout == _load_layout(layout.name)):
            names.append(None)
            continue
        if written.setdefault(layout.name, layout) != layout:
            raise BadInput(f"two different layouts are named {layout.name!r} "
                           f"({written[layout.name].source} and {layout.source})")
        names.append(f"layouts/{layout.name}.json")
    return names, written


def write_sigil_set(out: Path, count: int, seed: int, layouts: list[Any], *,
                    px_per_mm: float = 8.0, marker_share: float = 0.5,
                    ghost_share: float = 0.3, mid_turn_share: float = 0.0,
                    hand_share: float | None = None, scene: dict[str, Any] | None = None,
                    ink: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Render ``count`` labelled sigil photos into ``out`` and write ``out/labels.json``.

    Image ``i`` depends only on ``(seed, i)``. Each label is DESIGN.md's
    ``{"image", "sigil"}`` plus ``layout``, ``conditions`` (tilt, glare, ghosts, pen colour,
    hand, markers, ...), ``card_corners_px`` (TL, TR, BR, BL of the card as printed, frame
    pixels) and ``ghost_lines`` (pairs erased from an earlier game: not in the state).
    A layout other than A-D is copied to ``out/layouts/<name>.json`` and the state's
    ``layout`` is that path, relative to ``out`` (``eval sigil`` reads it there); ``layout``
    beside the state keeps the layout's own name.
    ``mid_turn_share`` of the cards are caught in the middle of a turn
    (:meth:`calibration.states.RandomCards.photo`). ``marker_share`` of the cards are companion
    cards (markers), the others printed; ``hand_share`` of the photos have a hand over the
    card (None: as :func:`vision.render.sigil.sample_conditions` draws it, and the photos of a
    seed are the same as before the option existed). ``scene`` fixes fields of the scene
    conditions (:class:`vision.render.sigil.PhotoConditions`) and ``ink`` fields of the pen
    (:class:`vision.render.sigil.InkStyle`) for every photo; every random draw is made as
    without them, so the states and everything not fixed are those of the seed.
    """
    from calibration.states import RandomCards
    from companion.datafiles import output_folder, unlabel, write_whole

    if count < 1:
        raise BadInput(f"--count must be 1 or more, got {count}")
    if not layouts:
        raise BadInput("no layouts to render")
    label_names, to_write = _label_names(layouts)
    output_folder(out)
    unlabel(out)
    for name, layout in to_write.items():
        (out / "layouts").mkdir(exist_ok=True)
        (out / "layouts" / f"{name}.json").write_text(
            json.dumps(layout.to_json(), indent=1) + "\n", encoding="utf-8")
    cards = RandomCards(layouts)
    ink_fixed = dict(ink) if ink else None
    scene_fixed = dict(scene) if scene else {}
    labels: list[dict[str, Any]] = []
    for i in range(count):
        k, shot, _ = cards.photo(seed, i, mid_turn_share=mid_turn_share, px_per_mm=px_per_mm,
                                 marker_share=marker_share, ghost_share=ghost_share,
                                 hand_share=hand_share, ink_fixed=ink_fixed, **scene_fixed)
        geom = cards.geoms[k]
        frame, label, info, card, ink = shot.frame, shot.label, shot.info, shot.card, shot.ink
        ghosts = [list(g) for g in shot.ghosts]
        state = label.to_json()
        if label_names[k] is not None:
            state["layout"] = label_names[k]
        conditions = info.conditions
        name = f"sigil_{i:05d}.jpg"
        ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY,
                                                conditions.jpeg_quality])
        if not ok:  # pragma: no cover
            raise RuntimeError("JPEG encoding failed")
        (out / name).write_bytes(data.tobytes())
        labels.append({
            "image": name,
            "sigil": state,
            "layout": geom.name,
            "conditions": _conditions_doc(info, ink, card, ghosts, label),
            "card_corners_px": [[round(float(x), 1), round(float(y), 1)]
                                for x, y in info.card_corners_px],
            "ghost_lines": sorted(ghosts),
        })
    write_whole(out / "labels.json", "[\n" + ",\n".join(json.dumps(e) for e in labels) + "\n]\n")
    return labels
