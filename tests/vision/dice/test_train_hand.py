"""The detector's hand branch (models/dice/train_hand.py): attached to a detector file, it
leaves the dice channels bit for bit as they were and computes the hand channel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.dice import DiceConfig
from vision.onnxmodel import onnx_session

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from models.dice.train import Detector, export, load_onnx  # noqa: E402
from models.dice.train_hand import FEATURE, HandBranch, _feature_session, attach  # noqa: E402

DETECTOR = Path(DiceConfig().detector_path)


def _frames(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(3).random(shape, np.float32) - 0.5


def _plain_detector(tmp_path: Path) -> Path:
    """A detector file without a hand branch: the committed one's own layers (its old hand
    row included; a branch in the committed file is left out by load_onnx)."""
    net = Detector()
    if DETECTOR.is_file():
        load_onnx(net, DETECTOR)
    path = tmp_path / "plain.onnx"
    export(net, torch.zeros(1, 3, 64, 64), path, dynamic_hw=True)
    return path


@pytest.mark.parametrize("shape", [(1, 3, 288, 512), (2, 3, 96, 160)])
def test_an_attached_branch_keeps_the_dice_channels_and_computes_the_hand(tmp_path, shape):
    plain = _plain_detector(tmp_path)
    torch.manual_seed(0)
    branch = HandBranch()
    for p in branch.parameters():  # a branch whose output is not a constant
        p.data.normal_(0, 0.3)
    attach(plain, branch, tmp_path / "dice_detector.onnx")
    x = _frames(shape)
    before = onnx_session(str(plain), "plain").run(None, {"input": x})[0]
    after = onnx_session(str(tmp_path / "dice_detector.onnx"), "handed").run(
        None, {"input": x})[0]
    assert after.shape == before.shape == (shape[0], 4, shape[2] // 4, shape[3] // 4)
    assert np.array_equal(after[:, :3], before[:, :3])
    assert not np.allclose(after[:, 3], before[:, 3], atol=1e-2)
    feat = _feature_session(plain).run([FEATURE], {"input": x})[0]
    n, _, h, w = shape
    img = x.reshape(n, 3, h // 8, 8, w // 8, 8).mean(axis=(3, 5))
    with torch.no_grad():
        mine = branch.eval()(torch.from_numpy(feat), torch.from_numpy(img)).numpy()[:, 0]
    assert np.allclose(after[:, 3], mine, atol=1e-3)


@pytest.mark.skipif(not DETECTOR.is_file(), reason="dice detector not trained")
def test_the_committed_detector_loads_without_its_hand_branch(tmp_path):
    """load_onnx leaves a hand branch's nodes out: the committed file's dice channels are the
    plain detector's, so train.py can start from it (--init)."""
    plain = _plain_detector(tmp_path)
    x = _frames((1, 3, 96, 128))
    mine = onnx_session(str(plain), "plain").run(None, {"input": x})[0]
    theirs = onnx_session(str(DETECTOR), "committed").run(None, {"input": x})[0]
    assert np.allclose(mine[:, :3], theirs[:, :3], atol=1e-4)
