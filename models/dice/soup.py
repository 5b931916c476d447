"""Interpolate two exported nets of one graph, weight by weight (a "model soup").

    python -m models.dice.soup START.onnx TUNED.onnx 0.7 OUT.onnx

Writes ``(1 - a) * START + a * TUNED`` for every floating-point initializer. Meant for a net
and a continuation of it (as WiSE-FT does for a fine-tuned net and its start): the session-14
dice nets are run 25's and run 28's at ``a = 0.7`` (``models/dice/MODEL.md``). The two files
must have the same graph (nodes, their attributes and the initializers' names, shapes and
types); anything else is refused. Needs the ``onnx`` package (the ``[train]`` extra).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

__all__ = ["interpolate", "main"]


def _skeleton(model: object) -> tuple[list, list]:
    import onnx

    nodes = []
    for node in model.graph.node:  # type: ignore[attr-defined]
        attrs = []
        for attr in node.attribute:
            value = onnx.helper.get_attribute_value(attr)
            attrs.append((attr.name, value.SerializeToString()
                          if attr.type == onnx.AttributeProto.TENSOR else repr(value)))
        nodes.append((node.op_type, tuple(node.input), tuple(node.output), tuple(attrs)))
    inits = [(i.name, tuple(i.dims), i.data_type)
             for i in model.graph.initializer]  # type: ignore[attr-defined]
    return nodes, inits


def interpolate(start: str | Path, tuned: str | Path, a: float) -> object:
    """The ``onnx.ModelProto`` of ``start`` with every floating-point initializer replaced by
    ``(1 - a) * start + a * tuned`` (computed in float64, stored in the initializer's type).
    Raises ``ValueError`` when the two graphs differ or ``a`` is outside [0, 1]."""
    import onnx
    from onnx import numpy_helper

    if not 0.0 <= a <= 1.0:
        raise ValueError(f"a = {a}: the weight of the tuned net must lie in [0, 1]")
    first, second = onnx.load(str(start)), onnx.load(str(tuned))
    if _skeleton(first) != _skeleton(second):
        raise ValueError(f"{start} and {tuned} are not the same graph")
    other = {i.name: numpy_helper.to_array(i) for i in second.graph.initializer}
    for k, init in enumerate(first.graph.initializer):
        w = numpy_helper.to_array(init)
        if w.dtype.kind != "f":
            continue
        mix = (1.0 - a) * w.astype(np.float64) + a * other[init.name].astype(np.float64)
        first.graph.initializer[k].CopyFrom(numpy_helper.from_array(mix.astype(w.dtype),
                                                                    init.name))
    onnx.checker.check_model(first)
    return first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("start", help="the net that was continued (.onnx)")
    parser.add_argument("tuned", help="the continued net (.onnx, the same graph)")
    parser.add_argument("a", type=float, help="weight of the continued net, 0-1")
    parser.add_argument("out", help="where to write the interpolated net (.onnx)")
    args = parser.parse_args(argv)
    try:
        model = interpolate(args.start, args.tuned, args.a)
    except (OSError, ValueError) as exc:
        print(f"soup: {exc}", file=sys.stderr)
        return 2
    import onnx

    onnx.save(model, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
