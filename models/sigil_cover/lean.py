"""Rewrite the cover model's exported ONNX graph into an equivalent one that runs faster.

``torch.onnx.export`` of :class:`models.sigil_cover.net.CoverNet` gives a graph whose
full-resolution steps dominate its time on one CPU thread: the 2 x 2 average pooling, the
bilinear up-sampling of the 16 half-resolution channels and their concatenation with the 8
full-resolution ones before the 1 x 1 convolution ``c5``. The same function, computed in
another order:

- ``c5`` is linear and so is bilinear interpolation (its weights sum to one), so
  ``c5(concat(a, up(b))) = c5_a(a) + up(c5_b(b))``: the 16 channels are projected to 8 at half
  resolution before being up-sampled (half the interpolation), and the concatenation goes;
- the average pooling (``ceil_mode``: a partial window at an odd edge is the mean of the pixels
  it holds) is a depthwise 2 x 2 convolution of stride 2 with weights 1/4 after repeating the
  last row and column (``Pad`` mode ``edge``), which onnxruntime runs in its blocked layout.

The logits agree with the exported graph's to float rounding (about 1e-6; checked here on
random inputs of even and odd sizes, and by ``tests/vision/sigil/test_cover_model.py``)::

    /work/venv/bin/python -m models.sigil_cover.lean models/sigil_cover/cover.onnx \\
        models/sigil_cover/cover.onnx
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

__all__ = ["MAX_DIFFERENCE", "checked_lean", "lean_cover_graph", "max_difference"]


def lean_cover_graph(model):  # onnx.ModelProto -> onnx.ModelProto
    """The equivalent faster graph of an exported ``CoverNet`` (``cover_in`` -> ``cover``),
    built from its weights ``c1`` ... ``c6``."""
    import onnx
    from onnx import TensorProto
    from onnx import helper as oh
    from onnx import numpy_helper as nh

    w = {i.name: nh.to_array(i) for i in model.graph.initializer}
    missing = [f"c{k}.{p}" for k in range(1, 7) for p in ("weight", "bias")
               if f"c{k}.{p}" not in w]
    if missing:
        raise ValueError(f"not an exported CoverNet graph: no {', '.join(missing)}")
    a_ch = w["c1.weight"].shape[0]
    inits = [nh.from_array(w[f"c{k}.{p}"].astype(np.float32), f"c{k}.{p}")
             for k in (1, 2, 3, 4, 6) for p in ("weight", "bias")]
    inits += [
        nh.from_array(w["c5.weight"][:, :a_ch].astype(np.float32), "c5a.weight"),
        nh.from_array(w["c5.weight"][:, a_ch:].astype(np.float32), "c5b.weight"),
        nh.from_array(w["c5.bias"].astype(np.float32), "c5.bias"),
        nh.from_array(np.full((a_ch, 1, 2, 2), 0.25, np.float32), "pool.weight"),
        nh.from_array(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64), "pool.pads"),
        nh.from_array(np.array([0], np.int64), "i0"),
        nh.from_array(np.array([2], np.int64), "i2"),
        nh.from_array(np.array([4], np.int64), "i4"),
    ]

    def conv(x: str, wt: str, b: str | None, out: str, k: int = 3, dil: int = 1,
             group: int = 1, stride: int = 1) -> oh.NodeProto:
        pad = dil * (k // 2)
        return oh.make_node("Conv", [x, wt] + ([b] if b else []), [out], kernel_shape=[k, k],
                            pads=[pad] * 4, dilations=[dil, dil], strides=[stride, stride],
                            group=group)

    nodes = [
        conv("cover_in", "c1.weight", "c1.bias", "c1"),
        oh.make_node("Relu", ["c1"], ["a"]),
        oh.make_node("Pad", ["a", "pool.pads"], ["a_pad"], mode="edge"),
        oh.make_node("Conv", ["a_pad", "pool.weight"], ["pooled"], kernel_shape=[2, 2],
                     strides=[2, 2], group=a_ch),
        conv("pooled", "c2.weight", "c2.bias", "c2"),
        oh.make_node("Relu", ["c2"], ["b2"]),
        conv("b2", "c3.weight", "c3.bias", "c3", dil=2),
        oh.make_node("Relu", ["c3"], ["b3"]),
        conv("b3", "c4.weight", "c4.bias", "c4", dil=4),
        oh.make_node("Relu", ["c4"], ["b4"]),
        conv("b4", "c5b.weight", None, "half", k=1),
        # up-sampled to the first layer's size (N, C from the half-resolution map)
        oh.make_node("Shape", ["half"], ["half_shape"]),
        oh.make_node("Slice", ["half_shape", "i0", "i2", "i0"], ["nc"]),
        oh.make_node("Shape", ["a"], ["a_shape"]),
        oh.make_node("Slice", ["a_shape", "i2", "i4", "i0"], ["hw"]),
        oh.make_node("Concat", ["nc", "hw"], ["size"], axis=0),
        oh.make_node("Resize", ["half", "", "", "size"], ["up"], mode="linear",
                     coordinate_transformation_mode="half_pixel"),
        conv("a", "c5a.weight", "c5.bias", "full", k=1),
        oh.make_node("Add", ["full", "up"], ["c5"]),
        oh.make_node("Relu", ["c5"], ["r5"]),
        conv("r5", "c6.weight", "c6.bias", "cover"),
    ]
    ins = [oh.make_tensor_value_info("cover_in", TensorProto.FLOAT,
                                     [1, w["c1.weight"].shape[1], "h", "w"])]
    outs = [oh.make_tensor_value_info("cover", TensorProto.FLOAT, [1, 1, "h", "w"])]
    graph = oh.make_graph(nodes, "cover_lean", ins, outs, inits)
    lean = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)],
                         producer_name="models.sigil_cover.lean")
    lean.ir_version = model.ir_version
    onnx.checker.check_model(lean)
    return lean


def _session(model):
    import onnxruntime as ort

    from vision.onnxmodel import session_options

    return ort.InferenceSession(model.SerializeToString(), session_options(),
                                providers=["CPUExecutionProvider"])


def max_difference(a, b, sizes=((126, 88), (125, 87), (63, 45)), seed: int = 0) -> float:
    """The largest absolute difference of the two cover graphs' logits on random inputs of
    ``sizes`` (cells)."""
    sa, sb = _session(a), _session(b)
    rng = np.random.default_rng(seed)
    ch = sa.get_inputs()[0].shape[1]
    worst = 0.0
    for h, w in sizes:
        x = rng.random((1, ch, h, w), dtype=np.float32) * 1.5
        worst = max(worst, float(np.abs(sa.run(None, {"cover_in": x})[0]
                                        - sb.run(None, {"cover_in": x})[0]).max()))
    return worst


MAX_DIFFERENCE = 1e-4  # the rewritten graph's logits agree with the export's at least this well


def checked_lean(model):  # onnx.ModelProto -> (onnx.ModelProto, float)
    """:func:`lean_cover_graph` of ``model`` and the largest difference of their logits
    (:func:`max_difference`); raises ``RuntimeError`` when that exceeds ``MAX_DIFFERENCE``."""
    lean = lean_cover_graph(model)
    diff = max_difference(model, lean)
    if diff > MAX_DIFFERENCE:
        raise RuntimeError(f"the rewritten cover graph differs from the export by {diff:.2e}")
    return lean, diff


def main(argv: list[str] | None = None) -> int:
    import onnx

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("exported", help="cover.onnx as models.sigil_cover.train fit exports it")
    ap.add_argument("out")
    args = ap.parse_args(argv)
    try:
        lean, diff = checked_lean(onnx.load(args.exported))
    except RuntimeError as exc:
        print(f"{exc}: not written", file=sys.stderr)
        return 1
    onnx.save(lean, args.out)
    print(f"wrote {args.out}: logits within {diff:.1e} of {args.exported}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
