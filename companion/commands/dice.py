"""``doomcompanion dice``, ``eval dice``, ``bench dice`` and ``render dice``.

- ``dice IMAGE... [--json]``: one line per image (``{"image": path, "dice": [...]}`` with
  ``--json``).
- ``eval dice DIR [--json]``: reads every image of ``DIR/labels.json`` and prints ``images, dice,
  accuracy, recall, fp_per_image, exact_rate, confusion``, and ``colour`` where labels name
  the dice's colours (see :mod:`vision.dice.evaluate`).
- ``bench dice DIR [--json]``: ``images, ms_median, ms_p95, peak_mb`` on one thread.
- ``render dice OUT --count N --seed S``: synthetic labelled scenes and their ``labels.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from companion.cli import print_json
from companion.datafiles import output_folder, read_labels, unlabel, write_whole
from companion.errors import BadInput
from companion.measure import bench_images, image_files
from vision.dice import read_dice
from vision.dice.evaluate import check_boxes_inside, check_labels, score_image, summarize
from vision.imageio import read_image
from vision.render.dice import render_scene


def _text(reading_json: dict) -> str:
    parts = []
    for d in reading_json["dice"]:
        value = d["value"] if d["value"] is not None else d["state"]
        parts.append(f"{value} ({d['color']})")
    return ", ".join(parts) if parts else "no dice"


def read(args: argparse.Namespace) -> int:
    for path in args.images:
        reading = read_dice(read_image(path)).to_json()
        if args.json:
            print_json({"image": str(path), **reading})
        else:
            print(f"{path}: {_text(reading)}")
    return 0


def evaluate(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    entries = check_labels(read_labels(folder, "dice"), str(folder / "labels.json"))
    results = []
    for i, entry in enumerate(entries):
        image = read_image(folder / entry["image"])
        check_boxes_inside(entry["dice"], (image.shape[1], image.shape[0]),
                           str(folder / "labels.json"), f"$[{i}]")
        results.append(score_image(entry["image"], read_dice(image), entry["dice"],
                                   (image.shape[1], image.shape[0])))
    score = summarize(results)
    if args.json:
        print_json(score.to_json())
    else:
        print(f"{folder}: {score.images} images, {score.dice} dice: accuracy {score.accuracy}, "
              f"recall {score.recall}, fp/image {score.fp_per_image}, "
              f"exact {score.exact_rate}")
        for true, row in score.confusion.items():
            print(f"  true {true}: " + ", ".join(f"{k}:{v}" for k, v in row.items()))
        for where, row in score.by_place.items():
            print(f"  {where}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
        if score.colour is not None:
            print(f"  colour: {score.colour['named']} of {score.colour['dice']} named as "
                  f"labelled: " + "; ".join(
                      f"{true} as " + ", ".join(f"{k} {v}" for k, v in row.items())
                      for true, row in score.colour["confusion"].items()))
    return 0


def bench(args: argparse.Namespace) -> int:
    report = bench_images(read_dice, image_files(args.folder))
    if args.json:
        print_json(report.to_json())
    else:
        print(report.summary())
    return 0


def render(args: argparse.Namespace) -> int:
    out = output_folder(args.out)
    unlabel(out)
    entries = []
    for i in range(args.count):
        rng = np.random.default_rng([args.seed, i])
        image, labels = render_scene(rng)
        name = f"scene_{i:05d}.jpg"
        if not cv2.imwrite(str(out / name), image, [cv2.IMWRITE_JPEG_QUALITY, 95]):
            raise BadInput(f"{out / name}: cannot write the image")
        entries.append({"image": name, "width": image.shape[1], "height": image.shape[0],
                        "dice": [{"value": lb["value"], "bbox": lb["bbox"],
                                  "bbox_kind": "top_face", "color": lb["color"],
                                  "state": lb["state"], "die_bbox": lb["die_bbox"]}
                                 for lb in labels]})
    write_whole(out / "labels.json", json.dumps(entries, indent=1) + "\n")
    print(f"{out}: {args.count} scenes and labels.json")
    return 0
