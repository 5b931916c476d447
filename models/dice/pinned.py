"""The rendered scenes that the reader's tests pin, each with its claim, and a search for more.

    python -m models.dice.pinned CLAIM --start 1000 [--count 2000] [--stream 1] [--first 5]

Some reader tests check a pass or a look that only a few scenes exercise: a die that only the
middle pass finds, a close-up whose first pass splits into unreadable parts, a die that the
classifier rejects at its first crop. Which rendered scene does that depends on the committed
nets, so a new net can leave such a test without its scene although the reader is sound. Each
claim is a function here that draws the scene of a seed and checks the whole claim: it returns
the values of the dice the claim is about, or raises :class:`ClaimFails` saying which part does
not hold. The test calls it with its pinned seed (:data:`PINNED`); when a net changes and the
test loses its scene, this command searches the seeds ``[s, stream]`` for ``s`` from
``--start`` and prints those where the claim holds, with those values, to pin instead. A development
tool: it is not part of the command line. ``CLAIM`` is one of :data:`CLAIMS`' names.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from vision.dice import DiceConfig, read_dice
from vision.dice.evaluate import match, point_inside, score_image
from vision.readings import DiceReading, Die, box_center
from vision.render.dice import render_closeup, render_scene

__all__ = ["CLAIMS", "PINNED", "ClaimFails", "coarse_parts", "leaning_die", "main", "middle_pass",
           "parts_dropped", "rejected_crop", "search", "sheet_group", "split_closeup", "weak_peak"]

Seed = int | Sequence[int]
Values = tuple[int, ...]


class ClaimFails(AssertionError):
    """The scene of a seed does not show what its claim says; the message says which part."""


def _need(holds: bool, what: str) -> None:
    if not holds:
        raise ClaimFails(what)


def _flat(labels: list[dict]) -> list[dict]:
    return [lb for lb in labels if lb["state"] == "flat"]


def _on(die: Die, label: dict) -> bool:
    """``die`` is read flat with ``label``'s value at its face's box."""
    return ((die.value, die.state) == (label["value"], "flat")
            and match([die.bbox], [label["bbox"]]) == [(0, 0)])


def _closeup(seed: Seed) -> tuple[np.ndarray, dict]:
    """A close-up (``render_closeup`` at a side drawn from the same generator) and its one
    flat face."""
    rng = np.random.default_rng(seed)
    frame, labels = render_closeup(rng, int(rng.integers(128, 321)))
    face = _flat(labels)
    _need(len(face) == 1, f"the close-up shows {len(face)} flat faces, not one")
    return frame, face[0]


def coarse_parts(seed: Seed) -> Values:
    """A close-up read as its one die, with its value, with the coarse pass at a quarter from
    96 px: the first pass's peaks on its large pips lie inside the die the coarser passes find
    whole and are dropped as its parts (with ``coarse_part_share`` above 1, some are kept
    beside it)."""
    frame, face = _closeup(seed)
    config = DiceConfig(coarse_scale=0.25, coarse_min_side=96.0)
    _need([d.value for d in read_dice(frame, config).dice] == [face["value"]],
          "the coarse pass does not read the close-up alone")
    kept = read_dice(frame, replace(config, coarse_part_share=2.0)).dice
    _need(len(kept) > 1 and face["value"] in [d.value for d in kept],
          "with nothing a part, no part is kept beside the die")
    return (int(face["value"]),)


def sheet_group(seed: Seed) -> Values:
    """Dice on a sheet of paper that the reader, without ``group_parts``, takes with the
    sheet for one large die, dropping its dice as that die's parts; they are each read more
    surely than it, so it is a group: dropped, and every die read right at its face, by
    default and at two surer parts, none of them boxing two dice."""
    frame, labels = render_scene(np.random.default_rng(seed), sheet_rate=1.0)
    _need(len(labels) >= 2 and len(_flat(labels)) == len(labels),
          "the scene is not two or more flat dice")
    centres = [box_center(lb["bbox"]) for lb in labels]

    def holds(die: Die) -> int:
        return sum(point_inside(c, die.bbox) for c in centres)

    group = read_dice(frame, DiceConfig(group_parts=0)).dice
    _need(len(group) == 1 and holds(group[0]) == len(labels),
          "without group_parts the reader does not see one die holding them all")
    for config in (DiceConfig(), DiceConfig(group_parts=2)):
        dice = read_dice(frame, config).dice
        _need(score_image("sheet", DiceReading(dice, False), labels).correct == len(labels)
              and all(holds(d) <= 1 for d in dice),
              f"group_parts={config.group_parts} does not read every die alone")
    return tuple(sorted(int(lb["value"]) for lb in labels))


def middle_pass(seed: Seed) -> Values:
    """A die between the other passes' sizes: one flat die of 100-220 px, tilted 0-45 degrees,
    that the reader without its middle pass does not find at all, that the middle pass finds
    alone (without the weak peaks) and that the reader reads flat with its value at its
    face's box."""
    frame, labels = render_scene(np.random.default_rng(seed), count=(1, 2),
                                 size_px=(100.0, 220.0), tilt_deg=(0.0, 45.0))
    _need(len(labels) == 1 and labels[0]["state"] == "flat", "the scene is not one flat die")
    label = labels[0]
    _need(read_dice(frame, DiceConfig(mid_scale=0.0)).dice == (),
          "the reader without its middle pass finds something")
    alone = read_dice(frame, DiceConfig(weak_threshold=math.inf)).dice
    _need([d.value for d in alone] == [label["value"]],
          f"without the weak peaks it reads {[d.value for d in alone]}, not {label['value']}")
    dice = read_dice(frame).dice
    _need(len(dice) == 1 and _on(dice[0], label), "the reader does not read the die at its face")
    return (int(label["value"]),)


