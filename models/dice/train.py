"""Train the dice reader's two small networks on scenes the project renders itself.

    nice -n 10 /work/venv/bin/python -m models.dice.train --out models/dice --minutes 10

1. ``detector``: a fully convolutional centre-heatmap detector (CenterNet-like, stride 4) that
   finds the top face of every die and regresses its box size.
2. ``classifier``: a small CNN on a 40x40 crop around a found top face: not-a-die, 1-6, cocked,
   unreadable, and whether the die is translucent (widths: ``CLASSIFIER_ARCHS``).

Training data: only :func:`vision.render.dice.render_scene` (never the real photographs, which
are for evaluation). Needs torch and onnx (the ``train`` extra); running the reader does not.
Writes ``dice_detector.onnx`` and ``dice_classifier.onnx`` (single files, weights inside).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from models.dice.validate import CLOSEUP_LOOKS, add_rates, range_arg, rate_key, rates
from models.dice.validate import TABLE_LOOKS as SCENE_LOOKS
from vision.dice.reader import (
    CLASSES,
    CROP,
    CROP_CONTEXT,
    STRIDE,
    UPRIGHT_VIEWS,
    DiceConfig,
    candidates,
    crop_batch,
    crop_views,
    share_inside,
)
from vision.render.dice import CLOSEUP_TILT, COCKED_RATE, CUT_INSIDE, render_closeup, render_scene

SCENE = 192
STRETCH = (0.7, 1.4)  # photos squashed to a square by their exporter


def conv_bn(cin: int, cout: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, dil, dilation=dil, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def dw_block(cin: int, cout: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride, dil, dilation=dil, groups=cin, bias=False),
        nn.BatchNorm2d(cin), nn.ReLU(inplace=True),
        nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


STEM = 4  # the detector's stem: one output cell per STEM x STEM pixel block (its stride)


class Detector(nn.Module):
    """Stride-4 heatmap (1 channel, logits) + log box size (2 channels) + hand (1 channel,
    logits: the share of the 4x4 cell a hand covers).

    The stem, a 4x4 convolution of stride 4, maps each 4x4 pixel block to 32 channels, so
    that every later layer runs at stride 4 or coarser: about 2.5 ms per 512x288 frame on one
    core (onnxruntime). Until session 26 it was written as the same function in two steps,
    the blocks folded into 48 channels (space-to-depth) and a 1x1 convolution; exported, the
    fold is a six-dimensional transpose that took ~40% of the net's time in onnxruntime.
    :func:`load_onnx` loads a file of either layout.
    """

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, STEM, STEM, bias=False),
                                  nn.BatchNorm2d(32), nn.ReLU(inplace=True))
        self.s4 = nn.Sequential(dw_block(32, 32), dw_block(32, 32))
        self.s8 = nn.Sequential(dw_block(32, 64, 2), dw_block(64, 64), dw_block(64, 64, dil=2))
        self.s16 = nn.Sequential(dw_block(64, 96, 2), dw_block(96, 96, dil=2),
                                 dw_block(96, 96, dil=4))
        self.lat16 = nn.Conv2d(96, 64, 1)
        self.lat8 = nn.Conv2d(64, 32, 1)
        self.head = nn.Sequential(dw_block(32, 32), nn.Conv2d(32, 4, 1))
        self.head[-1].bias.data[:] = torch.tensor([-2.19, 0.0, 0.0, -3.0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.s4(self.stem(x))
        b = self.s8(a)
        c = self.s16(b)
        b = b + F.interpolate(self.lat16(c), scale_factor=2.0, mode="nearest")
        a = a + F.interpolate(self.lat8(b), scale_factor=2.0, mode="nearest")
        return self.head(a)


CLEAR = 16  # added to a crop's class when the die is translucent (one int array for both)


# the classifier's convolution widths, stage by stage (2x2 max-pooling between stages, global
# average pooling after the last): "small" is the net of runs 1-21, "wide" run 22's (the
# committed one: about 1.7 times the multiply-adds and three times the weights of "small")
# (--classifier-arch; --init must hold a net of the same arch)
CLASSIFIER_ARCHS = {"small": ((16,), (32,), (48, 48), (64,)),
                    "wide": ((16,), (32,), (64, 64), (96, 96))}
CLASSIFIER_ARCH = "wide"  # the arch of the committed dice_classifier.onnx


class Classifier(nn.Module):
    """Logits of the classes of :data:`CLASSES`, then one logit "the die is translucent"."""

    def __init__(self, n: int = len(CLASSES) + 1, arch: str = CLASSIFIER_ARCH) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        stages = CLASSIFIER_ARCHS[arch]
        for k, stage in enumerate(stages):
            for cout in stage:
                layers.append(conv_bn(cin, cout))
                cin = cout
            layers.append(nn.MaxPool2d(2) if k + 1 < len(stages) else nn.AdaptiveAvgPool2d(1))
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, n)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.body(x), 1))


def load_onnx(model: nn.Module, path: Path) -> None:
    """Load the weights of an exported model (batch norms folded into the convolutions).

    Every convolution or linear layer takes the folded weight and bias, in execution order
    (which is the modules' order here); a batch norm after a convolution becomes the identity
    plus the folded bias (``running_var = 1 - eps``). Train such a model with its batch norms
    frozen (:func:`freeze_bn`), so that it computes what the exported file computes.

    A k x k convolution of stride k takes the weight of a 1x1 convolution over the k x k
    blocks folded into channels (space-to-depth, channel ``c k^2 + i k + j`` for pixel ``(i,
    j)`` of channel ``c``), the same function: the detector's stem as exported until session
    26 (:class:`Detector`). The nodes of a hand branch (``models/dice/train_hand.py``, named
    ``hand/...``) are left out: the detector loads as trained, its own hand row included.
    """
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    params = [(inits[n.input[1]], inits[n.input[2]] if len(n.input) > 2 else None)
              for n in graph.node if n.op_type in ("Conv", "Gemm")
              and not n.name.startswith("hand/")]  # a hand branch (train_hand.py): not ours
    mods = list(model.modules())
    layers = [(m, mods[k + 1] if k + 1 < len(mods) and isinstance(mods[k + 1], nn.BatchNorm2d)
               else None) for k, m in enumerate(mods) if isinstance(m, (nn.Conv2d, nn.Linear))]
    if len(layers) != len(params):
        raise ValueError(f"{path}: {len(params)} layers in the file, {len(layers)} in the model")
    with torch.no_grad():
        for (layer, bn), (w, b) in zip(layers, params, strict=True):
            n = w.shape[0]  # a layer may have gained outputs (the detector's hand channel)
            w = _unfolded(w, layer)
            if tuple(layer.weight.shape[1:]) != w.shape[1:] or layer.weight.shape[0] < n:
                raise ValueError(f"{path}: shape {w.shape} for {tuple(layer.weight.shape)}")
            layer.weight[:n] = torch.from_numpy(np.array(w))
            bias = torch.from_numpy(np.array(b)) if b is not None else torch.zeros(n)
            if bn is None:
                layer.bias[:n] = bias
            else:
                bn.weight.fill_(1.0)
                bn.bias.copy_(bias)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)


def _unfolded(w: np.ndarray, layer: nn.Module) -> np.ndarray:
    """``w`` as ``layer``'s weight when ``w`` is a 1x1 convolution's over space-to-depth
    blocks and ``layer`` the k x k, stride k convolution computing the same; else ``w``."""
    if not isinstance(layer, nn.Conv2d) or w.ndim != 4 or w.shape[2:] != (1, 1):
        return w
    k = layer.kernel_size[0]
    if (k > 1 and layer.kernel_size == layer.stride == (k, k) and layer.padding == (0, 0)
            and w.shape[1] == layer.in_channels * k * k):
        return w.reshape(w.shape[0], layer.in_channels, k, k)
    return w


def freeze_bn(model: nn.Module) -> None:
    """Batch norms use their running statistics (and keep them) while the rest trains."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def init_model(model: nn.Module, init: Path | None, name: str) -> bool:
    """Weights from ``init/<name>.pt`` or, failing that, ``init/dice_<name>.onnx``; return
    True when the batch norms must stay frozen (weights from an exported file)."""
    if init is None:
        return False
    if (init / f"{name}.pt").is_file():
        model.load_state_dict(torch.load(init / f"{name}.pt"))
        # weights of a run that itself started from an exported file: its batch norms still
        # hold the identity statistics load_onnx set, and must stay frozen
        return all(bool((m.running_mean == 0).all() and (m.running_var == 1.0 - m.eps).all())
                   for m in model.modules() if isinstance(m, nn.BatchNorm2d))
    load_onnx(model, init / f"dice_{name}.onnx")
    return True


def train_mode(model: nn.Module, frozen: bool) -> None:
    """Back to training, the batch norms kept frozen when ``frozen`` (:func:`init_model`)."""
    model.train()
    if frozen:
        freeze_bn(model)


LR_FROM_SCRATCH = 3e-3  # the cosine schedule's default peak learning rate from scratch
LR_CONTINUED = 1e-3  # and when continuing a net (--init)


def optimiser(model: nn.Module, init: Path | None, name: str, lr: float | None = None,
              ) -> tuple[torch.optim.Optimizer, float, bool]:
    """Start ``model`` from ``init`` (:func:`init_model`) in training mode, with AdamW at its
    peak learning rate ``lr`` (default :data:`LR_CONTINUED` when continuing,
    :data:`LR_FROM_SCRATCH` from scratch); return the optimiser, that rate, and whether the
    batch norms stay frozen."""
    frozen = init_model(model, init, name)
    train_mode(model, frozen)
    lr0 = lr if lr is not None else (LR_CONTINUED if init is not None else LR_FROM_SCRATCH)
    return torch.optim.AdamW(model.parameters(), lr=lr0, weight_decay=1e-4), lr0, frozen


def cosine_lr(opt: torch.optim.Optimizer, lr0: float, frac: float) -> None:
    """The learning rate at ``frac`` of the time budget: a half cosine from ``lr0`` to 0."""
    for g in opt.param_groups:
        g["lr"] = lr0 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))


