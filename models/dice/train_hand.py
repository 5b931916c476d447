"""Train a new hand output for the committed dice detector, leaving its dice channels alone.

    OMP_NUM_THREADS=1 PYTHONPATH=. /work/venv/bin/python -m models.dice.train_hand \
        --scenes 4000 --seed 63 --workers 2 --threads 2 --minutes 6 --out /tmp/hand \
        [--cache /tmp/hand-cache]

The detector (``dice_detector.onnx``, :class:`models.dice.train.Detector`) reads dice from
channels 0-2 and "a hand covers this cell" from channel 3, the hand logit of its stride-4 head.
That channel was trained on one narrow style of hand (``vision.render.dice._draw_hand``) and
misses others. This script keeps the whole detector as it is, node for node, and computes
channel 3 anew by a small branch of its own (:class:`HandBranch`, about 60k weights) from the
detector's stride-16 features (the output of its ``s16`` stage, 96 channels) and the input
image averaged over 8x8 blocks (its colours), three 3x3 convolutions at stride 16, a 1x1
convolution to one logit, upsampled (bilinear) by 4 to the head's stride. The exported file is
the original graph with its last convolution's output sliced to the dice's three channels and
concatenated with the branch's logit (:func:`attach`): the same input and output names, four
channels at stride 4, so that the reader needs no change and its dice readings stay
bit-identical.

Data: ``--scenes`` table scenes of ``render_scene``, 640x480 (as ``models.dice.validate``
renders them) and 640x360 in turn, scene ``i`` from the generator seeded ``[seed, i]``, a hand
in half of them of which 75% are drawn in the varied styles (``hand_variety``: open hand, fist,
pointing finger, pen, fingertips at the edge, sleeves, pale to very dark skin, side or diffuse
light, motion blur) and the rest in the old flat style; look-alikes, boards, stone, desk
clutter, sheets and wide lenses in some of the scenes without or with a hand (``LOOKS``). Each
is shrunk to the reader's work size (longer side 512) and passed through the detector in
onnxruntime, whose stride-16 features (float16) and the hand mask's share of every stride-4
cell (:func:`models.dice.train.hand_target`'s measure) are the training pairs. Only the branch
learns (Adam 3e-3, cosine to 0, binary cross-entropy on the cell shares, batch 32) for
``--minutes``.

Time (2 CPUs, shared): rendering and features about 0.14 s a scene per worker (4000 scenes,
two workers: 4.5-7 min; ``--cache`` keeps them, ~0.8 GB), training ``--minutes`` (6: 1900-5100
steps), export a second. Session 63's candidates (not kept: the demo's finger is still never
flagged) and their figures: models/dice/HISTORY.md, Session 63. The branch costs about 0.7 ms
a 512x288 pass on one thread.
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import get_context
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from models.dice.train import conv_bn, cosine_lr
from vision.dice.reader import STRIDE, DiceConfig
from vision.onnxmodel import session_options
from vision.render.dice import render_scene

FEATURE = "/s16/s16.2/s16.2.5/Relu_output_0"  # the detector's stride-16 features (96 channels)
WORK = DiceConfig.work_size  # the reader's work size
HAND_RATE = 0.5
HAND_VARIETY = 0.75
LOOKS = {"distractor_rate": 0.6, "board_rate": 0.15, "board_dice_rate": 0.05,
         "stone_rate": 0.15, "desk_rate": 0.4, "sheet_rate": 0.15, "wide_rate": 0.2}


class HandBranch(nn.Module):
    """Stride-16 detector features (96 channels) and the input image averaged over 8x8
    blocks (its colours at stride 8) -> stride-4 hand logits (1 channel)."""

    def __init__(self, width: int = 48) -> None:
        super().__init__()
        self.colour = nn.Sequential(conv_bn(3, 16), conv_bn(16, 16, stride=2))
        self.proj = nn.Sequential(nn.Conv2d(96, width - 16, 1, bias=False),
                                  nn.BatchNorm2d(width - 16), nn.ReLU(inplace=True))
        self.body = nn.Sequential(conv_bn(width, width, dil=2), conv_bn(width, width, dil=4),
                                  conv_bn(width, width))
        self.out = nn.Conv2d(width, 1, 1)
        self.out.bias.data[:] = -3.0

    def forward(self, feat: torch.Tensor, img: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.proj(feat), self.colour(img)], 1)
        return F.interpolate(self.out(self.body(x)), scale_factor=4.0, mode="bilinear",
                             align_corners=False)


def _feature_session(detector: Path):
    """An onnxruntime session of the detector that also returns its stride-16 features."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(detector))
    model.graph.output.append(onnx.helper.make_tensor_value_info(FEATURE, onnx.TensorProto.FLOAT,
                                                                 None))
    return ort.InferenceSession(model.SerializeToString(), session_options(),
                                providers=["CPUExecutionProvider"])


_SESSION = None
SHAPES = ((640, 480), (640, 360))  # scenes as validate renders them, and 16:9 webcam frames


