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


def test_vnni_is_read_from_the_cpu_flags():
    from vision.onnxmodel import vnni

    assert vnni("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_vnni\n")
    assert vnni("flags\t: fpu avx2 avx_vnni\nflags\t: fpu\n")  # the first flags line
    assert not vnni("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512bw\n")
    assert not vnni("flags\t: avx512_vnnix\n")  # a whole flag, not a prefix
    assert not vnni("Features\t: fp asimd\n")  # no flags line (ARM's cpuinfo)
    assert not vnni("")


def test_int8_nets_are_read_only_where_the_cpu_is_known_exact(monkeypatch):
    import platform

    from vision import onnxmodel

    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    onnxmodel.int8_exact.cache_clear()
    try:
        assert onnxmodel.int8_exact() is False  # not measured there: the float nets
    finally:
        onnxmodel.int8_exact.cache_clear()  # the next call looks at the real machine
