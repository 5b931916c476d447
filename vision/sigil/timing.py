"""CPU time per photo of the sigil reader (a companion to ``doomcompanion bench sigil``).

``bench`` measures wall-clock time, which on a busy shared machine includes time spent waiting
for a core; this measures the process's CPU time per read (one thread), which does not.

    python -m vision.sigil.timing DIR [--limit N]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

import cv2
import numpy as np

from companion.commands.sigil import _art, _labels, all_layouts, load_layout, references
from companion.errors import BadInput
from vision.imageio import read_image
from vision.sigil import read_sigil


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    folder = Path(args.folder)
    labels = _labels(folder)
    if args.limit:
        labels = labels[:args.limit]
    others = all_layouts()
    items = []
    for e, truth in labels:
        name = truth.layout
        items.append((read_image(folder / e["image"]), load_layout(name),
                      references(name, *_art(e.get("conditions"))) or None))
    cpu, wall = [], []
    for k, (img, lay, refs) in enumerate([items[0], *items]):
        t0, c0 = time.perf_counter(), time.process_time()
        with contextlib.suppress(BadInput):
            read_sigil(img, lay, refs, others=others)
        if k:  # the first read warms up (model loading, caches)
            cpu.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - t0) * 1000)
    print(f"{len(cpu)} images: cpu ms median {np.median(cpu):.1f} p95 "
          f"{np.percentile(cpu, 95):.1f}; wall ms median {np.median(wall):.1f} p95 "
          f"{np.percentile(wall, 95):.1f}")


if __name__ == "__main__":
    main()
