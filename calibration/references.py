"""Blank-card reference images that the sigil reader subtracts, so printed artwork is never ink.

A registered card's ``reference.png`` (written by ``cards register``) wins; otherwise the blank
faces the project draws for the layout (the companion card and the printed-card designs), of
which the reader takes the one that matches the photo.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from companion.datafiles import file_stamp
from companion.doomcat.layouts import Layout, load_layout, registry_dir
from companion.errors import BadInput
from vision.imageio import read_image

REF_PPM = 5.0
"""Pixels per millimetre of the drawn blank faces."""


def references(name: str, art: str | None = None, design: int | None = None,
               ) -> tuple[np.ndarray, ...]:
    """Blank-card images (BGR ``uint8``) for layout ``name``.

    ``art`` ("companion" or "printed") and the printed ``design`` narrow the drawn faces down;
    a printed design known this way stands for a registered card. What was read or drawn is
    kept for the process's life, but a registered card's file (or a layout file) written again
    while it runs, by ``cards register``, is read again.
    """
    ref = registry_dir() / "cards" / name / "reference.png"
    if ref.is_file():
        return (_registered(str(ref), name, file_stamp(ref)),)
    return _drawn(load_layout(name), art, design)


@lru_cache(maxsize=16)
def _registered(path: str, name: str, stamp: tuple[int, int]) -> np.ndarray:
    del stamp  # part of the cache key only
    try:
        return read_image(path)
    except BadInput as exc:
        raise BadInput(f"{exc} (the blank card of registered card {name!r}: register it "
                       "again with cards register)") from None


@lru_cache(maxsize=64)
def _drawn(layout: Layout, art: str | None, design: int | None) -> tuple[np.ndarray, ...]:
    from vision.render.cardface import card_face

    out = []
    if art in (None, "companion"):
        out.append(np.asarray(card_face(layout, "companion", 0, REF_PPM).image))
    if art in (None, "printed"):
        designs = range(4) if design is None else [design]
        out += [np.asarray(card_face(layout, "printed", d, REF_PPM).image) for d in designs]
    return tuple(out)
