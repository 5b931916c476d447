"""Fine-tune the top-box digit model on crops of rendered photos, and export it again.

Run from the repository root (needs the ``train`` extras), after
``models.sigil_bands.train strips`` has saved box crops of rendered photos (``bx``: the top
boxes' ink crops exactly as the reader gets them, ``by``: digit 1-6 or 0 for empty, circled)::

    nice -n 10 /work/venv/bin/python -m models.digits.finetune /tmp/bands/*.npz \\
        --hold-out /tmp/bands/s_0.npz --out models/digits/digits.onnx

The crops from synthetic hands (:mod:`models.digits.synth`: scikit-learn's bundled scans,
Hershey fonts, the project's templates and writers) teach the shapes; crops of photographed,
rectified and reference-subtracted cards teach what the camera does to them (blur, JPEG, the
printed border's residue, glare, tilt). Training goes on from the committed weights (read back
from the ONNX file) on a mix of both, so that neither is forgotten. Prints held-out figures for
photo crops (the ``--hold-out`` files, never trained on) and for each synthetic source.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

from models.digits.train import DigitNet, evaluate, export, fit, make_set, report_held_out
from vision.sigil.digits import circle_input, digit_glyphs


def motion_kernel(length: float, angle: float) -> np.ndarray:
    """A normalised line kernel: motion blur of ``length`` pixels in direction ``angle`` (rad)."""
    size = int(np.ceil(length)) | 1
    k = np.zeros((size, size), np.float32)
    c = (size - 1) / 2.0
    d = np.array([np.cos(angle), np.sin(angle)]) * (length - 1) / 2.0
    cv2.line(k, (round(4 * (c - d[0])), round(4 * (c - d[1]))),
             (round(4 * (c + d[0])), round(4 * (c + d[1]))), 1.0, 1, cv2.LINE_AA, shift=2)
    return k / max(float(k.sum()), 1e-6)


def perturb(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A photographed crop as a steeper or blurrier photo might have given it: a small random
    affine map about the centre (rotation, shear, unequal scale as a tilt foreshortens), a
    Gaussian blur for a third of them and a motion blur (2-6 px, any direction) for a quarter,
    and a stroke one pixel thinner or fatter for some."""
    h, w = crop.shape
    ang = np.deg2rad(rng.uniform(-8, 8))
    sx, sy = rng.uniform(0.82, 1.08, 2)
    sh = rng.uniform(-0.15, 0.15)
    a = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]]) @ \
        np.array([[sx, sh], [0.0, sy]])
    c = np.array([w / 2.0, h / 2.0])
    m = np.hstack([a, (c - a @ c)[:, None]]).astype(np.float32)
    out = cv2.warpAffine(crop, m, (w, h), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    r = rng.random()
    if r < 0.35:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.2))
    elif r < 0.6:
        out = cv2.filter2D(out, -1, motion_kernel(rng.uniform(2.0, 6.0), rng.uniform(0, np.pi)))
    r = rng.random()
    if r < 0.15:
        out = cv2.erode(out, np.ones((2, 2), np.uint8))
    elif r < 0.3:
        out = cv2.dilate(out, np.ones((2, 2), np.uint8))
    return out.astype(np.float32)


