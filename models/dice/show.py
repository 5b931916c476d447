"""Draw the dice reader's readings over labelled images, to look at its failures.

    /work/venv/bin/python -m models.dice.show DIR OUT [--all] [--limit 40]

    /work/venv/bin/python -m models.dice.show DIR OUT --sheet [--limit 48] [--candidates]

Green: labelled dice (value); red: readings (value or state), yellow: readings matched to no
label. Writes one PNG per image that is not read exactly (``--all``: every image), and prints
one line per such image. With ``--sheet``, writes instead one contact sheet ``OUT/NAME.jpg``
(NAME: the folder's name) of the failures die by die (a labelled die missed, read null or read
wrong, and a reading matched to no label), each tile the die's surroundings captioned "true ->
read" ("- -> 3" for a false positive), in the order of the labels file, and beside it
``OUT/NAME.txt``, one line per tile: the image's name and the caption. With ``--candidates``
each failure's tile is followed by what the classifier made of it: up to three of the
detector's candidates whose box centre lies in the failure's box (the labelled die's, or the
false positive's), strongest first, each as its classifier crop
(:func:`vision.dice.reader.classify`, before any second look) captioned with the detector
score, the "not a die" probability and the best class past it with its probability (".81 n.12
5 .83"; "ck" cocked, "ur" unreadable); the sheet then holds two failures a row. The sheets of
the committed reader on the real photos are in ``docs/dice-failures/``. A development tool:
it is not part of the command line.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from vision.dice import DiceConfig, read_dice
from vision.dice.evaluate import point_inside, score_image
from vision.dice.reader import CLASSES, candidates, classify
from vision.imageio import read_image
from vision.readings import box_center


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("out")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--sheet", action="store_true", help="one contact sheet of failures")
    parser.add_argument("--candidates", action="store_true",
                        help="with --sheet: each failure's candidates as the classifier sees them")
    args = parser.parse_args()
    folder, out = Path(args.folder), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.sheet:
        tiles, captions = failure_tiles(folder, args.limit, args.candidates)
        sheet = out / f"{folder.resolve().name}.jpg"
        cv2.imwrite(str(sheet), contact_sheet(tiles), [cv2.IMWRITE_JPEG_QUALITY, 88])
        sheet.with_suffix(".txt").write_text("".join(f"{line}\n" for line in captions))
        failures = len(tiles) // (1 + CANDIDATES) if args.candidates else len(tiles)
        print(f"{failures} failures on {sheet}")
        return
    written = 0
    for entry in json.loads((folder / "labels.json").read_text()):
        image = read_image(folder / entry["image"])
        reading = read_dice(image)
        result = score_image(entry["image"], reading, entry["dice"])
        if result.exact and not args.all:
            continue
        print(entry["image"], result.pairs, "fp", result.false_positives)
        scale = max(1, 400 // max(image.shape[:2]))
        big = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
        for lb in entry["dice"]:
            x0, y0, x1, y1 = (int(v * scale) for v in lb["bbox"])
            cv2.rectangle(big, (x0, y0), (x1, y1), (0, 255, 0), 1)
            cv2.putText(big, str(lb["value"]), (x0, y1 + 12), 0, 0.45, (0, 255, 0), 1)
        for i, d in enumerate(reading.dice):
            x0, y0, x1, y1 = (int(v * scale) for v in d.bbox)
            color = (0, 255, 255) if i in result.unmatched else (0, 0, 255)
            cv2.rectangle(big, (x0, y0), (x1, y1), color, 1)
            text = str(d.value) if d.value is not None else d.state[:4]
            cv2.putText(big, f"{text} {d.color[:3]} {d.confidence:.2f}", (x0, y0 - 3), 0, 0.4,
                        color, 1)
        cv2.imwrite(str(out / (Path(entry["image"]).stem + ".png")), big)
        written += 1
        if written >= args.limit:
            break


class Failures(NamedTuple):
    """One image's failures: its name in the labels file, the image, and each failure's box
    (the labelled die's, or the false positive's) with its caption."""
    name: str
    image: np.ndarray
    found: list[tuple[list[float] | tuple[float, ...], str]]


TILE = 112  # contact-sheet tile side in pixels, caption included


def _tile(image: np.ndarray, box: list[float] | tuple[float, ...], caption: str) -> np.ndarray:
    """The surroundings of ``box`` (2.2 times its longer side, at least 24 px, at most the
    image's longer side) at TILE px."""
    x0, y0, x1, y1 = box
    side = min(max(x1 - x0, y1 - y0, 24.0 / 2.2) * 2.2, float(max(image.shape[:2])))
    cx, cy, s = (x0 + x1) / 2.0, (y0 + y1) / 2.0, (TILE - 16) / side
    m = np.float32([[s, 0, TILE / 2.0 - s * cx], [0, s, (TILE - 16) / 2.0 - s * cy]])
    tile = cv2.warpAffine(image, m, (TILE, TILE - 16), flags=cv2.INTER_AREA if s < 1
                          else cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    return _captioned(tile, caption)


def _captioned(tile: np.ndarray, caption: str) -> np.ndarray:
    """A ``(TILE - 16, TILE, 3)`` picture with its caption in a bar below: one TILE tile."""
    bar = np.zeros((16, TILE, 3), np.uint8)
    cv2.putText(bar, caption, (3, 12), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1)
    return np.vstack([tile, bar])


CANDIDATES = 3  # candidate tiles after each failure's with --candidates
SHORT = {"cocked": "ck", "unreadable": "ur"}  # class names in a candidate's caption


def _candidate_tiles(box: list[float] | tuple[float, ...], boxes: np.ndarray, scores: np.ndarray,
                     crops: np.ndarray, probs: np.ndarray) -> list[np.ndarray]:
    """The classifier's view of the candidates whose box centre lies in ``box``, strongest
    first (``boxes`` come so), padded with blank tiles to ``CANDIDATES``."""
    tiles = []
    for b, score, crop, p in zip(boxes, scores, crops, probs, strict=True):
        if len(tiles) < CANDIDATES and point_inside(box_center(b), box):
            k = 1 + int(np.argmax(p[1:]))
            big = cv2.resize(crop, (TILE, TILE - 16), interpolation=cv2.INTER_NEAREST)
            caption = f"{score:.2f} n{p[0]:.2f} {SHORT.get(CLASSES[k], CLASSES[k])} {p[k]:.2f}"
            tiles.append(_captioned(big, caption.replace("0.", ".")))
    blank = np.zeros((TILE, TILE, 3), np.uint8)
    return tiles + [blank] * (CANDIDATES - len(tiles))


def failures(folder: Path, config: DiceConfig) -> Iterator[Failures]:
    """The failures of each image of ``folder`` that has any (see the module's docstring), in
    the order of its labels file."""
    for entry in json.loads((folder / "labels.json").read_text()):
        image = read_image(folder / entry["image"])
        reading = read_dice(image, config)
        result = score_image(entry["image"], reading, entry["dice"])
        found = [(lb["bbox"], f"{true} -> {'null' if read is None else read}")
                 for (true, read), lb in zip(result.pairs, entry["dice"], strict=True)
                 if read != true]
        found += [(reading.dice[i].bbox,
                   f"- -> {reading.dice[i].value or reading.dice[i].state[:6]}")
                  for i in result.unmatched]
        if found:
            yield Failures(entry["image"], image, found)


def failure_tiles(folder: Path, limit: int, with_candidates: bool = False,
                  ) -> tuple[list[np.ndarray], list[str]]:
    """The tiles of at most ``limit`` failures (see the module's docstring), one per failure
    or, with ``with_candidates``, each followed by its ``CANDIDATES`` candidate tiles; and one
    caption per failure: its image's name and what went wrong."""
    config = DiceConfig()
    groups: list[list[np.ndarray]] = []
    captions: list[str] = []
    for image_failures in failures(folder, config):
        image = image_failures.image
        if with_candidates:
            boxes, scores, _ = candidates(image, config)
            crops, probs, _ = classify(image, boxes, config)
        for box, caption in image_failures.found:
            group = [_tile(image, box, caption)]
            if with_candidates:
                group += _candidate_tiles(box, boxes, scores, crops, probs)
            groups.append(group)
            captions.append(f"{image_failures.name}: {caption}")
        if len(groups) >= limit:
            break
    return [tile for group in groups[:limit] for tile in group], captions[:limit]


def contact_sheet(tiles: list[np.ndarray], columns: int = 8) -> np.ndarray:
    """The tiles in rows of ``columns`` (blank when there are none)."""
    if not tiles:
        return np.zeros((TILE, TILE, 3), np.uint8)
    rows = -(-len(tiles) // columns)
    sheet = np.zeros((rows * TILE, min(columns, len(tiles)) * TILE, 3), np.uint8)
    for k, tile in enumerate(tiles):
        r, c = divmod(k, columns)
        sheet[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE] = tile
    return sheet


if __name__ == "__main__":
    main()
