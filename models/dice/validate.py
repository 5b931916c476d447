"""Measure the dice reader on a rendered validation set: dice, hand flag, colours.

    /work/venv/bin/python -m models.dice.validate --count 200 --seed 777 \
        [--models DIR] [--set value_threshold=0.6 --set hand_min_share=0.02]

The scenes are those of ``doomcompanion render dice OUT --count N --seed S`` (same seeds, same
renderer defaults), read in memory. ``--closeups`` reads close-ups of one die instead
(:func:`vision.render.dice.render_closeup`, 44-128 px or ``--side LO,HI``, half of them
casino-style see-through dice, neighbours cut by the border), a second rendered set for crops
of one die; ``--vivid-rate``, ``--print-rate``, ``--sharp-rate``, ``--flush-rate``,
``--off-axis-rate`` and ``--stamp-rate`` draw their casino dice in the renderer's other looks
(``CLOSEUP_LOOKS``).
``--distractor-rate``, ``--stone-rate`` and ``--board-rate`` add look-alikes, stone table tops
and boards of land tiles with number tokens to the table scenes, ``--board-dice-rate`` scenes
whose dice lie on such a board, beside and over its tokens, ``--sheet-rate`` scenes whose dice
lie on a sheet of paper (all 0 by default; ``TABLE_LOOKS``); ``--tilt
LO,HI``, ``--size LO,HI`` and ``--stretch LO,HI`` the table scenes' camera tilt, die edges and
horizontal stretch (default ``render_scene``'s own ranges; no stretch). ``--recolour`` turns
each scene's hues by 60-300 degrees (:func:`recolour`): the same scenes in colours the renderer
does not draw, a test of whether the reader leans on the renderer's palette.
Thresholds of :class:`vision.dice.DiceConfig` are chosen
on this set, never on the real photographs. Prints one JSON object:

- the ``eval dice`` figures on the flat dice, and ``wrong_values``, matched flat dice read
  as another value. Cocked, covered and, in close-ups, partly out-of-view dice are left out:
  a reading of one is neither a false positive nor a hit, and a value read on one is counted
  by ``wrong_on_unreadable``. Close-up neighbours under 40% in view have been labelled so
  since session 12 (unlabelled before), so close-up false positives are not comparable with
  older figures;
- ``hand``: precision and recall of the reading's ``hand`` flag against the scenes with a hand
  that covers at least 0.5% of the frame, and the flag's rate on scenes without a hand;
- ``translucent``: on matched dice, the share of translucent dice named ``"translucent"`` and
  the share of the other dice wrongly named so.
- ``colour`` (the ``eval dice`` figure, :func:`vision.dice.evaluate.colour_score`): of the
  matched flat dice, how many the reader names by the colour they were drawn in, and the
  confusion; null with ``--recolour``, whose turned hues no longer have the names the labels
  give;
- ``leaning``: the dice labelled cocked (no face within about 26 degrees of level), how many
  of them the reader finds, and of those how many it reports without a value and how many
  as ``cocked`` (``--cocked-rate`` draws more of them); and how many dice labelled flat the
  reader reports ``cocked`` (``flat_called_cocked``);
- with ``--baseline-set FIELD=VALUE`` (repeatable), ``paired``: every scene is also read by
  the reader with those fields changed (the baseline), and the scene-by-scene differences are
  summed: dice read right gained and lost, false positives added and removed, and the scenes
  whose hand flag differs. A change that moves a few dice either way is judged by these
  (models/dice/HISTORY.md, "Session 25").

A development tool: it is not part of the command line.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.dice import DiceConfig, read_dice
from vision.dice.evaluate import ImageResult, match, score_image, summarize
from vision.dice.reader import float_file, net_file
from vision.options import parse_fields
from vision.readings import DiceReading
from vision.render.dice import render_closeup, render_scene

# render_closeup's looks of its casino dice, each a --NAME-rate option here and in train.py
# (render_closeup's NAME_rate): "share of the <text>"
CLOSEUP_LOOKS = (("vivid", "close-ups' casino dice drawn in a brighter look: vivid bodies, pure "
                  "white pips near the corners, far-face pips showing through nearly as bright, "
                  "rings of letters around the 1 (vision.render.dice.vivid_spec)"),
                 ("print", "close-ups' casino dice whose printing is large and bold: a ring of "
                  "letters tight around the 1's pip, an emblem between the 2's pips "
                  "(vision.render.dice.DieSpec.bold_print)"),
                 ("sharp", "close-ups of a casino die drawn as a sharp, well-exposed photo "
                  "shows it: deep saturated bodies, pure white pips, faint show-through, no "
                  "blur (vision.render.dice.sharp_spec)"),
                 ("flush", "close-ups of a casino die drawn with flush pips: the side faces' "
                  "pips as bright as the top's (vision.render.dice.DieSpec.flush_pips)"),
                 ("off-axis", "close-ups cut from a photo taken close over the table, the die "
                  "off the lens axis: side faces along any edge of its top face"),
                 ("stamp", "close-ups of a casino die drawn stamped as precision casino dice "
                  "are: a serial number between the 6's pip columns, the casino's name in a "
                  "fine ring round the 1 (vision.render.dice.DieSpec.stamped)"))
# render_scene's looks of the table scenes, each a --NAME-rate option here and, but for the
# look-alikes, in train.py (render_scene's NAME_rate): "share of table scenes with <text>"
TABLE_LOOKS = (("distractor", "look-alikes that are not dice "
                "(vision.render.dice.draw_distractors)"),
               ("stone", "a stone top (granite, terrazzo: vision.render.dice.stone_background)"),
               ("board", "a game board of land tiles carrying number tokens "
                "(vision.render.dice.draw_board)"),
               ("board-dice", "its dice lying ON such a board: beside and over its tokens, "
                "across its tiles' edges (vision.render.dice.board_places)"),
               ("desk", "desk clutter among its look-alikes: cables, keyboard keys "
                "(vision.render.dice.DESK_KINDS)"),
               ("wide", "its dice seen through a wide-angle lens (vision.render.dice.wide_lens): "
                "dice away from its axis show the side faces that face it"),
               ("sheet", "its dice on a sheet of paper on the table: a score sheet, notes, a "
                "pale card (vision.render.dice.draw_sheet)"))


def recolour(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` (BGR) with every hue turned by one angle of 60-300 degrees drawn from
    ``rng``: yellow dice turn cyan or violet, wood turns green or blue. Saturation and value
    (the brightest channel) stay, so black, white and grey stay as they are, but a colour's
    grey level moves (a yellow turned blue is darker). The labels stay true but for the dice's
    colour names."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    turn = int(rng.integers(30, 151))  # OpenCV's 8-bit hue: 180 steps round the circle
    hsv[..., 0] = (hsv[..., 0].astype(np.int16) + turn) % 180
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def rate_key(name: str) -> str:
    """The renderer's keyword of a ``--NAME-rate`` option: ``name_rate``."""
    return name.replace("-", "_") + "_rate"


