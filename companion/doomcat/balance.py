"""The balance table: every suggested goal set, greedy and random policies, seeded solo games.

Run ``python -m companion.doomcat.balance --games 500 --seed 1 --jobs 2 --out
docs/doomcat-balance.md`` (a development tool: it takes a while; the numbers it writes are the
ones the README quotes). Each row is two :func:`companion.doomcat.simulate.simulate` runs with
the same seed, so the policies face the same dice and the same sigil designs.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from companion.doomcat.catalogue import SUGGESTED_SETS, goal
from companion.doomcat.simulate import SimConfig, SimReport, simulate

BAND = (0.10, 0.60)


def _run(args: tuple[str, tuple[int, ...], str, int, int]) -> tuple[str, str, SimReport, float]:
    name, goals, policy, games, seed = args
    start = time.process_time()
    report = simulate(SimConfig(games=games, goals=goals, policy=policy, seed=seed))
    return name, policy, report, time.process_time() - start


def table(games: int, seed: int, jobs: int = 1) -> tuple[str, dict[str, dict[str, SimReport]]]:
    """Run every set with both policies; return the markdown table and the reports."""
    work = [(name, goals, policy, games, seed) for name, goals in SUGGESTED_SETS.items()
            for policy in ("greedy", "random")]
    results: dict[str, dict[str, SimReport]] = {name: {} for name in SUGGESTED_SETS}
    cpu = {"greedy": 0.0, "random": 0.0}
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            done = list(pool.map(_run, work))
    else:
        done = [_run(w) for w in work]
    for name, policy, report, seconds in done:
        results[name][policy] = report
        cpu[policy] += seconds
    lines = [
        "| set | goals | greedy win rate (95% CI) | greedy mean / sigil | random win rate | "
        "random mean / sigil | in band |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, goals in SUGGESTED_SETS.items():
        g, r = results[name]["greedy"], results[name]["random"]
        lo, hi = g.win_rate_ci95
        ok = "yes" if BAND[0] <= g.win_rate <= BAND[1] else "**no**"
        names = ", ".join(f"{n} {goal(n).name}" for n in goals)
        lines.append(f"| {name} | {names} | {g.win_rate:.1%} ({lo:.1%}-{hi:.1%}) | "
                     f"{g.mean_score_per_sigil:.1f} | {r.win_rate:.1%} | "
                     f"{r.mean_score_per_sigil:.1f} | {ok} |")
    total_games = games * len(SUGGESTED_SETS)
    lines.append("")
    lines.append(f"{games} seeded solo games per set and policy (seed {seed}; game g uses "
                 f"`random.Random({seed} * 1_000_003 + g)`, each game draws its two designs "
                 "from A-D). CPU time: greedy "
                 f"{total_games / max(cpu['greedy'], 1e-9):.1f} games/s, random "
                 f"{total_games / max(cpu['random'], 1e-9):.1f} games/s.")
    return "\n".join(lines) + "\n", results


def familiar_table(set_name: str, games: int, seed: int, jobs: int = 1) -> str:
    """Greedy solo win rate with each familiar (cost subtracted) on one suggested set."""
    from companion.doomcat.catalogue import familiars

    goals = SUGGESTED_SETS[set_name]
    work = [(fid, goals, games, seed) for fid in (None, *familiars())]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            done = list(pool.map(_run_familiar, work))
    else:
        done = [_run_familiar(w) for w in work]
    lines = [f"Greedy solo games on {set_name} ({', '.join(map(str, goals))}), {games} per row, "
             f"seed {seed}; the familiar's cost is subtracted from each sigil.", "",
             "| familiar | cost | win rate (95% CI) | mean / sigil |", "|---|---|---|---|"]
    cards = familiars()
    for fid, report in done:
        lo, hi = report.win_rate_ci95
        name = "none" if fid is None else f"{fid} {cards[fid].name}"
        cost = 0 if fid is None else cards[fid].cost
        lines.append(f"| {name} | {cost} | {report.win_rate:.1%} ({lo:.1%}-{hi:.1%}) | "
                     f"{report.mean_score_per_sigil:.1f} |")
    return "\n".join(lines) + "\n"


def _run_familiar(args: tuple[str | None, tuple[int, ...], int, int]) -> tuple[str | None,
                                                                               SimReport]:
    fid, goals, games, seed = args
    return fid, simulate(SimConfig(games=games, goals=goals, policy="greedy", seed=seed,
                                   familiar=fid))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--familiars", metavar="SET", help="instead: one row per familiar on "
                        "this suggested set (e.g. 'Circle of Protection')")
    args = parser.parse_args(argv)
    if args.familiars:
        text = familiar_table(args.familiars, args.games, args.seed, args.jobs)
    else:
        text, _ = table(args.games, args.seed, args.jobs)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