def to_tensor(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(images.astype(np.float32) / 255.0 - 0.5).permute(0, 3, 1, 2)


TILT = (0.0, 75.0)  # camera tilt from vertical: up to very low phone angles


def span(pair: tuple[float, float]) -> str:
    """A range as the trainer's help writes it: (50.0, 75.0) -> "50-75"."""
    return f"{pair[0]:g}-{pair[1]:g}"


@dataclass(frozen=True)
class DiceView:
    """A table scene of a few dice of one range of sizes seen from one range of camera
    tilts."""

    tilt: tuple[float, float]  # camera tilt from vertical, degrees
    size: tuple[float, float]  # die edge in the 192 px scene
    count: tuple[int, int]

    def __str__(self) -> str:
        """The view as the trainer's help names it: "tilt 50-75, edges 32-96 px"."""
        return f"tilt {span(self.tilt)}, edges {span(self.size)} px"


# the plain table scenes of a few dice, drawn when no other view is (scene)
PLAIN = DiceView(tilt=TILT, size=(10.0, 64.0), count=(1, 8))
# a camera held low over large dice (SceneMix.steep_rate): top faces seen as thin slivers
STEEP = DiceView(tilt=(50.0, 75.0), size=(32.0, 96.0), count=(1, 5))
# a camera above large dice at a moderate angle (SceneMix.big_rate), as a webcam over a table
BIG = DiceView(tilt=(0.0, 45.0), size=(40.0, 100.0), count=(1, 4))
# a camera held low over small dice (SceneMix.low_rate): their top faces thin slivers a few
# pixels high over large front faces
LOW = DiceView(tilt=(60.0, 75.0), size=(14.0, 56.0), count=(1, 8))

HAND_RATE = 0.25


CLEAR_RATE = 0.1  # casino-style see-through dice among the others (scenes with close-ups)


# render_scene's looks of the table scenes, each a --NAME-rate option (render_scene's
# NAME_rate): validate's, but for the look-alikes, which SceneMix sets apart (distractor_rate,
# whose default is not 0). The plain scenes (PLAIN) and those of large dice draw them all, the
# scenes of many small dice all but the desk clutter (SMALL_DICE_LOOKS), a crop of one big die
# only the lens (BIG_DIE_LOOKS)
TABLE_LOOKS = tuple(look for look in SCENE_LOOKS if look[0] != "distractor")
SMALL_DICE_LOOKS = ("stone", "board", "board-dice", "wide", "sheet")
BIG_DIE_LOOKS = ("wide",)


@dataclass(frozen=True)
class SceneMix:
    """What the training scenes hold (the command line's rates; the defaults draw the scenes of
    runs 1-9)."""

    tile_rate: float = 0.0  # share of scenes made of 2x2 close-ups (--tile-rate)
    supersample: int = 1  # close-ups drawn at this many times their resolution (--supersample)
    distractor_rate: float = 0.35  # table scenes with look-alikes that are not dice
    small_distractor_rate: float = 0.0  # the same in scenes of many small dice
    # the table scenes' looks: render_scene's rates by keyword ("stone_rate", ...), one for
    # each of TABLE_LOOKS (--stone-rate, ...); none given are 0, render_scene's own
    table_looks: Mapping[str, float] = field(default_factory=dict, hash=False)
    # the close-ups' looks: render_closeup's rates by keyword ("vivid_rate", ...), one for each
    # of validate's CLOSEUP_LOOKS (--vivid-rate, ...); none given are 0, render_closeup's own
    looks: Mapping[str, float] = field(default_factory=dict, hash=False)
    closeup_tilt: tuple[float, float] = CLOSEUP_TILT  # close-ups' camera tilt (--closeup-tilt)
    steep_rate: float = 0.0  # scenes (not close-ups) of large dice seen by a low camera
    big_rate: float = 0.0  # the other table scenes drawn as large dice at a moderate tilt
    low_rate: float = 0.0  # the table scenes neither steep nor big drawn as small dice, low camera
    # share of the table scenes' dice drawn leaning (--cocked-rate; render_scene's
    # cocked_rate, whose default this is)
    cocked_rate: float = COCKED_RATE


def scene(rng: np.random.Generator, mix: SceneMix, extras: dict | None = None,
          ) -> tuple[np.ndarray, list[dict]]:
    kind = rng.random()
    if kind < mix.tile_rate:
        return closeup_tiles(rng, mix.supersample, extras, tilt_deg=mix.closeup_tilt,
                             **mix.looks)
    kind = (kind - mix.tile_rate) / (1.0 - mix.tile_rate)
    clear = CLEAR_RATE if mix.tile_rate > 0 else 0.0
    table = dict(width=SCENE, height=SCENE, stretch=STRETCH, distractor_rate=mix.distractor_rate,
                 hand_rate=HAND_RATE, translucent_rate=0.15, extras=extras, clear_rate=clear,
                 cocked_rate=mix.cocked_rate, **mix.table_looks)
    for rate, view in ((mix.steep_rate, STEEP), (mix.big_rate, BIG), (mix.low_rate, LOW)):
        if rate and rng.random() < rate:  # 0: nothing drawn, scenes as before
            return render_scene(rng, count=view.count, size_px=view.size, tilt_deg=view.tilt,
                                **table)
    if kind >= 0.25:
        return render_scene(rng, count=PLAIN.count, size_px=PLAIN.size, tilt_deg=PLAIN.tilt,
                            **table)
    if kind < 0.12:  # a crop of one big die, like a detector's close-up
        return render_scene(rng, width=SCENE, height=SCENE, count=(1, 3),
                            size_px=(55.0, 110.0), stretch=STRETCH, translucent_rate=0.25,
                            extras=extras, clear_rate=2 * clear,
                            cocked_rate=mix.cocked_rate, **_drawn(mix.table_looks, BIG_DIE_LOOKS))
    # many small dice
    return render_scene(rng, width=SCENE, height=SCENE, count=(5, 14), size_px=(8.0, 22.0),
                        stretch=STRETCH, tilt_deg=TILT, hand_rate=HAND_RATE, extras=extras,
                        clear_rate=clear, distractor_rate=mix.small_distractor_rate,
                        cocked_rate=mix.cocked_rate, **_drawn(mix.table_looks, SMALL_DICE_LOOKS))


def _scenes_drawing(name: str) -> str:
    """Which kinds of table scene draw the look ``name`` of TABLE_LOOKS (:func:`scene`)."""
    kinds = [f"the scenes of {span(PLAIN.count)} dice", "of large dice"]
    kinds += ["of many small dice"] if name in SMALL_DICE_LOOKS else []
    kinds += ["crops of one big die"] if name in BIG_DIE_LOOKS else []
    return ", ".join(kinds)


def _drawn(looks: Mapping[str, float], names: tuple[str, ...]) -> dict[str, float]:
    """The rates of ``looks`` (render_scene's keywords) that a kind of scene draws: those of
    ``names`` (TABLE_LOOKS' names)."""
    keys = [rate_key(name) for name in names]
    return {key: rate for key, rate in looks.items() if key in keys}


def closeup_tiles(rng: np.random.Generator, supersample: int = 1, extras: dict | None = None,
                  tilt_deg: tuple[float, float] = CLOSEUP_TILT,
                  **looks: float) -> tuple[np.ndarray, list[dict]]:
    """Four close-ups of one die each (:func:`render_closeup`, 44-96 px), each enlarged to the
    reader's ``min_side`` as the reader enlarges a small crop, in a 2x2 grid. With ``extras``,
    ``extras["tiles"]`` holds the native close-ups and their labels (classifier crops are cut
    from them, as the reader cuts them from the frame it was given). ``looks`` are
    :func:`vision.render.dice.render_closeup`'s rates of its looks (``vivid_rate``, ...:
    :data:`models.dice.validate.CLOSEUP_LOOKS`); ``tilt_deg`` is the range of its camera tilt.
    Neighbours mostly out of view (under ``CUT_INSIDE`` of their top face inside) are left out
    of the labels."""
    half = SCENE // 2
    canvas = np.empty((SCENE, SCENE, 3), np.uint8)
    labels: list[dict] = []
    tiles = []
    for k in range(4):
        side = int(rng.integers(44, half + 1))
        image, lbs = render_closeup(rng, side, supersample=supersample, tilt_deg=tilt_deg,
                                    **looks)
        lbs = [lb for lb in lbs if lb["inside"] >= CUT_INSIDE]
        tiles.append((image, lbs))
        f = half / side
        ox, oy = (k % 2) * half, (k // 2) * half
        canvas[oy:oy + half, ox:ox + half] = cv2.resize(image, (half, half),
                                                        interpolation=cv2.INTER_LINEAR)
        for lb in lbs:
            moved = dict(lb)
            for key in ("bbox", "die_bbox"):
                b = lb[key]
                moved[key] = [b[0] * f + ox, b[1] * f + oy, b[2] * f + ox, b[3] * f + oy]
            if "quad" in lb:
                moved["quad"] = [[x * f + ox, y * f + oy] for x, y in lb["quad"]]
            labels.append(moved)
    if extras is not None:
        extras["tiles"] = tiles
        extras["hand_mask"] = None
        extras["distractors"] = []
    return canvas, labels


def hand_target(mask: np.ndarray | None) -> np.ndarray:
    """The share of every stride-4 cell that a hand covers ``(g, g)``."""
    g = SCENE // STRIDE
    if mask is None:
        return np.zeros((g, g), np.float32)
    return cv2.resize(mask.astype(np.float32), (g, g), interpolation=cv2.INTER_AREA)


def targets(labels: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = SCENE // STRIDE
    heat = np.zeros((g, g), np.float32)
    size = np.zeros((2, g, g), np.float32)
    mask = np.zeros((g, g), np.float32)
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32)
    for lb in labels:
        x0, y0, x1, y1 = lb["bbox"]
        w, h = x1 - x0, y1 - y0
        if w < 2 or h < 2:
            continue
        cx, cy = (x0 + x1) / 2 / STRIDE - 0.5, (y0 + y1) / 2 / STRIDE - 0.5
        sigma = max(0.6, 0.15 * max(w, h) / STRIDE)
        heat = np.maximum(heat, np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma ** 2)))
        ix, iy = round(cx), round(cy)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                jx, jy = ix + dx, iy + dy
                if 0 <= jx < g and 0 <= jy < g:
                    size[:, jy, jx] = (math.log(w / STRIDE), math.log(h / STRIDE))
                    mask[jy, jx] = 1.0
        if 0 <= ix < g and 0 <= iy < g:
            heat[iy, ix] = 1.0
    return heat, size, mask


