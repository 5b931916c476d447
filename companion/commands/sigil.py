"""Handlers of ``sigil IMAGE --layout L``, ``eval sigil DIR`` and ``bench sigil DIR``.

The reader (:func:`vision.sigil.read_sigil`) needs the layout and, to subtract the printed
artwork, the blank card's images (:func:`calibration.references.references`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from calibration.references import references
from companion.cli import print_json
from companion.datafiles import output_folder, read_labels
from companion.errors import BadInput, DataFileError
from companion.measure import bench_images, image_files
from vision.imageio import read_image
from vision.readings import N_CANDLES, SigilState


@lru_cache(maxsize=64)
def load_layout(name: str) -> Any:
    from companion.doomcat.layouts import load_layout as _load

    return _load(name)


@lru_cache(maxsize=1)
def all_layouts() -> tuple[Any, ...]:
    from companion.doomcat.layouts import all_layouts as _all

    return tuple(_all())


def _reader() -> Any:
    from vision.sigil import read_sigil

    return read_sigil


def read(args: argparse.Namespace) -> int:
    """``sigil IMAGE --layout L [--json]``."""
    image = read_image(args.image)
    layout = load_layout(args.layout)
    refs = references(args.layout) or None  # a registered card's own file: not the photo's
    try:
        reading = _reader()(image, layout, refs, others=all_layouts())
    except BadInput as exc:  # no card in view, too small, ...: say in which image
        raise BadInput(f"{args.image}: {exc}") from None
    if args.json:
        print_json(reading.to_json())
        return 0
    st = reading.state
    print(f"{args.image}: layout {st.layout}, card found by {reading.pose.method}")
    print("lines:   " + (", ".join(f"{a}-{b}" for a, b in st.lines) or "none"))
    print("crossed: " + (", ".join(str(c) for c in st.crossed) or "none"))
    print("top:     " + " ".join("." if t is None else f"({t.value})" if t.circled
                                 else str(t.value) for t in st.top))
    if st.unknown:
        print("unknown: " + ", ".join(st.unknown))
    for note in reading.notes:
        print(f"note: {note}")
    return 0


def _labels(folder: Path) -> list[tuple[dict[str, Any], SigilState]]:
    """The entries of ``folder/labels.json`` (:func:`read_labels`), each with its sigil state,
    checked: the state's layout can be loaded (``eval sigil`` and ``bench sigil``). A layout
    named by a relative ``.json`` path found in ``folder`` (``render sigil --layout FILE``
    writes ``layouts/NAME.json`` there) is read from ``folder``."""
    path = folder / "labels.json"
    out = []
    for i, entry in enumerate(read_labels(folder, "sigil")):
        if not isinstance(entry.get("sigil"), dict):
            raise DataFileError(str(path), f"$[{i}].sigil", "expected a sigil state object")
        try:
            truth = SigilState.from_json(entry["sigil"], source=str(path))
        except DataFileError as exc:  # its path is inside the state: say it inside the file
            raise DataFileError(str(path), f"$[{i}].sigil{exc.json_path[1:]}",
                                exc.rule) from None
        ghosts = entry.get("ghost_lines", [])
        bad = ([f"$[{i}].ghost_lines[{k}]" for k, g in enumerate(ghosts) if not _candle_pair(g)]
               if isinstance(ghosts, list) else [f"$[{i}].ghost_lines"])
        if bad:
            raise DataFileError(str(path), bad[0], "expected a list of erased lines, each a "
                                f"pair of candle indices 0-{N_CANDLES - 1}")
        beside = folder / truth.layout
        if truth.layout.endswith(".json") and not Path(truth.layout).is_absolute() \
                and beside.is_file():  # a layout file that travels with the photos
            truth = replace(truth, layout=str(beside))
        try:
            load_layout(truth.layout)
        except BadInput as exc:
            raise DataFileError(str(path), f"$[{i}].sigil.layout", str(exc)) from None
        out.append((entry, truth))
    return out


def _candle_pair(value: Any) -> bool:
    return (isinstance(value, list) and len(value) == 2
            and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < N_CANDLES
                    for c in value))


def _art(cond: Any) -> tuple[str | None, int | None]:
    """The card art named by a label's conditions: ("companion"|"printed"|None, design)."""
    if not isinstance(cond, dict):
        return None, None
    art = cond.get("art") if cond.get("art") in ("companion", "printed") else None
    design = cond.get("design")
    return art, design if isinstance(design, int) and not isinstance(design, bool) else None


