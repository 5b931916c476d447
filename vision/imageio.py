"""Reading images from files and normalising arrays at the boundary of every reader.

Convention: images are OpenCV arrays, BGR, ``uint8``, shape ``(H, W, 3)``; points are
``(x, y)`` in pixels with the origin at the top-left; boxes are ``[x0, y0, x1, y1]``.
"""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

from companion.errors import BadInput

__all__ = ["MAX_PIXELS", "InvalidImage", "as_bgr", "decode_image", "jpeg_round_trip",
           "opencv_quiet", "read_image"]


class InvalidImage(BadInput):
    """An image that cannot be used: not an image, empty, truncated or of zero size."""


def as_bgr(image: np.ndarray, *, name: str = "image") -> np.ndarray:
    """Return ``image`` as a contiguous BGR ``uint8`` array of shape ``(H, W, 3)``.

    Accepts grey ``(H, W)`` or ``(H, W, 1)``, BGR and BGRA; ``uint8``, ``uint16``, ``bool`` and
    float images (floats are taken to be in ``[0, 1]``).

    Examples
    --------
    >>> import numpy as np
    >>> as_bgr(np.zeros((4, 5), np.float32)).shape
    (4, 5, 3)
    """
    if not isinstance(image, np.ndarray):
        raise InvalidImage(f"{name}: expected a numpy array, got {type(image).__name__}")
    if image.ndim not in (2, 3) or image.size == 0 or min(image.shape[:2]) == 0:
        raise InvalidImage(f"{name}: zero-size or malformed image of shape {image.shape}")
    if image.dtype == np.bool_:
        image = image.astype(np.uint8) * 255
    elif image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif np.issubdtype(image.dtype, np.floating):
        if not np.isfinite(image).all():
            raise InvalidImage(f"{name}: image holds NaN or infinite values")
        image = np.clip(image * 255.0 + 0.5, 0, 255).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise InvalidImage(f"{name}: unsupported pixel type {image.dtype}")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.shape[2] == 1:
        image = cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
    elif image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.shape[2] != 3:
        raise InvalidImage(f"{name}: expected 1, 3 or 4 channels, got {image.shape[2]}")
    return np.ascontiguousarray(image)


_PNG = b"\x89PNG\r\n\x1a\n"
# a JPEG marker inside entropy-coded data: 0xFF (fill bytes too) then a code that is not a
# stuffed zero, a restart marker (D0-D7) or another fill byte
_JPEG_MARKER = re.compile(rb"\xff+[^\x00\xd0-\xd7\xff]")
#: The most pixels an image file may give: more than any camera's photo (a 200-megapixel
#: phone photo passes). A larger one would take gigabytes to decode (a 30000 x 30000 PNG, which
#: OpenCV's own limit of 2^30 pixels lets through, took 5.3 GB): a server reading a folder of
#: images could be killed for memory without a word. Checked from the header of a JPEG or a
#: PNG before decoding; other formats keep OpenCV's limit.
MAX_PIXELS = 250_000_000
# the JPEG frame headers (start of frame): every C0-CF but C4 (Huffman tables), C8 (reserved)
# and CC (arithmetic coding conditioning)
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _size_problem(width: int, height: int) -> str | None:
    if width * height > MAX_PIXELS:
        return (f"too large: {width}x{height} pixels ({width * height // 1_000_000} megapixels; "
                f"at most {MAX_PIXELS // 1_000_000} are read)")
    return None


def _jpeg_problem(data: bytes) -> str | None:
    """What is wrong with a JPEG's marker structure or size (:data:`MAX_PIXELS`), or None: its
    segments are walked from the start-of-image marker to the main image's end-of-image marker
    (anything after it, such as a phone's trailer or a motion photo, is not looked at; a
    thumbnail inside a segment is skipped with it). OpenCV decodes a cut file with a grey
    tail and only a warning on stderr, so this is checked first."""
    i, n = 2, len(data)
    while True:
        if i < n and data[i] != 0xFF:
            return f"corrupt JPEG: no marker at byte {i}"
        while i < n and data[i] == 0xFF:  # fill bytes
            i += 1
        if i >= n:
            return "truncated image file (it ends before its end-of-image marker)"
        code, i = data[i], i + 1
        if code == 0xD9:  # end of image
            return None
        if code == 0x01 or 0xD0 <= code <= 0xD7:  # markers without a segment
            continue
        if i + 2 > n:
            return "truncated image file (it ends inside a segment's header)"
        length = int.from_bytes(data[i:i + 2], "big")
        if length < 2:
            return f"corrupt JPEG: segment at byte {i - 2} has length {length}"
        if i + length > n:
            return f"truncated image file (its segment at byte {i - 2} runs past the end)"
        if code in _JPEG_FRAMES and length >= 7:  # precision, height, width
            size = _size_problem(int.from_bytes(data[i + 5:i + 7], "big"),
                                 int.from_bytes(data[i + 3:i + 5], "big"))
            if size is not None:
                return size
        i += length
        if code == 0xDA:  # start of scan: entropy-coded data up to the next marker
            found = _JPEG_MARKER.search(data, i)
            if found is None:
                return "truncated image file (it ends inside the image data)"
            i = found.end() - 2


