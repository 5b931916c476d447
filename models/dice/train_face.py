"""Train the dice reader's face net on scenes the project renders itself.

    nice -n 10 /work/venv/bin/python -m models.dice.train_face --out models/dice --minutes 35 \
        --scenes 20000 --threads 2 --seed 53

The face net reads a ``FACE_CROP x FACE_CROP`` crop around a found top face (a square window,
``CROP_CONTEXT`` times the box's longer side) and gives the face's shape: how its normal leans
from the line of sight, ``sin(t) * (cos 2a, sin 2a)`` (:func:`vision.dice.lean.face_shape`). The
reader sets each die's shape against the plane the other dice share to find the leaning ones
(:mod:`vision.dice.lean`).

Training data: only :func:`models.dice.train.scene` (the detector's and classifier's table
scenes, with more dice leaning), whose labels give each top face's corners (``quad``); never
the real photographs. Each die is cut twice around a box shifted and scaled as the detector's
are, and every batch is taken in one of the crop's eight views with its targets moved alike
(:func:`vision.dice.lean.view_shapes`). Needs torch and onnx (the ``train`` extra); running the
reader does not. Writes ``dice_face.onnx``.
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from models.dice.train import SceneMix, conv_bn, cosine_lr, export, scene, to_tensor
from vision.dice.lean import face_shape, view_shapes
from vision.dice.reader import FACE_CROP, crop_batch, crop_views

LOOKS = {"wide_rate": 0.3, "stone_rate": 0.1, "sheet_rate": 0.1, "board_rate": 0.1,
         "board_dice_rate": 0.05, "desk_rate": 0.1}  # the table scenes' looks (render_scene's)


class FaceNet(nn.Module):
    """The face shape (two numbers) of a crop."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(conv_bn(3, 16), nn.MaxPool2d(2), conv_bn(16, 32),
                                  nn.MaxPool2d(2), conv_bn(32, 48), conv_bn(48, 48),
                                  nn.MaxPool2d(2), conv_bn(48, 64), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(64, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.body(x), 1))


def face_crops(seed: int, count: int, cocked_rate: float, tile_rate: float,
               ) -> tuple[np.ndarray, np.ndarray]:
    """Crops ``(M, FACE_CROP, FACE_CROP, 3)`` and face shapes ``(M, 2)`` of the flat and
    leaning dice of ``count`` training scenes drawn from ``seed``, two boxes per die."""
    rng = np.random.default_rng(seed)
    mix = SceneMix(cocked_rate=cocked_rate, tile_rate=tile_rate, table_looks=LOOKS)
    crops, shapes = [], []
    for _ in range(count):
        image, labels = scene(rng, mix)
        boxes = []
        for lb in labels:
            x0, y0, x1, y1 = lb["bbox"]
            bw, bh = x1 - x0, y1 - y0
            if (lb["state"] not in ("flat", "cocked") or lb.get("visible", 1.0) < 0.6
                    or "quad" not in lb or min(bw, bh) < 4):
                continue
            for _ in range(2):  # the detector's box: shifted, grown or shrunk, reshaped
                cx = (x0 + x1) / 2 + rng.normal(0, 0.08) * bw
                cy = (y0 + y1) / 2 + rng.normal(0, 0.08) * bh
                grow = float(np.exp(rng.uniform(math.log(0.85), math.log(1.35))))
                sw = bw * grow * float(np.exp(rng.normal(0, 0.1)))
                sh = bh * grow * float(np.exp(rng.normal(0, 0.1)))
                boxes.append((cx - sw / 2, cy - sh / 2, cx + sw / 2, cy + sh / 2))
                shapes.append(face_shape(lb["quad"]))
        if boxes:
            crops.append(crop_batch(image, boxes, size=FACE_CROP, aspect=0.0, min_fill=0.0))
    return (np.concatenate(crops) if crops else np.zeros((0, FACE_CROP, FACE_CROP, 3), np.uint8),
            np.array(shapes, np.float32).reshape(-1, 2))


def light_augment(batch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Brightness, contrast, colour balance, sensor noise and a share of grey crops."""
    x = batch.astype(np.float32)
    n = len(x)
    x = x * rng.uniform(0.6, 1.4, (n, 1, 1, 1)) + rng.uniform(-40, 40, (n, 1, 1, 1))
    x *= rng.uniform(0.8, 1.2, (n, 1, 1, 3))
    x += rng.uniform(0, 8, (n, 1, 1, 1)) * rng.standard_normal(x.shape).astype(np.float32)
    grey = rng.random(n) < 0.15
    x[grey] = x[grey].mean(axis=3, keepdims=True)
    return np.clip(x, 0, 255).astype(np.uint8)


def train(crops: np.ndarray, shapes: np.ndarray, minutes: float, seed: int) -> FaceNet:
    """The face net trained for ``minutes`` (AdamW, cosine from 3e-3, smooth L1 loss)."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    model = FaceNet()
    opt = torch.optim.AdamW(model.parameters(), 3e-3, weight_decay=1e-4)
    start, step = time.time(), 0
    while (elapsed := time.time() - start) < minutes * 60:
        cosine_lr(opt, 3e-3, elapsed / (minutes * 60))
        pick = rng.integers(0, len(crops), 256)
        k = int(rng.integers(8))
        x, y = crop_views(crops[pick], [k]), view_shapes(shapes[pick], k)
        loss = F.smooth_l1_loss(model(to_tensor(light_augment(x, rng))), torch.from_numpy(y),
                                beta=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 1000 == 0:
            print(f"step {step}, {elapsed / 60:.1f} min, loss {loss.item():.4f}", flush=True)
    print(f"{step} steps", flush=True)
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="models/dice")
    parser.add_argument("--scenes", type=int, default=14000)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cocked-rate", type=float, default=0.3,
                        help="share of the table scenes' dice drawn leaning (default %(default)g)")
    parser.add_argument("--tile-rate", type=float, default=0.15,
                        help="share of scenes made of 2x2 close-ups (default %(default)g)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    parts = max(1, args.threads)
    with ProcessPoolExecutor(parts) as pool:
        done = list(pool.map(face_crops, [args.seed * 1000 + k for k in range(parts)],
                             [args.scenes // parts] * parts, [args.cocked_rate] * parts,
                             [args.tile_rate] * parts))
    crops = np.concatenate([c for c, _ in done])
    shapes = np.concatenate([s for _, s in done])
    print(f"{len(crops)} crops of {args.scenes} scenes in {time.time() - t0:.0f} s", flush=True)
    model = train(crops, shapes, args.minutes, args.seed)
    out = Path(args.out) / "dice_face.onnx"
    export(model, to_tensor(crops[:2]), out, dynamic_hw=False)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