def evaluate_folder(folder: str | Path, *, worst: int = 10,
                    show: str | Path | None = None) -> dict[str, Any]:
    """Read every labelled photo of ``folder`` and score the readings (``eval sigil``).

    ``show``: a folder that receives a picture of each of the ``worst`` failures, the reading
    drawn over the photo against the labels (:func:`vision.sigil.overlay.draw_reading`)."""
    from vision.sigil.scoring import Tally, condition_groups, score_card

    folder = Path(folder)
    labels = _labels(folder)
    if show is not None:
        show = output_folder(show)  # before the work: a folder that cannot be made fails now
    read_sigil = _reader()
    total = Tally()
    groups: dict[str, Tally] = {}
    failures: list[tuple[int, str, list[str], Any, SigilState]] = []
    for entry, truth in labels:
        cond = entry.get("conditions") or {}
        image = read_image(folder / entry["image"])
        layout = load_layout(truth.layout)
        refs = references(truth.layout, *_art(cond)) or None  # a bad one: not the reader's
        try:
            result = read_sigil(image, layout, refs, others=all_layouts())
            reading, refusal = result.state, None
        except BadInput as exc:
            result, reading, refusal = None, None, str(exc)
        sc = score_card(truth, reading, entry.get("ghost_lines") or ())
        total.add(sc)
        for g in condition_groups(cond if isinstance(cond, dict) else None):
            groups.setdefault(g, Tally()).add(sc)
        if not sc.exact:
            errs = ([f"refused: {refusal}"] if refusal else []) + sc.errors
            if sc.unknown:
                errs.append(f"{sc.unknown} visible elements unknown")
            failures.append((len(sc.errors) + (10 if refusal else 0) + sc.unknown,
                             entry["image"], errs, result, truth))
    report = total.to_json()
    report["by_condition"] = {k: groups[k].to_json() for k in sorted(groups)}
    failures.sort(key=lambda f: -f[0])
    report["worst"] = [{"image": name, "errors": errs[:8]} for _, name, errs, _, _ in
                       failures[:worst]]
    if show is not None:
        _show_failures(folder, show, failures[:worst])
    return report


def _show_failures(folder: Path, out: Path, failures: list[tuple[Any, ...]]) -> None:
    """One picture per failure in ``out``: the reading over the photo (green: right, magenta:
    read but not drawn, red: drawn but missed, yellow: unknown), its errors written above."""
    import cv2

    from vision.sigil.overlay import draw_reading

    for _, name, errs, result, truth in failures:
        image = read_image(folder / name)
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        if result is not None:
            image = draw_reading(image, result, load_layout(truth.layout), truth)
        for k, line in enumerate(errs[:8]):
            for colour, width in (((0, 0, 0), 3), ((255, 255, 255), 1)):
                cv2.putText(image, line[:110], (8, 20 + 18 * k), cv2.FONT_HERSHEY_SIMPLEX,
                            0.45, colour, width, cv2.LINE_AA)
        cv2.imwrite(str(out / (Path(name).stem + ".jpg")), image,
                    [cv2.IMWRITE_JPEG_QUALITY, 85])


def evaluate(args: argparse.Namespace) -> int:
    """``eval sigil DIR [--json]``."""
    report = evaluate_folder(args.folder, show=args.show)
    if args.json:
        print_json(report)
        return 0
    keys = ("images", "line_precision", "line_recall", "line_f1", "crossed_accuracy",
            "digit_accuracy", "circle_accuracy", "exact_rate", "unknown_share",
            "ghost_lines_counted", "failed")
    for k in keys:
        print(f"{k:22s} {report[k]}")
    print("by condition (images, line F1, crossed, digits, circles, exact, unknown):")
    for g, r in report["by_condition"].items():
        print(f"  {g:24s} {r['images']:4d} {r['line_f1']} {r['crossed_accuracy']} "
              f"{r['digit_accuracy']} {r['circle_accuracy']} {r['exact_rate']} "
              f"{r['unknown_share']}")
    for w in report["worst"]:
        print(f"worst: {w['image']}: {'; '.join(w['errors'])}")
    return 0


def bench(args: argparse.Namespace) -> int:
    """``bench sigil DIR [--json]``: one thread, median and p95 per photo, peak memory."""
    folder = Path(args.folder)
    files = image_files(folder)
    layout_of: dict[str, str] = {}
    art_of: dict[str, tuple[str | None, int | None]] = {}
    for entry, truth in _labels(folder):  # each photo's layout (no labels.json: BadInput)
        layout_of[entry["image"]] = truth.layout
        art_of[entry["image"]] = _art(entry.get("conditions"))
    missing = [f.name for f in files if f.name not in layout_of]
    if missing:
        raise BadInput(f"{folder}: labels.json names no layout for {missing[0]} "
                       f"(and {len(missing) - 1} more)" if len(missing) > 1 else
                       f"{folder}: labels.json names no layout for {missing[0]}")
    read_sigil = _reader()
    queue = [(load_layout(layout_of[f.name]), references(layout_of[f.name], *art_of[f.name]))
             for f in files]
    others = all_layouts()
    state = {"i": 0}

    def one(image: np.ndarray) -> None:
        layout, refs = queue[state["i"] % len(queue)]
        state["i"] += 1
        with contextlib.suppress(BadInput):
            read_sigil(image, layout, refs or None, others=others)

    # bench_images reads the first image once as a warm-up, then every image in order
    queue = [queue[0], *queue]
    report = bench_images(one, files, warmup=1)
    if args.json:
        print_json(report.to_json())
    else:
        print(report.summary())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: python -m companion sigil|eval sigil|bench sigil")