def add_rates(parser: argparse.ArgumentParser, names: tuple[tuple[str, str], ...],
              help: str) -> None:
    """A ``--NAME-rate`` option (a float, default 0) for each ``(NAME, text)`` of ``names``;
    ``help`` is its help, formatted with the ``text`` as ``{what}`` and the renderer's
    keyword as ``{key}``."""
    for name, what in names:
        parser.add_argument(f"--{name}-rate", type=float, default=0.0,
                            help=help.format(what=what, key=rate_key(name)))


def rates(args: argparse.Namespace, names: tuple[tuple[str, str], ...]) -> dict[str, float]:
    """The ``--NAME-rate`` options of ``names`` (:func:`add_rates`) as the renderer's
    keywords (``name_rate``)."""
    return {rate_key(name): getattr(args, rate_key(name)) for name, _ in names}


def parse_set(items: list[str], config: DiceConfig) -> DiceConfig:
    """``config`` with the ``--set FIELD=VALUE`` items applied (:func:`vision.options.parse_fields`;
    a threshold may be ``inf``: "never"); a mistake exits naming the field."""
    try:
        return replace(config, **parse_fields(DiceConfig, items, finite=False))
    except ValueError as exc:
        raise SystemExit(f"--set: {exc}") from None


def _scored(name: str, image: np.ndarray, labels: list[dict], config: DiceConfig,
            ) -> tuple[DiceReading, list[tuple[int, int]], ImageResult]:
    """One scene read with ``config``: the reading, its dice matched to the labels
    (reading index, label index), and its score on the flat dice. A reading matched to a die
    that is not flat (cocked, covered, mostly out of view) is left out of the score."""
    reading = read_dice(image, config)
    flat = [lb for lb in labels if lb["state"] == "flat"]
    pairs = match([d.bbox for d in reading.dice], [lb["bbox"] for lb in labels])
    on_other = {r for r, k in pairs if labels[k]["state"] != "flat"}
    seen = DiceReading(tuple(d for r, d in enumerate(reading.dice) if r not in on_other))
    return reading, pairs, score_image(name, seen, flat, (image.shape[1], image.shape[0]))


