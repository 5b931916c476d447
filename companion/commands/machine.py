"""``doomcompanion machine simulate``: Doom Machine games played by a policy."""

from __future__ import annotations

import argparse
import time

from companion.cli import print_json
from companion.errors import unknown_name
from companion.machine.policies import POLICIES
from companion.machine.simulate import simulate as run


def simulate(args: argparse.Namespace) -> int:
    """Play ``--games`` seeded games with ``--policy`` and print the report."""
    if args.policy not in POLICIES:
        raise unknown_name("policy", args.policy, POLICIES, option="--policy")
    start = time.perf_counter()
    report = run(args.games, args.policy, args.seed, args.hard)
    seconds = time.perf_counter() - start
    out = report.to_json()
    out["games_per_second"] = round(report.games / seconds, 1) if seconds > 0 else None
    if args.json:
        print_json(out)
    else:
        lo, hi = out["win_rate_ci95"]
        print(f"{out['games']} {'hard' if args.hard else 'normal'} games, policy "
              f"{args.policy}: {out['wins']} wins ({out['win_rate']:.1%}, 95% CI "
              f"{lo:.1%}-{hi:.1%}), mean {out['mean_turns']} turns, "
              f"mean HP left {out['mean_hp_left']}, "
              f"{out['games_per_second']} games/s")
    return 0
