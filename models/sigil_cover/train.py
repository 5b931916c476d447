"""Train the sigil cover model and export ``models/sigil_cover/cover.onnx``.

Run from the repository root (needs torch and onnx)::

    # 1. cover inputs and targets of rendered photos (processes may run side by side)
    nice -n 10 /work/venv/bin/python -m models.sigil_cover.train data /tmp/cover/a.npz \\
        --seed 8201 --count 400
    # 2. train on them and export
    nice -n 10 /work/venv/bin/python -m models.sigil_cover.train fit /tmp/cover/*.npz \\
        --out models/sigil_cover/cover.onnx

Data: photos drawn by the project's renderer exactly as ``doomcompanion render sigil`` draws
them, except that a hand reaches over the card in ``--hand-share`` of them (a quarter in
``render sigil``); each is read by the reader itself up to its rectified card (its own pose,
so its own registration errors), and :func:`vision.sigil.ink.cover_input` is kept with the
renderer's hidden mask (a hand, a sleeve, glare strong enough to wash ink out: what the labels
call hidden) resampled to the same cells, as the share of each cell covered. Nothing is
downloaded.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import cv2
import numpy as np


def make_data(seed: int, count: int, start: int = 0, hand_share: float = 0.6,
              ) -> dict[str, np.ndarray]:
    """Render photos ``start .. start + count - 1`` of ``seed``: cover inputs, targets, and
    the cells inside the photo."""
    from calibration.references import references
    from calibration.states import RandomCards
    from companion.commands.cards import SIGIL_LETTERS, _load_layout
    from companion.errors import BadInput
    from vision.imageio import jpeg_round_trip
    from vision.sigil.pose import rectify
    from vision.sigil.reader import SigilConfig, _prepare

    cfg = SigilConfig(use_cover_model=False)
    layouts = [_load_layout(letter) for letter in SIGIL_LETTERS]
    cards = RandomCards(layouts)
    xs, ys, vs, rects = [], [], [], []
    refused = 0
    t0 = time.time()
    for i in range(start, start + count):
        k, shot, _ = cards.photo(seed, i, hand_share=hand_share)
        geom = cards.geoms[k]
        frame, info, style = shot.frame, shot.info, shot.card.style
        cond = info.conditions
        frame = jpeg_round_trip(frame, cond.jpeg_quality)
        try:
            _, pose, maps, _ = _prepare(frame, layouts[k],
                                        references(geom.name, style.art, style.design) or None,
                                        cfg, layouts, keep_cover_input=True)
        except BadInput:
            refused += 1
            continue
        x = maps.cover_in
        h, w = x.shape[1:]
        target = cv2.resize(info.hidden.astype(np.float32) / 255.0, (w, h),
                            interpolation=cv2.INTER_AREA)
        _, valid = rectify(frame, pose.homography, geom, cfg.px_per_mm)
        f = valid.shape[0] // h
        inside = valid[:h * f, :w * f].reshape(h, f, w, f).all(axis=(1, 3))
        xs.append(x.astype(np.float16))
        ys.append(np.round(target * 255).astype(np.uint8))
        vs.append(inside)
        rects.append(maps.rectified)
        if (i - start) % 50 == 49:
            print(f"{i - start + 1}/{count} photos, {refused} refused, "
                  f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return {"x": np.stack(xs), "y": np.stack(ys), "valid": np.stack(vs),
            "rect": np.stack(rects)}


def fit(paths: list[str], out: str, *, epochs: int = 30, seed: int = 0) -> int:
    import torch
    from torch import nn

    from models.sigil_cover.net import CoverNet

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    parts = [np.load(p) for p in paths]
    x = np.concatenate([d["x"] for d in parts]).astype(np.float32)
    y = np.concatenate([d["y"] for d in parts]).astype(np.float32) / 255.0
    v = np.concatenate([d["valid"] for d in parts]).astype(np.float32)
    n = len(x)
    val = np.arange(n) % 10 == 0
    print(f"{n} photos, {int(val.sum())} held out; covered share {y[v > 0].mean():.3f}",
          flush=True)
    xt, yt, vt = (torch.from_numpy(a[~val]) for a in (x, y, v))
    xv, yv, vv = (torch.from_numpy(a[val]) for a in (x, y, v))
    net = CoverNet()
    batch = 16
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = epochs * ((len(xt) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps)
    lossf = nn.BCEWithLogitsLoss(reduction="none")
    t0 = time.time()
    for ep in range(epochs):
        net.train()
        order = rng.permutation(len(xt))
        total = 0.0
        for i in range(0, len(order), batch):
            idx = torch.from_numpy(order[i:i + batch])
            xb, yb, vb = xt[idx].clone(), yt[idx], vt[idx]
            # a hand may come from any side: the whole card mirrored is as good a card
            if rng.random() < 0.5:
                xb, yb, vb = xb.flip(3), yb.flip(2), vb.flip(2)
            if rng.random() < 0.5:
                xb, yb, vb = xb.flip(2), yb.flip(1), vb.flip(1)
            # the bare card's white is an estimate: the photo's colour a little off
            gain = torch.from_numpy(rng.uniform(0.88, 1.12, (len(idx), 1, 1, 1))
                                    .astype(np.float32))
            xb[:, :4] = xb[:, :4] * gain
            logit = net(xb)[:, 0]
            loss = (lossf(logit, yb) * vb).sum() / vb.sum().clamp(min=1)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        net.eval()
        with torch.no_grad():
            pv = torch.sigmoid(net(xv)[:, 0])
        m = vv > 0
        t, p = yv[m] > 0.5, pv[m] > 0.5
        inter = float((t & p).sum())
        iou = inter / max(float((t | p).sum()), 1)
        print(f"epoch {ep + 1}: loss {total / len(xt):.4f}, held-out IoU {iou:.3f}, "
              f"missed {float((t & ~p).sum()) / max(float(t.sum()), 1):.3f}, "
              f"false {float((p & ~t).sum()) / max(float(t.sum()), 1):.3f}, "
              f"{time.time() - t0:.0f} s", flush=True)
    export(net.eval(), out)
    print(f"wrote {out} ({Path(out).stat().st_size / 1024:.0f} KiB)")
    return 0


def export(net, out: str) -> None:
    """Write ``net`` (a CoverNet) as ONNX: ``cover_in`` (1, COVER_CHANNELS, h, w) -> ``cover``
    (1, 1, h, w) logits, any h and w; the exported graph rewritten into its faster equivalent
    (:func:`models.sigil_cover.lean.lean_cover_graph`)."""
    import onnx
    import torch

    from models.sigil_cover.lean import checked_lean
    from vision.sigil.ink import COVER_CHANNELS

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, COVER_CHANNELS, 126, 88)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, dummy, out, input_names=["cover_in"], output_names=["cover"],
                          dynamic_axes={"cover_in": {2: "h", 3: "w"}, "cover": {2: "h", 3: "w"}},
                          opset_version=17, dynamo=False)
    lean, _ = checked_lean(onnx.load(out))
    onnx.save(lean, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    dt = sub.add_parser("data", help="render photos and save cover inputs and targets")
    dt.add_argument("out")
    dt.add_argument("--seed", type=int, required=True)
    dt.add_argument("--count", type=int, default=300)
    dt.add_argument("--start", type=int, default=0)
    dt.add_argument("--hand-share", type=float, default=0.6)
    ft = sub.add_parser("fit", help="train on saved data and export ONNX")
    ft.add_argument("data", nargs="+")
    ft.add_argument("--out", default="models/sigil_cover/cover.onnx")
    ft.add_argument("--epochs", type=int, default=30)
    args = ap.parse_args(argv)
    if args.cmd == "data":
        d = make_data(args.seed, args.count, args.start, args.hand_share)
        np.savez_compressed(args.out, **d)
        print(f"wrote {args.out}: {len(d['x'])} photos")
        return 0
    return fit(args.data, args.out, epochs=args.epochs)


if __name__ == "__main__":
    sys.exit(main())