def focal_loss(logits: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = torch.log(1 - p) * p ** 2 * (1 - gt) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / n


def label_class(lb: dict) -> int:
    if lb["state"] == "cocked":
        return CLASSES.index("cocked")
    if lb["state"] == "unreadable":
        return CLASSES.index("unreadable")
    return CLASSES.index(str(lb["value"]))


def crop_class(lb: dict) -> int:
    """The class a crop of the die ``lb`` is stored with: its :func:`label_class`, plus
    ``CLEAR`` when the die is translucent."""
    return label_class(lb) + (CLEAR if lb["color"] == "translucent" else 0)


@dataclass(frozen=True)
class CropCut:
    """How the classifier's training crops are cut (``--crop-aspect``, ``--crop-min-fill``,
    ``--square-crops``, ``--box-jitter``).

    aspect : ``crop_batch``'s ``aspect``; the reader must read with the same
        ``DiceConfig.crop_aspect``.
    min_fill : ``crop_batch``'s ``min_fill``, as the reader's ``DiceConfig.crop_min_fill``
        (0 in every scene cache and classifier before session 46; the committed classifiers
        since then are one cut at 0 moved part of the way towards continuations on crops cut
        at 0.8).
    square : a die's box is a square of its top face's longer side (runs 1-31, sessions
        16-17's classifiers, whose dice crops no ``aspect`` changed), not of the face's shape.
    jitter : each side of a die's box is scaled by ``exp(N(0, jitter))``, for the detector's
        error in the box's shape.
    """

    aspect: float = DiceConfig.crop_aspect
    square: bool = False
    jitter: float = 0.1
    min_fill: float = DiceConfig.crop_min_fill

    def flags(self) -> str:
        """The command-line flags that cut this way."""
        return (f"--crop-aspect {self.aspect:g} --crop-min-fill {self.min_fill:g}"
                f"{' --square-crops' if self.square else ''} --box-jitter {self.jitter:g}")

    def crops(self, image: np.ndarray, boxes: Sequence[Sequence[float]]) -> np.ndarray:
        """The classifier's crops of ``boxes`` in ``image``, cut this way."""
        return crop_batch(image, boxes, aspect=self.aspect, min_fill=self.min_fill)


def crops_from(image: np.ndarray, labels: list[dict], rng: np.random.Generator,
               per_scene_neg: int = 3, cut: CropCut = CropCut(),
               ) -> tuple[list[tuple[float, float, float, float]], list[int]]:
    """Jittered boxes around every die (its class) and negatives (class "none").

    A die's box keeps its top face's shape, as the detector's box does, each side a little off
    (``cut.jitter``), so that ``crop_batch``'s ``aspect`` cuts the window the reader cuts;
    ``cut.square`` draws instead a square of the face's longer side."""
    boxes, classes = [], []
    h, w = image.shape[:2]
    for lb in labels:
        x0, y0, x1, y1 = lb["bbox"]
        bw, bh = x1 - x0, y1 - y0
        if bw < 3 or bh < 3:
            continue
        for _ in range(2):
            # the detector's box may be off: shift the centre, grow it up to the whole die
            cx = (x0 + x1) / 2 + rng.normal(0, 0.1) * bw
            cy = (y0 + y1) / 2 + rng.normal(0, 0.1) * bh
            grow = float(np.exp(rng.uniform(np.log(0.8), np.log(1.45))))
            if cut.square:
                sw = sh = max(bw, bh) * grow
            else:
                sw = bw * grow * float(np.exp(rng.normal(0, cut.jitter)))
                sh = bh * grow * float(np.exp(rng.normal(0, cut.jitter)))
            boxes.append((cx - sw / 2, cy - sh / 2, cx + sw / 2, cy + sh / 2))
            classes.append(crop_class(lb))
        # the front side face of the die: not a top face
        dy1 = lb["die_bbox"][3]
        if dy1 - y1 > 0.45 * bh:
            cy = (y1 + dy1) / 2
            boxes.append((x0, cy - bh / 2, x1, cy + bh / 2))
            classes.append(0)
    centers = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0]) for b in
               (lb["bbox"] for lb in labels)]
    for _ in range(per_scene_neg):
        s = float(np.exp(rng.uniform(math.log(8), math.log(100))))
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        if any(abs(cx - x) < 0.6 * max(s, d) and abs(cy - y) < 0.6 * max(s, d)
               for x, y, d in centers):
            continue
        boxes.append((cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2))
        classes.append(0)
    # boxes between two close dice (a merged detection) are not a die either
    for a in range(len(centers)):
        for b in range(a + 1, len(centers)):
            (xa, ya, da), (xb, yb, db) = centers[a], centers[b]
            if math.hypot(xa - xb, ya - yb) < 1.3 * max(da, db) and rng.random() < 0.5:
                mx, my, s = (xa + xb) / 2, (ya + yb) / 2, (da + db) / 2
                boxes.append((mx - s / 2, my - s / 2, mx + s / 2, my + s / 2))
                classes.append(0)
    return boxes, classes