def _scene(job: tuple[str, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Scene ``i`` of seed ``seed`` (of shape ``SHAPES[i % 2]``): its detector features
    (float16), its input averaged over 8x8 blocks, the hand's share of every stride-4 cell and
    whether a hand was drawn."""
    global _SESSION
    detector, seed, i = job
    if _SESSION is None:
        _SESSION = _feature_session(Path(detector))
    rng = np.random.default_rng([seed, i])
    extras: dict = {}
    width, height = SHAPES[i % len(SHAPES)]
    image, _ = render_scene(rng, width=width, height=height, hand_rate=HAND_RATE,
                            hand_variety=HAND_VARIETY, extras=extras, **LOOKS)
    h, w = image.shape[:2]
    scale = WORK / max(h, w)
    size = (round(w * scale), round(h * scale))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    x = small[None].transpose(0, 3, 1, 2).astype(np.float32) / 255.0 - 0.5
    feat = _SESSION.run([FEATURE], {"input": x})[0][0]
    img = x[0].reshape(3, size[1] // 8, 8, size[0] // 8, 8).mean(axis=(2, 4))
    mask = extras.get("hand_mask")
    g = (size[1] // STRIDE, size[0] // STRIDE)
    target = (np.zeros(g, np.float32) if mask is None else
              cv2.resize(mask.astype(np.float32), g[::-1], interpolation=cv2.INTER_AREA))
    return (feat.astype(np.float16), img.astype(np.float16), target.astype(np.float16),
            mask is not None)


def render(detector: Path, seed: int, n: int, workers: int) -> list[dict[str, np.ndarray]]:
    """The training pairs, one dict of arrays (feats, imgs, targets, hands) per shape."""
    jobs = [(str(detector), seed, i) for i in range(n)]
    if workers > 1:
        with get_context("fork").Pool(workers) as pool:
            out = pool.map(_scene, jobs, chunksize=8)
    else:
        out = [_scene(j) for j in jobs]
    return [{key: np.stack([o[k] for o in out[s::len(SHAPES)]])
             for k, key in enumerate(("feats", "imgs", "targets", "hands"))}
            for s in range(len(SHAPES))]


def attach(detector: Path, branch: HandBranch, out: Path) -> None:
    """Write ``detector`` with its channel 3 computed by ``branch``: the original nodes
    untouched, the last convolution's output sliced to channels 0-2 and concatenated with the
    branch's logit under the original output name."""
    import warnings

    import onnx

    branch = branch.eval()
    tmp = out.with_suffix(".branch.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(branch, (torch.zeros(1, 96, 8, 8), torch.zeros(1, 3, 16, 16)),
                          str(tmp), input_names=["feat", "img"], output_names=["hand"],
                          opset_version=17, dynamo=False,
                          dynamic_axes={"feat": {0: "n", 2: "h", 3: "w"},
                                        "img": {0: "n", 2: "h2", 3: "w2"}})
    part = onnx.load(str(tmp))
    tmp.unlink()
    model = onnx.load(str(detector))
    g = model.graph
    last = g.node[-1]
    if list(last.output) != ["output"]:
        raise ValueError(f"{detector}: its last node does not write 'output'")
    last.output[0] = "dice_output"

    def renamed(name: str) -> str:
        return {"feat": FEATURE, "": ""}.get(name, f"hand/{name}")

    h = onnx.helper
    g.node.append(h.make_node("AveragePool", ["input"], ["hand/img"], kernel_shape=[8, 8],
                              strides=[8, 8], name="hand/pool"))

    for init in part.graph.initializer:
        init.name = renamed(init.name)
        g.initializer.append(init)
    for node in part.graph.node:
        node.name = f"hand/{node.name}"
        for k, name in enumerate(node.input):
            node.input[k] = renamed(name)
        for k, name in enumerate(node.output):
            node.output[k] = renamed(name)
        g.node.append(node)
    for name, value in (("hand/starts", [0]), ("hand/ends", [3]), ("hand/axes", [1])):
        g.initializer.append(h.make_tensor(name, onnx.TensorProto.INT64, [1], value))
    g.node.append(h.make_node("Slice", ["dice_output", "hand/starts", "hand/ends", "hand/axes"],
                              ["dice_channels"], name="hand/slice"))
    g.node.append(h.make_node("Concat", ["dice_channels", "hand/hand"], ["output"], axis=1,
                              name="hand/concat"))
    onnx.checker.check_model(model)
    onnx.save(model, str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--detector", default="models/dice/dice_detector.onnx",
                        help="the detector whose dice channels are kept")
    parser.add_argument("--out", default="/tmp/hand", help="folder for dice_detector.onnx")
    parser.add_argument("--scenes", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=63)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=6.0)
    parser.add_argument("--cache", default=None, help="an .npz of rendered features to reuse")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    detector = Path(args.detector)
    start = time.time()
    cache = [Path(f"{args.cache}.{k}.npz") for k in range(len(SHAPES))] if args.cache else []
    if cache and all(c.is_file() for c in cache):
        groups = [dict(np.load(c)) for c in cache]
    else:
        groups = render(detector, args.seed, args.scenes, args.workers)
        for c, g in zip(cache, groups, strict=False):  # none without --cache
            np.savez(c, **g)
    print(f"{sum(len(g['hands']) for g in groups)} scenes "
          f"({sum(int(g['hands'].sum()) for g in groups)} with a hand) "
          f"in {time.time() - start:.0f} s", flush=True)
    branch = HandBranch()
    opt = torch.optim.Adam(branch.parameters(), lr=3e-3)
    rng = np.random.default_rng(args.seed)
    budget = args.minutes * 60
    start = time.time()
    step = 0
    while time.time() - start < budget:
        cosine_lr(opt, 3e-3, (time.time() - start) / budget)
        g = groups[step % len(groups)]
        idx = np.sort(rng.choice(len(g["hands"]), min(32, len(g["hands"])), replace=False))
        feat, img, y = (torch.from_numpy(g[k][idx].astype(np.float32))
                        for k in ("feats", "imgs", "targets"))
        branch.train()
        loss = F.binary_cross_entropy_with_logits(branch(feat, img)[:, 0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 200 == 0:
            print(f"step {step} loss {loss.item():.4f} ({time.time() - start:.0f} s)", flush=True)
    torch.save(branch.state_dict(), out / "hand_branch.pt")
    attach(detector, branch, out / "dice_detector.onnx")
    print(f"{step} steps; wrote {out / 'dice_detector.onnx'}")


if __name__ == "__main__":
    main()
