"""Draw the dice reader's readings over labelled images, to look at its failures.

    /work/venv/bin/python -m models.dice.show DIR OUT [--all] [--limit 40]

Green: labelled dice (value); red: readings (value or state), yellow: readings matched to no
label. Writes one PNG per image that is not read exactly (``--all``: every image), and prints
one line per such image. A development tool: it is not part of the command line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2

from vision.dice import read_dice
from vision.dice.evaluate import match, score_image
from vision.imageio import read_image


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("out")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--limit", type=int, default=40)
    args = parser.parse_args()
    folder, out = Path(args.folder), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
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
        matched = {i for i, _ in match([d.bbox for d in reading.dice],
                                       [lb["bbox"] for lb in entry["dice"]])}
        for lb in entry["dice"]:
            x0, y0, x1, y1 = (int(v * scale) for v in lb["bbox"])
            cv2.rectangle(big, (x0, y0), (x1, y1), (0, 255, 0), 1)
            cv2.putText(big, str(lb["value"]), (x0, y1 + 12), 0, 0.45, (0, 255, 0), 1)
        for i, d in enumerate(reading.dice):
            x0, y0, x1, y1 = (int(v * scale) for v in d.bbox)
            color = (0, 0, 255) if i in matched else (0, 255, 255)
            cv2.rectangle(big, (x0, y0), (x1, y1), color, 1)
            text = str(d.value) if d.value is not None else d.state[:4]
            cv2.putText(big, f"{text} {d.color[:3]} {d.confidence:.2f}", (x0, y0 - 3), 0, 0.4,
                        color, 1)
        cv2.imwrite(str(out / (Path(entry["image"]).stem + ".png")), big)
        written += 1
        if written >= args.limit:
            break


if __name__ == "__main__":
    main()