def export(model: nn.Module, example: torch.Tensor, path: Path, dynamic_hw: bool) -> None:
    model.eval()
    axes = {"input": {0: "n", 2: "h", 3: "w"}} if dynamic_hw else {"input": {0: "n"}}
    with warnings.catch_warnings():
        # the TorchScript exporter: one plain graph of convolutions, no control flow
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(model, (example,), str(path), input_names=["input"],
                          output_names=["output"], dynamic_axes=axes, opset_version=17,
                          dynamo=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="models/dice")
    parser.add_argument("--scenes", type=int, default=3000)
    parser.add_argument("--minutes", type=float, default=10.0, help="budget for both nets")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", choices=["detector", "classifier"], default=None)
    parser.add_argument("--clear-weight", type=float, default=1.0,
                        help="weight of the classifier's translucent loss")
    parser.add_argument("--tile-rate", type=float, default=0.0,
                        help="share of scenes made of 2x2 close-ups of one die each (with it, "
                        "casino-style see-through dice also appear in the other scenes)")
    parser.add_argument("--supersample", type=int, default=1,
                        help="draw the close-ups at this many times their resolution")
    parser.add_argument("--distractor-rate", type=float, default=None,
                        help="share of table scenes, of many small dice too, holding look-alikes "
                        "that are not dice (vision.render.dice.draw_distractors); default "
                        f"{SceneMix.distractor_rate:g} in the scenes of {span(PLAIN.count)} dice "
                        f"and {SceneMix.small_distractor_rate:g} among many small dice")
    add_rates(parser, tuple((name, f"{what}; in {_scenes_drawing(name)}")
                            for name, what in TABLE_LOOKS),
              "share of table scenes with {what} (render_scene's {key}; default 0)")
    add_rates(parser, CLOSEUP_LOOKS, "share of the {what} (render_closeup's {key}; default 0)")
    parser.add_argument("--closeup-tilt", type=range_arg, default=CLOSEUP_TILT,
                        metavar="LO,HI", help="range of the close-ups' camera tilt from "
                        "vertical, degrees (render_closeup's tilt_deg; default %(default)s)")
    parser.add_argument("--steep-rate", type=float, default=0.0,
                        help="share of the scenes that are not close-ups drawn as a camera "
                        f"held low over large dice (STEEP: {STEEP}): top faces seen as thin "
                        "slivers beside large side faces")
    parser.add_argument("--big-rate", type=float, default=0.0,
                        help="share of the scenes that are neither close-ups nor steep drawn "
                        f"as {span(BIG.count)} large dice at a moderate tilt "
                        f"(BIG: {BIG}), with the table scenes' look-alikes, boards and hands")
    parser.add_argument("--low-rate", type=float, default=0.0,
                        help="share of the scenes that are neither close-ups, steep nor big "
                        f"drawn as a camera held low over {span(LOW.count)} small "
                        f"dice (LOW: {LOW}): top faces a few pixels high over large front faces")
    parser.add_argument("--cocked-rate", type=float, default=COCKED_RATE,
                        help="share of the table scenes' dice drawn leaning on an edge or "
                        "another die (render_scene's cocked_rate; default its own, "
                        "%(default)g); the close-ups keep theirs")
    parser.add_argument("--camera-augment", action="store_true",
                        help="train the classifier on its crops as a softer, duller camera "
                        "might give them (camera_augment: contrast, gamma, washed-out colour, "
                        "blur, a lower resolution)")
    parser.add_argument("--upright", action="store_true",
                        help="train the classifier on its crops as the camera gave them, "
                        "mirrored left to right half the time but never turned: the side faces "
                        "a tilted camera sees lie below the top face (read it with "
                        "DiceConfig.upright)")
    parser.add_argument("--colour-augment", type=float, default=0.0, metavar="RATE",
                        help="train the detector with this share of its scenes' colours "
                        "scrambled (colour_augment: channels swapped, washed towards grey), "
                        "so that it reads the shapes and not the renderer's palette")
    parser.add_argument("--grey-detector", action="store_true",
                        help="train a colour-blind detector (tie_colour: its stem's weights "
                        "equal over the three colour channels, kept so after every step): it "
                        "sees a frame as the grey mean of its channels, in the same graph")
    parser.add_argument("--mine-negatives", metavar="DETECTOR",
                        help="a detector (.onnx): the classifier's crops also hold, as "
                        "not-a-die, what it proposes in each table scene away from every die "
                        "at --mine-threshold (mined_negatives); rendering only, a cache keeps "
                        "them")
    parser.add_argument("--mine-positives", metavar="DETECTOR",
                        help="a detector (.onnx): the classifier's crops also hold, as the "
                        "die's own class, the boxes it proposes in each table scene on a "
                        "die's top face at --mine-threshold (mined_positives): the windows "
                        "the reader's detector gives, not only jittered labelled boxes; "
                        "rendering only, a cache keeps them")
    parser.add_argument("--edge-negatives", type=float, default=0.0, metavar="RATE",
                        help="the classifier's crops also hold, as not-a-die, for each die "
                        "with this chance a box along one edge of its top face "
                        "(edge_negatives: side faces, a see-through die's far pips), drawn "
                        "from their own random stream; rendering only, a cache keeps them")
    parser.add_argument("--mine-threshold", type=float, default=0.2,
                        help="the detector score from which a proposal is mined")
    parser.add_argument("--mine-face-share", type=float, default=1.0,
                        help="a proposal whose crop window holds at least this share of a "
                        "die's top face is not mined (1: no such limit)")
    parser.add_argument("--classifier-arch", choices=sorted(CLASSIFIER_ARCHS),
                        default=CLASSIFIER_ARCH,
                        help="the classifier's widths (CLASSIFIER_ARCHS); --init must match")
    parser.add_argument("--cache", action="append", default=[],
                        help="npz of rendered scenes: loaded if present, else written; given "
                        "several times, the caches (all present) are trained on together. A "
                        "cache records how its classifier crops were cut: one cut otherwise "
                        "than --crop-aspect / --crop-min-fill / --square-crops / --box-jitter "
                        "ask is refused")
    parser.add_argument("--crop-aspect", type=float, default=DiceConfig.crop_aspect,
                        help="the classifier's crops cut with this crop_batch aspect (default "
                        "the reader's DiceConfig.crop_aspect, which the reading must match; "
                        "0: square windows, as runs 1-31 read)")
    parser.add_argument("--crop-min-fill", type=float, default=DiceConfig.crop_min_fill,
                        help="the classifier's crops cut with this crop_batch min_fill (default "
                        "the reader's DiceConfig.crop_min_fill, which the reading should match; "
                        "0: as every classifier before session 46)")
    parser.add_argument("--square-crops", action="store_true",
                        help="cut each die's crop from a square of its top face's longer side, "
                        "as runs 1-31 and sessions 16-17 did (default: a box of the face's "
                        "shape, as the detector gives the reader)")
    parser.add_argument("--box-jitter", type=float, default=CropCut.jitter,
                        help="each side of a die's training box is scaled by exp(N(0, this)), "
                        "for the detector's error in the box's shape")
    parser.add_argument("--init", help="folder to continue training from: detector.pt / "
                        "classifier.pt, else the exported dice_*.onnx (batch norms frozen)")
    parser.add_argument("--lr", type=float, default=None, help="peak learning rate of the "
                        f"cosine schedule (default {LR_CONTINUED:g} with --init, else "
                        f"{LR_FROM_SCRATCH:g}); a lower one "
                        "for a second continuation of the same nets")
    args = parser.parse_args()
    cut = CropCut(args.crop_aspect, args.square_crops, args.box_jitter, args.crop_min_fill)
    mix = SceneMix(tile_rate=args.tile_rate, supersample=args.supersample,
                   table_looks=rates(args, TABLE_LOOKS), looks=rates(args, CLOSEUP_LOOKS),
                   closeup_tilt=args.closeup_tilt, steep_rate=args.steep_rate,
                   big_rate=args.big_rate, low_rate=args.low_rate, cocked_rate=args.cocked_rate)
    if args.distractor_rate is not None:
        mix = replace(mix, distractor_rate=args.distractor_rate,
                      small_distractor_rate=args.distractor_rate)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    caches = [Path(c) for c in args.cache]
    if caches and all(c.is_file() for c in caches):  # several caches: trained on together
        for flag, given in (("--mine-negatives", args.mine_negatives),
                            ("--mine-positives", args.mine_positives),
                            ("--edge-negatives", args.edge_negatives)):
            if given:
                raise SystemExit(f"{flag} adds crops while rendering; the caches given exist "
                                 "already (their crops are as they were rendered)")
        parts = [np.load(c) for c in caches]
        if args.only != "detector":  # the crops are cut already: they must be cut as asked
            for c, d in zip(caches, parts, strict=True):
                check_cache_crops(c, d, cut)
        images, heats, sizes, masks, hands = (np.concatenate([d[k] for d in parts]) for k in
                                              ("images", "heats", "sizes", "masks", "hands"))
        crops, classes = [d["crops"] for d in parts], [c for d in parts for c in d["classes"]]
    elif len(caches) > 1:
        raise SystemExit(f"--cache: {[str(c) for c in caches if not c.is_file()]} not found "
                         "(several caches are only read; render each with one --cache)")
    else:
        miner, pos_miner = (_miner(flag, path, args.mine_threshold) for flag, path in
                            (("--mine-negatives", args.mine_negatives),
                             ("--mine-positives", args.mine_positives)))
        images, heats, sizes, masks, hands, crops, classes = render_data(
            args.scenes, rng, mix, cut, miner, args.mine_face_share, pos_miner,
            args.edge_negatives, np.random.default_rng([args.seed, 2]))
        if caches:
            np.savez(caches[0], images=np.stack(images), heats=np.stack(heats),
                     sizes=np.stack(sizes), masks=np.stack(masks), hands=np.stack(hands),
                     crops=np.concatenate(crops), classes=np.array(classes),
                     **cache_cut(cut))
    print(f"rendered {len(images)} scenes, {len(classes)} crops in {time.time() - t0:.0f}s",
          flush=True)
    budget = args.minutes * 60.0
    init = Path(args.init) if args.init else None
    if args.only != "classifier":
        train_detector(np.stack(images), np.stack(heats), np.stack(sizes), np.stack(masks),
                       np.stack(hands), out, budget * (0.7 if args.only is None else 1.0),
                       rng, init, args.lr, args.colour_augment, args.grey_detector)
    if args.only != "detector":
        train_classifier(np.concatenate(crops), np.array(classes), out,
                         budget * (0.3 if args.only is None else 1.0), rng, init,
                         args.clear_weight, args.lr, args.classifier_arch,
                         args.camera_augment, args.upright)


