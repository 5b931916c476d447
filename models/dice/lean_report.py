"""How well the lean check would tell leaning dice from flat ones, on rendered table scenes.

    /work/venv/bin/python -m models.dice.lean_report --count 400 --seed 779 \
        [--cocked-rate 0.25] [--wide-rate 1] [--models DIR] [--focals 0,2,1.2,0.8,0.55] \
        [--exact] [--bars 18,20,22,25,28]

Each scene is drawn as :mod:`models.dice.validate` draws its table scenes (``render_scene``
from ``default_rng([seed, i])``) and read with the lean check off. For every die read with a
value and matched to a labelled die, the report takes its face shape (the face net's, as the
reader reads it, or with ``--exact`` the renderer's own from the face's corners), its angle
from the plane the dice share (:func:`vision.dice.lean.leans`, NaN where no plane is shared)
and the error of its shape from the exact one. It prints one JSON object: for each bar, how
many dice labelled flat and how many labelled cocked lie further than it from the plane (what
``lean_degrees`` at that bar would call cocked), and the shape error's quantiles on each.

Setting a face net against the renderer's exact shapes on the same scenes tells its errors
from the plane's geometry. A development tool: it is not part of the command line.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from models.dice.validate import with_models
from vision.dice import DiceConfig, read_dice
from vision.dice.evaluate import match
from vision.dice.lean import face_shape
from vision.dice.reader import face_shapes, lean_angles
from vision.render.dice import render_scene


class Lean(NamedTuple):
    """One die read with a value: its label's state, its angle from the shared plane (degrees,
    NaN without a plane), its shape's error from the exact one, and its box's longer side."""
    state: str
    angle: float
    error: float
    side: float


def scene_leans(image: np.ndarray, labels: list[dict], config: DiceConfig,
                exact: bool = False) -> list[Lean]:
    """The dice of one rendered scene read with a value and matched to a labelled die with a
    face (``quad``), as :class:`Lean` rows; none when fewer than ``lean_support`` dice are
    read (the reader would not judge them). ``config``'s lean check is turned off for the
    reading; its face net and plane settings are used for the angles."""
    dice = list(read_dice(image, replace(config, lean_degrees=float("inf"))).dice)
    if len(dice) < config.lean_support:
        return []
    pairs = dict(match([d.bbox for d in dice], [lb["bbox"] for lb in labels]))
    if exact and any(a not in pairs or "quad" not in labels[pairs[a]] for a in range(len(dice))):
        return []  # the exact plane needs every die's face
    truth = [face_shape(labels[pairs[a]]["quad"]) if a in pairs and "quad" in labels[pairs[a]]
             else None for a in range(len(dice))]
    shapes = (np.array(truth) if exact
              else face_shapes(image, [d.bbox for d in dice], config))
    angles = lean_angles(image, dice, config, shapes)[0]
    return [Lean(labels[pairs[a]]["state"], float(angles[a]),
                 float(np.hypot(*(shapes[a] - truth[a]))),
                 float(max(d.bbox[2] - d.bbox[0], d.bbox[3] - d.bbox[1])))
            for a, d in enumerate(dice)
            if d.value is not None and a in pairs and truth[a] is not None]


def summary(rows: list[Lean], bars: list[float]) -> dict:
    """Per bar, the flat and the cocked dice further than it from the plane (NaN: never), and
    the shape error's quantiles (0.5, 0.9) on each kind."""
    def kind(state: str) -> tuple[np.ndarray, np.ndarray]:
        picked = [r for r in rows if r.state == state]
        return (np.nan_to_num(np.array([r.angle for r in picked], float), nan=-1.0),
                np.array([r.error for r in picked], float))
    flat, flat_err = kind("flat")
    cocked, cocked_err = kind("cocked")

    def quantiles(err: np.ndarray) -> list[float] | None:
        return [round(float(q), 3) for q in np.quantile(err, [0.5, 0.9])] if len(err) else None

    return {"flat": len(flat), "cocked": len(cocked),
            "flat_error": quantiles(flat_err), "cocked_error": quantiles(cocked_err),
            "bars": {f"{bar:g}": {"flat_called_cocked": int((flat > bar).sum()),
                                  "cocked_named": int((cocked > bar).sum())} for bar in bars}}


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=779)
    parser.add_argument("--cocked-rate", type=float, default=None,
                        help="share of dice drawn leaning (default render_scene's own)")
    parser.add_argument("--wide-rate", type=float, default=None,
                        help="share of scenes seen through a wide lens (default render_scene's)")
    parser.add_argument("--models", help="folder with dice_detector.onnx, dice_classifier.onnx "
                        "and, if it has one, dice_face.onnx (else the committed nets)")
    parser.add_argument("--focals", type=_floats, default=None,
                        help="focal lengths tried, as multiples of the frame's longer side "
                        "(default the reader's lean_focals)")
    parser.add_argument("--exact", action="store_true",
                        help="the renderer's exact face shapes instead of the face net's")
    parser.add_argument("--bars", type=_floats, default=[18, 20, 22, 25, 28])
    args = parser.parse_args()
    config = with_models(DiceConfig(), args.models)
    if args.focals:
        config = replace(config, lean_focals=tuple(args.focals))
    view = {k: v for k, v in (("cocked_rate", args.cocked_rate), ("wide_rate", args.wide_rate))
            if v is not None}
    rows: list[Lean] = []
    for i in range(args.count):
        image, labels = render_scene(np.random.default_rng([args.seed, i]), extras={}, **view)
        rows += scene_leans(image, labels, config, exact=args.exact)
    print(json.dumps({"scenes": args.count, "seed": args.seed, **view,
                      "models": args.models or "committed", "exact": args.exact,
                      "focals": list(config.lean_focals), **summary(rows, args.bars)}))


if __name__ == "__main__":
    main()
