"""Measure how well card finding recovers a card's corners, on rendered blank-card photos.

``python -m calibration.measure_registration [--count N] [--seed S] [--glare]`` renders blank
cards (half companion cards with markers, half printed marker-less ones) with
:mod:`vision.render.sigil` (tilt 0-30 degrees, no motion blur, defocus up to 0.6 px, no hand:
the photo a user takes to register a card), finds them with
:func:`vision.sigil.pose.find_card` and prints, per art style, the share of photos whose four
corners are all within 3 px and 6 px of the truth, and the median of the worst corner error.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from companion.doomcat.layouts import load_layout
from companion.errors import BadInput
from vision.imageio import jpeg_round_trip
from vision.render.sigil import CardStyle, photograph, render_card, sample_conditions
from vision.sigil.pose import find_card


def measure(count: int, seed: int, glare: bool) -> dict[str, dict[str, float]]:
    errors: dict[str, list[float]] = {"companion": [], "printed": []}
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        layout = load_layout("ABCD"[i % 4])
        art = "companion" if i % 2 == 0 else "printed"
        card = render_card(layout, None, CardStyle(art, int(rng.integers(4)), 8.0), rng)
        cond = sample_conditions(rng, hand=False, tilt_deg=float(rng.uniform(0, 30)),
                                 motion_px=0.0, defocus_px=float(rng.uniform(0, 0.6)),
                                 glare=float(rng.uniform(0.7, 1.0)) if glare else 0.0)
        frame, info = photograph(card, rng, cond)
        frame = jpeg_round_trip(frame, cond.jpeg_quality)
        try:
            found = find_card(frame, layout)
            err = float(np.abs(found.corners - info.card_corners_px).max())
        except BadInput:
            err = float("inf")
        errors[art].append(err)
    out = {}
    for art, errs in errors.items():
        e = np.array(errs)
        out[art] = {"photos": len(e), "within_3px": round(float((e <= 3).mean()), 3),
                    "within_6px": round(float((e <= 6).mean()), 3),
                    "median_px": round(float(np.median(e)), 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--glare", action="store_true", help="a glare blob on every card")
    args = parser.parse_args()
    print(json.dumps(measure(args.count, args.seed, args.glare)))


if __name__ == "__main__":
    main()