def split_closeup(seed: Seed) -> Values:
    """A close-up that a coarser pass finds whole, whose first pass alone (without the middle
    and coarse passes and the second look) peaks on two parts that read no value; looked at
    again (and only then: ``look_threshold`` above 1 keeps the parts), they become the one die,
    read flat with its value at its face's box, inside the frame."""
    frame, face = _closeup(seed)
    value = face["value"]
    _need([d.value for d in read_dice(frame).dice] == [value],
          f"the reader does not read the close-up's {value} alone")
    config = DiceConfig(coarse_scale=0.0, mid_scale=0.0)
    first = read_dice(frame, replace(config, look_face=0.0)).dice
    _need(len(first) == 2 and all(d.value is None for d in first),
          "the first pass does not find two parts without a value")
    _need(read_dice(frame, replace(config, look_threshold=1.01)).dice == first,
          "the parts change without the second look")
    dice = read_dice(frame, config).dice
    _need(len(dice) == 1 and _on(dice[0], face), "the second look does not read the die")
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = dice[0].bbox
    _need(0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h, "the die's box leaves the frame")
    return (int(value),)


def parts_dropped(seed: Seed) -> Values:
    """A close-up whose first pass alone splits it into an unreadable part and a part that
    reads 1 by itself; the second look at the unreadable part finds the whole face, read with
    its value, and the 1 inside it is dropped as its part (with ``coarse_part_share`` above 1
    both are kept)."""
    frame, face = _closeup(seed)
    _need(face["value"] != 1, "the close-up is a 1 itself")
    config = DiceConfig(coarse_scale=0.0, mid_scale=0.0)
    first = read_dice(frame, replace(config, look_face=0.0)).dice
    _need(len(first) == 2 and {(d.value, d.state) for d in first}
          == {(1, "flat"), (None, "unreadable")},
          "the first pass does not find an unreadable part and a 1")
    dice = read_dice(frame, config).dice
    _need(len(dice) == 1 and dice[0].value == face["value"]
          and match([dice[0].bbox], [face["bbox"]]) == [(0, 0)],
          "the second look does not read the die at its face")
    kept = read_dice(frame, replace(config, coarse_part_share=1.01)).dice
    _need(sorted(d.value for d in kept) == sorted([1, face["value"]]) and dice[0] in kept,
          "with nothing a part, the die and the 1 are not both kept")
    return (int(face["value"]),)


def _one_more(frame: np.ndarray, labels: list[dict], config: DiceConfig,
              without: DiceConfig, unsure: DiceConfig, what: str) -> Values:
    """A flat die that ``without`` misses and ``config`` reads at its face, nothing else
    changed, while ``unsure`` reads what ``without`` does."""
    never = read_dice(frame, without).dice
    dice = read_dice(frame, config).dice
    for label in _flat(labels):
        if match([d.bbox for d in never], [label["bbox"]]):
            continue
        found = [dice[k] for k, _ in match([d.bbox for d in dice], [label["bbox"]])]
        if (len(found) == 1 and _on(found[0], label)
                and [d for d in dice if d is not found[0]] == list(never)):
            _need(read_dice(frame, unsure).dice == never, f"{what}: not only when sure")
            return (int(label["value"]),)
    raise ClaimFails(f"{what}: no die is found by it alone")


def rejected_crop(seed: Seed) -> Values:
    """A table of 1-3 dice of 40-220 px with a flat die that the classifier rejects at its
    first crop (read in four views): without ``look_rejected`` it is lost; looked at again,
    it is read flat with its value at its face's box, and nothing else changes. The look keeps
    it only when sure (``look_threshold`` above 1 loses it again)."""
    frame, labels = render_scene(np.random.default_rng(seed), count=(1, 3),
                                 size_px=(40.0, 220.0))
    config = DiceConfig(rotations=4)
    return _one_more(frame, labels, config, replace(config, look_rejected=math.inf),
                     replace(config, look_threshold=1.01), "the look at a rejected crop")


