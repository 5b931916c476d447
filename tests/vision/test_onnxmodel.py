"""One onnxruntime session per model file and role, kept for the process."""

from __future__ import annotations

import pytest

from vision.dice import DiceConfig
from vision.onnxmodel import onnx_session


def test_a_session_is_kept_per_file_and_role():
    path = DiceConfig().detector_path
    first = onnx_session(path, "dice detector")
    assert onnx_session(path, "dice detector") is first
    coarse = onnx_session(path, "dice detector", role="coarse")
    assert coarse is not first and onnx_session(path, role="coarse") is coarse


def test_a_missing_model_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="digit model missing"):
        onnx_session(tmp_path / "absent.onnx", "digit model", role="any")
