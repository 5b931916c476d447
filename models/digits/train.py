"""Train the top-box digit model and export ``models/digits/digits.onnx``.

Run from the repository root (needs the ``train`` extras: torch, onnx, scikit-learn)::

    nice -n 10 /work/venv/bin/python -m models.digits.train --out models/digits/digits.onnx

Data: :mod:`models.digits.synth` (scikit-learn's bundled digits 1-6, Hershey stroke fonts and
the project's own stroke templates; half of them circled), passed through the reader's own
circle removal and glyph normalisation (:mod:`vision.sigil.digits`), so that training sees
exactly what reading sees. Two heads in one small CNN: digit (from the 28x28 glyph) and circle
(from the 32x32 crop). Prints the held-out figures that MODEL.md quotes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from models.digits.synth import sample
from vision.sigil.digits import CIRCLE_IN, GLYPH, circle_input, digit_glyphs


class DigitNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.digit = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),      # 14
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 7
            nn.Conv2d(32, 48, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 3
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(48 * 9, 6))
        self.circle = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),       # 16
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),      # 8
            nn.Conv2d(16, 24, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 4
            nn.Flatten(), nn.Linear(24 * 16, 1))

    def forward(self, glyph: torch.Tensor, crop: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.digit(glyph), self.circle(crop)


def make_set(n: int, seed: int, *, sk_part: str = "train", source: int | None = None,
             ) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    gl = np.zeros((n, 1, GLYPH, GLYPH), np.float32)
    cr = np.zeros((n, 1, CIRCLE_IN, CIRCLE_IN), np.float32)
    dig = np.zeros(n, np.int64)
    circ = np.zeros(n, np.float32)
    i = 0
    while i < n:
        d = int(rng.integers(1, 7))
        c = bool(rng.random() < 0.5)
        s = sample(rng, d, c, sk_part=sk_part, source=source)
        # a circled crop: the rest after one of the two ways of removing the ring, at random
        gs = digit_glyphs(s, c)
        g = gs[int(rng.integers(len(gs)))]
        if not g.any():
            continue
        gl[i, 0], cr[i, 0], dig[i], circ[i] = g, circle_input(s), d - 1, float(c)
        i += 1
    return gl, cr, dig, circ


def evaluate(net: DigitNet, data: tuple[np.ndarray, ...]) -> tuple[float, float]:
    net.eval()
    with torch.no_grad():
        lg, lc = net(torch.from_numpy(data[0]), torch.from_numpy(data[1]))
    d_acc = float((lg.argmax(1).numpy() == data[2]).mean())
    c_acc = float(((lc[:, 0].numpy() > 0) == (data[3] > 0.5)).mean())
    return d_acc, c_acc


def fit(net: DigitNet, train: list[np.ndarray], val: tuple[np.ndarray, ...], *, epochs: int,
        max_lr: float, seed: int, label: str = "val") -> None:
    """Train ``net`` on ``train`` (glyphs, crops, digit classes, circle labels) in batches of 128
    with AdamW and a one-cycle schedule peaking at ``max_lr``; print ``val``'s figures after
    each epoch."""
    t0 = time.time()
    n = len(train[0])
    opt = torch.optim.AdamW(net.parameters(), lr=max_lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr,
                                                total_steps=epochs * (n // 128))
    ce, bce = nn.CrossEntropyLoss(label_smoothing=0.05), nn.BCEWithLogitsLoss()
    tensors = [torch.from_numpy(a) for a in train]
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        net.train()
        perm = torch.randperm(n, generator=gen)
        for k in range(n // 128):
            idx = perm[k * 128:(k + 1) * 128]
            lg, lc = net(tensors[0][idx], tensors[1][idx])
            loss = ce(lg, tensors[2][idx]) + bce(lc[:, 0], tensors[3][idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        d_acc, c_acc = evaluate(net, val)
        print(f"epoch {epoch + 1}: {label} digit {d_acc:.4f} circle {c_acc:.4f} "
              f"({time.time() - t0:.0f} s)", flush=True)


def report_held_out(net: DigitNet, seed: int) -> None:
    """Print the held-out figures per data source (MODEL.md quotes them)."""
    for name, src, part in (("templates", 0, "train"), ("hershey", 1, "train"),
                            ("sklearn held-out scans", 2, "test"),
                            ("renderer writers", 3, "train")):
        d_acc, c_acc = evaluate(net, make_set(1200, seed + src, sk_part=part, source=src))
        print(f"held-out {name}: digit {d_acc:.4f} circle {c_acc:.4f}")


def export(net: DigitNet, out: Path) -> None:
    """Write ``net`` as the ONNX file the reader loads (inputs glyph, crop; outputs digit,
    circle; any batch size)."""
    net.eval()
    torch.onnx.export(net, (torch.zeros(1, 1, GLYPH, GLYPH), torch.zeros(1, 1, CIRCLE_IN,
                                                                           CIRCLE_IN)),
                      str(out), input_names=["glyph", "crop"], output_names=["digit", "circle"],
                      dynamic_axes={"glyph": {0: "n"}, "crop": {0: "n"}, "digit": {0: "n"},
                                    "circle": {0: "n"}}, opset_version=17, dynamo=False)
    params = sum(p.numel() for p in net.parameters())
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB, {params} parameters)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="models/digits/digits.onnx")
    ap.add_argument("--train", type=int, default=30000)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    t0 = time.time()
    train = make_set(args.train, args.seed)
    val = make_set(3000, args.seed + 1000)
    print(f"data {time.time() - t0:.0f}s", flush=True)
    net = DigitNet()
    fit(net, list(train), val, epochs=args.epochs, max_lr=3e-3, seed=args.seed)
    report_held_out(net, args.seed + 2000)
    export(net, Path(args.out))


if __name__ == "__main__":
    main()
