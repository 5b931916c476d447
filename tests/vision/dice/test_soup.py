"""Weight interpolation of two exported nets (needs onnx: the [train] extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from vision.dice import DiceConfig
from vision.dice.reader import CROP, MODEL_DIR, float_file
from vision.onnxmodel import session_options

onnx = pytest.importorskip("onnx")

from onnx import numpy_helper  # noqa: E402

from models.dice.soup import interpolate, main  # noqa: E402

CLASSIFIER = float_file(MODEL_DIR, "classifier")  # the float net, as trained
DETECTOR = Path(DiceConfig().detector_path)
pytestmark = pytest.mark.skipif(not CLASSIFIER.is_file(), reason="dice classifier not trained")


def _weights(model) -> dict[str, np.ndarray]:
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


@pytest.fixture()
def tuned(tmp_path: Path) -> Path:
    """The committed classifier with every weight moved by noise: a stand-in continuation."""
    model = onnx.load(str(CLASSIFIER))
    rng = np.random.default_rng(0)
    for k, init in enumerate(model.graph.initializer):
        w = numpy_helper.to_array(init)
        moved = (w + rng.normal(0, 0.05, w.shape)).astype(w.dtype)
        model.graph.initializer[k].CopyFrom(numpy_helper.from_array(moved, init.name))
    path = tmp_path / "tuned.onnx"
    onnx.save(model, str(path))
    return path


def test_the_ends_are_the_two_nets_and_the_middle_their_mean(tuned: Path) -> None:
    start, end = _weights(onnx.load(str(CLASSIFIER))), _weights(onnx.load(str(tuned)))
    for a, expect in ((0.0, start), (1.0, end)):
        got = _weights(interpolate(CLASSIFIER, tuned, a))
        assert all(np.array_equal(got[k], expect[k]) for k in start)
    half = _weights(interpolate(CLASSIFIER, tuned, 0.5))
    for k in start:
        assert np.allclose(half[k], (start[k] + end[k]) / 2, atol=1e-6)
    assert any(not np.allclose(half[k], start[k]) for k in start)


def test_the_written_net_runs_and_lies_between_the_two(tuned: Path, tmp_path: Path) -> None:
    out = tmp_path / "soup.onnx"
    assert main([str(CLASSIFIER), str(tuned), "0.7", str(out)]) == 0
    x = np.random.default_rng(1).random((4, 3, CROP, CROP), np.float32) - 0.5
    outs = [ort.InferenceSession(str(p), session_options(), providers=["CPUExecutionProvider"])
            .run(None, {"input": x})[0] for p in (CLASSIFIER, out, tuned)]
    assert outs[1].shape == outs[0].shape
    assert not np.allclose(outs[1], outs[0]) and not np.allclose(outs[1], outs[2])


def test_different_graphs_and_weights_outside_0_1_are_refused(tuned: Path, tmp_path: Path,
                                                              capsys) -> None:
    with pytest.raises(ValueError, match="not the same graph"):
        interpolate(DETECTOR, CLASSIFIER, 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        interpolate(CLASSIFIER, tuned, 1.5)
    assert main([str(DETECTOR), str(CLASSIFIER), "0.5", str(tmp_path / "x.onnx")]) == 2
    assert "not the same graph" in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()
    assert main([str(tmp_path / "missing.onnx"), str(CLASSIFIER), "0.5",
                 str(tmp_path / "y.onnx")]) == 2
