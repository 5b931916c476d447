"""The failure sheets in docs/dice-failures are the committed reader's: read again, every real
source's failures are the ones its sheet shows, tile by tile."""

from __future__ import annotations

from pathlib import Path

import cv2

from models.dice import show

GALLERY = Path(__file__).resolve().parents[3] / "docs" / "dice-failures"
REGENERATE = ("python -m models.dice.show ../shared/data/dice-real/{name} docs/dice-failures "
              "--sheet --limit 500")


def _sources(shared_dir: Path) -> list[Path]:
    return sorted(p.parent for p in (shared_dir / "data" / "dice-real").glob("*/labels.json"))


def test_every_real_source_has_a_sheet_and_every_sheet_a_source(shared_dir):
    names = {p.name for p in _sources(shared_dir)}
    assert names, "no labelled source in ../shared/data/dice-real"
    assert {p.stem for p in GALLERY.glob("*.jpg")} == names
    assert {p.stem for p in GALLERY.glob("*.txt")} == names
    readme = (GALLERY / "README.md").read_text()
    assert all(name in readme for name in names)


def test_each_sheet_shows_the_committed_readers_failures(shared_dir):
    for folder in _sources(shared_dir):
        tiles, captions = show.failure_tiles(folder, 500)
        committed = (GALLERY / f"{folder.name}.txt").read_text().splitlines()
        assert captions == committed, (
            f"{folder.name}: the reader's failures changed; regenerate the sheet with "
            + REGENERATE.format(name=folder.name))
        sheet = cv2.imread(str(GALLERY / f"{folder.name}.jpg"))
        assert sheet is not None and sheet.shape == show.contact_sheet(tiles).shape
