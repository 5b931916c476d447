"""Leaning dice: each die's top face against the plane of the table that the other dice show.

A die leaning on another die or on an edge has no face up, yet its upper-most face can look
like any top face in a crop of that die alone: a die leaning 30 degrees under a camera looking
straight down shows the same face as a flat die under a camera tilted 30 degrees. What tells
them apart is the other dice: the flat ones all lie on the table, so their faces share one
plane, and the leaning one does not.

The face net (``models/dice/train_face.py``) gives each die's **face shape**: the tilt of its
top face as the crop shows it, ``sin(t) * (cos 2a, sin 2a)``, ``t`` the angle between the
face's normal and the line of sight and ``a`` the direction in the image (x right, y down) in
which that normal leans. The doubled angle makes it the same for a face and for that face
turned by 180 degrees, which a square's outline cannot tell apart; :func:`face_shape` computes
it from a face's four corners, as the trainer does from the renderer's.

:func:`leans` turns each shape into the face's normal in the camera's frame, once per trial
focal length (a die away from the lens axis is seen along its own ray, so a flat die at the
edge of a wide-angle frame looks tilted by the angle of that ray), finds the plane most of the
dice share, and gives each die's angle from it. With too few dice for a plane of their own
(Doom Cat's three dice, one of them leaning), a plane an earlier frame of the same camera
showed (:class:`vision.readings.TablePlane`) can judge them instead.

Convention: image coordinates x right, y down; normals in the camera's frame with z toward the
camera; angles in degrees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from vision.readings import DiceReading, TablePlane

__all__ = ["TOLERANCE", "TableMemory", "camera_normals", "face_shape", "leans", "shape_normals",
           "table_normal", "view_shapes"]

_CORNERS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_MAX_SIN = 0.999  # a face seen exactly edge-on has no shape to read
# faces, or planes, within this many degrees of each other share a plane (the reader's
# DiceConfig.lean_tolerance, and TableMemory's)
TOLERANCE = 12.0


def face_shape(quad: Sequence[Sequence[float]]) -> np.ndarray:
    """The face shape ``(2,)`` of a square face whose corners, in order round the square, lie
    at ``quad`` ``(4, 2)`` in the image: the affine map that best takes a square to them, read
    as a circle on the face seen from afar (an ellipse whose minor axis, ``cos t`` of its major,
    lies along the direction in which the face's normal leans)."""
    q = np.asarray(quad, float)
    a = np.linalg.lstsq(np.hstack([_CORNERS, np.ones((4, 1))]), q, rcond=None)[0][:2].T
    w, e = np.linalg.eigh(a @ a.T)  # ascending: the ellipse's minor axis first
    cos_t = float(np.sqrt(max(w[0], 0.0) / max(w[1], 1e-12)))
    sin_t = float(np.sqrt(max(0.0, 1.0 - min(cos_t, 1.0) ** 2)))
    ang = float(np.arctan2(e[1, 0], e[0, 0]))
    return np.array([sin_t * np.cos(2 * ang), sin_t * np.sin(2 * ang)])


def view_shapes(shapes: np.ndarray, view: int) -> np.ndarray:
    """Face shapes ``(..., 2)`` as they are in view ``view`` of their crops (0-7, the order of
    :func:`vision.dice.reader.crop_views`: mirrored left to right from 4 on, then turned by
    ``view % 4`` quarter turns). A quarter turn negates a shape (its doubled angle turns by
    180 degrees) and a mirror negates its second part; the map is its own inverse, so it also
    turns a view's shapes back."""
    out = np.array(shapes, copy=True)
    if view >= 4:
        out[..., 1] = -out[..., 1]
    return -out if view % 2 else out


def shape_normals(shapes: np.ndarray) -> np.ndarray:
    """The two image-plane normals ``(N, 2, 2)`` each face shape of ``shapes`` ``(N, 2)``
    allows: ``+-sin(t) * (cos a, sin a)``."""
    s = np.minimum(np.hypot(shapes[:, 0], shapes[:, 1]), _MAX_SIN)
    a = np.arctan2(shapes[:, 1], shapes[:, 0]) / 2
    v = np.stack([s * np.cos(a), s * np.sin(a)], axis=1)
    return np.stack([v, -v], axis=1)


def camera_normals(flat: np.ndarray, centres: np.ndarray, axis: Sequence[float],
                   focal: float | Sequence[float]) -> np.ndarray:
    """The faces' unit normals ``(N, K, 3)`` in the camera's frame, from their image-plane
    normals ``flat`` ``(N, K, 2)`` (as a crop shows them, the line of sight square to it) at
    image points ``centres`` ``(N, 2)``, for a lens of focal length ``focal`` pixels whose axis
    meets the image at ``axis`` (0: a camera far away, every line of sight along its axis).
    A sequence of ``F`` focal lengths gives ``(F, N, K, 3)``, one set per focal length.

    A face seen along a ray off the axis is drawn on the image plane obliquely: each image
    displacement is mapped to the plane square to the ray (by dropping its part along the ray),
    the face's shape read there, and the normal turned back into the camera's frame."""
    focals = np.atleast_1d(np.asarray(focal, float))
    s2 = np.minimum((flat ** 2).sum(axis=-1), _MAX_SIN ** 2)
    out = np.empty((len(focals), *flat.shape[:-1], 3))
    out[focals <= 0] = np.concatenate([flat, np.sqrt(1.0 - s2)[..., None]], axis=-1)
    lens = focals > 0
    if lens.any():
        out[lens] = _through_lens(flat, np.asarray(centres, float), axis, focals[lens])
    return out if np.ndim(focal) else out[0]


def _through_lens(flat: np.ndarray, centres: np.ndarray, axis: Sequence[float],
                  focals: np.ndarray) -> np.ndarray:
    """:func:`camera_normals` ``(F, N, K, 3)`` for the positive focal lengths ``focals``
    ``(F,)``."""
    ray = np.concatenate([(np.asarray(axis, float) - centres) / focals[:, None, None],
                          np.ones((len(focals), len(centres), 1))], axis=-1)  # (F, N, 3)
    ray /= np.linalg.norm(ray, axis=-1, keepdims=True)
    e1 = np.array([1.0, 0.0, 0.0]) - ray[..., :1] * ray
    e1 /= np.linalg.norm(e1, axis=-1, keepdims=True)
    # ray x e1, written out: np.cross's own products and differences, without its overhead
    e2 = np.stack([ray[..., 1] * e1[..., 2] - ray[..., 2] * e1[..., 1],
                   ray[..., 2] * e1[..., 0] - ray[..., 0] * e1[..., 2],
                   ray[..., 0] * e1[..., 1] - ray[..., 1] * e1[..., 0]], axis=-1)
    frame = np.stack([e1, e2, ray], axis=-1)  # (F, N, 3, 3): columns e1, e2, ray
    k = frame[..., :2, :2].swapaxes(-1, -2)[:, :, None]  # (F, N, 1, 2, 2): image -> ray's plane
    ellipse = np.eye(2) - flat[..., :, None] * flat[..., None, :]  # (N, K, 2, 2)
    seen = k @ ellipse @ k.swapaxes(-1, -2)
    w, e = np.linalg.eigh(seen)
    cos_t = np.sqrt(np.clip(w[..., 0] / np.maximum(w[..., 1], 1e-12), 0.0, 1.0))
    u = e[..., :, 0] * np.sqrt(1.0 - cos_t ** 2)[..., None]
    towards = (k @ flat[..., None])[..., 0]
    u = np.where(((u * towards).sum(axis=-1) < 0)[..., None], -u, u)
    local = np.concatenate([u, cos_t[..., None]], axis=-1)  # (F, N, K, 3) in the ray's frame
    return (frame[:, :, None] @ local[..., None])[..., 0]


def _least_angle(cos: np.ndarray) -> np.ndarray:
    """The least angle in degrees ``(...)`` of cosines ``(..., K)`` (a die's K candidates)."""
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0).max(axis=-1)))


