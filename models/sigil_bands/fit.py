"""The band classifier's network, its training loop and its ONNX export (used by
``python -m models.sigil_bands.train fit``)."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from vision.sigil.bands import CHANNELS, DISC_CHANNELS, DISC_SIZE, STRIP_LANES, STRIP_LEN


class BandNet(nn.Module):
    """A small CNN over a strip (CHANNELS, STRIP_LEN, STRIP_LANES) -> one logit. Strides of 2
    along the strip first (a pen stroke runs along it) keep it near a million multiply-adds."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(CHANNELS, 12, 3, stride=(2, 1), padding=1), nn.ReLU(),   # 24 x 25
            nn.Conv2d(12, 24, 3, stride=2, padding=1), nn.ReLU(),              # 12 x 13
            nn.Conv2d(24, 32, 3, stride=2, padding=1), nn.ReLU(),              # 6 x 7
            nn.Flatten(),
            nn.Linear(32 * 6 * 7, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class ScreenBandNet(nn.Module):
    """A cheap screen in front of the band model (``models/sigil_bands/distill.py``): trained
    to give the band model's logit, it only has to tell the strips the band model would
    certainly call "no line" (most of a card's) from the rest, which the band model then
    scores. The first layer strides 4 along the strip and 2 across it (a pen stroke runs along
    the strip and spans two or more of its 0.5 mm lanes); 16 channels throughout (onnxruntime
    pads its blocked convolutions to 16). About a fifth of the band model's time per strip."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(CHANNELS, 16, 3, stride=(4, 2), padding=1), nn.ReLU(),   # 12 x 13
            nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),              # 6 x 7
            nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),              # 3 x 4
            nn.Flatten(),
            nn.Linear(16 * 3 * 4, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class DiscNet(nn.Module):
    """A small CNN over a candle's disc patch (DISC_CHANNELS, DISC_SIZE, DISC_SIZE) -> one
    logit "crossed out"."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(DISC_CHANNELS, 12, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 12
            nn.Conv2d(12, 24, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),              # 6
            nn.Conv2d(24, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),              # 3
            nn.Flatten(),
            nn.Linear(32 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def load_discs(paths: list[str]) -> dict[str, np.ndarray]:
    xs, ys, gs = [], [], []
    for n, p in enumerate(paths):
        d = np.load(p)
        if "dx" not in d:
            continue
        xs.append(d["dx"])
        ys.append(d["dy"])
        gs.append(d["dgroup"] + n * 10_000_000)
    return {"x": np.concatenate(xs).astype(np.float32), "y": np.concatenate(ys),
            "w": np.ones(sum(len(y) for y in ys), np.float32), "group": np.concatenate(gs)}


def load(paths: list[str]) -> dict[str, np.ndarray]:
    parts = [np.load(p) for p in paths]
    out: dict[str, np.ndarray] = {}
    offset = 0
    for d in parts:
        for k in ("x", "y", "w", "length"):
            out.setdefault(k, []).append(d[k])                      # type: ignore[union-attr]
        out.setdefault("group", []).append(d["group"] + offset)     # type: ignore[union-attr]
        offset += 10_000_000
    return {k: np.concatenate(v) for k, v in out.items()}           # type: ignore[arg-type]


def _inputs(x: np.ndarray, length: np.ndarray) -> np.ndarray:
    n = len(x)
    ln = np.broadcast_to(length[:, None, None, None], (n, 1, STRIP_LEN, STRIP_LANES))
    return np.concatenate([x.astype(np.float32), ln.astype(np.float32)], axis=1)


def fit(paths: list[str], out: str, *, epochs: int = 12, seed: int = 0,
        discs: bool = False) -> int:
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    if discs:
        d = load_discs(paths)
        x = d["x"]
    else:
        d = load(paths)
        x = _inputs(d["x"], d["length"])
    y, w, g = d["y"], d["w"], d["group"]
    val = (g % 10) == 0
    print(f"{len(y)} strips ({int(y.sum())} lines), {int(val.sum())} held out "
          f"({len(np.unique(g[val]))} photos)", flush=True)
    xt, yt, wt = torch.from_numpy(x[~val]), torch.from_numpy(y[~val]), torch.from_numpy(w[~val])
    xv, yv = torch.from_numpy(x[val]), y[val]
    net: nn.Module = DiscNet() if discs else BandNet()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = epochs * ((len(yt) + 127) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    lossf = nn.BCEWithLogitsLoss(reduction="none")
    t0 = time.time()
    for ep in range(epochs):
        net.train()
        order = torch.from_numpy(rng.permutation(len(yt)))
        total = 0.0
        for i in range(0, len(order), 128):
            idx = order[i:i + 128]
            xb = xt[idx].clone()
            # symmetries of a strip: mirror across the line, run it from the other candle
            if rng.random() < 0.5:
                xb = xb.flip(3)
            if rng.random() < 0.5:
                xb = xb.flip(2)
            if discs and rng.random() < 0.5:
                xb = xb.transpose(2, 3)
            # a line drawn a little to one side of the chord (a bow, the pose a little off)
            shift = int(rng.integers(-2, 3)) if not discs else 0
            if shift:
                xb = torch.roll(xb, shift, dims=3)
                edge = slice(0, shift) if shift > 0 else slice(shift, None)
                xb[:, :4, :, edge] = 0.0
            # the print contrast that scales ink is itself an estimate
            xb[:, 0] *= torch.from_numpy(rng.uniform(0.8, 1.25, (len(idx), 1, 1)).astype(
                np.float32))
            logit = net(xb)[:, 0]
            loss = (lossf(logit, yt[idx]) * wt[idx]).sum() / wt[idx].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        p = predict(net, xv)
        acc = float(((p > 0.5) == (yv > 0.5)).mean())
        fn = int(((p <= 0.5) & (yv > 0.5)).sum())
        fp = int(((p > 0.5) & (yv < 0.5)).sum())
        print(f"epoch {ep + 1}: loss {total / len(yt):.4f}, held-out accuracy {acc:.4f} "
              f"(missed {fn} of {int(yv.sum())} lines, {fp} false) {time.time() - t0:.0f} s",
              flush=True)
    export(net, out, discs)
    print(f"wrote {out} ({Path(out).stat().st_size / 1024:.0f} KiB)")
    return 0


def predict(net: nn.Module, x: torch.Tensor) -> np.ndarray:
    net.eval()
    with torch.no_grad():
        return torch.sigmoid(torch.cat([net(x[i:i + 1024])[:, 0]
                                        for i in range(0, len(x), 1024)])).numpy()


def export(net: nn.Module, out: str, discs: bool = False) -> None:
    net.eval()
    if discs:
        dummy = torch.zeros(2, DISC_CHANNELS, DISC_SIZE, DISC_SIZE)
        names = ["disc", "crossed"]
    else:
        dummy = torch.zeros(2, CHANNELS, STRIP_LEN, STRIP_LANES)
        names = ["strip", "line"]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # the TorchScript exporter: one plain graph of convolutions, no control flow
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(net, (dummy,), out, input_names=names[:1], output_names=names[1:],
                          dynamic_axes={names[0]: {0: "n"}, names[1]: {0: "n"}},
                          opset_version=17, dynamo=False)
