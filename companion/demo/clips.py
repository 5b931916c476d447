"""Scripted roll clips: short table scenes written as actions, rendered with the demo's parts,
played through the dice reader (or their own truth) and the dice tracker, and scored against the
events the script says a perfect pipeline emits.

A clip is written in seconds, so one script plays at any frame rate::

    clip = Script(fps=10, seed=1)
    clip.throw([("a", 3, "black", (420, 250)), ("b", 5, "yellow", (540, 300))])
    clip.rest(1.5)
    clip.pick(["a"]); clip.throw([("a", 6, "black", (470, 380))]); clip.rest(1.5)
    frames = clip.frames()            # (t, Shot, hidden dice) per frame
    report = run_clip(clip, reader="truth")   # or reader="dice": the real dice reader
    report.right, report.wrong, report.missed, report.extra

Actions: :meth:`Script.throw` (dice tumble in from the left, as in the demo, and come to rest:
a roll when every die on the table is thrown, else a re-roll of those), :meth:`Script.pick`
(a hand takes dice away), :meth:`Script.nudge` (a hand turns a die onto another face in
place), :meth:`Script.hover` (a hand passes over the dice and touches none),
:meth:`Script.rest` and :meth:`Script.drop` (no frames: the camera dropped them).

``python -m companion.demo.clips [--reader truth|dice] [--only NAME] [--pngs DIR]`` runs the
bundled variations (:func:`variations`) and prints each one's events against its truth; with
``--pngs`` it writes the frames of the clips that went wrong with the readings drawn on them.

Convention: points are ``(x, y)`` pixels of the 960x540 frame, origin top-left; boxes are
``[x0, y0, x1, y1]``; times are seconds from the clip's start.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.demo import make_demo as md
from companion.tracker import DiceTracker, DiceTrackerConfig
from companion.tracker.events import DieNudged, RerollSettled, RollSettled, TrackerEvent
from vision.dice.lean import TableMemory
from vision.readings import DiceReading, Die

__all__ = ["ClipReport", "Expected", "Script", "run_clip", "variations"]

# A die as the script places it: name, value, colour, centre.
Placed = tuple[str, int, str, tuple[float, float]]


@dataclass(frozen=True)
class Expected:
    """An event the script says a perfect pipeline emits, as a comparable signature."""

    kind: str  # roll | reroll | nudged
    dice: tuple[tuple[str, int | None], ...]  # (colour, value) of every die, sorted
    thrown: tuple[tuple[str, int | None], ...] = ()  # reroll: the dice thrown; nudged: the die
    replaced: tuple[tuple[str, int | None], ...] = ()  # reroll: their old values; nudged: old
    t: float = 0.0  # when the action began

    @property
    def signature(self) -> tuple[Any, ...]:
        if self.kind == "nudged":
            return (self.kind, self.thrown, self.replaced)
        return (self.kind, self.dice, self.thrown, self.replaced)

    def text(self) -> str:
        def v(ds: Sequence[tuple[str, int | None]]) -> str:
            return " ".join(f"{c[0]}{'?' if x is None else x}" for c, x in ds)
        if self.kind == "roll":
            return f"roll {v(self.dice)}"
        if self.kind == "reroll":
            return f"reroll {v(self.thrown)} (was {v(self.replaced)}) -> {v(self.dice)}"
        return f"nudged {v(self.replaced)} -> {v(self.thrown)}"


def signature_of(event: TrackerEvent, t0: float = 0.0) -> Expected | None:
    """The tracker event as an :class:`Expected` (``None`` for an event of no dice)."""
    def cv(ds: Any) -> tuple[tuple[str, int | None], ...]:
        return tuple(sorted(((d.color, d.value) for d in ds), key=_key))
    if isinstance(event, RerollSettled):
        thrown = [d for d in event.dice if d.id in event.rerolled]
        return Expected("reroll", cv(event.dice), cv(thrown), cv(event.replaced), event.t - t0)
    if isinstance(event, RollSettled):
        return Expected("roll", cv(event.dice), t=event.t - t0)
    if isinstance(event, DieNudged) and event.die is not None:
        return Expected("nudged", (), cv([event.die]),
                        ((event.die.color, event.previous),), event.t - t0)
    return None


def _key(cv: tuple[str, int | None]) -> tuple[str, int]:
    return (cv[0], cv[1] or 0)


@dataclass
class _Die:
    value: int
    color: str
    center: tuple[float, float]
    yaw: float
    ident: int
    cock: float = 0.0

    def draw(self) -> md.DieDraw:
        return md.DieDraw(self.value, self.color, self.center, self.yaw, self.ident, self.cock)


@dataclass
class _Frame:
    t: float
    dice: list[md.DieDraw]
    hand: md.Hand | None = None


@dataclass
class Script:
    """A clip written as actions in seconds (see the module notes); ``fps`` frames a second."""

    fps: float = 10.0
    seed: int = 0
    name: str = "clip"
    table: dict[str, _Die] = field(default_factory=dict)
    picked: dict[str, _Die] = field(default_factory=dict)  # taken off, not thrown yet
    expected: list[Expected] = field(default_factory=list)
    _frames: list[_Frame] = field(default_factory=list)
    _t: float = 0.0

    def __post_init__(self) -> None:
        if not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        self._rng = np.random.default_rng([self.seed, 77])

    # -- time
    def _n(self, seconds: float) -> int:
        return max(1, round(seconds * self.fps))

    def _shoot(self, dice: list[md.DieDraw], hand: md.Hand | None = None) -> None:
        self._frames.append(_Frame(self._t, dice, hand))
        self._t += 1.0 / self.fps

    def _resting(self, skip: Sequence[str] = ()) -> list[md.DieDraw]:
        return [d.draw() for name, d in sorted(self.table.items()) if name not in skip]

    # -- actions
    def rest(self, seconds: float) -> Script:
        """The table stays still."""
        for _ in range(self._n(seconds)):
            self._shoot(self._resting())
        return self

    def drop(self, seconds: float) -> Script:
        """The camera gives no frames for ``seconds`` (time goes on, the table stays)."""
        self._t += self._n(seconds) / self.fps
        return self

    def throw(self, dice: Sequence[Placed], seconds: float = 0.8, *,
              cocked: dict[str, float] | None = None, hand: bool = False,
              seen: bool = True) -> Script:
        """Dice tumble in from the left (the demo's tumble) and come to rest at their places;
        ``cocked`` leans some of them (degrees) against whatever they landed on; ``hand``: the
        throwing hand is in view over the table's left side for the first half of the tumble,
        going away; ``seen=False``: the camera gives no frame of the tumble (frames dropped, or
        dice too blurred to read while they fly) and the dice are first seen at rest. Dice
        already on the table under a thrown name are taken away first (thrown again)."""
        cocked = cocked or {}
        t0 = self._t
        names = [n for n, *_ in dice]
        before = {n: (d.color, None if d.cock else d.value)
                  for n, d in {**self.table, **self.picked}.items()}
        for n in names:
            self.table.pop(n, None)
            self.picked.pop(n, None)
        final = [(v, c, p) for _, v, c, p in dice]
        steps = max(2, self._n(seconds))
        rng = np.random.default_rng([self.seed, len(self._frames)])
        for k in range(steps):
            moving = md._tumble(final, k, steps, rng)
            for (name, *_), d in zip(dice, moving, strict=True):
                d.ident = zlib.crc32(name.encode())
                if k == steps - 1:
                    d.cock = cocked.get(name, 0.0)
            thrower = None
            if hand and k < steps / 2:
                thrower = md.Hand((170.0 - 260.0 * k / steps, 300.0), arm_angle=175.0, pen=False)
            if seen:
                self._shoot(self._resting() + moving, thrower)
            else:
                self._t += 1.0 / self.fps
        for (name, value, color, center) in dice:
            self.table[name] = _Die(value, color, center, float(self._rng.uniform(0, 90)),
                                    zlib.crc32(name.encode()), cocked.get(name, 0.0))
        every = tuple(sorted(((d.color, None if d.cock else d.value)
                             for d in self.table.values()), key=_key))
        kept = [n for n in self.table if n not in names]
        if not kept:
            self.expected.append(Expected("roll", every, t=t0))
        else:
            thrown = tuple(sorted(((self.table[n].color, None if self.table[n].cock
                                    else self.table[n].value) for n in names), key=_key))
            was = tuple(sorted((before[n] for n in names if n in before), key=_key))
            self.expected.append(Expected("reroll", every, thrown, was, t0))
        return self

    def pick(self, names: Sequence[str], seconds: float = 0.9) -> Script:
        """A hand comes in, takes ``names`` off the table halfway and leaves with them."""
        def take() -> None:
            for n in names:
                self.picked[n] = self.table.pop(n)

        self._reach(self.table[names[0]].center, seconds, 75.0, take)
        return self

    def nudge(self, name: str, value: int, seconds: float = 0.9, *, edge: float = 0.0,
              ) -> Script:
        """A hand comes to die ``name``, turns it onto ``value`` in place and leaves. With
        ``edge`` (seconds), a fingertip turns it from the side, the die in view throughout: it
        stands on an edge (cocked) that long, then lies on ``value`` while the hand lingers as
        long again and leaves."""
        die = self.table[name]
        t0 = self._t
        previous = die.value
        if edge > 0:
            # the fingertip at the die's right edge, the arm off to the right
            tip = (die.center[0] + md.DIE_SIZE * 0.75, die.center[1])
            come, stand = max(2, self._n(0.4)), max(1, self._n(edge))
            for k in range(come):
                self._shoot(self._resting(), self._side_hand(tip, (k + 1) / come))
            die.cock = 30.0
            for _ in range(stand):
                self._shoot(self._resting(), self._side_hand(tip, 1.0))
            die.cock, die.value, die.yaw = 0.0, value, (die.yaw + 9.0) % 90.0
            for _ in range(stand):
                self._shoot(self._resting(), self._side_hand(tip, 1.0))
            for k in range(come):
                self._shoot(self._resting(), self._side_hand(tip, 1 - (k + 1) / come))
        else:
            def turn() -> None:
                die.value = value
                die.yaw = (die.yaw + 9.0) % 90.0

            self._reach(die.center, seconds, 70.0, turn)
        self.expected.append(Expected("nudged", (), ((die.color, value),),
                                      ((die.color, previous),), t0))
        return self

    @staticmethod
    def _side_hand(tip: tuple[float, float], f: float) -> md.Hand | None:
        if f <= 0:
            return None
        hand = md._approach(tip, f, angle=0.0)
        hand.pen = True  # a pointing finger: the slim pen shape, no fist at the tip
        return hand

    def hover(self, over: tuple[float, float], seconds: float = 1.0,
              angle: float = 80.0) -> Script:
        """A hand reaches over the table to ``over`` and goes back, touching no die."""
        self._reach(over, seconds, angle)
        return self

    def _reach(self, target: tuple[float, float], seconds: float, angle: float,
               there: Callable[[], None] | None = None) -> None:
        """A hand (a fist) comes to ``target`` and goes back over ``seconds`` (3 frames at
        least); ``there`` changes the table on the frame it arrives."""
        steps = max(3, self._n(seconds))
        half = steps // 2
        for k in range(steps):
            f = (k + 1) / (half + 1) if k < half else 1 - (k - half) / (steps - half)
            if k == half and there is not None:
                there()
            hand = md._approach(target, f, angle=angle)
            hand.pen = False
            self._shoot(self._resting(), hand)

    # -- output
    @property
    def duration(self) -> float:
        return self._t

    def frames(self) -> list[_Frame]:
        return list(self._frames)


# ------------------------------------------------------------------------------ rendering
@cache
def _renderers() -> tuple[md.Renderers, np.ndarray]:
    r = md.Renderers()
    return r, r.background()


def render(frame: _Frame, index: int = 0) -> tuple[np.ndarray, DiceReading]:
    """Draw a clip frame (dice, then the hand over them); return it with its true reading
    (dice a hand covers by more than 30% are not in it, as in the demo's truth)."""
    renderers, background = _renderers()
    image = background.copy()
    labels = renderers.draw_dice(image, frame.dice, np.random.default_rng([md.SEED, index]))
    hidden = np.zeros(image.shape[:2], np.uint8)
    if frame.hand is not None:
        hidden = md._hand_mask(frame.hand)
        md._draw_hand(image, frame.hand, hidden)
    dice = []
    for lb in labels:
        x0, y0, x1, y1 = (round(v) for v in lb["bbox"])
        if x1 < 0 or x0 >= md.W:
            continue
        box = hidden[max(0, y0):max(0, y1), max(0, x0):max(0, x1)]
        if box.size and (box > 127).mean() > 0.3:
            continue
        dice.append(Die(lb["value"], lb["color"], tuple(lb["bbox"]), 1.0, lb["state"]))
    return image, DiceReading(tuple(dice), frame.hand is not None)


# ------------------------------------------------------------------------------ scoring
@dataclass
class ClipReport:
    name: str
    fps: float
    expected: list[Expected]
    got: list[Expected]
    right: int
    wrong: list[tuple[Expected, Expected]]
    missed: list[Expected]
    extra: list[Expected]
    frames: int
    readings: list[DiceReading] = field(default_factory=list, repr=False)

    def line(self) -> str:
        return (f"{self.name:28s} {self.fps:4.0f} fps {self.frames:3d} frames: "
                f"{self.right}/{len(self.expected)} right, {len(self.wrong)} wrong, "
                f"{len(self.missed)} missed, {len(self.extra)} extra")


def score(name: str, fps: float, expected: list[Expected], got: list[Expected],
          frames: int = 0) -> ClipReport:
    """Align the events got with the expected ones (in order): equal signatures are right; an
    expected event left over facing one of the same kind got at the same place is wrong; the
    rest are missed (expected) or extra (got)."""
    a = [e.signature for e in expected]
    b = [g.signature for g in got]
    right, wrong, missed, extra = 0, [], [], []
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i0, i1, j0, j1 in sm.get_opcodes():
        if op == "equal":
            right += i1 - i0
            continue
        exp, gets = list(expected[i0:i1]), list(got[j0:j1])
        for e in list(exp):
            same = next((g for g in gets if g.kind == e.kind), None)
            if same is not None:
                wrong.append((e, same))
                exp.remove(e)
                gets.remove(same)
        missed += exp
        extra += gets
    return ClipReport(name, fps, expected, got, right, wrong, missed, extra, frames)


def run_clip(script: Script, *, reader: str = "truth",
             config: DiceTrackerConfig | None = None,
             read: Callable[..., DiceReading] | None = None) -> ClipReport:
    """Play a clip through a reader and a fresh tracker. ``reader="truth"`` feeds the renderer's
    true readings (the tracker alone); ``"dice"`` renders every frame and reads it with
    :func:`vision.dice.read_dice` (or ``read``), passing its hand flag as the live loop does,
    and the table's plane its readings showed back to the reader (``table``, agreed on by a
    :class:`vision.dice.lean.TableMemory`)."""
    if reader not in ("truth", "dice"):
        raise ValueError(f"reader must be 'truth' or 'dice', got {reader!r}")
    if reader == "dice" and read is None:
        from vision.dice import read_dice
        read = read_dice
    tracker = DiceTracker(config)
    got: list[Expected] = []
    readings = []
    frames = script.frames()
    memory = TableMemory()
    for i, fr in enumerate(frames):
        image, truth = render(fr, i)
        reading = truth if reader == "truth" else memory.read(read, image)  # type: ignore[arg-type]
        readings.append(reading)
        for event in tracker.update(reading, fr.t, hand=reading.hand):
            sig = signature_of(event)
            if sig is not None:
                got.append(sig)
    report = score(script.name, script.fps, script.expected, got, len(frames))
    report.readings = readings
    return report


def draw_reading(image: np.ndarray, reading: DiceReading, truth: DiceReading,
                 caption: str) -> np.ndarray:
    """The frame with the reading's boxes and values (green where the truth agrees, red where
    not) and a caption line."""
    out = image.copy()
    for d in reading.dice:
        ok = any(abs(d.center[0] - t.center[0]) < 15 and abs(d.center[1] - t.center[1]) < 15
                 and t.value == d.value for t in truth.dice)
        color = (0, 200, 0) if ok else (0, 0, 255)
        x0, y0, x1, y1 = (round(v) for v in d.bbox)
        cv2.rectangle(out, (x0, y0), (x1, y1), color, 2)
        text = f"{'?' if d.value is None else d.value}{d.color[0]} {d.confidence:.2f}"
        cv2.putText(out, text, (x0, y0 - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 1,
                    cv2.LINE_AA)
    cv2.putText(out, caption, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2,
                cv2.LINE_AA)
    return out


# ------------------------------------------------------------------------------ the variations
def variations(fps: float = 10.0) -> Iterator[Script]:
    """The bundled variations the demo does not have (see ``__main__``)."""
    Y, B, W = "yellow", "black", "white"

    s = Script(fps, 1, f"machine+yellow@{fps:g}")   # 3 black player dice, 2 yellow
    s.throw([("a", 2, B, (420, 220)), ("b", 6, B, (540, 320)), ("c", 4, B, (660, 230)),
             ("y1", 3, Y, (500, 440)), ("y2", 1, Y, (720, 400))]).rest(1.5)
    yield s

    s = Script(fps, 2, f"same-faces-again@{fps:g}")
    s.throw([("a", 3, "white", (420, 250)), ("b", 5, "white", (560, 330)),
             ("c", 5, "white", (680, 235))]).rest(1.5)
    s.pick(["a", "b", "c"])
    s.throw([("a", 3, "white", (470, 380)), ("b", 5, "white", (620, 200)),
             ("c", 5, "white", (760, 330))]).rest(1.5)
    yield s

    s = Script(fps, 3, f"two-of-five-rerolled@{fps:g}")
    five = [("a", 1, B, (400, 200)), ("b", 2, B, (520, 300)), ("c", 3, B, (640, 210)),
            ("d", 4, B, (760, 320)), ("e", 6, B, (470, 420))]
    s.throw(five).rest(1.5)
    s.pick(["a", "c"])
    s.throw([("a", 5, B, (620, 440)), ("c", 6, B, (820, 180))]).rest(1.5)
    yield s

    s = Script(fps, 4, f"nudge-by-one@{fps:g}")
    s.throw([("a", 2, B, (420, 220)), ("b", 6, B, (560, 330)), ("c", 4, B, (700, 230))])
    s.rest(1.5).nudge("a", 3).rest(1.5)
    yield s

    s = Script(fps, 11, f"turned-on-edge@{fps:g}")   # a fingertip turns a die in view
    s.throw([("a", 2, W, (420, 220)), ("b", 6, W, (560, 330)), ("c", 4, W, (700, 230))])
    s.rest(1.5).nudge("b", 5, edge=0.3).rest(1.5)
    yield s

    s = Script(fps, 5, f"hand-hovers@{fps:g}")
    s.throw([("a", 2, "white", (420, 220)), ("b", 6, "white", (560, 330)),
             ("c", 4, "white", (700, 230))]).rest(1.5)
    s.hover((560, 280), 1.2).rest(1.5)
    yield s

    s = Script(fps, 6, f"cocked-and-touching@{fps:g}")
    s.throw([("a", 2, B, (440, 260)), ("b", 5, B, (488, 262)), ("c", 3, B, (700, 300))],
            cocked={"b": 32.0}).rest(2.0)
    yield s

    # three dice, then one thrown again to lean on another: Doom Cat's three dice, where the
    # two flat ones left are too few to show the table's plane by themselves
    s = Script(fps, 12, f"cocked-on-reroll@{fps:g}")
    s.throw([("a", 2, B, (440, 260)), ("b", 4, B, (600, 420)), ("c", 3, B, (700, 300))])
    s.rest(1.5).pick(["b"])
    s.throw([("b", 5, B, (488, 262))], cocked={"b": 32.0}).rest(2.0)
    yield s

    s = Script(fps, 8, f"touching-thrown-by-hand@{fps:g}")
    s.throw([("a", 4, "white", (430, 250)), ("b", 1, "white", (477, 250)),
             ("c", 6, "white", (640, 330)), ("d", 2, "white", (640, 377))], hand=True)
    s.rest(1.5).pick(["b"])
    s.throw([("b", 4, "white", (520, 420))], hand=True).rest(1.5)
    yield s

    s = Script(fps, 9, f"roll-unseen-all@{fps:g}")   # every die thrown again, tumble unseen
    s.throw([("a", 3, "white", (420, 250)), ("b", 5, "white", (560, 330)),
             ("c", 5, "white", (680, 235))]).rest(1.5)
    s.pick(["a", "b", "c"])
    s.throw([("a", 2, "white", (470, 380)), ("b", 5, "white", (620, 200)),
             ("c", 6, "white", (760, 330))], seen=False).rest(1.5)
    yield s

    s = Script(fps, 10, f"reroll-unseen@{fps:g}")   # two of five thrown again, tumble unseen
    s.throw(five).rest(1.5)
    s.pick(["a", "c"])
    s.throw([("a", 5, B, (620, 440)), ("c", 6, B, (820, 180))], seen=False).rest(1.5)
    yield s

    s = Script(fps, 7, f"dropped-frames@{fps:g}")
    s.throw([("a", 2, B, (420, 220)), ("b", 6, B, (560, 330)), ("c", 4, B, (700, 230))])
    s.rest(0.6).drop(0.3).rest(1.0)
    s.pick(["b"]).drop(0.2)
    s.throw([("b", 1, B, (600, 420))]).drop(0.3).rest(1.5)
    yield s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", choices=("truth", "dice"), default="truth")
    parser.add_argument("--fps", default="5,10,30")
    parser.add_argument("--only", default="")
    parser.add_argument("--pngs", type=Path, default=None)
    args = parser.parse_args(argv)
    for fps in (float(v) for v in args.fps.split(",")):
        for script in variations(fps):
            if args.only and args.only not in script.name:
                continue
            report = run_clip(script, reader=args.reader)
            print(report.line())
            for e, g in report.wrong:
                print(f"    wrong:  {e.text()}  got  {g.text()} (t={g.t:.1f})")
            for e in report.missed:
                print(f"    missed: {e.text()} (action at t={e.t:.1f})")
            for g in report.extra:
                print(f"    extra:  {g.text()} (t={g.t:.1f})")
            if args.pngs and (report.wrong or report.missed or report.extra):
                args.pngs.mkdir(parents=True, exist_ok=True)
                for i, fr in enumerate(script.frames()):
                    image, truth = render(fr, i)
                    cv2.imwrite(str(args.pngs / f"{script.name}_{i:03d}.png"),
                                draw_reading(image, report.readings[i], truth,
                                             f"{script.name} t={fr.t:.2f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
