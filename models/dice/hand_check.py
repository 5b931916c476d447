"""The dice reader's hand flag on pictures that were never rendered for training, and the dice
it reads there (to show that a new hand output leaves the dice alone).

    OMP_NUM_THREADS=2 PYTHONPATH=. /work/venv/bin/python -m models.dice.hand_check \
        [--models DIR] [--real /work/shared/data/dice-real] [--bench /tmp/dice-720p] \
        [--dump readings.json] [--compare other.json]

- ``demo``: every frame of ``companion/demo/demo.mp4`` read with :func:`vision.dice.read_dice`;
  the frames flagged ``hand`` among the frames whose truth has a hand (the demo's tan finger
  and pen, drawn by ``companion/demo/make_demo.py``, which no renderer of training scenes
  uses) and among those without one.
- ``real``: the photos under ``--real`` (no hand in any of them): how many are flagged.
- ``--dump``: every picture's dice (value, colour, box, confidence, state) and hand flag;
  ``--compare`` a dump of another model folder: how many pictures read other dice and how many
  another hand flag. About 2 minutes on two threads.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2

from companion.measure import IMAGE_SUFFIXES
from vision.dice import read_dice
from vision.dice.reader import DiceConfig, float_file


def _dice(reading: Any) -> list[dict[str, Any]]:
    return [{"value": d.value, "color": d.color, "bbox": [float(v) for v in d.bbox],
             "confidence": float(d.confidence), "state": d.state} for d in reading.dice]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=None, help="folder holding dice_detector.onnx "
                        "(default: the reader's own detector)")
    parser.add_argument("--real", default="/work/shared/data/dice-real")
    parser.add_argument("--bench", default="/tmp/dice-720p")
    parser.add_argument("--dump", default=None)
    parser.add_argument("--compare", default=None)
    args = parser.parse_args()
    config = DiceConfig()
    if args.models:
        config = replace(config, detector_path=str(float_file(args.models, "detector")))

    from companion.demo import demo_source_path, truth_frames

    truth = [f.hand for f in truth_frames()]
    readings: dict[str, Any] = {}
    cap = cv2.VideoCapture(str(demo_source_path()))
    flags = {"hand": [0, 0], "no_hand": [0, 0]}  # flagged, frames
    k = 0
    while True:
        ok, frame = cap.read()
        if not ok or k >= len(truth):
            break
        r = read_dice(frame, config)
        key = "hand" if truth[k] else "no_hand"
        flags[key][0] += r.hand
        flags[key][1] += 1
        readings[f"demo/{k:04d}"] = {"hand": r.hand, "dice": _dice(r)}
        k += 1
    cap.release()
    real_flags = real_n = 0
    for folder, prefix in ((args.real, "real"), (args.bench, "bench")):
        for path in sorted(p for p in Path(folder).rglob("*")
                           if p.suffix.lower() in IMAGE_SUFFIXES):
            image = cv2.imread(str(path))
            if image is None:
                continue
            r = read_dice(image, config)
            if prefix == "real":
                real_flags += r.hand
                real_n += 1
            readings[f"{prefix}/{path.relative_to(folder)}"] = {"hand": r.hand, "dice": _dice(r)}
    out: dict[str, Any] = {
        "detector": config.detector_path,
        "demo_hand_frames_flagged": f"{flags['hand'][0]}/{flags['hand'][1]}",
        "demo_no_hand_frames_flagged": f"{flags['no_hand'][0]}/{flags['no_hand'][1]}",
        "real_photos_flagged": f"{real_flags}/{real_n}",
    }
    if args.compare:
        other = json.loads(Path(args.compare).read_text())
        common = sorted(set(other) & set(readings))
        out["compared"] = len(common)
        out["dice_differ"] = [n for n in common if other[n]["dice"] != readings[n]["dice"]]
        out["hand_differ"] = sum(other[n]["hand"] != readings[n]["hand"] for n in common)
    if args.dump:
        Path(args.dump).write_text(json.dumps(readings))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