def weak_peak(seed: Seed) -> Values:
    """A table of 1-4 dice of 30-70 px with a flat die whose detector peak is too weak to be
    classified without ``weak_threshold``: given to the classifier as a weak peak it is read
    flat with its value at its face's box, and nothing else changes. It is kept only with a
    sure value (``weak_value`` above 1 loses it again)."""
    frame, labels = render_scene(np.random.default_rng(seed), count=(1, 4), size_px=(30, 70))
    config = DiceConfig()
    return _one_more(frame, labels, config, DiceConfig(weak_threshold=math.inf),
                     DiceConfig(weak_value=1.01), "the weak peak")


def leaning_die(seed: Seed) -> Values:
    """A table of 4-8 dice of 30-70 px, a quarter of them drawn leaning, with a leaning die
    (labelled cocked) that the reader finds and that a crop alone reads with a value (the lean
    check off, ``lean_degrees`` infinite): with the check it is reported ``"cocked"`` without a
    value, and every flat die is read as without it. Returns the values the leaning dice lose,
    in the order of their boxes' left edges."""
    frame, labels = render_scene(np.random.default_rng(seed), count=(4, 8), size_px=(30.0, 70.0),
                                 cocked_rate=0.25, hand_rate=0.0)
    config = DiceConfig()
    off = read_dice(frame, replace(config, lean_degrees=math.inf)).dice
    dice = read_dice(frame, config).dice
    _need(len(dice) == len(off), "the check changes which dice are found")
    lost = []
    for before, after in zip(off, dice, strict=True):
        _need(before.bbox == after.bbox, "the check moves a die")
        if before == after:
            continue
        hit = match([before.bbox], [lb["bbox"] for lb in labels])
        _need(len(hit) == 1 and labels[hit[0][1]]["state"] == "cocked",
              "the check takes the value of a die not labelled cocked")
        _need(before.value is not None and (after.value, after.state) == (None, "cocked"),
              "a leaning die is not reported cocked without a value")
        lost.append(int(before.value))
    _need(bool(lost), "no leaning die loses its value")
    return tuple(lost)


# The scene each reader test pins, by claim: its seed and the values its claim returns there.
# When a net change loses one, the search below finds another to put here.
PINNED: dict[str, tuple[tuple[int, int], Values]] = {
    "coarse-parts": ((4291, 28), (2,)), "sheet-group": ((7957, 63), (1, 2, 4, 6, 6)),
    "middle-pass": ((1117, 1), (3,)), "split-closeup": ((8069, 1), (6,)),
    "parts-dropped": ((5552, 1), (3,)), "rejected-crop": ((194, 1), (1,)),
    "weak-peak": ((165, 3), (3,)), "leaning-die": ((8, 1), (1,)),
}

CLAIMS: dict[str, Callable[[Seed], Values]] = {
    "coarse-parts": coarse_parts, "sheet-group": sheet_group, "middle-pass": middle_pass,
    "split-closeup": split_closeup, "parts-dropped": parts_dropped,
    "rejected-crop": rejected_crop, "weak-peak": weak_peak, "leaning-die": leaning_die,
}


def search(claim: Callable[[Seed], Values], start: int, count: int, stream: int,
           first: int) -> Iterator[tuple[int, Values]]:
    """``(s, values)`` for the seeds ``[s, stream]``, ``s`` from ``start`` on (``count`` of them),
    where ``claim`` holds, as they are found; at most ``first``."""
    found = 0
    for s in range(start, start + count):
        try:
            values = claim([s, stream])
        except ClaimFails:
            continue
        yield s, values
        found += 1
        if found >= first:
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("claim", choices=sorted(CLAIMS))
    parser.add_argument("--start", type=int, required=True, help="the first seed's first number")
    parser.add_argument("--count", type=int, default=2000, help="seeds to try (default 2000)")
    parser.add_argument("--stream", type=int, default=1,
                        help="the seeds' second number (default 1)")
    parser.add_argument("--first", type=int, default=5,
                        help="stop after this many are found (default 5)")
    args = parser.parse_args(argv)
    if args.count < 1 or args.first < 1:
        parser.error("--count and --first must be at least 1")
    found = 0
    for s, values in search(CLAIMS[args.claim], args.start, args.count, args.stream, args.first):
        print(f"[{s}, {args.stream}]:", *values, flush=True)
        found += 1
    if not found:
        print(f"{args.claim} holds for none of the seeds [{args.start}..."
              f"{args.start + args.count - 1}, {args.stream}]", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