def cache_cut(cut: CropCut) -> dict[str, np.ndarray]:
    """The keys a scene cache records its crops' cut under (:func:`check_cache_crops`)."""
    return {"crop_aspect": np.float64(cut.aspect), "square_crops": np.bool_(cut.square),
            "box_jitter": np.float64(cut.jitter), "crop_min_fill": np.float64(cut.min_fill)}


def check_cache_crops(path: Path, data: Mapping[str, np.ndarray], cut: CropCut) -> None:
    """Refuse (``SystemExit`` naming the file) a scene cache whose classifier crops were cut
    otherwise than ``cut`` (the command line's ``--crop-aspect`` / ``--crop-min-fill`` /
    ``--square-crops`` / ``--box-jitter``): its crops are stored cut, so training on it would
    silently use its cut. A cache that does not record its cut (written before session 18) is
    refused too; one that records no ``crop_min_fill`` (written before session 46) was cut
    without it (0)."""
    if any(k not in data for k in cache_cut(cut) if k != "crop_min_fill"):
        raise SystemExit(f"--cache {path}: the cache does not record how its crops were cut "
                         "(written before session 18); render it again, or train only the "
                         "detector on it (--only detector)")
    have = CropCut(float(data["crop_aspect"]), bool(data["square_crops"]),
                   float(data["box_jitter"]), float(data.get("crop_min_fill", 0.0)))
    if have != cut:  # the stored float64 values read back exactly as they were written
        raise SystemExit(f"--cache {path}: its crops were cut with {have.flags()}, not with "
                         f"{cut.flags()} as asked")


