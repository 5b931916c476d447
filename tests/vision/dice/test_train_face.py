"""The face net's trainer against the reader (needs torch: the [train] extra)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.dice import DiceConfig
from vision.dice.reader import FACE_CROP, face_shapes
from vision.onnxmodel import onnx_session

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from models.dice.train import export, to_tensor  # noqa: E402
from models.dice.train_face import FaceNet, face_crops, train  # noqa: E402


def test_the_training_crops_hold_every_flat_and_leaning_die_twice_with_its_shape():
    crops, shapes = face_crops(11, 6, cocked_rate=0.5, tile_rate=0.0)
    assert crops.shape[1:] == (FACE_CROP, FACE_CROP, 3) and crops.dtype == np.uint8
    assert len(crops) == len(shapes) > 0 and len(crops) % 2 == 0
    assert np.all(np.hypot(shapes[:, 0], shapes[:, 1]) <= 1.0 + 1e-6)
    np.testing.assert_array_equal(shapes[0::2], shapes[1::2])  # one die, two boxes
    assert not np.array_equal(crops[0::2], crops[1::2])


def test_a_face_net_exports_what_the_reader_reads(tmp_path):
    """A trained (briefly) face net, exported, runs in the reader: one shape per box."""
    crops, shapes = face_crops(12, 4, cocked_rate=0.3, tile_rate=0.5)
    model = train(crops, shapes, minutes=0.02, seed=0)
    path = tmp_path / "dice_face.onnx"
    export(model, to_tensor(crops[:2]), path, dynamic_hw=False)
    image = np.random.default_rng(0).integers(0, 255, (120, 160, 3), np.uint8)
    config = replace(DiceConfig(), face_path=str(path))
    out = face_shapes(image, [(10.0, 10.0, 50.0, 40.0), (60.0, 50.0, 100.0, 100.0)], config)
    assert out.shape == (2, 2) and np.all(np.isfinite(out))
    assert onnx_session(str(path)) is not None


def test_the_face_net_takes_the_reader_s_crop():
    out = FaceNet()(torch.zeros(3, 3, FACE_CROP, FACE_CROP))
    assert tuple(out.shape) == (3, 2)