def counts(report: dict) -> dict[str, int]:
    """Right, wrong, false positives, matched and cocked-or-unreadable-read-with-a-value of one
    ``validate`` report."""
    places = report["by_place"].values()
    right = sum(p["right"] for p in places)
    matched = sum(p["right"] + p["wrong"] + p["null"] for p in places)
    return {"right": right, "wrong": report["wrong_values"],
            "fp": round(report["fp_per_image"] * report["images"]), "matched": matched,
            "nonflat": report["wrong_on_unreadable"]}


def range_arg(text: str) -> tuple[float, float]:
    """A command line's ``LO,HI`` as two floats (argparse's ``type``)."""
    low, _, high = text.partition(",")
    try:
        return float(low), float(high)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LO,HI (two numbers)") from None


def with_models(config: DiceConfig, folder: str | None) -> DiceConfig:
    """``config`` reading the nets in ``folder`` (``--models``): its ``dice_detector.onnx``
    and classifier, and its face net where it has one (else the committed face net), each
    the file :func:`vision.dice.reader.net_file` takes (the int8 copy where the folder has
    one and this CPU runs it exactly); ``config`` itself when no folder is given."""
    if not folder:
        return config
    path = Path(folder)
    config = replace(config, detector_path=str(float_file(path, "detector")),
                     classifier_path=str(net_file(path, "classifier")))
    face = net_file(path, "face")
    return replace(config, face_path=str(face)) if face.is_file() else config


