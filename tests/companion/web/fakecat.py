"""A permissive stand-in for the Doom Cat rules (tests of the session glue, not of the rules).

It lists as legal every turn whose line joins two candles numbered like the two other dice and
whose crossed candle matches the written die; it scores 3 VP per line plus the goal's number.
The real rules live in ``companion.doomcat`` and are tested there.
"""

from __future__ import annotations

import copy
from itertools import combinations
from typing import Any

from companion.doomcat.layouts import load_layout


class FakeRules:
    def catalogue(self) -> dict[str, Any]:
        return {
            "goals": [{"number": i, "name": f"Goal {i}", "tier": (i - 1) // 9 + 1,
                       "text": f"score something #{i}"} for i in range(1, 28)],
            "familiars": [{"id": f"F0{i}", "name": f"Familiar {i}", "cost": i, "text": "power"}
                          for i in range(1, 10)],
            "sets": [{"name": "Circle of Protection", "goals": [1, 2, 3]},
                     {"name": "Long Path", "goals": [10, 11, 12]}],
            "layouts": [{"name": name, "title": ""} for name in "ABCD"]}

    def check_setup(self, setup: Any) -> None:
        return None

    def new(self, setup: Any) -> dict[str, Any]:
        return {"setup": setup, "turn": 0, "roll": None, "done": [],
                "cards": [[{"top": [], "lines": [], "crossed": []} for _ in p["letters"]]
                          for p in setup["players"]]}

    def phase(self, g: Any) -> str:
        if g["turn"] >= 14 and g["roll"] is None:
            return "over"
        return "roll" if g["roll"] is None else "turn"

    def roll(self, g: Any, dice: list[int]) -> Any:
        g = copy.deepcopy(g)
        g["roll"], g["done"] = list(dice), []
        return g

    def unroll(self, g: Any) -> Any:
        g = copy.deepcopy(g)
        g["roll"] = None
        return g

    def options(self, g: Any, p: int) -> list[dict[str, Any]]:
        if g["roll"] is None or p in g["done"]:
            return []
        out = []
        for c, card in enumerate(g["cards"][p]):
            nums = [k.number for k in load_layout(g["setup"]["players"][p]["letters"][c]).candles]
            if len(card["top"]) >= 7:
                continue
            for i in range(3):
                value = g["roll"][i]
                rest = sorted(g["roll"][j] for j in range(3) if j != i)
                for a, b in combinations(range(12), 2):
                    used = [a, b] in card["lines"] or {a, b} & set(card["crossed"])
                    if sorted([nums[a], nums[b]]) != rest or used:
                        continue
                    out += [{"card": c, "value": value, "line": [a, b], "cross": x}
                            for x in range(12) if nums[x] == value and x not in card["crossed"]]
        return out

    def explain(self, g: Any, p: int, pieces: Any) -> str:
        return "no legal turn has these pieces (fake rules)"

    def turn(self, g: Any, p: int, t: Any) -> Any:
        g = copy.deepcopy(g)
        card = g["cards"][p][t["card"]]
        card["top"].append(t["value"])
        card["lines"].append(sorted(t["line"]))
        card["crossed"].append(t["cross"])
        g["done"].append(p)
        if len(g["done"]) == len(g["cards"]):
            g["roll"] = None
            g["turn"] += 1
        return g

    def done(self, g: Any, p: int) -> bool:
        return p in g["done"]

    def tiebreak(self, g: Any, event: Any) -> Any:
        return g

    def sigil(self, g: Any, p: int, c: int) -> dict[str, Any]:
        card = g["cards"][p][c]
        tops: list[Any] = []
        for v in card["top"]:
            tops.append({"value": v, "circled": sum(1 for t in tops if t["value"] == v) == 1})
        return {"layout": g["setup"]["players"][p]["letters"][c], "lines": sorted(card["lines"]),
                "crossed": sorted(card["crossed"]), "top": tops + [None] * (7 - len(tops)),
                "unknown": []}

    def wilds(self, g: Any, p: int, c: int) -> list[int]:
        top = g["cards"][p][c]["top"]
        return sorted({v for v in top if top.count(v) >= 2})

    def score(self, g: Any, p: int, c: int) -> dict[str, Any]:
        lines = len(g["cards"][p][c]["lines"])
        goals = {f"{n:02d}": 3 * lines + n for n in g["setup"]["goals"]}
        return {"goals": goals, "familiar_cost": 0, "total": sum(goals.values())}

    def familiar(self, g: Any, p: int) -> None:
        return None

    def turn_number(self, g: Any) -> int:
        return min(14, g["turn"] + 1)

    def goals(self, g: Any) -> list[dict[str, Any]]:
        return [{"number": n, "label": f"{n:02d}", "name": f"Goal {n}", "tier": 1,
                 "text": "3 VP per line plus the goal's number (fake rules)"}
                for n in g["setup"]["goals"]]

    def verdict(self, g: Any) -> dict[str, Any] | None:
        if self.phase(g) != "over":
            return None
        return {"text": "game over (fake rules)", "winners": [0]}
