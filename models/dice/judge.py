"""Run the reader on the documented rendered sets at a seed offset, and compare runs.

    /work/venv/bin/python -m models.dice.judge OUT.jsonl --offset 3300 [--models DIR] \
        [--set weak_value=0.9 ...] [--recolour] [--jobs 2]

    /work/venv/bin/python -m models.dice.judge --table BASE.jsonl CANDIDATE.jsonl ...

The sets are MODEL.md's "Rendered validation sets" (:data:`RECIPES`), each rendered by
:mod:`models.dice.validate` at its documented seed plus ``--offset``: offset 0 gives the
documented figures, and a rule is judged at an offset no earlier rule has seen (HISTORY.md
lists the offsets used). The first form writes one line per set (``validate``'s JSON with the
set's name) and prints the table; ``--table`` prints the table of earlier runs side by side:
per set right / wrong / false positives / matched, their sums, the score right - wrong - false
positives (the criterion since session 30), the cocked or unreadable dice read with a value
and the flat dice named by the colour they were drawn in.
A development tool: it is not part of the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from models.dice.validate import counts

# (name's number, validate's options but --seed): MODEL.md's table, in its order
RECIPES: tuple[tuple[int, tuple[str, ...]], ...] = (
    (777, ("--count", "200")),
    (779, ("--count", "400")),
    (778, ("--count", "300", "--closeups")),
    (783, ("--count", "300", "--closeups", "--vivid-rate", "1")),
    (786, ("--count", "300", "--closeups", "--vivid-rate", "0.5", "--print-rate", "1")),
    (789, ("--count", "300", "--closeups", "--sharp-rate", "1", "--print-rate", "0.5")),
    (791, ("--count", "300", "--closeups", "--side", "128,320")),
    (780, ("--count", "200", "--distractor-rate", "0.8", "--stone-rate", "0.3",
           "--board-rate", "0.4")),
    (782, ("--count", "200", "--board-dice-rate", "1")),
    (784, ("--count", "200", "--distractor-rate", "0.8", "--desk-rate", "1")),
    (787, ("--count", "200", "--tilt", "55,75", "--size", "50,110")),
    (788, ("--count", "200", "--wide-rate", "1")),
    (792, ("--count", "200", "--size", "100,220", "--tilt", "0,45")),
    (793, ("--count", "300", "--closeups", "--side", "60,72", "--tilt", "0,30", "--sharp-rate",
           "1", "--print-rate", "0.5", "--vivid-rate", "0.5", "--flush-rate", "1",
           "--off-axis-rate", "1")),
    (794, ("--count", "300", "--closeups", "--tilt", "40,65")),
    (796, ("--count", "300", "--closeups", "--sharp-rate", "0.5", "--print-rate", "0.5",
           "--stamp-rate", "1")),
    (797, ("--count", "300", "--sheet-rate", "1")),
    (798, ("--count", "200", "--tilt", "65,75", "--size", "30,70")),
)


def run_set(number: int, options: tuple[str, ...], offset: int, extra: list[str]) -> dict:
    """``validate``'s report of one recipe at its seed plus ``offset``, named ``S<seed>``
    (``S<seed>r`` recoloured, so that the table does not set it beside the set itself)."""
    seed = number + offset
    cmd = [sys.executable, "-m", "models.dice.validate", *options, "--seed", str(seed), *extra]
    name = f"S{seed}" + ("r" if "--recolour" in extra else "")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name}: validate failed: {done.stderr.strip()[-400:]}")
    return {"name": name, **json.loads(done.stdout)}


def table(runs: list[tuple[str, list[dict]]]) -> str:
    """A markdown table of several runs of the same sets, with their sums and scores. Runs
    of other sets (another offset, or sets in another order) are refused: their rows would not
    compare."""
    names = [r["name"] for r in runs[0][1]]
    for name, reports in runs[1:]:
        if [r["name"] for r in reports] != names:
            raise SystemExit(f"{name}: its sets are not {runs[0][0]}'s ({', '.join(names)})")
    lines = ["| set | " + " | ".join(name for name, _ in runs) + " |",
             "|---" * (len(runs) + 1) + "|"]
    rows = [[counts(r) for r in reports] for _, reports in runs]
    for i, report in enumerate(runs[0][1]):
        lines.append(f"| {report['name']} | " + " | ".join(_cell(c[i]) for c in rows) + " |")
    sums = [{k: sum(c[k] for c in run) for k in run[0]} for run in rows]
    lines.append("| **sum** | " + " | ".join(_cell(s) for s in sums) + " |")
    lines.append("| score | " + " | ".join(
        str(s["right"] - s["wrong"] - s["fp"]) for s in sums) + " |")
    lines.append("| non-flat read with a value | " + " | ".join(
        str(s["nonflat"]) for s in sums) + " |")
    lines.append("| colour named as drawn | " + " | ".join(
        _colours(reports) for _, reports in runs) + " |")
    return "\n".join(lines)


def _colours(reports: list[dict]) -> str:
    """The matched flat dice named by the colour they were drawn in, over a run's sets
    (``validate``'s ``colour``), or "-" where a set has no such count (recoloured, or run
    before session 58)."""
    blocks = [r.get("colour") for r in reports]
    if any(b is None for b in blocks):
        return "-"
    return f"{sum(b['named'] for b in blocks)} / {sum(b['dice'] for b in blocks)}"


def _cell(c: dict[str, int]) -> str:
    """One run's cell of the table: right / wrong / false positives / matched."""
    return f"{c['right']} / {c['wrong']} / {c['fp']} / {c['matched']}"


def load(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", help="JSON lines file to write")
    parser.add_argument("--offset", type=int, default=0, help="added to each documented seed")
    parser.add_argument("--models", help="folder with dice_detector.onnx, dice_classifier.onnx")
    parser.add_argument("--set", action="append", default=[], help="DiceConfig field=value")
    parser.add_argument("--recolour", action="store_true",
                        help="the sets with their hues turned (validate --recolour)")
    parser.add_argument("--jobs", type=int, default=2, help="sets rendered at once")
    parser.add_argument("--table", nargs="+", metavar="RUN.jsonl", help="compare earlier runs")
    args = parser.parse_args()
    if args.table:
        print(table([(Path(p).stem, load(p)) for p in args.table]))
        return
    if not args.out:
        parser.error("give OUT.jsonl, or --table RUN.jsonl...")
    extra = [*(["--models", args.models] if args.models else []),
             *(x for item in args.set for x in ("--set", item)),
             *(["--recolour"] if args.recolour else [])]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        reports = list(pool.map(lambda r: run_set(r[0], r[1], args.offset, extra), RECIPES))
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in reports))
    print(table([(Path(args.out).stem, reports)]))


if __name__ == "__main__":
    main()
