from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.imageio import InvalidImage, as_bgr, decode_image, read_image


def _png(image: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", image)
    assert ok
    return buf.tobytes()


def _jpg(image: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".jpg", image)
    assert ok
    return buf.tobytes()


@pytest.mark.parametrize(("image", "shape"), [
    (np.zeros((4, 5), np.uint8), (4, 5, 3)),
    (np.zeros((4, 5, 1), np.uint8), (4, 5, 3)),
    (np.zeros((4, 5, 4), np.uint8), (4, 5, 3)),
    (np.ones((4, 5, 3), np.float64), (4, 5, 3)),
    (np.ones((4, 5), np.uint16) * 65535, (4, 5, 3)),
    (np.ones((4, 5), bool), (4, 5, 3)),
])
def test_as_bgr_accepts_every_common_dtype_and_shape(image, shape):
    out = as_bgr(image)
    assert out.shape == shape and out.dtype == np.uint8


def test_as_bgr_scales_floats_and_16_bit():
    assert as_bgr(np.ones((2, 2), np.float32))[0, 0, 0] == 255
    assert as_bgr(np.full((2, 2), 65535, np.uint16))[0, 0, 0] == 255


@pytest.mark.parametrize("bad", [
    np.zeros((0, 5, 3), np.uint8), np.zeros((5,), np.uint8), np.zeros((4, 5, 2), np.uint8),
    np.full((2, 2), np.nan, np.float32), np.zeros((2, 2), np.complex64), [[0, 1]],
])
def test_as_bgr_refuses_unusable_arrays(bad):
    with pytest.raises(InvalidImage):
        as_bgr(bad)


def test_read_image_round_trip(tmp_path):
    image = np.random.default_rng(0).integers(0, 255, (20, 30, 3), np.uint8)
    path = tmp_path / "a.png"
    path.write_bytes(_png(image))
    assert np.array_equal(read_image(path), image)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty file"),
    (b"this is not an image at all", "not an image"),
])
def test_read_image_refuses_bad_files(tmp_path, content, message):
    path = tmp_path / "x.jpg"
    path.write_bytes(content)
    with pytest.raises(InvalidImage, match=message):
        read_image(path)


@pytest.mark.parametrize("encode", [_jpg, _png])
def test_truncated_files_are_refused(encode):
    image = np.random.default_rng(1).integers(0, 255, (64, 64, 3), np.uint8)
    data = encode(image)
    with pytest.raises(InvalidImage, match=r"truncated|corrupt"):
        decode_image(data[: len(data) // 2], name="half")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InvalidImage, match="no such file"):
        read_image(tmp_path / "nope.png")
    with pytest.raises(InvalidImage, match="directory"):
        read_image(tmp_path)
