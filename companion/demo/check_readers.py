"""Play the demo through the real readers and the trackers; compare with the ground truth.

``python -m companion.demo.check_readers [--every N] [--loops L] [--json]`` decodes ``demo.mp4``
with :mod:`vision.sources` (lock-step, every frame), runs :func:`vision.dice.read_dice` and
:func:`vision.sigil.read_sigil` on every ``N``-th frame (``N > 1`` imitates a pipeline slower
than the camera; the sigil reader gets the blank companion card as its reference unless
``--no-reference``), feeds the trackers as the live loop does (the card's outline from the sigil
reading excluded from the dice), and prints the events it got against :func:`expected_events`,
the share of processed frames whose dice were read exactly, and the readers' time per frame.
A figure for the model cards and the issue, not a test: it takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from companion.demo import (
    DEMO_CARD_ID,
    demo_description,
    demo_source_path,
    expected_events,
    truth_frames,
)
from companion.errors import BadInput
from companion.tracker import DiceTracker, SigilTracker
from companion.tracker.dice import point_in_polygon
from vision.sources import SourceConfig, open_source


def run(every: int = 1, loops: int = 1, reference: bool = True) -> dict[str, Any]:
    from companion.doomcat.layouts import load_layout
    from vision.dice import read_dice
    from vision.dice.lean import TableMemory
    from vision.render.cardface import card_face
    from vision.sigil import read_sigil

    layout = load_layout("A")
    # The blank companion card, subtracted by the sigil reader so that printed art is not ink
    # (without it the reader masks the candles' print, crosses included).
    blank = card_face(layout).image if reference else None
    desc = demo_description()
    truth = list(truth_frames())
    n = desc["frames"] * loops
    dice_tracker, sigil_tracker = DiceTracker(), SigilTracker()
    table = TableMemory()   # the table's plane over the frames, as the live loop keeps it
    got: list[dict[str, Any]] = []
    ms_dice: list[float] = []
    ms_sigil: list[float] = []
    exact = processed = 0
    config = SourceConfig(loop=loops > 1, realtime=False)
    with open_source(str(demo_source_path()), config) as source:
        seq = 0
        for _ in range(n):
            frame = source.next_frame(after=seq, timeout=30.0)
            if frame is None:
                break
            seq = frame.seq
            if (frame.seq - 1) % every:
                continue
            processed += 1
            a = time.perf_counter()
            dice = table.read(read_dice, frame.image)
            b = time.perf_counter()
            outline: list[list[tuple[float, float]]] = []
            try:
                reading = read_sigil(frame.image, layout, reference=blank)
                state = reading.state
                outline = [[(float(x), float(y)) for x, y in reading.pose.corners]]
            except BadInput:
                state = None
            c = time.perf_counter()
            ms_dice.append(1000 * (b - a))
            ms_sigil.append(1000 * (c - b))
            events = dice_tracker.update(dice, frame.t, hand=dice.hand, exclude=outline)
            if state is not None:
                events += sigil_tracker.update(DEMO_CARD_ID, state, frame.t)
            kept = sorted((d.value or 0, d.color) for d in dice.dice
                          if not any(point_in_polygon(d.center, poly) for poly in outline))
            want = sorted((d.value or 0, d.color) for d in truth[frame.index].dice.dice)
            exact += kept == want
            got += [{"loop": frame.loop, "t": round(frame.t - frame.loop * desc["duration_s"], 2),
                     "kind": e.kind, "text": e.text} for e in events]
    expected = [e.to_json() for e in expected_events()]
    found = [e for e in expected
             if any(g["text"] == e["text"] and g["loop"] == 0 for g in got)]
    spurious = [g for g in got if g["loop"] == 0 and g["text"] not in
                {e["text"] for e in expected}]
    outside = [g["text"] for g in got for e in expected if g["text"] == e["text"]
               and not e["t_from"] <= g["t"] <= e["t_until"]]

    def median(values: list[float]) -> float:
        values = sorted(values)
        return round(values[len(values) // 2], 1) if values else 0.0

    return {"frames": processed, "every": every, "reference": reference, "events": got,
            "expected_found": len(found), "expected": len(expected),
            "missed": [e["text"] for e in expected if e not in found],
            "spurious": [g["text"] for g in spurious], "outside_window": outside,
            "dice_frames_exact": round(exact / max(1, processed), 3),
            "ms_dice_median": median(ms_dice), "ms_sigil_median": median(ms_sigil)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="read every N-th frame")
    parser.add_argument("--loops", type=int, default=1)
    parser.add_argument("--no-reference", action="store_true",
                        help="read the card without the blank companion card as reference")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(max(1, args.every), max(1, args.loops), not args.no_reference)
    if args.json:
        print(json.dumps(report))
        return 0
    for e in report["events"]:
        print(f"loop {e['loop']} t={e['t']:5.1f}s  {e['text']}")
    print(f"expected events found: {report['expected_found']}/{report['expected']} "
          f"(missed: {report['missed']}); spurious: {report['spurious']}; outside their "
          f"time window: {report['outside_window']}")
    print(f"frames read: {report['frames']} (every {report['every']}, reference card "
          f"{'on' if report['reference'] else 'off'}); dice exact on "
          f"{100 * report['dice_frames_exact']:.1f}% of them; median ms per frame: dice "
          f"{report['ms_dice_median']}, sigil {report['ms_sigil_median']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
