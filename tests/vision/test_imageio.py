from __future__ import annotations

import threading
import zlib

import cv2
import numpy as np
import pytest

from vision.imageio import (
    InvalidImage,
    _jpeg_problem,
    _png_problem,
    as_bgr,
    decode_image,
    opencv_quiet,
    read_image,
)


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


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return (len(payload).to_bytes(4, "big") + kind + payload
            + zlib.crc32(kind + payload).to_bytes(4, "big"))


def _png_of_size(width: int, height: int) -> bytes:
    """A PNG whose header chunk gives ``width`` x ``height`` (8-bit RGB), with a tiny image
    data chunk: well formed chunk by chunk."""
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(b"\x00" * 4)) + _chunk(b"IEND", b""))


def test_a_zero_size_png_is_named_so_and_nothing_reaches_stderr(capfd):
    with pytest.raises(InvalidImage, match=r"zero-size image \(0x0\)"):
        decode_image(_png_of_size(0, 0), name="zero.png")
    assert capfd.readouterr().err == ""


def _jpeg_of_size(width: int, height: int) -> bytes:
    """A small JPEG whose frame header (SOF0) is rewritten to give ``width`` x ``height``."""
    data = bytearray(_jpg(np.zeros((8, 8, 3), np.uint8)))
    at = data.index(b"\xff\xc0") + 5  # marker, length (2), precision (1): then height, width
    data[at:at + 4] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


@pytest.mark.parametrize("data", [_png_of_size(30_000, 30_000), _jpeg_of_size(30_000, 30_000),
                                  _png_of_size(16_000, 16_000)], ids=["png", "jpeg", "png-256mp"])
def test_an_image_of_more_pixels_than_any_camera_gives_is_refused_before_decoding(data):
    # a 30000 x 30000 PNG is within OpenCV's own limit (2^30 pixels) and took 5.3 GB to
    # decode: a folder source's server could be killed without a word
    with pytest.raises(InvalidImage, match=r"huge: too large: \d+x\d+ pixels \(\d+ "
                       r"megapixels; at most 250 are read\)") as info:
        decode_image(data, name="huge")
    assert "\n" not in str(info.value)


def test_the_largest_phone_photos_pass_the_size_check():
    # a 200-megapixel phone photo's header (16320 x 12240): its structure and size are
    # in order (decoding it is not tried: the data behind the rewritten header is 8x8)
    assert _jpeg_problem(_jpeg_of_size(16_320, 12_240)) is None
    assert _png_problem(_png_of_size(16_320, 12_240)) is None


@pytest.mark.parametrize("data", [
    # a BMP header of 100000 x 100000 pixels, 24 bits
    (b"BM" + (54).to_bytes(4, "little") + bytes(4) + (54).to_bytes(4, "little")
     + (40).to_bytes(4, "little") + (100_000).to_bytes(4, "little")
     + (100_000).to_bytes(4, "little") + (1).to_bytes(2, "little") + (24).to_bytes(2, "little")
     + bytes(24)),
], ids=["bmp"])
def test_a_header_too_large_to_decode_is_refused_in_one_line(data):
    with pytest.raises(InvalidImage, match="larger than OpenCV decodes") as info:
        decode_image(data, name="huge")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("data", [b"BM\x00\x01\x02\x03garbagegarbagegarbage",
                                  b"GIF89a\x10\x00\x10\x00garbage"], ids=["bmp", "gif"])
def test_a_fake_bmp_or_gif_is_refused_and_opencv_prints_nothing(capfd, data):
    with pytest.raises(InvalidImage, match="not an image"):
        decode_image(data, name="fake")
    assert capfd.readouterr().err == ""
    level = cv2.utils.logging.getLogLevel()
    assert level != cv2.utils.logging.LOG_LEVEL_SILENT  # OpenCV's log is back as it was


