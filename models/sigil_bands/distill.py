"""Distil the band model into a cheap screen that gives the same logits.

The band model (``bands.onnx``, :class:`models.sigil_bands.fit.BandNet`) was the reader's
largest single cost, and most of a card's 66-90 strips are plainly "no line" (blank, or crossed
by other lines only). :class:`models.sigil_bands.fit.ScreenBandNet`, about a fifth of its cost
per strip, is trained to reproduce its logits (the teacher's, computed on the fly on every
augmented batch; no renderer labels), and the reader (:class:`vision.sigil.bands.BandModel`)
sends to the band model only the strips the screen scores at least ``SCREEN_LOGIT``: the band
model still decides every strip that could matter, so the card's readings stay where they were.

Data: strips the current reader makes (its own pose, maps and cover model) from rendered photos
(``doomcompanion render sigil``; never the development sets the reader is judged on), plus the
band model's own training strips (``train strips``)::

    # 1. the reader's strips of rendered photo folders (labels.json beside them)
    nice -n 10 /work/venv/bin/python -m models.sigil_bands.distill dump /tmp/distil/a.npz \
        /tmp/renders/s1 /tmp/renders/s2 ...
    # 2. fit the screen to the teacher's logits and export it
    nice -n 10 /work/venv/bin/python -m models.sigil_bands.distill fit /tmp/distil/*.npz \
        --teacher models/sigil_bands/bands.onnx --out models/sigil_bands/bands_screen.onnx

One CPU thread throughout. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

KEEP_FAINT = 0.25  # share kept of the strips the band model gives under 0.01 (most of a card's)


def dump(out: str, folders: list[str], seed: int = 0) -> int:
    """Read every photo of ``folders`` as ``eval sigil`` does and keep the band strips the
    reader builds (all the band model gives at least 0.01, a share of the rest)."""
    import cv2

    import vision.sigil.bands as bands
    from companion.commands.sigil import _art, _labels, all_layouts, load_layout, references
    from companion.errors import BadInput
    from vision.imageio import read_image
    from vision.sigil import read_sigil

    cv2.setNumThreads(1)
    rng = np.random.default_rng(seed)
    kept: list[np.ndarray] = []
    original = bands.BandModel.predict

    def predict(self: bands.BandModel, strips: np.ndarray) -> np.ndarray:
        # the band model alone, whatever screen the reader has
        p = original(bands.BandModel(self.path, screen=None), strips)
        keep = (p >= 0.01) | (rng.random(len(p)) < KEEP_FAINT)
        kept.append(strips[keep].astype(np.float16))
        return p

    bands.BandModel.predict = predict  # type: ignore[method-assign]
    others = all_layouts()
    n = 0
    try:
        for folder in map(Path, folders):
            for e, truth in _labels(folder):
                name = truth.layout
                with contextlib.suppress(BadInput):   # a refused photo gives no strips
                    read_sigil(read_image(folder / e["image"]), load_layout(name),
                               references(name, *_art(e.get("conditions"))) or None,
                               others=others)
                n += 1
            print(f"{folder}: {n} photos, {sum(len(k) for k in kept)} strips", flush=True)
    finally:
        bands.BandModel.predict = original  # type: ignore[method-assign]
    np.savez(out, x=np.concatenate(kept))
    return 0


def fit(paths: list[str], teacher: str, out: str, *, epochs: int = 10, seed: int = 0) -> int:
    import torch
    from torch import nn

    from models.sigil_bands.fit import ScreenBandNet, export
    from vision.onnxmodel import onnx_session

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    sess = onnx_session(teacher, "teacher band model")

    def teach(x: np.ndarray) -> np.ndarray:
        return sess.run(None, {"strip": x})[0][:, 0]

    x = np.concatenate([np.load(p)["x"] for p in paths])
    # photos are interleaved in the files; hold out every tenth block of 64 strips
    val = (np.arange(len(x)) // 64) % 10 == 0
    xt, xv = x[~val], x[val].astype(np.float32)
    tv = teach(xv)
    print(f"{len(x)} strips, {int(val.sum())} held out; teacher p >= 0.5 on "
          f"{float((tv > 0).mean()):.3f}", flush=True)
    net = ScreenBandNet()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = epochs * ((len(xt) + 127) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    t0 = time.time()
    for ep in range(epochs):
        net.train()
        order = rng.permutation(len(xt))
        total = 0.0
        for i in range(0, len(order), 128):
            xb = xt[order[i:i + 128]].astype(np.float32)
            # the strip's symmetries, a lateral shift and an ink scale, as the teacher's
            # training saw them; the target is the teacher's logit on the same input
            if rng.random() < 0.5:
                xb = xb[:, :, :, ::-1]
            if rng.random() < 0.5:
                xb = xb[:, :, ::-1]
            xb = np.ascontiguousarray(xb)
            shift = int(rng.integers(-2, 3))
            if shift and rng.random() < 0.5:
                xb = np.roll(xb, shift, axis=3)
                edge = slice(0, shift) if shift > 0 else slice(shift, None)
                xb[:, :4, :, edge] = 0.0
            if rng.random() < 0.5:
                xb[:, 0] *= rng.uniform(0.8, 1.25, (len(xb), 1, 1)).astype(np.float32)
            target = torch.from_numpy(np.clip(teach(xb), -12.0, 12.0))
            logit = net(torch.from_numpy(xb))[:, 0]
            # logits matched, most closely where the reader's decisions lie (p 0.02-0.98)
            w = 1.0 + 3.0 * torch.exp(-target.abs() / 4.0)
            loss = (w * nn.functional.smooth_l1_loss(logit, target, reduction="none")).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(xb)
        net.eval()
        with torch.no_grad():
            sv = torch.cat([net(torch.from_numpy(xv[i:i + 2048]))[:, 0]
                            for i in range(0, len(xv), 2048)]).numpy()
        near = np.abs(tv) < 4.0
        print(f"epoch {ep + 1}: loss {total / len(xt):.4f}; held out |logit - teacher| "
              f"p99 {np.percentile(np.abs(sv - tv), 99):.3f}, near the decisions (|t| < 4) "
              f"mean {np.abs(sv - tv)[near].mean():.3f} max {np.abs(sv - tv)[near].max():.2f}; "
              f"sides of 0.5 differ {int(((sv > 0) != (tv > 0)).sum())} of {len(tv)}; "
              f"{time.time() - t0:.0f} s", flush=True)
    export(net, out)
    print(f"wrote {out} ({Path(out).stat().st_size / 1024:.0f} KiB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    du = sub.add_parser("dump", help="the reader's strips of rendered photo folders")
    du.add_argument("out")
    du.add_argument("folders", nargs="+")
    du.add_argument("--seed", type=int, default=0)
    ft = sub.add_parser("fit", help="fit the screen to the teacher's logits, export ONNX")
    ft.add_argument("data", nargs="+")
    ft.add_argument("--teacher", default="models/sigil_bands/bands.onnx")
    ft.add_argument("--out", required=True)
    ft.add_argument("--epochs", type=int, default=10)
    ft.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        return dump(args.out, args.folders, args.seed)
    return fit(args.data, args.teacher, args.out, epochs=args.epochs, seed=args.seed)


if __name__ == "__main__":
    sys.exit(main())
