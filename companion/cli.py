"""The ``doomcompanion`` command line (also ``python -m companion``).

The command tree and its options follow DESIGN.md. Each leaf names its handler as
``"module:function"``; the module is imported only when that command runs, so that a quick
command never pays for loading a model or the web stack. A handler takes the parsed
``argparse.Namespace`` and returns the exit code.

Exit codes: 0 success, 2 bad input (one clear line on stderr saying what and where), 1 bug.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from companion import __version__
from companion.errors import BadInput

PROG = "doomcompanion"


def print_json(obj: Any) -> None:
    """Print one JSON document on one line (the shape ``--json`` promises)."""
    sys.stdout.write(json.dumps(obj, separators=(", ", ": ")) + "\n")


def _int_from(lowest: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < lowest:
            raise argparse.ArgumentTypeError(f"must be {lowest} or more, got {value}")
        return value
    return parse


positive_int = _int_from(1)
non_negative_int = _int_from(0)  # seeds of the renderers (numpy takes no negative seed)


def share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def int_list(text: str) -> list[int]:
    """Parse ``"1,2,3"`` (goal numbers and the like)."""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {text!r}") from None


def _leaf(sub: argparse._SubParsersAction, name: str, handler: str, help_text: str,
          ) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(handler=handler)
    return parser


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Doom Companion: reads dice and sigil cards at the table, "
                               "checks the rules of Doom Cat and Doom Machine, keeps score.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _leaf(sub, "serve", "companion.commands.serve:run",
              "the dashboard; with no --source, the bundled demo")
    p.add_argument("--source", help="webcam index, video file, folder of images, stream URL, or "
                                    "none for no camera (default: the bundled demo)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8321, help="port (default 8321)")
    p.add_argument("--db", help="SQLite file of the games (default: $DOOMCOMPANION_HOME/"
                                "games.sqlite, else ~/.local/share/doomcompanion/games.sqlite)")

    p = _leaf(sub, "dice", "companion.commands.dice:read", "read the dice in images")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    _json_flag(p)

    p = _leaf(sub, "sigil", "companion.commands.sigil:read", "read a sigil card photo")
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--layout", required=True, help="sigil letter A-D or a registered card name")
    _json_flag(p)

    p = _leaf(sub, "layouts", "companion.commands.cat:layouts",
              "the sigil layouts A-D (and any registered ones)")
    _json_flag(p)

    p = _leaf(sub, "score", "companion.commands.cat:score", "facts and goal scores of sigils")
    p.add_argument("states", nargs="+", metavar="STATE.json",
                   help="sigil state files; '-' reads states as JSON lines from stdin")
    p.add_argument("--goals", required=True, type=int_list, help="goal numbers, e.g. 1,2,3")
    p.add_argument("--familiar", help="familiar whose cost is subtracted, e.g. F03")
    _json_flag(p)

    cat = sub.add_parser("cat", help="Doom Cat tools").add_subparsers(
        dest="cat_command", metavar="COMMAND", required=True)
    p = _leaf(cat, "simulate", "companion.commands.cat:simulate", "Doom Cat solo games")
    p.add_argument("--games", type=positive_int, default=500,
                   help="number of games (default 500)")
    p.add_argument("--goals", type=int_list, required=True,
                   help="the game's 2 or 3 goal numbers, e.g. 1,2,3")
    p.add_argument("--policy", default="greedy", help="greedy or random (default greedy)")
    p.add_argument("--familiar", help="familiar in play, e.g. F03")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _json_flag(p)

    machine = sub.add_parser("machine", help="Doom Machine tools").add_subparsers(
        dest="machine_command", metavar="COMMAND", required=True)
    p = _leaf(machine, "simulate", "companion.commands.machine:simulate", "Doom Machine games")
    p.add_argument("--games", type=positive_int, default=500,
                   help="number of games (default 500)")
    p.add_argument("--policy", default="greedy", help="greedy or random (default greedy)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--hard", action="store_true",
                   help="hard mode: all 16 parts, player card side B")
    _json_flag(p)

    for group, help_text in (("eval", "accuracy on a labelled folder"),
                             ("bench", "time per image (one thread), median and p95, peak memory")):
        kinds = sub.add_parser(group, help=help_text).add_subparsers(
            dest=f"{group}_command", metavar="KIND", required=True)
        for kind in ("dice", "sigil"):
            handler = "evaluate" if group == "eval" else "bench"
            p = _leaf(kinds, kind, f"companion.commands.{kind}:{handler}", f"{help_text}: {kind}")
            p.add_argument("folder", metavar="DIR")
            if (group, kind) == ("eval", "sigil"):
                p.add_argument("--show", metavar="OUT",
                               help="write a picture of each of the worst failures to OUT")
            _json_flag(p)

    render = sub.add_parser("render", help="synthetic labelled scenes").add_subparsers(
        dest="render_command", metavar="KIND", required=True)
    for kind, handler in (("dice", "companion.commands.dice:render"),
                          ("sigil", "companion.commands.cards:render_sigil")):
        p = _leaf(render, kind, handler,
                  f"write synthetic labelled {kind} photos and a labels.json")
        p.add_argument("out", metavar="OUT")
        p.add_argument("--count", type=positive_int, default=100,
                       help="number of photos (default 100)")
        p.add_argument("--seed", type=non_negative_int, default=0,
                       help="random seed, 0 or more; photo i depends only on (seed, i) "
                            "(default 0)")
        if kind == "sigil":
            p.add_argument("--mid-turn-share", type=share, default=0.0, metavar="F",
                           help="share of cards caught in the middle of a turn (number written, "
                                "no cross yet; default 0)")
            p.add_argument("--marker-share", type=share, default=0.5, metavar="F",
                           help="share of companion cards (with markers); the others are "
                                "printed cards (default 0.5)")
            p.add_argument("--hand-share", type=share, default=None, metavar="F",
                           help="share of photos with a hand over the card (default: as the "
                                "scene conditions draw it, about 0.25)")
            p.add_argument("--scene", action="append", metavar="FIELD=VALUE",
                           help="fix a scene condition for every photo, repeatable (fields: "
                                "tilt_deg 0-90, tilt_dir_deg, rotation_deg, fill (share of the "
                                "frame the card covers), center X,Y, focal_px, light, warmth "
                                "-1..1, exposure, glare (0 none), shadow, hand true/false, "
                                "defocus_px, motion_px, noise, jpeg_quality, background); "
                                "the seed's other draws are unchanged")
            p.add_argument("--ink", action="append", metavar="FIELD=VALUE",
                           help="fix a property of the pen for every photo, repeatable "
                                "(fields: pen_color, width_mm, opacity (a half-dry pen: "
                                "0.4-0.6), wobble_mm, curve, cross_style, ghost_opacity, "
                                "ghost_color, ghost_marks true/false, smudges)")
            p.add_argument("--layout", action="append", metavar="L",
                           help="layout to draw, repeatable (each photo takes one of those "
                                "given): sigil letter A-D, a registered card name or a layout "
                                ".json file (default: A, B, C and D). A layout not A-D is "
                                "copied to OUT/layouts/NAME.json and the labels name that "
                                "file, so eval sigil OUT reads the photos with it, "
                                "unregistered")

    cards = sub.add_parser("cards", help="printable companion cards and card registration") \
        .add_subparsers(dest="cards_command", metavar="COMMAND", required=True)
    p = _leaf(cards, "print", "companion.commands.cards:print_card",
              "printable companion card (PDF or PNG)")
    p.add_argument("--layout", required=True,
                   help="sigil letter A-D, a registered card name or a layout .json file")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="the file to write: .pdf (the card on A4) or .png (300 dpi)")
    p = _leaf(cards, "register", "companion.commands.cards:register",
              "register a printed card design from a photo of a blank card")
    p.add_argument("photo", metavar="PHOTO")
    p.add_argument("--layout", required=True, metavar="LAYOUT.json",
                   help="the card's layout file (candles, stars, dividers, boxes in mm)")
    p.add_argument("--name", required=True,
                   help="name to register the card under (not A-D); then sigil --layout NAME")
    return parser


def resolve(handler: str) -> Callable[[argparse.Namespace], int]:
    module, _, function = handler.partition(":")
    return getattr(importlib.import_module(module), function)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(resolve(args.handler)(args) or 0)
    except BadInput as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
