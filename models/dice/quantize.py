"""Write an int8 copy of the dice classifier (or face net) calibrated on the reader's inputs.

    /work/venv/bin/python -m models.dice.quantize [--models models/dice] [--out models/dice] \
        [--nets classifier,face] [--offset 50000] [--scenes 12] [--method percentile] \
        [--set FIELD=VALUE ...]

Each net's copy (``--nets``: the classifier, the face net or both) is onnxruntime's static
quantization in QDQ form: weights int8 per output channel, activations uint8, their ranges
calibrated (``--method``) on the batches the reader runs the net on while it reads the
judge's rendered sets (:data:`models.dice.judge.RECIPES`) at seed offset ``--offset``:
``--scenes`` scenes of each set, three times as many of each close-up set. Offset +50000 is
the calibration's own; no rule is judged there. ``--set`` changes the reader that gives
those batches (DiceConfig fields). The detector stays in float: its int8 copy ran slower than
it. Both other copies are committed, each calibrated by the reader of its session:

- ``dice_classifier.int8.onnx`` (session 57, rule BBBBBB): ``--nets classifier --set
  none_threshold=0.5`` (session 57's reader; since session 58 the reader's ``none_threshold``
  is 1, which gives the calibration other crops);
- ``dice_face.int8.onnx`` (session 59, rule HHHHHH): ``--nets face``.

models/dice/HISTORY.md has both rules.

Writes ``dice_<net>.int8.onnx`` into ``--out`` for each net, from the float nets in
``--models`` (``dice_detector.onnx``, ``dice_classifier.onnx`` and ``dice_face.onnx``, all
three read while calibrating), which stay the training's (``train.py --init`` continues from
them). The reader runs an int8 copy where this CPU's 8-bit kernels are exact
(:func:`vision.dice.reader.net_file`): on x86-64 without VNNI they can saturate, and weights
at 7 bits (``reduce_range``), exact there, read worse (session 57), so such CPUs read the
float nets. Needs the ``train`` extra (onnxruntime's quantization tools import ``onnx``). A
development tool: it is not part of the command line.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np

from models.dice.judge import RECIPES
from models.dice.validate import build_parser, parse_set, scenes
from vision.dice import DiceConfig, read_dice, reader
from vision.dice.reader import float_file, int8_file

# the nets that can be quantized, by their DiceConfig field
NETS = {"classifier": "classifier_path", "face": "face_path"}
COMMITTED = ("classifier", "face")  # the nets whose int8 copy is committed (the default of --nets)
BATCH = 64  # calibration batch; a last part batch is left out
METHODS = ("minmax", "percentile", "entropy")


class _Recorder:
    """An onnxruntime session that keeps a copy of each ``input`` it is run on."""

    def __init__(self, session: object, into: list[np.ndarray]) -> None:
        self.session, self.into = session, into

    def run(self, names: object, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.into.append(feed["input"].copy())
        return self.session.run(names, feed)  # type: ignore[attr-defined]


@contextlib.contextmanager
def recording(paths: dict[str, str]) -> Iterator[dict[str, list[np.ndarray]]]:
    """While open, the reader's sessions of the files in ``paths`` (net name -> path) record
    every input batch they run, into the lists of the dict it yields (by net name)."""
    record: dict[str, list[np.ndarray]] = {net: [] for net in paths}
    by_path = {str(Path(p)): net for net, p in paths.items()}
    original = reader._session

    def session(path: str, role: str = "") -> object:
        sess = original(path, role)
        net = by_path.get(str(Path(path)))
        return sess if net is None else _Recorder(sess, record[net])

    reader._session = session
    try:
        yield record
    finally:
        reader._session = original


def calibration_inputs(config: DiceConfig, offset: int, per_set: int,
                       nets: tuple[str, ...] = COMMITTED) -> dict[str, np.ndarray]:
    """Every input the reader (``config``) gives ``nets`` over ``per_set`` scenes of each of
    the judge's sets at seed ``offset`` (three times as many close-ups), by net:
    ``(N, 3, H, W)`` float32."""
    paths = {net: getattr(config, NETS[net]) for net in nets}
    with recording(paths) as record:
        for number, options in RECIPES:
            opts = list(options)
            count = opts.index("--count") + 1
            opts[count] = str(per_set * (3 if "--closeups" in opts else 1))
            args = build_parser().parse_args([*opts, "--seed", str(number + offset)])
            for image, _, _ in scenes(args):
                read_dice(image, config)
    return {net: np.concatenate(batches) for net, batches in record.items() if batches}


def quantize(src: Path, dst: Path, inputs: np.ndarray, method: str = "percentile",
             seed: int = 0) -> None:
    """Write ``dst``, the int8 QDQ copy of the net at ``src``, its activations' ranges
    calibrated by ``method`` on ``inputs`` (shuffled by ``seed``, in whole batches of
    :data:`BATCH`)."""
    if len(inputs) < BATCH:
        raise ValueError(f"{src.name}: {len(inputs)} calibration inputs, at least {BATCH} needed")
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    order = np.random.default_rng(seed).permutation(len(inputs))
    batches = [inputs[order[i:i + BATCH]] for i in range(0, len(inputs) - BATCH + 1, BATCH)]

    class Batches(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = iter(batches)

        def get_next(self) -> dict[str, np.ndarray] | None:
            batch = next(self.left, None)
            return None if batch is None else {"input": batch}

    quantize_static(str(src), str(dst), Batches(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True,
                    calibrate_method={"minmax": CalibrationMethod.MinMax,
                                      "percentile": CalibrationMethod.Percentile,
                                      "entropy": CalibrationMethod.Entropy}[method])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=str(reader.MODEL_DIR),
                        help="folder of the float nets (default the committed ones)")
    parser.add_argument("--out", default=str(reader.MODEL_DIR), help="folder written")
    parser.add_argument("--offset", type=int, default=50000,
                        help="seed offset of the calibration scenes (never judged)")
    parser.add_argument("--scenes", type=int, default=12,
                        help="scenes of each table set (close-up sets: three times as many)")
    parser.add_argument("--method", choices=METHODS, default="percentile")
    parser.add_argument("--nets", default=",".join(COMMITTED),
                        help="the nets to quantize, comma-separated (classifier, face; "
                        "default %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="DiceConfig field of the reader that gives the calibration "
                        "inputs (repeatable; default the committed reader's)")
    args = parser.parse_args(argv)
    nets = tuple(args.nets.split(","))
    if not nets or set(nets) - set(NETS):
        parser.error(f"--nets: {args.nets!r}: one or more of {', '.join(NETS)}")
    models, out = Path(args.models), Path(args.out)
    for path in (float_file(models, "detector"), *(float_file(models, net) for net in NETS)):
        if not path.is_file():
            parser.error(f"{path}: no such file (the float nets are read)")
    # calibrated on the float nets' inputs: what the reader gives them before any is quantized
    config = replace(parse_set(args.set, DiceConfig()),
                     detector_path=str(float_file(models, "detector")),
                     **{field: str(float_file(models, net)) for net, field in NETS.items()})
    inputs = calibration_inputs(config, args.offset, args.scenes, nets)
    out.mkdir(parents=True, exist_ok=True)
    for net in nets:
        quantize(float_file(models, net), int8_file(out, net), inputs[net], args.method)
        print(f"{int8_file(out, net)}: calibrated on {len(inputs[net])} inputs "
              f"({args.method})")


if __name__ == "__main__":
    main()