def _png_problem(data: bytes) -> str | None:
    """What is wrong with a PNG's chunks, or None: each chunk's length and checksum, a
    non-zero size of at most :data:`MAX_PIXELS` in its header chunk, and its end chunk
    (anything after it is not looked at). libpng prints its own complaints about such files
    on stderr, so this is checked first."""
    i, n = len(_PNG), len(data)
    while True:
        if i + 8 > n:
            return "truncated image file (it ends before its IEND chunk)"
        length = int.from_bytes(data[i:i + 4], "big")
        kind = data[i + 4:i + 8]
        end = i + 12 + length
        label = kind.decode("latin-1")
        if end > n:
            return f"truncated image file (its {label} chunk at byte {i} runs past the end)"
        if zlib.crc32(data[i + 4:end - 4]) != int.from_bytes(data[end - 4:end], "big"):
            return f"corrupt PNG: its {label} chunk at byte {i} fails its checksum"
        if i == len(_PNG):
            if kind != b"IHDR" or length < 8:
                return "corrupt PNG: it does not begin with its header chunk"
            width, height = (int.from_bytes(data[i + k:i + k + 4], "big") for k in (8, 12))
            if width == 0 or height == 0:
                return f"zero-size image ({width}x{height})"
            size = _size_problem(width, height)
            if size is not None:
                return size
        if kind == b"IEND":
            return None
        i = end


def _opencv_reason(exc: cv2.error) -> str:
    """What an OpenCV error says failed, on one line (its message holds the source file and
    line too)."""
    reason = " ".join(str(exc).split()).split(" error: ", 1)[-1]
    if "CV_IO_MAX_IMAGE" in reason:
        return f"its header gives a size larger than OpenCV decodes ({reason})"
    return reason


_QUIET = threading.Lock()
_quiet_users = 0  # threads inside opencv_quiet(), under _QUIET
_quiet_saved = 0  # the level to restore when the last one leaves


@contextmanager
def opencv_quiet() -> Iterator[None]:
    """OpenCV's own log silenced: a file it cannot decode, or a camera or stream it cannot
    open, makes it print ``[ERROR:0@...]`` / ``[ WARN:0@...]`` lines on stderr, while the
    caller reports the problem in one line of its own.

    OpenCV's log level is global: the first thread in saves it, the last one out restores it,
    and no thread waits for another (a camera may take seconds to open while images are
    decoded elsewhere).
    """
    global _quiet_users, _quiet_saved
    log = cv2.utils.logging
    with _QUIET:
        if _quiet_users == 0:
            _quiet_saved = log.getLogLevel()
            log.setLogLevel(log.LOG_LEVEL_SILENT)
        _quiet_users += 1
    try:
        yield
    finally:
        with _QUIET:
            _quiet_users -= 1
            if _quiet_users == 0:
                log.setLogLevel(_quiet_saved)


def decode_image(data: bytes, *, name: str = "image") -> np.ndarray:
    """Decode encoded image bytes (JPEG, PNG, ...) to BGR ``uint8``; raise :class:`InvalidImage`
    with one line naming what is wrong (empty, cut short, a broken structure, a zero or too
    large size, or not an image at all)."""
    if not data:
        raise InvalidImage(f"{name}: empty file")
    problem = (_jpeg_problem(data) if data[:2] == b"\xff\xd8"
               else _png_problem(data) if data[:8] == _PNG else None)
    if problem is not None:
        raise InvalidImage(f"{name}: {problem}")
    try:
        with opencv_quiet():
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:  # a header OpenCV refuses, such as a size over its limit
        raise InvalidImage(f"{name}: cannot be decoded: {_opencv_reason(exc)}") from None
    if image is None:
        raise InvalidImage(f"{name}: not an image, or a corrupt or truncated one")
    return as_bgr(image, name=name)


def read_image(path: str | Path) -> np.ndarray:
    """Read an image file as BGR ``uint8``; a bad file raises :class:`InvalidImage`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidImage(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidImage(f"{path}: is a directory, not an image") from None
    except OSError as exc:
        raise InvalidImage(f"{path}: cannot read: {exc.strerror}") from None
    return decode_image(data, name=str(path))


def jpeg_round_trip(image: np.ndarray, quality: int) -> np.ndarray:
    """``image`` as it comes back from a JPEG file of ``quality`` (its compression artefacts
    included): how a rendered photo is saved and read back."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:  # pragma: no cover - OpenCV encodes every uint8 image
        raise ValueError("JPEG encoding failed")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)
