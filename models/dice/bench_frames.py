"""Write rendered 1280x720 table frames with 4-10 dice, for ``doomcompanion bench dice``.

    /work/venv/bin/python -m models.dice.bench_frames /tmp/dice-720p --count 30 --seed 0
    /work/venv/bin/python -m companion bench dice /tmp/dice-720p --json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.render.dice import render_scene


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for i in range(args.count):
        image, labels = render_scene(np.random.default_rng([args.seed, i]), width=1280,
                                     height=720, count=(4, 10), size_px=(50.0, 110.0),
                                     tilt_deg=(0.0, 45.0))
        name = f"frame_{i:04d}.jpg"
        cv2.imwrite(str(out / name), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        entries.append({"image": name, "width": 1280, "height": 720,
                        "dice": [{"value": lb["value"], "bbox": lb["bbox"],
                                  "bbox_kind": "top_face", "color": lb["color"],
                                  "state": lb["state"]} for lb in labels]})
    (out / "labels.json").write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