def build_parser() -> argparse.ArgumentParser:
    """The options of a rendered set (and of the reader's models and settings)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=777)
    parser.add_argument("--models", help="folder with dice_detector.onnx, dice_classifier.onnx "
                        "and, if it has one, dice_face.onnx (else the committed face net); "
                        "each net's .int8.onnx copy where the folder has one")
    parser.add_argument("--set", action="append", default=[], help="DiceConfig field=value")
    parser.add_argument("--closeups", action="store_true",
                        help="close-ups of one die (render_closeup) instead of table scenes")
    add_rates(parser, CLOSEUP_LOOKS, "with --closeups: share of the {what} (render_closeup's "
              "{key}; default 0)")
    add_rates(parser, TABLE_LOOKS, "share of table scenes with {what} (render_scene's {key}; "
              "default 0, the scenes of `render dice`)")
    parser.add_argument("--tilt", type=range_arg, default=None, metavar="LO,HI",
                        help="camera tilt range in degrees (render_scene's tilt_deg, or "
                        "with --closeups render_closeup's; default their own)")
    parser.add_argument("--size", type=range_arg, default=None, metavar="LO,HI",
                        help="table scenes' die edge range in pixels (render_scene's size_px; "
                        "default its own)")
    parser.add_argument("--stretch", type=range_arg, default=None, metavar="LO,HI",
                        help="table scenes' horizontal stretch range (render_scene's stretch: "
                        "photos squashed to a square by their exporter; default none)")
    parser.add_argument("--cocked-rate", type=float, default=None,
                        help="share of the table scenes' dice drawn leaning on an edge or "
                        "another die (render_scene's cocked_rate; default its own)")
    parser.add_argument("--hand-rate", type=float, default=None,
                        help="share of table scenes with a hand (render_scene's hand_rate; "
                        "default its own)")
    parser.add_argument("--hand-variety", type=float, default=0.0,
                        help="share of those hands drawn in the varied styles: open hand, fist, "
                        "pointing finger, pen, fingertips at the edge, sleeves, pale to very dark "
                        "skin, side light, motion blur (render_scene's hand_variety; default 0)")
    parser.add_argument("--side", type=range_arg, default=(44, 128), metavar="LO,HI",
                        help="with --closeups: the close-ups' side range in pixels (default "
                        "44,128)")
    parser.add_argument("--recolour", action="store_true",
                        help="turn each scene's hues by 60-300 degrees (recolour): colours the "
                        "renderer does not draw; the scenes are otherwise the same")
    parser.add_argument("--baseline-set", action="append", default=None, metavar="FIELD=VALUE",
                        help="also read every scene with the reader changed by these DiceConfig "
                        "fields (the baseline) and report, scene by scene, the dice read right "
                        "that it gains and loses and the false positives it adds and removes "
                        "against that baseline (\"paired\")")
    return parser


def scenes(args: argparse.Namespace) -> Iterator[tuple[np.ndarray, list[dict], dict]]:
    """The set's scenes, one after another: image, labels and the renderer's ``extras``
    (``hand_mask`` where a hand is drawn; empty for close-ups), scene ``i`` from the
    generator seeded ``[args.seed, i]``."""
    view = {k: v for k, v in (("tilt_deg", args.tilt), ("size_px", args.size),
                              ("stretch", args.stretch)) if v}
    if args.cocked_rate is not None:
        view["cocked_rate"] = args.cocked_rate
    if args.hand_rate is not None:
        view["hand_rate"] = args.hand_rate
    view["hand_variety"] = args.hand_variety  # 0 draws nothing: the scenes as before it existed
    looks, table_rates = rates(args, CLOSEUP_LOOKS), rates(args, TABLE_LOOKS)
    for i in range(args.count):
        extras: dict = {}
        rng = np.random.default_rng([args.seed, i])
        if args.closeups:
            side = int(rng.integers(int(args.side[0]), int(args.side[1]) + 1))
            image, labels = render_closeup(rng, side, **looks,
                                           **({"tilt_deg": args.tilt} if args.tilt else {}))
        else:
            image, labels = render_scene(rng, extras=extras, **table_rates, **view)
        if args.recolour:  # its own stream: the scenes stay those of the same seed
            image = recolour(image, np.random.default_rng([args.seed, i, 1]))
        yield image, labels, extras


def main() -> None:
    args = build_parser().parse_args()
    looks, table_rates = rates(args, CLOSEUP_LOOKS), rates(args, TABLE_LOOKS)
    config = parse_set(args.set, with_models(DiceConfig(), args.models))
    baseline = None if args.baseline_set is None else parse_set(args.baseline_set, config)
    paired = dict.fromkeys(("gained", "lost", "fp_added", "fp_removed", "hand_changed"), 0)
    results = []
    hand_tp = hand_fp = hand_fn = hand_tn = 0
    clear_hit = clear_n = other_wrong = other_n = wrong_unreadable = 0
    leaning = dict.fromkeys(("labelled", "found", "null", "cocked", "flat_called_cocked"), 0)
    for i, (image, labels, extras) in enumerate(scenes(args)):
        reading, pairs, result = _scored(str(i), image, labels, config)
        results.append(result)
        if baseline is not None:
            before, _, was = _scored(str(i), image, labels, baseline)
            gain = result.correct - was.correct
            more = result.false_positives - was.false_positives
            paired["gained"] += max(gain, 0)
            paired["lost"] += max(-gain, 0)
            paired["fp_added"] += max(more, 0)
            paired["fp_removed"] += max(-more, 0)
            paired["hand_changed"] += reading.hand != before.hand
        mask = extras.get("hand_mask")
        truth = mask is not None and float(mask.mean()) >= 0.005
        hand_tp += truth and reading.hand
        hand_fn += truth and not reading.hand
        hand_fp += (mask is None) and reading.hand
        hand_tn += (mask is None) and not reading.hand
        leaning["labelled"] += sum(lb["state"] == "cocked" for lb in labels)
        for r, k in pairs:
            die, lb = reading.dice[r], labels[k]
            if lb["state"] != "flat" and die.value is not None:
                wrong_unreadable += 1
            if lb["state"] == "cocked":
                leaning["found"] += 1
                leaning["null"] += die.value is None
                leaning["cocked"] += die.state == "cocked"
            elif lb["state"] == "flat":
                leaning["flat_called_cocked"] += die.state == "cocked"
            if lb["color"] == "translucent":
                clear_n += 1
                clear_hit += die.color == "translucent"
            else:
                other_n += 1
                other_wrong += die.color == "translucent"
    score = summarize(results).to_json()
    confusion = score.pop("confusion", {})
    wrong = sum(n for true, row in confusion.items() for read, n in row.items()
                if read not in ("null", "missed", str(true)))
    report = {
        "models": args.models or "committed", "set": args.set, "scenes": args.count,
        "closeups": args.closeups, **looks, **table_rates,
        "tilt": args.tilt, "size": args.size, "stretch": args.stretch,
        "cocked_rate": args.cocked_rate,
        "recolour": args.recolour,
        "side": args.side if args.closeups else None,
        **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in score.items()},
        # a recoloured scene's hues no longer have the names its labels give
        **({"colour": None} if args.recolour else {}),
        "wrong_values": wrong, "wrong_on_unreadable": wrong_unreadable, "leaning": leaning,
        "hand": {"precision": round(hand_tp / max(1, hand_tp + hand_fp), 4),
                 "recall": round(hand_tp / max(1, hand_tp + hand_fn), 4),
                 "flag_rate_without_hand": round(hand_fp / max(1, hand_fp + hand_tn), 4),
                 "scenes_with_hand": hand_tp + hand_fn},
        "translucent": {"named": round(clear_hit / max(1, clear_n), 4), "dice": clear_n,
                        "others_named_translucent": round(other_wrong / max(1, other_n), 4)},
    }
    if baseline is not None:
        report["paired"] = {"baseline_set": args.baseline_set, **paired}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
