"""Handlers of ``layouts``, ``score`` and ``cat simulate`` (Doom Cat)."""

from __future__ import annotations

import argparse

from companion.cli import print_json
from companion.doomcat.layouts import all_layouts


def layouts(args: argparse.Namespace) -> int:
    """Print the sigil layouts A-D and the registered cards."""
    found = all_layouts()
    if args.json:
        print_json([layout.to_json() for layout in found])
        return 0
    print(f"{'name':<12} {'title':<10} {'candle numbers (index order)':<30} stars  must-curve")
    for layout in found:
        numbers = " ".join(str(n) for n in layout.numbers)
        print(f"{layout.name:<12} {layout.title:<10} {numbers:<30} {len(layout.stars):>5}  "
              f"{len(layout.must_curve):>10}")
    return 0
