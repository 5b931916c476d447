"""Reading images from files and normalising arrays at the boundary of every reader.

Convention: images are OpenCV arrays, BGR, ``uint8``, shape ``(H, W, 3)``; points are
``(x, y)`` in pixels with the origin at the top-left; boxes are ``[x0, y0, x1, y1]``.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.errors import BadInput

__all__ = ["InvalidImage", "as_bgr", "decode_image", "jpeg_round_trip", "read_image"]


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


def _is_truncated(data: bytes) -> bool:
    """True for a JPEG without its end-of-image marker or a PNG without its IEND chunk.

    OpenCV decodes such files with a grey tail and only a warning on stderr, so we check.
    """
    if data[:2] == b"\xff\xd8":
        return b"\xff\xd9" not in data[-1024:]
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return b"IEND" not in data[-64:]
    return False


def decode_image(data: bytes, *, name: str = "image") -> np.ndarray:
    """Decode encoded image bytes (JPEG, PNG, ...) to BGR ``uint8``; raise :class:`InvalidImage`."""
    if not data:
        raise InvalidImage(f"{name}: empty file")
    if _is_truncated(data):
        raise InvalidImage(f"{name}: truncated image file (its end marker is missing)")
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
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