def test_a_png_cut_and_closed_again_is_refused_before_libpng_sees_it(capfd):
    data = _png(np.random.default_rng(2).integers(0, 255, (64, 64, 3), np.uint8))
    cut = data[: len(data) // 2] + _chunk(b"IEND", b"")
    with pytest.raises(InvalidImage, match=r"truncated|corrupt"):
        decode_image(cut, name="cut.png")
    flipped = bytearray(data)
    flipped[60] ^= 0xFF  # inside the image data: its checksum no longer holds
    with pytest.raises(InvalidImage, match="fails its checksum"):
        decode_image(bytes(flipped), name="flipped.png")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("encode", [_jpg, _png])
def test_bytes_after_the_end_marker_are_ignored(encode):
    # phones append data after a JPEG's end (a trailer, a motion photo's video)
    image = np.random.default_rng(3).integers(0, 255, (48, 64, 3), np.uint8)
    data = encode(image)
    trailer = bytes(np.random.default_rng(4).integers(0, 256, 5000, dtype=np.uint8))
    assert np.array_equal(decode_image(data + trailer), decode_image(data))


@pytest.mark.parametrize("params", [
    [cv2.IMWRITE_JPEG_PROGRESSIVE, 1],
    [cv2.IMWRITE_JPEG_RST_INTERVAL, 1],
    [cv2.IMWRITE_JPEG_OPTIMIZE, 1],
], ids=["progressive", "restart-markers", "optimized"])
def test_every_kind_of_jpeg_decodes(params):
    image = np.random.default_rng(5).integers(0, 255, (40, 56, 3), np.uint8)
    ok, buf = cv2.imencode(".jpg", image, params)
    assert ok
    assert decode_image(buf.tobytes()).shape == (40, 56, 3)


def test_a_cut_jpeg_with_a_thumbnail_is_still_truncated():
    # The thumbnail in an APP1 segment has its own end-of-image marker: only the main
    # image's counts.
    small = _jpg(np.full((8, 8, 3), 90, np.uint8))
    big = _jpg(np.random.default_rng(6).integers(0, 255, (64, 64, 3), np.uint8))
    app1 = b"\xff\xe1" + (len(small) + 2).to_bytes(2, "big") + small
    whole = big[:2] + app1 + big[2:]
    assert decode_image(whole).shape == (64, 64, 3)
    with pytest.raises(InvalidImage, match="truncated"):
        decode_image(whole[: len(whole) - 300], name="cut.jpg")


def test_a_jpeg_cut_where_a_marker_should_start_is_truncated():
    """Cut right after a whole segment (and after fill bytes there): the walk reaches the end
    where the next marker would be, and says the file ends before its end-of-image marker."""
    data = _jpg(np.zeros((16, 16, 3), np.uint8))
    first = 4 + int.from_bytes(data[4:6], "big")  # start-of-image, then the first segment
    for cut in (data[:2], data[:first], data[:first] + b"\xff\xff"):
        with pytest.raises(InvalidImage, match="ends before its end-of-image marker"):
            decode_image(cut, name="cut.jpg")


def test_opencv_quiet_overlapping_in_two_threads_restores_the_level_once_both_left():
    log = cv2.utils.logging
    before = log.getLogLevel()
    inside, leave, left = threading.Event(), threading.Event(), threading.Event()

    def other() -> None:  # a capture opening a camera for seconds while an image is decoded
        with opencv_quiet():
            inside.set()
            leave.wait(20)
        left.set()

    threading.Thread(target=other, daemon=True).start()
    assert inside.wait(20)
    entered = threading.Event()

    def second() -> None:
        with opencv_quiet():  # does not wait for the other thread to leave
            entered.set()

    threading.Thread(target=second, daemon=True).start()
    assert entered.wait(20)
    assert log.getLogLevel() == log.LOG_LEVEL_SILENT  # the other thread is still inside
    leave.set()
    assert left.wait(20)
    assert log.getLogLevel() == before != log.LOG_LEVEL_SILENT
