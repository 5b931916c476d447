"""Registering a printed sigil card design from a photo of a blank card.

``doomcompanion cards register PHOTO --layout LAYOUT.json --name NAME``:

1. the layout file (candle positions and numbers, boxes, in mm) is validated by the Doom Cat
   layout loader;
2. the card is found in the photo (:func:`vision.sigil.pose.find_card`) by the layout's ArUco
   markers when it has them and they are seen, else by its outline: the largest convex
   quadrilateral with the card's aspect ratio, its sides refitted as straight lines (so rounded
   corners do not pull the corners in), the orientation (which short side is the top) chosen by
   where the layout's boxes and candles show printed edges;
3. the card is rectified at ``px_per_mm`` and stored as ``reference.png``, the blank the sigil
   reader subtracts so that printed artwork is never read as ink; the layout (its ``name`` set
   to NAME) as ``layout.json``, and how it was found as ``reference.json``, all in
   ``registry_dir()/cards/NAME/``.

A photo without a card, a card too small to be useful or a layout that does not validate raises
:class:`companion.errors.BadInput` (exit 2 on the command line).

Convention: card geometry in mm, origin top-left of the card, x right, y down; image points
``(x, y)`` pixels, origin top-left; corners TL, TR, BR, BL of the card as printed; a homography
maps card mm to photo pixels.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.doomcat.layouts import registry_dir
from companion.errors import BadInput
from vision.imageio import as_bgr, read_image
from vision.sigil.geometry import card_geometry
from vision.sigil.pose import NoCard, find_card, layout_match, rectify_card

__all__ = ["Registration", "register_card"]

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
BUILTIN = {"A", "B", "C", "D"}


@dataclass(frozen=True)
class Registration:
    """What ``register_card`` stored."""

    folder: Path
    method: str
    corners_px: np.ndarray
    reference_shape: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "method": self.method,
                "corners_px": [[round(float(x), 2), round(float(y), 2)]
                               for x, y in self.corners_px],
                "reference_shape": list(self.reference_shape)}


# ----------------------------------------------------------------------------------- register

def _validated_layout(path: str | Path) -> dict[str, Any]:
    from companion.datafiles import read_json

    path = Path(path)
    try:
        from companion.doomcat.layouts import load_layout
    except ImportError:  # pragma: no cover - until the Doom Cat catalogue is present
        load_layout = None
    if load_layout is not None:
        if not path.exists():
            raise BadInput(f"{path}: no such layout file")
        load_layout(str(path))   # raises DataFileError naming file, path and rule
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: a layout file holds one JSON object")
    card_geometry(doc)
    return doc


def _write_whole(folder: Path, layout: dict[str, Any], reference: np.ndarray,
                 meta: dict[str, Any]) -> None:
    """Write a registration's three files into ``folder`` as a whole: into a folder beside the
    registry's ``cards`` (never listed as a card), then swapped in. A failure leaves the
    earlier registration of the name as it was, and nothing half-written."""
    cards = folder.parent
    new = cards.parent / f".{cards.name}-new-{folder.name}-{os.getpid()}"
    old = cards.parent / f".{cards.name}-old-{folder.name}-{os.getpid()}"
    try:
        new.mkdir()
        (new / "layout.json").write_text(json.dumps(layout, indent=1) + "\n", encoding="utf-8")
        if not cv2.imwrite(str(new / "reference.png"), reference):
            raise BadInput(f"{folder / 'reference.png'}: cannot write")
        (new / "reference.json").write_text(json.dumps(meta, indent=1) + "\n",
                                            encoding="utf-8")
        if folder.exists():
            folder.rename(old)
        new.rename(folder)
    except OSError as exc:
        if old.exists() and not folder.exists():
            old.rename(folder)
        raise BadInput(f"{folder}: cannot write the registration: "
                       f"{exc.strerror or exc}") from None
    finally:
        shutil.rmtree(new, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def register_card(photo: str | Path | np.ndarray, layout_path: str | Path, name: str, *,
                  px_per_mm: float = 8.0, min_px_per_mm: float = 2.5, min_match: float = 2.5,
                  registry: str | Path | None = None) -> Registration:
    """Register a card design (see the module docstring).

    Parameters
    ----------
    photo
        Path of the photo of the blank card (or the image itself).
    layout_path
        The layout JSON file of the design.
    name
        Registry name (letters, digits, ``_ . -``; not one of the built-in letters A-D).
    px_per_mm
        Resolution of the stored reference.
    min_px_per_mm
        Refuse cards seen at a lower resolution than this (too far to be a useful reference).
    min_match
        Refuse when :func:`layout_match` is lower: the layout does not fit the card.
    registry
        The registry folder (default: ``registry_dir()`` of the layouts module).
    """
    if not NAME_RE.match(name or ""):
        raise BadInput(f"--name {name!r}: use letters, digits, '_', '.' or '-', "
                       "starting with a letter or digit")
    if name.upper() in BUILTIN:
        raise BadInput(f"--name {name!r}: the sigil letters A-D are built in; choose another name")
    doc = _validated_layout(layout_path)
    geom = card_geometry(doc)
    if isinstance(photo, np.ndarray):
        image, where = as_bgr(photo), "photo"
    else:
        image, where = read_image(photo), str(photo)
    try:
        found = find_card(image, geom)
    except NoCard as exc:
        raise NoCard(f"{where}: {exc}") from None
    match = layout_match(image, geom, found.homography)
    if match < min_match:
        raise BadInput(f"{where}: the card does not match {layout_path}: nothing is printed where "
                       f"the layout puts the candles (match {match:.1f}, at least {min_match:g} "
                       "needed); wrong layout file, or candle positions off by millimetres")
    seen = np.sqrt(cv2.contourArea(found.corners.astype(np.float32))
                   / (geom.width * geom.height))
    if seen < min_px_per_mm:
        raise BadInput(f"{where}: the card is too small in the photo ({seen:.1f} px per mm, "
                       f"at least {min_px_per_mm:g} needed): move the camera closer")
    reference = rectify_card(image, found, geom, px_per_mm)
    from companion.datafiles import output_folder

    cards = output_folder((Path(registry) if registry is not None else registry_dir()) / "cards")
    folder = cards / name
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"{folder}: exists and is not a folder")
    stored = dict(doc)
    stored["name"] = name
    result = Registration(folder, found.method, found.corners.astype(np.float64),
                          reference.shape[:2])
    meta = {**result.to_json(), "px_per_mm": px_per_mm, "photo": where,
            "layout_match": round(match, 2),
            "seen_px_per_mm": round(float(seen), 2)}
    _write_whole(folder, stored, reference, meta)
    return result
