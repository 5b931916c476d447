"""The int8 copies of the dice classifier and face net (models/dice/quantize.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from models.dice import quantize
from vision.dice import DiceConfig, read_dice, reader
from vision.dice.reader import MODEL_DIR, _softmax, float_file, int8_file, net_file
from vision.onnxmodel import int8_exact, onnx_session
from vision.render.dice import render_closeup, render_scene

FLOAT = replace(DiceConfig(), classifier_path=str(float_file(MODEL_DIR, "classifier")),
                face_path=str(float_file(MODEL_DIR, "face")))


def _images(n: int = 8) -> list[np.ndarray]:
    out = []
    for i in range(n):
        rng = np.random.default_rng([4242, i])
        out.append(render_scene(rng, width=640, height=480)[0] if i % 2
                   else render_closeup(rng, 96)[0])
    return out


@pytest.fixture(scope="module")
def inputs() -> dict[str, np.ndarray]:
    """What the float nets are given while the reader reads eight rendered scenes."""
    with quantize.recording({"classifier": FLOAT.classifier_path,
                             "face": FLOAT.face_path}) as record:
        for image in _images():
            read_dice(image, FLOAT)
    return {net: np.concatenate(batches) for net, batches in record.items()}


def test_recording_keeps_the_inputs_and_changes_no_reading():
    image = _images(2)[1]
    plain, session = read_dice(image, FLOAT), reader._session
    with quantize.recording({"classifier": FLOAT.classifier_path}) as record:
        recorded = read_dice(image, FLOAT)
    assert recorded == plain and len(plain.dice) >= 3
    assert record["classifier"] and all(b.shape[1:] == (3, reader.CROP, reader.CROP)
                                        for b in record["classifier"])
    assert reader._session is session  # put back
    with quantize.recording({"classifier": FLOAT.classifier_path}) as record:
        pass
    assert record == {"classifier": []}


@pytest.mark.skipif(not int8_exact(), reason="this CPU's 8-bit kernels may saturate "
                    "(no VNNI): the reader reads the float nets here")
def test_the_committed_int8_copy_reads_as_its_float_net(inputs):
    """A copy left behind when its float net is trained again reads another net: it fails
    here. Both copies are committed: the classifier's (classes as the float net's) and the
    face net's (face shapes near the float net's)."""
    assert [net for net in quantize.NETS if int8_file(MODEL_DIR, net).is_file()
            ] == list(quantize.COMMITTED) == ["classifier", "face"]
    x = inputs["classifier"]
    assert len(x) >= 100
    runs = [onnx_session(MODEL_DIR / name, role="test").run(None, {"input": x})[0]
            for name in ("dice_classifier.onnx", "dice_classifier.int8.onnx")]
    p, q = (_softmax(r[:, :len(reader.CLASSES)]) for r in runs)
    assert (p.argmax(axis=1) == q.argmax(axis=1)).mean() >= 0.95
    assert np.abs(p - q).mean() < 0.02
    x = inputs["face"]
    assert len(x) >= 20
    f, g = (onnx_session(MODEL_DIR / name, role="test").run(None, {"input": x})[0]
            for name in ("dice_face.onnx", "dice_face.int8.onnx"))
    assert f.shape == g.shape and np.median(np.abs(f - g)) < 0.02


def test_the_reader_takes_the_int8_copy_only_where_the_cpu_runs_it_exactly(monkeypatch,
                                                                           tmp_path):
    (tmp_path / "dice_classifier.onnx").write_bytes(b"")
    monkeypatch.setattr(reader, "int8_exact", lambda: True)
    assert net_file(tmp_path, "classifier") == tmp_path / "dice_classifier.onnx"  # no copy
    (tmp_path / "dice_classifier.int8.onnx").write_bytes(b"")
    assert net_file(tmp_path, "classifier") == tmp_path / "dice_classifier.int8.onnx"
    assert DiceConfig().classifier_path == str(MODEL_DIR / "dice_classifier.int8.onnx")
    assert DiceConfig().face_path == str(MODEL_DIR / "dice_face.int8.onnx")
    assert DiceConfig().detector_path == str(MODEL_DIR / "dice_detector.onnx")  # no copy
    monkeypatch.setattr(reader, "int8_exact", lambda: False)
    assert net_file(tmp_path, "classifier") == tmp_path / "dice_classifier.onnx"
    assert DiceConfig().face_path == str(MODEL_DIR / "dice_face.onnx")
    assert DiceConfig().classifier_path == str(MODEL_DIR / "dice_classifier.onnx")


def test_too_few_calibration_inputs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 64 needed"):
        quantize.quantize(MODEL_DIR / "dice_face.onnx", tmp_path / "out.onnx",
                          np.zeros((10, 3, 48, 48), np.float32))


def test_a_folder_without_the_float_nets_and_unknown_nets_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        quantize.main(["--models", str(tmp_path), "--out", str(tmp_path)])
    assert "dice_detector.onnx: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        quantize.main(["--nets", "classifier,detector", "--out", str(tmp_path)])
    assert "one or more of classifier, face" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no field 'no_such'"):
        quantize.main(["--set", "no_such=1", "--out", str(tmp_path)])
    assert not list(tmp_path.iterdir())


def test_a_quantized_net_runs_and_reads_near_its_float_net(inputs, tmp_path):
    pytest.importorskip("onnx", reason="quantizing needs onnx: the [train] extra")
    x = inputs["face"]
    out = tmp_path / "face.int8.onnx"
    quantize.quantize(MODEL_DIR / "dice_face.onnx", out, np.concatenate([x] * 3))
    f = onnx_session(MODEL_DIR / "dice_face.onnx", role="test").run(None, {"input": x})[0]
    g = onnx_session(out).run(None, {"input": x})[0]
    assert g.shape == f.shape and not np.array_equal(f, g)
    assert np.median(np.abs(f - g)) < 0.02