def photo_set(paths: list[str], augment: int = 0, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Glyphs, circle inputs, digits (0-5) and circled flags of the non-empty photo crops, put
    through the reader's own ring removal and glyph normalisation (:func:`digit_glyphs`: two
    glyphs for a circled crop, one per way of removing the ring); with ``augment``, that many
    perturbed copies of every crop (:func:`perturb`) besides the crop itself."""
    rng = np.random.default_rng(seed)
    gl, cr, dig, circ = [], [], [], []
    for p in paths:
        d = np.load(p)
        if "bx" not in d:
            continue
        for crop0, (value, circled) in zip(d["bx"].astype(np.float32), d["by"], strict=True):
            if value == 0:
                continue
            for copy in range(1 + augment):
                crop = crop0 if copy == 0 else perturb(crop0, rng)
                for g in digit_glyphs(crop, bool(circled)):
                    if not g.any():
                        continue
                    gl.append(g[None])
                    cr.append(circle_input(crop)[None])
                    dig.append(int(value) - 1)
                    circ.append(float(circled))
    return (np.stack(gl).astype(np.float32), np.stack(cr).astype(np.float32),
            np.array(dig, np.int64), np.array(circ, np.float32))


def photo_report(model_path: str | Path, paths: list[str],
                 thresholds: tuple[float, ...] = (0.45, 0.6, 0.7, 0.8)) -> None:
    """Print what the reader would make of the written top boxes of held-out photo crops with
    the ONNX model at ``model_path``: per crop (the circle head, then the mean over its
    glyphs, :meth:`DigitModel.predict_digits`), the share read right, read wrong and left
    unknown at each confidence threshold; and per blur / tilt / glare group when the files
    hold them (:mod:`models.digits.photos`)."""
    from vision.sigil.digits import GLYPH, DigitModel

    crops, by, groups = [], [], []
    for p in paths:
        d = np.load(p)
        keep = d["by"][:, 0] > 0
        crops.append(np.clip(d["bx"][keep].astype(np.float32), 0, 1))
        by.append(d["by"][keep])
        if "blur" in d:
            groups.append(np.stack([d["blur"][keep] >= 1, d["tilt"][keep] >= 40,
                                    d["glare"][keep].astype(bool)], 1))
    x, y = np.concatenate(crops), np.concatenate(by)
    model = DigitModel(model_path)
    circ_in = np.stack([circle_input(c) for c in x])
    _, pc = model.predict(np.zeros((len(x), GLYPH, GLYPH), np.float32), circ_in)
    pd = model.predict_digits(x, pc >= 0.5, circ_in)
    pred, conf = pd.argmax(1) + 1, pd.max(1)
    sets = [("all", np.ones(len(y), bool)), ("circled", y[:, 1] > 0), ("plain", y[:, 1] == 0)]
    if len(groups) == len(paths):
        g = np.concatenate(groups)
        sets += [("blur >= 1 px", g[:, 0]), ("tilt >= 40", g[:, 1]), ("glare", g[:, 2])]
    circle_acc = float(((pc >= 0.5) == (y[:, 1] > 0)).mean())
    print(f"held-out photo boxes (per crop): circle accuracy {circle_acc:.4f}")
    for name, m in sets:
        parts = []
        for t in thresholds:
            known = m & (conf >= t)
            parts.append(f"@{t}: right {(known & (pred == y[:, 0])).sum() / m.sum():.4f} "
                         f"wrong {(known & (pred != y[:, 0])).sum() / m.sum():.4f} "
                         f"acc {(pred[known] == y[known, 0]).mean():.4f}")
        print(f"  {name} ({m.sum()}): " + "; ".join(parts))


def load_onnx_weights(net: nn.Module, path: str) -> None:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(path)
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    state = net.state_dict()
    missing = [k for k in state if k not in init]
    if missing:
        raise SystemExit(f"{path}: no weights for {missing[:3]}...")
    net.load_state_dict({k: torch.from_numpy(init[k].copy()) for k in state})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+")
    ap.add_argument("--hold-out", nargs="+", required=True)
    ap.add_argument("--start", default="models/digits/digits.onnx")
    ap.add_argument("--out", default="models/digits/digits.onnx")
    ap.add_argument("--synth", type=int, default=8000)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--augment", type=int, default=0,
                    help="perturbed copies of every photo crop (tilt, blur, stroke width)")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    t0 = time.time()
    held = set(args.hold_out)
    photo = photo_set([p for p in args.data if p not in held], args.augment, args.seed)
    val_photo = photo_set(list(args.hold_out))
    synth = make_set(args.synth, args.seed)
    print(f"{len(photo[0])} photo crops, {len(val_photo[0])} held out, {len(synth[0])} "
          f"synthetic ({time.time() - t0:.0f} s)", flush=True)
    train = [np.concatenate([a, b]) for a, b in zip(photo, synth, strict=True)]
    net = DigitNet()
    load_onnx_weights(net, args.start)
    print(f"before: held-out photo digit/circle {evaluate(net, val_photo)}", flush=True)
    fit(net, train, val_photo, epochs=args.epochs, max_lr=1e-3, seed=args.seed,
        label="held-out photo")
    report_held_out(net, 2000)
    export(net, Path(args.out))
    photo_report(args.out, list(args.hold_out))


if __name__ == "__main__":
    main()
