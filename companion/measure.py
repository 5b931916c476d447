"""Benchmarks of the readers: time per image on one thread, median and p95, peak memory.

Used by ``doomcompanion bench dice DIR`` and ``bench sigil DIR``. Speed is a benchmark figure,
never a timed assertion in a test.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.errors import BadInput
from vision.imageio import read_image

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


@dataclass(frozen=True)
class BenchReport:
    images: int
    ms_median: float
    ms_p95: float
    peak_mb: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line for people: ``30 images: median 9.8 ms, p95 11.9 ms, peak 216 MiB``."""
        return (f"{self.images} images: median {self.ms_median} ms, p95 {self.ms_p95} ms, "
                f"peak {self.peak_mb} MiB")


def image_files(folder: str | Path) -> list[Path]:
    """The image files of a folder, sorted by name; :class:`BadInput` if there are none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"{folder}: not a folder")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise BadInput(f"{folder}: no images ({', '.join(IMAGE_SUFFIXES)}) in this folder")
    return files


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def bench_images(read: Callable[[np.ndarray], Any], files: Sequence[Path], *,
                 warmup: int = 1) -> BenchReport:
    """Time ``read(image)`` once per file on one thread (decoding the file is not timed).

    The first ``warmup`` calls (model loading, caches) are run but not counted.
    """
    if not files:
        raise BadInput("no images to benchmark")
    cv2.setNumThreads(1)
    images = [read_image(f) for f in files]
    for image in images[:warmup]:
        read(image)
    times = []
    for image in images:
        start = time.perf_counter()
        read(image)
        times.append((time.perf_counter() - start) * 1000.0)
    return BenchReport(images=len(images), ms_median=round(float(np.median(times)), 3),
                       ms_p95=round(float(np.percentile(times, 95)), 3),
                       peak_mb=round(peak_rss_mb(), 1))