MINE_PER_SCENE = 6  # at most this many mined negatives per scene, strongest first


def _on(box: Sequence[float], x: float, y: float) -> bool:
    """Whether ``(x, y)`` lies on ``box`` grown on each side by a tenth of its size and a
    pixel."""
    x0, y0, x1, y1 = box
    gx, gy = 0.1 * (x1 - x0) + 1, 0.1 * (y1 - y0) + 1
    return x0 - gx <= x <= x1 + gx and y0 - gy <= y <= y1 + gy


def _holds(window: Sequence[float], box: Sequence[float], share: float) -> bool:
    """Whether ``window`` holds at least ``share`` of ``box``'s area (a box of no area:
    never)."""
    x0, y0, x1, y1 = box
    return (x1 - x0) * (y1 - y0) > 0 and share_inside(box, [window]) >= share


def mined_negatives(image: np.ndarray, labels: list[dict], miner: DiceConfig,
                    face_share: float = 1.0) -> list[tuple[float, float, float, float]]:
    """The boxes the reader's detector stage (:func:`vision.dice.reader.candidates` with
    ``miner``'s detector and thresholds) proposes in a rendered table scene away from every
    die: the look-alikes, textures and shadows it takes for a top face. A proposal whose
    centre lies on a die (its whole box, side faces too, grown on each side by a tenth of
    its size and a pixel) is not one: it is the die, or a part the other negatives cover.
    Nor is one whose crop window (``CROP_CONTEXT`` times the box's longer side, square)
    holds at least ``face_share`` of a die's top face (1: no such limit): a part of a die
    there is neither "none" nor the die. At most ``MINE_PER_SCENE``."""
    boxes, _, _ = candidates(image, miner)
    out = []
    for x0, y0, x1, y1 in boxes.tolist():
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if any(_on(lb["die_bbox"], cx, cy) for lb in labels):
            continue
        half = CROP_CONTEXT * max(x1 - x0, y1 - y0) / 2
        window = (cx - half, cy - half, cx + half, cy + half)
        if face_share < 1.0 and any(_holds(window, lb["bbox"], face_share) for lb in labels):
            continue
        out.append((x0, y0, x1, y1))
        if len(out) == MINE_PER_SCENE:
            break
    return out


def mined_positives(image: np.ndarray, labels: list[dict], miner: DiceConfig,
                    ) -> tuple[list[tuple[float, float, float, float]], list[int]]:
    """The boxes the reader's detector stage (:func:`vision.dice.reader.candidates` with
    ``miner``'s detector and thresholds) proposes in a rendered table scene on a die's top
    face (its centre inside the top face's box of one die only), each with that die's class
    as :func:`crops_from` gives it: the windows the reader will cut, off as its detector's
    boxes are off. A proposal on a side face alone is neither the die nor "none" and is left
    out. At most ``MINE_PER_SCENE``."""
    boxes, _, _ = candidates(image, miner)
    out, classes = [], []
    for x0, y0, x1, y1 in boxes.tolist():
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        faces = [lb for lb in labels if lb["bbox"][0] <= cx <= lb["bbox"][2]
                 and lb["bbox"][1] <= cy <= lb["bbox"][3]]
        if len(faces) != 1:
            continue
        out.append((x0, y0, x1, y1))
        classes.append(crop_class(faces[0]))
        if len(out) == MINE_PER_SCENE:
            break
    return out, classes