def _angles(normal: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Each die's least angle ``(..., M, N)`` from each of the normals ``(..., M, 3)`` over its
    candidate normals ``(..., N, K, 3)``; the leading axes are matched."""
    return _least_angle(np.einsum("...mc,...nkc->...mnk", normal, normals))


def table_normal(normals: np.ndarray, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """The plane most dice share, from each die's candidate normals ``(..., N, K, 3)``: the
    candidate that most dice come within ``tolerance`` degrees of (ties to the least summed
    angle, each clipped at ``tolerance``), refined as the mean of those dice's nearest normals.
    Returns the plane's unit normal ``(..., 3)`` and each die's angle from it ``(..., N)``; the
    leading axes (one per set of dice, as :func:`camera_normals` gives one per focal length)
    are kept."""
    *lead, n, k, _ = normals.shape
    cands = normals.reshape(*lead, n * k, 3)
    ang = _angles(cands, normals)  # (..., N*K, N)
    key = (ang < tolerance).sum(axis=-1) * 1e6 - np.minimum(ang, tolerance).sum(axis=-1)
    best = np.take_along_axis(cands, key.argmax(axis=-1)[..., None, None], axis=-2)  # (..., 1, 3)
    cos = np.einsum("...mc,...nkc->...mnk", best, normals)[..., 0, :, :]  # (..., N, K)
    nearest = np.take_along_axis(normals, cos.argmax(axis=-1)[..., None, None], axis=-2)
    near = _least_angle(cos)  # (..., N): _angles of best, from the cosines at hand
    mean = (nearest[..., 0, :] * (near < tolerance)[..., None]).sum(axis=-2)
    mean /= np.linalg.norm(mean, axis=-1, keepdims=True)
    return mean, _angles(mean[..., None, :], normals)[..., 0, :]


def leans(shapes: np.ndarray, centres: np.ndarray, size: tuple[int, int], *,
          tolerance: float, support: int, focals: Sequence[float],
          table: TablePlane | None = None) -> tuple[np.ndarray, TablePlane | None]:
    """Each die's lean ``(N,)`` in degrees from the table's plane, and the plane the dice
    showed themselves (None when they showed none).

    The plane is the one at least ``support`` of the dice share. Dice that share none (three
    dice, one of them leaning) are judged against ``table`` when it is given (the plane
    earlier frames of this camera showed, :class:`TableMemory`; its normal seen through its
    own focal length), else not at all (NaN for every die).

    Parameters
    ----------
    shapes : the dice's face shapes ``(N, 2)`` (:func:`face_shape`).
    centres : their top faces' centres ``(N, 2)`` in image pixels.
    size : the image's ``(width, height)``; the lens's axis is taken at its centre.
    tolerance : dice within this many degrees of a plane share it.
    support : the least number of dice that must share the plane.
    focals : the focal lengths tried, each a multiple of the image's longer side (0: a camera
        far away); the one whose plane most dice share (then with the least summed angle, then
        the first) is taken.
    table : a plane found in frames of this ``size``.
    """
    n = len(shapes)
    if n == 0 or (n < support and table is None):
        return np.full(n, np.nan), None
    flat = shape_normals(np.asarray(shapes, float))
    axis = (size[0] / 2.0, size[1] / 2.0)
    centres = np.asarray(centres, float)
    if n >= support:
        normals = camera_normals(flat, centres, axis,
                                 np.asarray(focals, float) * max(size))  # (F, N, K, 3)
        planes, angles = table_normal(normals, tolerance)  # (F, 3), (F, N)
        count = (angles < tolerance).sum(axis=-1)
        summed = np.minimum(angles, tolerance).sum(axis=-1)
        best = int(np.lexsort((summed, -count))[0])  # most dice, then least summed, then first
        if count[best] >= support:
            plane = TablePlane(tuple(float(v) for v in planes[best]),  # type: ignore[arg-type]
                               float(focals[best]), (int(size[0]), int(size[1])))
            return angles[best], plane
    if table is None:
        return np.full(n, np.nan), None
    normals = camera_normals(flat, centres, axis, table.focal * max(size))  # (N, K, 3)
    return _angles(np.asarray(table.normal, float)[None], normals)[0], None


class TableMemory:
    """The table's plane over a camera's frames: the planes the frames' dice showed
    (:func:`leans`), the last ``keep`` of them, agreed on. A fixed camera sees one plane, yet
    each frame's is only as good as the face net's shapes of the few dice in it, and three
    dice with one leaning can share a plane through some trial focal length. The memory's
    plane is the one the most remembered planes lie within ``tolerance`` degrees of, at the
    focal length most of them were found at, when at least ``agree`` of them do: one odd
    frame moves it little, and a camera moved or changed takes over once its planes are the
    most.

    >>> memory = TableMemory()
    >>> reading = memory.read(read_dice, frame)             # doctest: +SKIP
    """

    def __init__(self, *, tolerance: float = TOLERANCE, keep: int = 30, agree: int = 3) -> None:
        if keep < agree or agree < 1:
            raise ValueError(f"TableMemory: keep ({keep}) must be at least agree ({agree}) >= 1")
        self.tolerance, self.keep, self.agree = tolerance, keep, agree
        self._planes: list[TablePlane] = []
        self.plane: TablePlane | None = None

    def read(self, read_dice: Callable[..., DiceReading], image: np.ndarray) -> DiceReading:
        """``read_dice(image)``, given the memory's plane as ``table`` when it has one (a
        reader whose readings never show a plane is called with the image alone), and the
        plane its reading shows remembered."""
        reading = (read_dice(image) if self.plane is None
                   else read_dice(image, table=self.plane))
        self.update(getattr(reading, "table", None))
        return reading

    def update(self, plane: TablePlane | None) -> TablePlane | None:
        """Remember ``plane`` (None: the frame showed none, nothing changes); a plane of
        another frame size starts the memory again. Returns the memory's plane."""
        if plane is None:
            return self.plane
        if self._planes and tuple(self._planes[-1].size) != tuple(plane.size):
            self._planes.clear()
        self._planes = [*self._planes, plane][-self.keep:]
        focals = [p.focal for p in self._planes]
        # the most common focal length, the latest among equals
        focal = max(reversed(focals), key=focals.count)
        normals = np.array([p.normal for p in self._planes if p.focal == focal])
        near = _least_angle(np.einsum("mc,nc->mn", normals, normals)[..., None]) < self.tolerance
        best = int(np.argmax(near.sum(axis=1)))
        if near[best].sum() < self.agree:
            self.plane = None
            return None
        mean = normals[near[best]].mean(axis=0)
        self.plane = TablePlane(tuple(float(v) for v in mean / np.linalg.norm(mean)),  # type: ignore[arg-type]
                                focal, plane.size)
        return self.plane
