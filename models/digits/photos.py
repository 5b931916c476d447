"""Top-box crops of rendered sigil photos, cut exactly as the reader cuts them, for the fine-tune.

Run from the repository root on a folder that ``doomcompanion render sigil`` wrote (never on a
set used to measure the reader)::

    nice -n 10 /work/venv/bin/python -m companion render sigil /tmp/digits/r7001 \\
        --count 800 --seed 7001
    nice -n 10 /work/venv/bin/python -m models.digits.photos /tmp/digits/r7001 \\
        --out /tmp/digits/c7001.npz

Every photo is read by the reader up to its maps (:func:`vision.sigil.reader.card_samples`,
with the reader's own pose and its errors); each top box the label does not list as hidden is
kept: ``bx`` the ink crop (``CROP`` square, float16), ``by`` its digit (0 empty) and circled
flag, ``group`` the photo's index (hold out whole photos), and the photo's blur, tilt and glare
(``blur`` the larger of defocus and motion blur in photo pixels) for per-condition figures.
Photos the reader refuses are skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def crops_of_folder(folder: Path, limit: int | None = None) -> dict[str, np.ndarray]:
    from calibration.references import references
    from companion.commands.sigil import _art, all_layouts, load_layout
    from companion.errors import BadInput
    from vision.imageio import read_image
    from vision.readings import SigilState
    from vision.sigil.reader import card_samples

    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))[:limit]
    bx, by, group, blur, tilt, glare = [], [], [], [], [], []
    refused = 0
    t0 = time.time()
    for i, entry in enumerate(labels):
        truth = SigilState.from_json(entry["sigil"])
        cond = entry.get("conditions") or {}
        image = read_image(folder / entry["image"])
        try:
            got = card_samples(image, load_layout(truth.layout),
                               references(truth.layout, *_art(cond)) or None,
                               others=all_layouts())
        except BadInput:
            refused += 1
            continue
        for k, crop in enumerate(got["boxes"]):
            if f"top {k}" in truth.unknown:
                continue
            t = truth.top[k]
            bx.append(np.clip(crop, 0, 1).astype(np.float16))
            by.append([0, 0] if t is None else [t.value, int(t.circled)])
            group.append(i)
            blur.append(max(float(cond.get("defocus_px", 0) or 0),
                            float(cond.get("motion_px", 0) or 0)))
            tilt.append(float(cond.get("tilt_deg", 0) or 0))
            glare.append(bool(cond.get("glare")))
        if i % 100 == 99:
            print(f"{i + 1}/{len(labels)} photos, {len(bx)} boxes, {refused} refused, "
                  f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return {"bx": np.stack(bx), "by": np.array(by, np.int64), "group": np.array(group),
            "blur": np.array(blur, np.float32), "tilt": np.array(tilt, np.float32),
            "glare": np.array(glare)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    data = crops_of_folder(args.folder, args.limit)
    np.savez_compressed(args.out, **data)
    print(f"wrote {args.out}: {len(data['by'])} boxes, {(data['by'][:, 0] > 0).sum()} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