def edge_negatives(labels: list[dict], rng: np.random.Generator, rate: float, width: int,
                   height: int) -> list[tuple[float, float, float, float]]:
    """Boxes on the edges of the dice's top faces, as "none": for each labelled die with a
    chance ``rate``, a box along one side of its top face (drawn from the four), as long as
    that side, 0.3-0.7 of the face's size across it, its centre from 0.1 inside the edge to
    0.4 beyond it (a face's centre is at least 0.4 of its size away). There lie the die's
    side faces and, on a see-through die, the far faces' pips: a strip of pips that a
    window cut to the box's shape squares up into something like a face. Draws only from
    ``rng``; a box whose centre leaves the image is dropped."""
    out = []
    for lb in labels:
        if rng.random() >= rate:
            continue
        x0, y0, x1, y1 = lb["bbox"]
        bw, bh = x1 - x0, y1 - y0
        side = int(rng.integers(0, 4))  # 0 above, 1 below, 2 left, 3 right
        across = float(rng.uniform(0.3, 0.7))
        beyond = float(rng.uniform(-0.1, 0.4))
        if side < 2:
            t = across * bh
            cy = y0 - beyond * bh if side == 0 else y1 + beyond * bh
            box = (x0, cy - t / 2, x1, cy + t / 2)
        else:
            t = across * bw
            cx = x0 - beyond * bw if side == 2 else x1 + beyond * bw
            box = (cx - t / 2, y0, cx + t / 2, y1)
        if bw >= 3 and bh >= 3 and 0 <= (box[0] + box[2]) / 2 < width \
                and 0 <= (box[1] + box[3]) / 2 < height:
            out.append(box)
    return out


def _miner(flag: str, detector: str | None, threshold: float) -> DiceConfig | None:
    """The reader's settings a trainer's ``flag`` mines with: ``detector``'s first pass
    alone, at ``threshold`` (None without a detector; ``SystemExit`` for a missing file)."""
    if not detector:
        return None
    if not Path(detector).is_file():
        raise SystemExit(f"{flag} {detector}: no such detector file")
    # the first pass alone at one threshold, as sessions 21-23 mined their caches (the
    # reader's coarse and middle passes and its weak peaks came later, in sessions 25, 32
    # and 33)
    return DiceConfig(detector_path=detector, peak_threshold=threshold,
                      die_threshold=threshold, coarse_scale=0.0, mid_scale=0.0,
                      weak_threshold=math.inf)


def render_data(n: int, rng: np.random.Generator, mix: SceneMix, cut: CropCut = CropCut(),
                miner: DiceConfig | None = None, face_share: float = 1.0,
                pos_miner: DiceConfig | None = None, edge_rate: float = 0.0,
                edge_rng: np.random.Generator | None = None,
                ) -> tuple[list, list, list, list, list, list, list]:
    """Render ``n`` scenes: images, heatmap and hand targets, labelled classifier crops (cut
    as ``cut`` says: the reader must read them with ``DiceConfig.crop_aspect`` =
    ``cut.aspect`` and ``DiceConfig.crop_min_fill`` = ``cut.min_fill``). With ``miner``, the
    table scenes' crops include their :func:`mined_negatives` as "none", with ``pos_miner``
    their :func:`mined_positives` (the close-ups, one die each, have neither); mining draws
    nothing from ``rng``, so the scenes and their other crops are the same either way. With
    ``edge_rate``, every scene's and close-up's crops include :func:`edge_negatives` as
    "none", drawn from ``edge_rng`` alone (the scenes and their other crops are again the
    same)."""
    if edge_rate > 0 and edge_rng is None:
        raise ValueError("edge_rate needs its own edge_rng")

    def add_edges(boxes: list, cls: list, labels: list[dict], image: np.ndarray) -> None:
        if edge_rate > 0:
            edges = edge_negatives(labels, edge_rng, edge_rate, image.shape[1], image.shape[0])
            boxes.extend(edges)
            cls.extend([0] * len(edges))

    images, heats, sizes, masks, hands, crops, classes = [], [], [], [], [], [], []
    for _ in range(n):
        extras: dict = {}
        image, labels = scene(rng, mix, extras)
        h, s, m = targets(labels)
        images.append(image)
        heats.append(h)
        sizes.append(s)
        masks.append(m)
        hands.append(hand_target(extras.get("hand_mask")))
        if "tiles" in extras:  # close-ups: crops from each native close-up
            for tile, tile_labels in extras["tiles"]:
                boxes, cls = crops_from(tile, tile_labels, rng, per_scene_neg=1, cut=cut)
                add_edges(boxes, cls, tile_labels, tile)
                if boxes:
                    crops.append(cut.crops(tile, boxes))
                    classes.extend(cls)
            continue
        boxes, cls = crops_from(image, labels, rng, cut=cut)
        for box in extras.get("distractors", [])[:6]:
            if not any(abs((box[0] + box[2]) / 2 - (lb["bbox"][0] + lb["bbox"][2]) / 2)
                       < (box[2] - box[0]) and abs((box[1] + box[3]) / 2
                                                   - (lb["bbox"][1] + lb["bbox"][3]) / 2)
                       < (box[3] - box[1]) for lb in labels):
                boxes.append(tuple(box))
                cls.append(0)
        add_edges(boxes, cls, labels, image)
        if miner is not None:
            mined = mined_negatives(image, labels, miner, face_share)
            boxes.extend(mined)
            cls.extend([0] * len(mined))
        if pos_miner is not None:
            mined, mined_cls = mined_positives(image, labels, pos_miner)
            boxes.extend(mined)
            cls.extend(mined_cls)
        if boxes:
            crops.append(cut.crops(image, boxes))
            classes.extend(cls)
    return images, heats, sizes, masks, hands, crops, classes


