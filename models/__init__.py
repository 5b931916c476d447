"""The ONNX models the readers load, each in a folder with the script that trains it and a model
card (``MODEL.md``: data, size, accuracy). Running and testing need only onnxruntime."""

from __future__ import annotations

from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def model_path(name: str) -> Path:
    """Path of a committed model file, e.g. ``model_path("dice/dice_face.onnx")``."""
    return MODELS_DIR / name
