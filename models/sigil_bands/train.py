"""Train the sigil band classifier and export ``models/sigil_bands/bands.onnx``.

Run from the repository root (needs the ``train`` extras: torch, onnx)::

    # 1. strips of rendered photos (several processes may run side by side, other seeds)
    nice -n 10 /work/venv/bin/python -m models.sigil_bands.train strips /tmp/bands/a.npz \\
        --seed 31337 --count 600
    # 2. train on them and export
    nice -n 10 /work/venv/bin/python -m models.sigil_bands.train fit /tmp/bands/*.npz \\
        --out models/sigil_bands/bands.onnx

Data: photos drawn by the project's own renderer (``vision.render.sigil``, exactly as
``doomcompanion render sigil`` draws them: random states, pens, tilt, glare, shadow, hands,
ghosts of erased games, blur, JPEG), read by the reader itself up to its maps
(:func:`vision.sigil.reader.card_samples`), so that training sees what reading sees, with the
reader's own pose errors. Labels come from the renderer: a strip is positive when its pair is
drawn (of a drawn pair's bow hypotheses, only the one holding most ink is kept), negative
otherwise (ghost lines included); pairs the renderer marks hidden are left out. Each visible
candle's disc patch is kept too, labelled crossed or not, for the crossed-candle model. Most strips
with next to no ink are dropped and the rest weighted up, so the loss is not spent on blank
bands. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from vision.sigil.bands import STRIP_LANES

EASY_KEEP = 0.2  # share of the nearly blank negative strips kept (weighted 1 / EASY_KEEP)


def _centre_ink(strips: np.ndarray) -> np.ndarray:
    mid = STRIP_LANES // 2
    return strips[:, 0, :, mid - 2:mid + 3].max(axis=2)                 # (R, L)


def make_strips(seed: int, count: int, start: int = 0,
                motion_share: float | None = None) -> dict[str, np.ndarray]:
    """Render photos ``start .. start + count - 1`` of ``seed`` and read their strips. With
    ``motion_share``, that share of the photos gets a motion blur of 1-5 px and the rest none
    (the renderer's own draw gives a fifth of them one), drawn from a generator of its own."""
    from calibration.references import references
    from calibration.states import RandomCards
    from companion.commands.cards import SIGIL_LETTERS, _load_layout
    from companion.errors import BadInput
    from vision.imageio import jpeg_round_trip
    from vision.sigil.reader import card_samples

    layouts = [_load_layout(letter) for letter in SIGIL_LETTERS]
    cards = RandomCards(layouts)
    xs, ys, ws, groups, lens = [], [], [], [], []
    dxs, dys, dgroups = [], [], []
    bxs, bys = [], []
    refused = 0
    t0 = time.time()
    for i in range(start, start + count):
        fixed = {}
        if motion_share is not None:
            mrng = np.random.default_rng([seed, i, 1])
            fixed["motion_px"] = (float(mrng.uniform(1, 5)) if mrng.random() < motion_share
                                  else 0.0)
        k, shot, rng = cards.photo(seed, i, **fixed)
        geom = cards.geoms[k]
        frame, label, style, cond = shot.frame, shot.label, shot.card.style, shot.info.conditions
        frame = jpeg_round_trip(frame, cond.jpeg_quality)
        try:
            got = card_samples(
                frame, layouts[k], references(geom.name, style.art, style.design) or None,
                others=layouts)
        except BadInput:
            refused += 1
            continue
        pairs, owner, strips = got["pairs"], got["owner"], got["strips"]
        for c in range(len(got["discs"])):
            if f"candle {c}" not in label.unknown:
                dxs.append(got["discs"][c].astype(np.float16))
                dys.append(float(c in label.crossed))
                dgroups.append(i)
        for k2 in range(len(got["boxes"])):
            if f"top {k2}" not in label.unknown:
                t = label.top[k2]
                bxs.append(np.clip(got["boxes"][k2], 0, 1).astype(np.float16))
                bys.append([0, 0] if t is None else [t.value, int(t.circled)])
        drawn = set(label.lines)
        hidden = set(label.unknown)
        centre = _centre_ink(strips)
        keep_rows = []
        for p, (a, b) in enumerate(pairs):
            rows = np.nonzero(owner == p)[0]
            if f"line {a}-{b}" in hidden:
                continue
            if (a, b) in drawn:
                best = rows[np.argmax(centre[rows].mean(axis=1))]
                keep_rows.append((best, 1.0, 1.0))
                continue
            for r in rows:
                if np.percentile(centre[r], 70) > 0.12 or rng.random() < EASY_KEEP:
                    w = 1.0 if np.percentile(centre[r], 70) > 0.12 else 1.0 / EASY_KEEP
                    keep_rows.append((r, 0.0, w))
        for r, y, w in keep_rows:
            xs.append(strips[r, :4].astype(np.float16))
            ys.append(y)
            ws.append(w)
            groups.append(i)
            lens.append(float(strips[r, 4, 0, 0]))
        if (i - start) % 50 == 49:
            print(f"{i - start + 1}/{count} photos, {len(ys)} strips, {refused} refused, "
                  f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return {"x": np.stack(xs), "y": np.array(ys, np.float32), "w": np.array(ws, np.float32),
            "group": np.array(groups, np.int64), "length": np.array(lens, np.float32),
            "dx": np.stack(dxs), "dy": np.array(dys, np.float32),
            "dgroup": np.array(dgroups, np.int64),
            "bx": np.stack(bxs), "by": np.array(bys, np.int64)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("strips", help="render photos and save their strips")
    st.add_argument("out")
    st.add_argument("--seed", type=int, required=True)
    st.add_argument("--count", type=int, default=300)
    st.add_argument("--start", type=int, default=0)
    st.add_argument("--motion-share", type=float, default=None,
                    help="share of photos with a 1-5 px motion blur (default: the renderer's)")
    ft = sub.add_parser("fit", help="train on saved strips and export ONNX")
    ft.add_argument("data", nargs="+")
    ft.add_argument("--out", default="models/sigil_bands/bands.onnx")
    ft.add_argument("--epochs", type=int, default=12)
    ft.add_argument("--seed", type=int, default=0)
    ft.add_argument("--discs", action="store_true", help="train the crossed-candle model")
    args = ap.parse_args(argv)
    if args.cmd == "strips":
        d = make_strips(args.seed, args.count, args.start, args.motion_share)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **d)
        print(f"{len(d['y'])} strips ({int(d['y'].sum())} lines) -> {args.out}")
        return 0
    from models.sigil_bands.fit import fit

    return fit(args.data, args.out, epochs=args.epochs, seed=args.seed, discs=args.discs)


if __name__ == "__main__":
    raise SystemExit(main())