def augment(batch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = batch.astype(np.float32)
    out *= rng.uniform(0.75, 1.25, (len(batch), 1, 1, 3)).astype(np.float32)
    out += rng.uniform(-25, 25, (len(batch), 1, 1, 1)).astype(np.float32)
    if rng.random() < 0.3:  # grey camera
        out[:] = out.mean(axis=3, keepdims=True)
    return np.clip(out, 0, 255)


def camera_augment(batch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each crop of ``batch`` ``(N, H, W, 3)`` as a softer, duller camera might give it: its
    contrast scaled by 0.6-1.15 about its mean and a gamma of 0.75-1.35; half of the crops
    washed out towards grey by up to a half; 40% blurred by 0.4-1.2 px, or else 30% shrunk to
    0.45-0.85 of their side and enlarged back (a die seen at a lower resolution).
    Photometric and resolution changes only: the labels stay true. Returns float32."""
    out = batch.astype(np.float32)
    n, h, w = out.shape[:3]
    mean = out.mean(axis=(1, 2, 3), keepdims=True)
    out = mean + (out - mean) * rng.uniform(0.6, 1.15, (n, 1, 1, 1)).astype(np.float32)
    out = 255.0 * (np.clip(out, 0, 255) / 255.0) ** rng.uniform(0.75, 1.35, (n, 1, 1, 1)
                                                                 ).astype(np.float32)
    grey = out.mean(axis=3, keepdims=True)
    wash = rng.uniform(0, 0.5, (n, 1, 1, 1)) * (rng.random((n, 1, 1, 1)) < 0.5)
    out = out + (grey - out) * wash.astype(np.float32)
    for i in range(n):
        u = rng.random()
        if u < 0.4:
            out[i] = cv2.GaussianBlur(out[i], (0, 0), float(rng.uniform(0.4, 1.2)))
        elif u < 0.7:
            f = float(rng.uniform(0.45, 0.85))
            small = cv2.resize(out[i], (max(4, round(w * f)), max(4, round(h * f))),
                               interpolation=cv2.INTER_AREA)
            out[i] = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.clip(out, 0, 255)


def colour_augment(batch: np.ndarray, rng: np.random.Generator, rate: float) -> np.ndarray:
    """``batch`` ``(N, H, W, 3)`` with a share ``rate`` of its images' colours scrambled: their
    three channels in a random order (one of the five other than their own) and washed
    towards their grey by 0-1. Shapes and lightness stay, the renderer's palette does not: a
    die is found by its form, not by colours the renderer happens to give dice and tables.
    The labels stay true. Returns a new array of ``batch``'s dtype."""
    out = batch.copy()
    orders = [o for o in itertools.permutations(range(3)) if o != (0, 1, 2)]
    for i in np.flatnonzero(rng.random(len(batch)) < rate):
        img = batch[i][..., list(orders[int(rng.integers(0, len(orders)))])].astype(np.float32)
        grey = img.mean(axis=2, keepdims=True)
        img += (grey - img) * float(rng.uniform(0.0, 1.0))
        out[i] = np.clip(img, 0, 255).astype(batch.dtype)
    return out


def tie_colour(model: Detector) -> None:
    """Make ``model`` colour-blind: its stem's weights over the three colour channels set to
    their mean, so that it sees each pixel only as the mean of its channels (a grey image),
    in the same graph at the same speed. The tie holds through training only when it is
    made again after every step (:func:`train_detector`'s ``grey``)."""
    with torch.no_grad():
        w = model.stem[0].weight
        w.copy_(w.mean(dim=1, keepdim=True).expand_as(w))


def train_detector(images: np.ndarray, heats: np.ndarray, sizes: np.ndarray, masks: np.ndarray,
                   hands: np.ndarray, out: Path, budget: float, rng: np.random.Generator,
                   init: Path | None = None, lr: float | None = None,
                   colour: float = 0.0, grey: bool = False) -> None:
    model = Detector()
    opt, lr0, _ = optimiser(model, init, "detector", lr)
    if grey:
        tie_colour(model)
    start = time.time()
    step, batch = 0, 24
    n = len(images)
    while time.time() - start < budget:
        idx = rng.integers(0, n, batch)
        batch_images = colour_augment(images[idx], rng, colour) if colour else images[idx]
        x = to_tensor(augment(batch_images, rng))
        flip = rng.random() < 0.5
        ht, st, mt, hd = (torch.from_numpy(heats[idx]), torch.from_numpy(sizes[idx]),
                          torch.from_numpy(masks[idx]), torch.from_numpy(hands[idx]))
        if flip:
            x, ht, st, mt, hd = x.flip(3), ht.flip(2), st.flip(3), mt.flip(2), hd.flip(2)
        cosine_lr(opt, lr0, (time.time() - start) / budget)
        y = model(x)
        lh = focal_loss(y[:, 0], ht)
        ls = (F.l1_loss(y[:, 1:3], st, reduction="none") * mt[:, None]).sum() / mt.sum().clamp(
            min=1)
        lhand = F.binary_cross_entropy_with_logits(y[:, 3], hd)
        loss = lh + 0.5 * ls + lhand
        opt.zero_grad()
        loss.backward()
        opt.step()
        if grey:
            tie_colour(model)
        step += 1
        if step % 50 == 0:
            print(f"det step {step} {time.time() - start:.0f}s heat {lh.item():.3f} "
                  f"size {ls.item():.3f} hand {lhand.item():.3f}", flush=True)
    torch.save(model.state_dict(), out / "detector.pt")
    export(model, torch.zeros(1, 3, 64, 64), out / "dice_detector.onnx", dynamic_hw=True)
    print(f"detector: {step} steps", flush=True)


def training_view(rng: np.random.Generator, upright: bool = False) -> int:
    """The view (:func:`vision.dice.crop_views`) a classifier's training batch is shown in.
    The face may be turned any way: one of the eight views, a turn by k quarters, mirrored
    after it half the time (= mirrored, then turned by -k). ``upright``: only the views that
    keep the image's up (:data:`vision.dice.reader.UPRIGHT_VIEWS`), the crop as it is or
    mirrored left to right, each half the time."""
    if upright:
        return UPRIGHT_VIEWS[int(rng.random() < 0.5)]
    k = int(rng.integers(0, 4))
    return 4 + (-k) % 4 if rng.random() < 0.5 else k


def train_classifier(crops: np.ndarray, classes: np.ndarray, out: Path, budget: float,
                     rng: np.random.Generator, init: Path | None = None,
                     clear_weight: float = 1.0, lr: float | None = None,
                     arch: str = CLASSIFIER_ARCH, camera: bool = False,
                     upright: bool = False) -> None:
    print("class counts", np.bincount(classes % CLEAR, minlength=len(CLASSES)),
          "translucent", int((classes >= CLEAR).sum()), flush=True)
    n = len(crops)
    val = rng.random(n) < 0.08
    xtr, ytr, xva, yva = crops[~val], classes[~val], crops[val], classes[val]
    # the figure printed every 100 steps is taken on at most 4000 of the held-out crops: more
    # would cost a large share of the steps (the crops are all held out all the same)
    xva, yva = xva[:4000], yva[:4000]
    model = Classifier(arch=arch)
    opt, lr0, frozen = optimiser(model, init, "classifier", lr)
    start = time.time()
    step, batch = 0, 128
    while time.time() - start < budget:
        idx = rng.integers(0, len(xtr), batch)
        xb = augment(camera_augment(xtr[idx], rng) if camera else xtr[idx], rng)
        xb = crop_views(xb, [training_view(rng, upright)])
        x = to_tensor(np.ascontiguousarray(xb))
        cosine_lr(opt, lr0, (time.time() - start) / budget)
        y = model(x)
        target = torch.from_numpy(ytr[idx]).long()
        loss = F.cross_entropy(y[:, :len(CLASSES)], target % CLEAR, label_smoothing=0.05)
        die = target % CLEAR != 0  # translucency is learned on dice only
        if die.any():
            loss = loss + clear_weight * F.binary_cross_entropy_with_logits(
                y[die, len(CLASSES)], (target[die] >= CLEAR).float(),
                pos_weight=torch.tensor(3.0))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 100 == 0:
            model.eval()
            with torch.no_grad():
                yv = model(to_tensor(xva)).numpy()
                pred = yv[:, :len(CLASSES)].argmax(1)
                clear = (yv[:, len(CLASSES)] > 0) == (yva >= CLEAR)
                dice_va = yva % CLEAR != 0
            train_mode(model, frozen)
            print(f"cls step {step} {time.time() - start:.0f}s loss {loss.item():.3f} "
                  f"val acc {(pred == yva % CLEAR).mean():.4f} "
                  f"translucent acc {clear[dice_va].mean():.4f}", flush=True)
    torch.save(model.state_dict(), out / "classifier.pt")
    export(model, torch.zeros(1, 3, CROP, CROP), out / "dice_classifier.onnx", dynamic_hw=False)
    print(f"classifier: {step} steps", flush=True)


if __name__ == "__main__":
    main()
