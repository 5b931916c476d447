"""Handlers of ``layouts``, ``score`` and ``cat simulate`` (Doom Cat)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from companion.cli import PROG, print_json
from companion.datafiles import parse_json, read_json
from companion.doomcat.catalogue import (
    Goal,
    Sigil,
    extra_lines,
    familiar,
    game_goals,
    parse_goals,
    score_sigil,
    write_limit,
)
from companion.doomcat.geometry import facts, violations
from companion.doomcat.layouts import all_layouts, load_layout
from companion.errors import BadInput, DataFileError, unknown_name
from vision.readings import SigilState


def layouts(args: argparse.Namespace) -> int:
    """Print the sigil layouts A-D and the registered cards (a warning for each broken one)."""
    broken: list[BadInput] = []
    found = all_layouts(broken)
    for exc in broken:
        print(f"{PROG}: warning: {exc}", file=sys.stderr)
    if args.json:
        print_json([layout.to_json() for layout in found])
        return 0
    print(f"{'name':<12} {'title':<10} {'candle numbers (index order)':<30} stars  must-curve")
    for layout in found:
        numbers = " ".join(str(n) for n in layout.numbers)
        print(f"{layout.name:<12} {layout.title:<10} {numbers:<30} {len(layout.stars):>5}  "
              f"{len(layout.must_curve):>10}")
    return 0


def score_state(state: SigilState, goals: tuple[Goal, ...], familiar_id: str | None = None,
                ) -> dict[str, Any]:
    """Facts, goal points, familiar cost, total and rule violations of one sigil state.

    The shape of DESIGN.md's sigil score, plus ``layout`` and ``unknown``.
    """
    layout = load_layout(state.layout)
    sigil = Sigil(layout, state.lines, state.crossed, state.top)
    fam = familiar(familiar_id) if familiar_id else None
    fam_id = fam.id if fam else None
    result = score_sigil(sigil, goals, fam)
    return {"layout": state.layout, "facts": facts(layout, state).to_json(),
            "goals": result["goals"], "familiar_cost": result["familiar_cost"],
            "total": result["total"],
            "violations": violations(layout, state, write_limit(fam_id),
                                     extra_lines=extra_lines(fam_id)),
            "unknown": list(state.unknown)}


def _states(paths: list[str]) -> Iterator[tuple[str, SigilState]]:
    """Sigil states from files (one object, or a list of them) and ``-`` (JSON lines)."""
    for path in paths:
        if path == "-":
            # bytes, decoded line by line by parse_json: a line in another encoding is named
            # (the text layer would raise, or turn it into characters JSON refuses)
            lines = getattr(sys.stdin, "buffer", sys.stdin)
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                source = f"<stdin>:{number}"
                yield source, SigilState.from_json(parse_json(line, source), source=source)
            continue
        doc = read_json(path)
        if isinstance(doc, list):
            for i, item in enumerate(doc):
                yield f"{path}[{i}]", SigilState.from_json(item, source=f"{path}[{i}]")
        else:
            yield path, SigilState.from_json(doc, source=path)


def score(args: argparse.Namespace) -> int:
    """Print the facts and goal scores of each state, one line per state, in order."""
    goals = parse_goals(args.goals)
    fam = familiar(args.familiar).id if args.familiar else None
    stream = any(p == "-" for p in args.states)
    # files are all checked before anything is printed; stdin is scored line by line
    pending = _states(args.states) if stream else iter(list(_states(args.states)))
    for source, state in pending:
        try:
            result = score_state(state, goals, fam)
        except DataFileError:
            raise
        except BadInput as exc:
            raise BadInput(f"{source}: {exc}") from None
        if args.json:
            print_json(result)
        else:
            points = ", ".join(f"{k}: {v}" for k, v in result["goals"].items())
            f = result["facts"]
            line = (f"{source}: layout {result['layout']}, total {result['total']} ({points}"
                    f"{', familiar -' + str(result['familiar_cost']) if fam else ''}); "
                    f"{f['intersections']} intersections, {f['enclosures']} enclosures, "
                    f"{len(f['used'])} used, {len(f['crossed'])} crossed")
            if result["violations"]:
                line += "; violations: " + "; ".join(result["violations"])
            print(line)
        sys.stdout.flush()
    return 0


def simulate(args: argparse.Namespace) -> int:
    """Play seeded solo games with a policy and report the win rate and scores."""
    from companion.doomcat.policies import POLICIES
    from companion.doomcat.simulate import SimConfig
    from companion.doomcat.simulate import simulate as run

    goals = game_goals(args.goals)
    if args.policy not in POLICIES:
        raise unknown_name("policy", args.policy, POLICIES, option="--policy")
    fam = familiar(args.familiar).id if args.familiar else None
    report = run(SimConfig(games=args.games, goals=tuple(g.number for g in goals),
                           policy=args.policy, seed=args.seed, familiar=fam))
    if args.json:
        print_json(report.to_json())
        return 0
    lo, hi = report.win_rate_ci95
    q1, q2, q3 = report.sigil_score_quartiles
    print(f"{report.games} solo games, goals {','.join(map(str, report.goals))}, "
          f"policy {report.policy}, seed {report.seed}"
          f"{', familiar ' + fam if fam else ''}")
    print(f"wins {report.wins} ({report.win_rate:.1%}, 95% CI {lo:.1%}-{hi:.1%}); "
          f"mean score per sigil {report.mean_score_per_sigil:.1f} "
          f"(quartiles {q1:g} / {q2:g} / {q3:g}); {report.games_per_second:.1f} games/s")
    return 0
