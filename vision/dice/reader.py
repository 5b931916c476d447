"""The dice reader: every d6 in a frame, with its top-face value, body colour, box and state.

Two small ONNX networks trained on rendered scenes (``models/dice/train.py``):

1. a centre-heatmap detector (stride 4) on the frame scaled so that its longer side is at most
   ``DiceConfig.work_size``: one peak per die top face, with the face's box size, and a map of
   where a hand covers the table (the reading's ``hand`` flag); run again over that image
   shrunk by half (``mid_scale``) and to a quarter (``coarse_scale``) for the dice too large
   for the first pass;
2. a crop classifier on a ``CROP x CROP`` patch around each found face, cut from the full-size
   frame: ``none`` (not a die), ``1``-``6``, ``cocked``, ``unreadable``, and whether the die is
   translucent; a weak detector peak (``weak_threshold``) is kept only when it reads a value
   surely (``weak_value``);
3. a second look (``DiceConfig.look_face``) at each kept face the classifier cannot read, and
   at each strong candidate it rejects (``look_rejected``): the detector again over a window
   around it, at a scale of its own, for a better box, whose crop replaces the first when it
   reads a value surely;
4. the lean check (``lean_degrees``): a small face net (``FACE_CROP``) reads how each found
   die's top face leans from the line of sight, and a die read with a value whose face leans
   from the plane the other dice share (:mod:`vision.dice.lean`) is reported ``"cocked"``
   without a value: a die leaning on another or on an edge has no face up.

The body colour is measured classically on the face (pips removed) in HSV; a die the
classifier finds translucent is named ``"translucent"``.

Convention: images are BGR ``uint8`` ``(H, W, 3)`` (grey and other dtypes are accepted and
converted by :func:`vision.imageio.as_bgr`); boxes are ``[x0, y0, x1, y1]`` in pixels of the
input image, origin top-left.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from vision.dice.lean import TOLERANCE, leans, view_shapes
from vision.imageio import as_bgr
from vision.onnxmodel import int8_exact, onnx_session
from vision.readings import DiceReading, Die, TablePlane

__all__ = ["CLASSES", "CROP", "UPRIGHT_VIEWS", "DiceConfig", "candidates", "classify",
           "crop_batch", "crop_views", "die_color", "face_shapes", "lean_angles", "read_dice",
           "share_inside"]

CLASSES = ("none", "1", "2", "3", "4", "5", "6", "cocked", "unreadable")
CROP = 40  # classifier input side in pixels
STRIDE = 4  # detector output stride
CROP_CONTEXT = 1.5  # crop side / top-face box side
FACE_CROP = 48  # the face net's input side in pixels (a square window: the face keeps its shape)
# the views (crop_views) that keep the image's up: the crop as it is and mirrored left to right
UPRIGHT_VIEWS = (0, 4)
MODEL_DIR = Path(__file__).resolve().parents[2] / "models" / "dice"


def float_file(folder: str | Path, net: str) -> Path:
    """``net``'s ("detector", "classifier", "face") float file in ``folder``, as trained."""
    return Path(folder) / f"dice_{net}.onnx"


def int8_file(folder: str | Path, net: str) -> Path:
    """``net``'s int8 copy in ``folder`` (``models/dice/quantize.py``)."""
    return Path(folder) / f"dice_{net}.int8.onnx"


def net_file(folder: str | Path, net: str) -> Path:
    """The file the reader runs for ``net`` from ``folder``: its int8 copy where the folder
    has one and this CPU's 8-bit kernels are exact (:func:`vision.onnxmodel.int8_exact`),
    else its float file."""
    int8 = int8_file(folder, net)
    return int8 if int8_exact() and int8.is_file() else float_file(folder, net)


@dataclass(frozen=True)
class DiceConfig:
    """Every threshold of the dice reader.

    Attributes
    ----------
    work_size : the frame is shrunk (never enlarged) so that its longer side is at most this
        many pixels before detection.
    min_side : frames smaller than this (a crop of one die) are enlarged to it.
    peak_threshold : minimum detector heatmap score of a die centre (of a weak peak, below
        it: ``weak_threshold``).
    none_threshold : a candidate whose "not a die" probability exceeds this is dropped (1:
        never; ``die_threshold`` alone decides, and its product already drops every candidate
        whose "not a die" probability exceeds 1 - ``die_threshold``, 0.65). 1 since session 58
        (rule DDDDDD: 12 more dice read right, one more false positive and two more dice not
        flat read with a value on an unseen rendered sample of eighteen sets, the real photos
        read the same; 0.5 before; models/dice/HISTORY.md).
    die_threshold : a candidate is kept only when its detector score times the classifier's
        "is a die" probability reaches this.
    value_threshold : minimum class probability to report a value (given that the crop is
        a die, ``value_given_die``); below it the die is ``unreadable`` (never a guess).
    value_given_die : measure a kept die's value against ``value_threshold`` as its
        probability given that the crop is a die, ``p(value) / (1 - p(none))``, instead of
        ``p(value)`` itself. Whether the crop is a die at all is decided before, by
        ``none_threshold`` and ``die_threshold``; a die the classifier also finds somewhat
        like "not a die" (a blurred or rounded one) would otherwise lose its value for that
        doubt, which the reader has already settled, while one torn between two values
        still reads none. On since session 37, with ``value_threshold`` 0.55 (0.5 on
        ``p(value)`` before; rule KKKK: 8 more dice read right, 7 fewer wrong values and one
        false positive fewer on an unseen rendered sample of thirteen sets, as many nulls;
        models/dice/HISTORY.md). The weak peaks' and the second look's bars stay on
        ``p(value)``: they decide whether a crop is a die at all.
    unreadable_min_score : a candidate that cannot be read (cocked, unreadable, or below
        ``value_threshold``) is reported only when its detector score reaches this: a weak
        peak that is not clearly a die is more likely not a die at all.
    rotations : the classifier reads each crop in this many of its eight views and averages:
        turned by 0, 90, 180, 270 degrees, then mirrored left to right and turned so again
        (1-8; :func:`crop_views`). A die face reads the same turned or mirrored (a mirrored 2
        or 3 is the same value along the other diagonal), and the classifier is trained on
        crops turned and mirrored at random. 8 since session 45 (rule DDDDD: 6 more dice read
        right, 4 fewer wrong values and 5 more false positives on an unseen rendered sample of
        seventeen sets, 7 fewer cocked or unreadable dice read with a value; about 2 ms more
        per 1280x720 frame, for the unsure crops' four more views; 4 before;
        models/dice/HISTORY.md).
    upright : read only those of the ``rotations`` views that keep the image's up
        (:data:`UPRIGHT_VIEWS`: unturned, and mirrored left to right), for a classifier
        trained on crops never turned (``models/dice/train.py --upright``): a camera that sees
        a die from an angle sees its side faces below its top face. Off: such a net, the
        committed one continued 40 minutes so, found and read more rendered dice but kept more
        that are not dice, and read the real photos worse (rules UUUUU, VVVVV;
        models/dice/HISTORY.md, session 54).
    turn_confidence : a crop whose unturned reading gives one class at least this probability,
        and is as sure whether the die is translucent (that probability at least this, or at
        most one minus it), keeps that reading and is not read in its other views (infinity:
        every crop in every view). The classifier learns a target of 0.955 for the true class
        (label smoothing 0.05). 0.92 since session 61 (rule MMMMMM; 0.95 before, without the
        translucent condition): about 8 fewer crops read a 1280x720 frame of the bench, the
        same score on an unseen rendered sample within its noise; read once, a crop's
        translucent probability alone named black and red dice translucent, hence that
        condition (models/dice/HISTORY.md, session 61).
    crop_aspect : how far the classifier's crop undoes the shape of the top-face box
        (:func:`crop_batch`'s ``aspect``: 0 a square window, 1 the box's shape). 0.75 (since
        session 19; 0.5 in sessions 16-18) mostly undoes a face foreshortened or stretched in
        the frame. The classifier must be read with the value it was trained for
        (``models/dice/train.py --crop-aspect``, whose default is this one): the committed
        one was trained on crops cut around each top face's own box at 0.75
        (models/dice/HISTORY.md, "Session 19").
    crop_min_fill : the classifier's crop of a face much narrower one way than the other (a
        top face seen as a sliver by a low camera) is narrowed along the face's shorter side
        so that the face spans at least this share of the crop there of what it spans along
        the longer side (:func:`crop_batch`'s ``min_fill``; 0: never). At ``crop_aspect``
        0.75 it touches only boxes whose sides are in a ratio under ``crop_min_fill ** 4``
        (0.41 at 0.8, a face tilted about 65 degrees or more), whose crop is otherwise mostly
        the die's front face and the table. The committed classifier (CLK2, session 47)
        descends from one trained without it (CTLM), moved part of the way towards
        continuations on crops cut so (``models/dice/train.py --crop-min-fill``; the model
        card's "How the committed files were made"). 0.8 since session 46 (rule GGGGG: 7
        more dice read right, one more wrong value and one more false positive on an unseen
        rendered sample of eighteen sets, 10 of the right on the low camera's small dice;
        0 before; models/dice/HISTORY.md).
    coarse_scale : a second, coarse detector pass over the work image shrunk by this factor,
        in an onnxruntime session of its own (0: none). The detector learnt dice up to about
        110 px in its 192 px scenes; a die filling a close-up, or lying close under a phone,
        is larger than that in the work image, and the first pass misses it or fires on a
        side face or a big pip. 0.25 (since session 25) reads such dice and changes nothing
        measurable on the other rendered sets, for about 0.6-0.8 ms per 1280x720 frame, paid
        for by the faster shrink of the same session (models/dice/HISTORY.md, "Sessions 24
        and 25").
    coarse_min_side : a coarse-pass candidate is kept only when the geometric mean of its
        box's sides reaches this many work-image pixels, the sizes the first pass reads
        poorly; the kept ones are pooled with the first pass's before the one suppression.
    mid_scale : a middle pass between the first and the coarse one (0: none), over the work
        image shrunk by this factor, its boxes kept from ``mid_min_side`` work-image pixels
        and treated as the coarse pass's (found whole; the first pass's dice inside them are
        their parts). A die of 100-250 work-image pixels is beyond the first pass's learnt
        sizes and, at a quarter, small enough for the coarse pass to miss; at half it is a
        size the detector knows. 0.5 since session 32 (rule ZZZ: 37 more dice read right on
        an unseen rendered sample, 20 of them on the set of dice of 100-220 px, two fewer
        wrong values, as many false positives; about 1 ms per 1280x720 frame;
        models/dice/HISTORY.md).
    mid_min_side : the middle pass's ``coarse_min_side``: 64, as dice under it are well
        inside the first pass's sizes.
    coarse_part_share : a die found by the first pass with at least this share of its box
        inside the box of a die found whole, by a coarser pass or by the second look (all
        kept by the classifier), is taken for a part of that large die (a peak on one of its
        big pips or on part of its face) and dropped (the second look's since session 30,
        models/dice/HISTORY.md).
    group_parts : a die found whole (by a coarser pass or the second look) with at least this
        many of its parts (``coarse_part_share``) read with a value more surely than itself
        (a greater confidence) is taken for a group of dice that the coarse pass saw as one
        large die, not for a die: it is dropped and its parts are kept (0: never). A pale
        field holding many dice (a sheet of paper on a dark table, a light desk) is, at a
        quarter of the frame's size, a large light square with dark dots; the parts of a real
        large die (its big pips, part of its face) are read less surely than the die itself.
        1 since session 44 (rule ZZZZ, 2: 4 more dice read right and one wrong value fewer on
        an unseen rendered sample of seventeen sets, all on the set of dice on a sheet of
        paper; rule AAAAA, 1 against 2: 2 more right and 2 fewer wrong values on a second
        unseen sample, on the plain tables and the low camera's; models/dice/HISTORY.md).
    look_face : the second look (0: none). A kept candidate the classifier cannot read (no
        value at ``value_threshold``, or cocked or unreadable) is looked at again: the
        detector runs over a ``look_window`` square around it, scaled so that its face is
        this many pixels (a size the detector learnt well, at a resolution of its own instead
        of the work image's), and the peak nearest the window's centre, within half a face,
        gives a new box. About a third of the rendered dice read without a value are lost to
        a box that is off (models/dice/HISTORY.md, "Session 26"). 52 since session 27
        (rule KKK, "Session 27").
    look_rejected : the second look is also taken at a candidate the classifier rejects
        ("not a die", or too weak a die) when its detector score reaches this (infinity:
        never): a box that is off can make a die's crop look like no die. The new crop must
        pass the same bar as any second look (``look_threshold``, not "none"). 0.5 since
        session 32 (rule YYY: 19 more dice read right on an unseen rendered sample of
        thirteen sets, no more wrong values, one more false positive;
        models/dice/HISTORY.md).
    look_window : the second look's window side in pixels (rounded up to a multiple of 16).
    look_threshold : the second look's crop replaces the first (box, reading and colour)
        only when it reads a value at this probability or more and is not "none": surer
        than ``value_threshold``, as the second look's gains at 0.6 came with one wrong value
        in ten. The boxes are suppressed once more (``nms_iou``) afterwards: the parts of
        one large die can each find that die, and any other kept die lying inside a die the
        look found is dropped as its part (``coarse_part_share``).
    weak_threshold : a weak peak, of detector score at least this but under
        ``die_threshold``, is also given to the classifier (infinity: never), and kept only
        as a die read with a value at ``weak_value`` or more: a die the detector is unsure
        of (a pale die on a pale table, a soft webcam frame) that the classifier reads
        surely. Any candidate from this score up is kept when it reads so, so that a
        stronger peak never loses where a weaker one would be kept. 0.25 since session 33
        (rules AAAA and BBBB: 29 more dice read right on an unseen rendered sample of
        thirteen sets, one more wrong value, five more false positives;
        models/dice/HISTORY.md).
    weak_value : the value probability at which a candidate from ``weak_threshold`` up is
        kept (and without which a weak peak is not). 0.8 since session 40 (rule RRRR: 29
        more dice read right on an unseen rendered sample of fifteen sets, one more wrong
        value, 21 more false positives; 0.9 in sessions 33-39; models/dice/HISTORY.md).
    max_dice : at most this many dice per frame (strongest first).
    nms_iou : two candidates whose boxes overlap more than this are one die.
    hand_threshold : a detector cell is hand when its hand probability reaches this.
    hand_min_share : the reading's ``hand`` is set when at least this share of the detector's
        cells is hand.
    translucent_threshold : a die whose "translucent" probability reaches this is named
        ``"translucent"`` instead of its hue. 0.8 since session 58 (rule FFFFFF: on an unseen
        rendered sample of eighteen sets the black dice named translucent fall from 118 to 79
        of 1112, other opaque dice so named from 286 to 184, for 73 of 2054 translucent dice
        named by their hue; 0.7 before, chosen in run 10; models/dice/HISTORY.md).
    neutral_saturation : a body whose median HSV saturation (0-255) is under this is named
        black, grey or white by its brightness, not by its hue (:func:`die_color`). A white
        or ivory die takes on the light's colour and the camera's white balance: on rendered
        tables and close-ups (colour casts of up to about 15% a channel) the white dice's
        body saturation has a median of 42 and a 95th percentile of 83, where the 5th
        percentile of the purple dice, the palest colour drawn, is 86, of the green ones 113
        and of the others 143-162. 85 since session 58 (rule EEEEEE: on an unseen rendered
        sample of eighteen sets 675 more of 12460 dice named as drawn, the white dice named
        a hue 632 to 88 of 2239, other dice named yellow 355 to 162, 4 yellow dice of 976 named
        white, black unchanged; 100 lost 12 yellow dice, rule CCCCCC; 55 before;
        models/dice/HISTORY.md, "Session 58").
    lean_degrees : a die read with a value whose top face leans more than this many degrees
        from the plane the other dice share is reported ``"cocked"``, without a value
        (:mod:`vision.dice.lean`; infinity: never). A crop of one die cannot tell a die
        leaning 30 degrees from a flat die under a camera tilted 30 degrees; the other dice
        on the table can. The face net (``face_path``, ``models/dice/train_face.py``) gives
        each found die's face shape, read in ``lean_views`` of its crop's views.
        25 degrees read in two views since session 55 (rule XXXXX, ``models/dice/HISTORY.md``):
        on an unseen rendered sample of eighteen sets, 96 fewer dice not flat read with a
        value (370 to 274) and 16 fewer wrong values, for 60 fewer dice read right (flat
        dice whose faces the net misjudges); about 3 ms more per 1280x720 frame.
    lean_table_degrees : the bar of ``lean_degrees`` for dice judged against the table's
        plane earlier frames of the camera showed (:func:`read_dice`'s ``table``), when too
        few of them share a plane of their own: Doom Cat's three dice with one leaning, whose
        two flat ones do not show the plane by themselves. Higher than ``lean_degrees``, as a
        flat die whose face the net misjudges has no other dice of its frame to agree with.
        35 since session 64 (rendered triples of a leaning die and two flat dice, or of three
        flat dice, cut from scenes of 6-9 dice, the plane from the scene's other dice, seeds
        10100-10399: 72 of 340 leaning dice read with a value reported cocked, where none
        was before, and 12 of 1542 flat dice of flat triples; models/dice/HISTORY.md).
    lean_tolerance : dice whose faces lie within this many degrees of a plane share it.
    lean_support : the least number of dice that must share the plane (the die itself
        included when it lies on it); with fewer dice in view, none is judged, unless
        :func:`read_dice` is given the plane earlier frames of the camera showed (``table``).
    lean_focals : the focal lengths tried for the camera, as multiples of the frame's
        longer side (0: far away; 0.55 is a field of view of about 85 degrees across).
    lean_views : the face net reads each crop in this many of its views (1-8,
        :func:`crop_views`) and averages the shapes, each turned back.
    detector_path, classifier_path, face_path : the nets' ONNX files. Since session 57 the
        classifier runs as an int8 copy of the trained float net (:func:`net_file`,
        ``models/dice/quantize.py``) where this CPU's 8-bit kernels are exact: about 2 ms
        less per 1280x720 frame, for 7 fewer of score' on an unseen rendered sample of
        eighteen sets (rule BBBBBB, ``models/dice/HISTORY.md``); since session 59 the face
        net too: about 0.4 ms less per frame, for 3 fewer of score' on an unseen sample of
        eighteen sets, the real photos read die for die the same (rule HHHHHH). Elsewhere
        the float nets, which read as before. The detector's int8 copy was slower: it runs
        in float.
    """

    work_size: int = 512
    min_side: int = 96
    peak_threshold: float = 0.3
    none_threshold: float = 1.0
    die_threshold: float = 0.35
    value_threshold: float = 0.55
    value_given_die: bool = True
    unreadable_min_score: float = 0.5
    rotations: int = 8
    upright: bool = False
    turn_confidence: float = 0.92
    crop_aspect: float = 0.75
    crop_min_fill: float = 0.8
    coarse_scale: float = 0.25
    coarse_min_side: float = 96.0
    mid_scale: float = 0.5
    mid_min_side: float = 64.0
    coarse_part_share: float = 0.7
    group_parts: int = 1
    look_face: float = 52.0
    look_window: int = 128
    look_rejected: float = 0.5
    look_threshold: float = 0.8
    weak_threshold: float = 0.25
    weak_value: float = 0.8
    max_dice: int = 40
    nms_iou: float = 0.3
    hand_threshold: float = 0.5
    hand_min_share: float = 0.02
    translucent_threshold: float = 0.8
    neutral_saturation: float = 85.0
    lean_degrees: float = 25.0
    lean_table_degrees: float = 35.0
    lean_tolerance: float = TOLERANCE
    lean_support: int = 3
    lean_focals: tuple[float, ...] = (0.0, 2.0, 1.2, 0.8, 0.55)
    lean_views: int = 2
    detector_path: str = str(float_file(MODEL_DIR, "detector"))
    classifier_path: str = field(default_factory=lambda: str(net_file(MODEL_DIR, "classifier")))
    face_path: str = field(default_factory=lambda: str(net_file(MODEL_DIR, "face")))


@functools.cache
def _default_config() -> DiceConfig:
    """The default :class:`DiceConfig`, made once per process: its net paths look for the
    int8 copy and ask the CPU (:func:`net_file`), which need not be done again every frame."""
    return DiceConfig()


def _session(path: str, role: str = "") -> object:
    return onnx_session(path, "dice model (train it with models/dice/train.py)", role=role)


def crop_batch(image: np.ndarray, boxes: Sequence[Sequence[float]],
               size: int = CROP, aspect: float = DiceConfig.crop_aspect,
               context: float = CROP_CONTEXT,
               min_fill: float = DiceConfig.crop_min_fill) -> np.ndarray:
    """Crops ``(N, size, size, 3)`` centred on each box, replicating the border where a crop
    leaves the image. The window's side along each axis is ``context`` x ``L`` x
    ``(s / L) ** aspect``, ``s`` the box's side along that axis and ``L`` its longer side:
    ``aspect`` 0 gives a square window (the face keeps the box's shape), 1 a window of the
    box's shape (a face foreshortened or stretched in the frame is squared up again).
    ``min_fill`` (0: none) narrows the window along the shorter side where need be so that
    the face spans at least that share of the crop along it of what it spans along the longer
    side: at most ``context`` x ``s / min_fill``. The defaults of both are the reader's
    (:class:`DiceConfig`): the classifier's cut.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels of ``image``, origin top-left, read as
    doubles.
    """
    out = np.empty((len(boxes), size, size, 3), np.uint8)
    # Python floats: the same doubles, without numpy scalar overhead
    for i, (x0, y0, x1, y1) in enumerate(np.asarray(boxes, np.float64).reshape(-1, 4).tolist()):
        bw, bh = max(x1 - x0, 2.0), max(y1 - y0, 2.0)
        longer = max(bw, bh)
        fx, fy = (bw / longer) ** aspect, (bh / longer) ** aspect
        if min_fill > 0:
            fx, fy = min(fx, bw / longer / min_fill), min(fy, bh / longer / min_fill)
        sx = size / (context * longer * fx)
        sy = size / (context * longer * fy)
        cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
        m = np.float32([[sx, 0, size / 2.0 - sx * cx], [0, sy, size / 2.0 - sy * cy]])
        interp = cv2.INTER_AREA if min(sx, sy) < 1 else cv2.INTER_LINEAR
        cv2.warpAffine(image, m, (size, size), dst=out[i], flags=interp,
                       borderMode=cv2.BORDER_REPLICATE)
    return out


def _prep(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 -> contiguous ``(N, 3, H, W)`` float32 ``x / 255 - 0.5``. The
    bytes are put in the nets' order before they are widened (a float array in the frame's
    order would be copied again by onnxruntime, which needs it contiguous)."""
    x = np.ascontiguousarray(batch.transpose(0, 3, 1, 2)).astype(np.float32)
    np.divide(x, 255.0, out=x)
    np.subtract(x, 0.5, out=x)
    return x


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _shrink(image: np.ndarray, size: tuple[int, int], scale: float) -> np.ndarray:
    """``image`` resized to ``size`` (``scale`` = new / old side). A shrink first takes the
    largest whole factor ``f >= 2`` with ``f <= 1 / scale`` on OpenCV's fast whole-factor
    INTER_AREA path, leaving out the last ``w % f`` columns and ``h % f`` rows (under ``f``
    pixels). The rest of the way (a factor under 2) is an area average too: where each new
    pixel spans at most two old ones along each axis (1280x720 or 1920x1080 to 512x288,
    640x480 to 512x384), by :func:`cv2.remap` sampling each pair at the point whose bilinear
    weights are the pair's area weights (within a few grey levels of INTER_AREA, whose
    general path is about three times slower), else by INTER_AREA itself."""
    if scale >= 1:
        return cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)
    f = int(1.0 / scale + 1e-9)
    h, w = image.shape[:2]
    if f >= 2 and w // f >= size[0] and h // f >= size[1]:
        image = cv2.resize(image[:h - h % f, :w - w % f], (w // f, h // f),
                           interpolation=cv2.INTER_AREA)
        if image.shape[1::-1] == size:
            return image
    maps = _area_maps(image.shape[1::-1], size)
    if maps is None:
        return cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return cv2.remap(image, maps[0], maps[1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)


def _area_taps(old: int, new: int) -> np.ndarray | None:
    """Along one axis shrunk from ``old`` to ``new`` pixels: for each new pixel the position
    ``k + t`` whose linear interpolation weighs old pixels ``k`` and ``k + 1`` as their
    shares of the new pixel's span ``[i s, (i + 1) s)``, ``s = old / new``; None when a span
    touches three old pixels (or ``new >= old``)."""
    if new >= old:
        return None
    s = old / new
    start = np.arange(new) * s
    k = np.floor(start + 1e-9)
    if (np.ceil((start + s) - 1e-9) - k > 2).any():
        return None
    return (k + np.clip(start + s - (k + 1), 0.0, None) / s).astype(np.float32)


@functools.lru_cache(maxsize=8)
def _area_maps(old: tuple[int, int], new: tuple[int, int]) -> tuple[np.ndarray, ...] | None:
    """:func:`cv2.remap`'s fixed-point maps of an area shrink from ``old`` to ``new``
    (width, height) pixels by two-pixel spans (:func:`_area_taps`), or None."""
    xs, ys = _area_taps(old[0], new[0]), _area_taps(old[1], new[1])
    if xs is None or ys is None:
        return None
    mx, my = np.meshgrid(xs, ys)
    return cv2.convertMaps(mx, my, cv2.CV_16SC2)


def _detect(image: np.ndarray, config: DiceConfig,
            ) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray]:
    """Candidate top-face boxes ``(N, 4)`` in image pixels, their scores ``(N,)``, whether
    a hand is in view (False with a detector that has no hand channel), and which boxes
    ``(N,)`` come from a coarser pass: the first pass over the work image and the large
    boxes of the middle (``mid_scale``) and coarse (``coarse_scale``) passes."""
    h, w = image.shape[:2]
    scale = min(1.0, config.work_size / max(h, w))
    if max(h, w) < config.min_side:
        scale = config.min_side / max(h, w)
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    small = image if (sw, sh) == (w, h) else _shrink(image, (sw, sh), scale)
    boxes, scores, hand = _pass(small, scale, config)
    whole = np.zeros(len(boxes), bool)  # found whole: by a coarser pass
    for factor, min_side, role in ((config.mid_scale, config.mid_min_side, "mid"),
                                   (config.coarse_scale, config.coarse_min_side, "coarse")):
        if factor <= 0:
            continue
        cw, ch = max(1, round(sw * factor)), max(1, round(sh * factor))
        more, more_scores, _ = _pass(_shrink(small, (cw, ch), factor), scale * factor, config,
                                     role, read_hand=False)
        large = _side(more) * scale >= min_side
        boxes = np.concatenate([boxes, more[large]])
        scores = np.concatenate([scores, more_scores[large]])
        whole = np.concatenate([whole, np.ones(int(large.sum()), bool)])
    # a peak on the padding is no die
    keep = ((boxes[:, 0] + boxes[:, 2]) / 2 < w) & ((boxes[:, 1] + boxes[:, 3]) / 2 < h)
    boxes, scores, whole = boxes[keep], scores[keep], whole[keep]
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
    return boxes, scores, hand, whole


def _side(boxes: np.ndarray) -> np.ndarray:
    """The geometric mean of each box's width and height."""
    return np.sqrt((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))


def _pass(small: np.ndarray, scale: float, config: DiceConfig, role: str = "", *,
          read_hand: bool = True) -> tuple[np.ndarray, np.ndarray, bool]:
    """One detector pass over ``small``, the image resized by ``scale``: its peaks' boxes in
    the image's pixels (neither clipped nor checked against the padding), their scores, and
    the hand flag (False unless ``read_hand``: the coarser passes' is never used). ``role`` names
    the pass's own onnxruntime session."""
    sh, sw = small.shape[:2]
    pw, ph = -sw % 16, -sh % 16
    if pw or ph:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    sess = _session(config.detector_path, role)
    out = sess.run(None, {"input": _prep(small[None])})[0][0]  # type: ignore[attr-defined]
    hand = False
    if read_hand and out.shape[0] > 3:  # hand channel, over the frame without its padding
        cells = _sigmoid(out[3, :max(1, sh // STRIDE), :max(1, sw // STRIDE)])
        hand = bool((cells >= config.hand_threshold).mean() >= config.hand_min_share)
    boxes, scores = _peaks(out, min(config.peak_threshold, config.weak_threshold))
    return boxes / scale, scores, hand


def _peaks(out: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The boxes ``(N, 4)`` (in the detector input's pixels) and scores ``(N,)`` of the local
    maxima of one detector output ``(C, H / 4, W / 4)`` that reach ``threshold``."""
    heat = _sigmoid(out[0])
    # the cells (flat indices: np.nonzero of a 2-D mask costs more than the rest) that reach
    # the threshold and their 3x3 neighbourhood's maximum
    cells = np.flatnonzero((heat >= threshold) & (heat == cv2.dilate(heat, None)))
    if len(cells) == 0:
        return np.zeros((0, 4)), np.zeros(0)
    ys, xs = np.divmod(cells, heat.shape[1])
    centre = (np.stack([xs, ys], 1) + 0.5) * STRIDE
    # half the box's width and height
    half = np.exp(out[1:3].reshape(2, -1)[:, cells]).T * (STRIDE / 2)
    return np.hstack([centre - half, centre + half]), heat.reshape(-1)[cells]


def _nms(boxes: np.ndarray, scores: np.ndarray, iou: float, limit: int) -> list[int]:
    order = np.argsort(-scores).tolist()
    rows = boxes.tolist()  # Python floats: the same doubles, without numpy scalar overhead
    areas = [(x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in rows]
    keep: list[int] = []
    for i in order:
        if len(keep) >= limit:
            break
        x0, y0, x1, y1 = rows[i]
        ok = True
        for j in keep:
            bx0, by0, bx1, by1 = rows[j]
            xx0, yy0 = max(x0, bx0), max(y0, by0)
            xx1, yy1 = min(x1, bx1), min(y1, by1)
            inter = max(0.0, xx1 - xx0) * max(0.0, yy1 - yy0)
            if inter / max(areas[i] + areas[j] - inter, 1e-6) > iou:
                ok = False
                break
        if ok:
            keep.append(i)
    return keep


def candidates(image: np.ndarray, config: DiceConfig) -> tuple[np.ndarray, np.ndarray, bool]:
    """The detector's stage of :func:`read_dice`: the top-face boxes ``(N, 4)`` the classifier
    is given, their detector scores ``(N,)`` (strongest first, one box per die after
    non-maximum suppression, at most ``max_dice``), and whether a hand is in view.

    A peak below ``die_threshold`` is not a candidate unless it reaches ``weak_threshold``
    (a weak peak, kept only if the classifier reads a sure value): the classifier's "is a
    die" probability is at most 1, so it could never be kept otherwise. The trainer mines
    the classifier's hard negatives with it (``models/dice/train.py --mine-negatives``).

    Convention: ``image`` BGR ``uint8``; boxes ``[x0, y0, x1, y1]`` in its pixels.
    """
    boxes, scores, hand, _ = _candidates(image, config)
    return boxes, scores, hand


def _candidates(image: np.ndarray, config: DiceConfig,
                ) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray]:
    """:func:`candidates`, and which of the boxes come from a coarser pass (found whole)."""
    boxes, scores, hand, whole = _detect(image, config)
    keep = _nms(boxes, scores, config.nms_iou, config.max_dice)
    floor = min(config.die_threshold, config.weak_threshold)
    keep = [i for i in keep if scores[i] >= floor]
    return boxes[keep], scores[keep], hand, whole[keep]


def share_inside(box: Sequence[float], others: Sequence[Sequence[float]]) -> float:
    """The largest share of ``box``'s area that lies inside one of ``others`` (0 if none, or
    for a box of no area). Boxes ``[x0, y0, x1, y1]``."""
    x0, y0, x1, y1 = box
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    return max((max(0.0, min(x1, o[2]) - max(x0, o[0])) * max(0.0, min(y1, o[3]) - max(y0, o[1]))
                for o in others), default=0.0) / area


def die_color(face: np.ndarray, neutral_saturation: float = DiceConfig.neutral_saturation,
              ) -> str:
    """Name the body colour of a die from a BGR patch of its top face (pips are ignored).

    The face's pixels are split in two by Otsu's threshold on lightness; the larger part is
    the body. A dark body is black; a saturation under ``neutral_saturation`` (0-255) gives
    grey or white by brightness; else the hue names the colour.
    """
    if face.size == 0:
        return "unknown"
    hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV).reshape(-1, 3)
    grey = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY).reshape(-1)
    t, _ = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    light = grey > t
    body = light if 2 * np.count_nonzero(light) >= light.size else ~light
    if np.count_nonzero(body) < 3:
        body = np.ones_like(light)
    hue, sat, val = _median(hsv[body])
    if val < 70:
        return "black"
    if sat < neutral_saturation:
        return "white" if val > 150 else "grey"
    if hue < 8 or hue >= 165:
        return "red"
    if hue < 19:
        return "orange"
    if hue < 35:
        return "yellow"
    if hue < 85:
        return "green"
    if hue < 130:
        return "blue"
    return "purple"


def _median(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=0)`` of ``(N, C)`` values (float64, the mean of the two middle
    ones for an even ``N``), in one partition of every column."""
    lo, hi = (len(values) - 1) // 2, len(values) // 2
    part = np.partition(values, (lo, hi), axis=0)
    return (part[lo].astype(np.float64) + part[hi]) / 2


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def crop_views(crops: np.ndarray, views: Sequence[int]) -> np.ndarray:
    """The crops ``(N, H, W, C)`` in each of ``views`` (0-7), one after another: view ``k``
    is the crop mirrored left to right when ``k >= 4``, then turned by ``90 * (k % 4)``
    degrees counter-clockwise (the eight symmetries of a square). A crop that is not square
    turns to ``(W, H)`` in an odd view, so its views must all be odd or all even."""
    h, w = crops.shape[1:3]
    if h != w and len({int(k) % 2 for k in views}) > 1:
        raise ValueError(f"crop_views: a {h}x{w} crop cannot be shown in odd and even views "
                         "together")
    return _turned(crops, views, (1, 2))


def _prepared_views(x: np.ndarray, views: Sequence[int]) -> np.ndarray:
    """Square crops prepared for a net (:func:`_prep`, ``(N, C, S, S)``) in each of ``views``,
    one after another: ``_prep(crop_views(crops, views))``, the same floats (each pixel's
    value does not depend on where it is). Turned plane by plane, whose rows are contiguous:
    several times faster than :func:`crop_views` and :func:`_prep` after it."""
    return _turned(x, views, (2, 3))


def _turned(x: np.ndarray, views: Sequence[int], axes: tuple[int, int]) -> np.ndarray:
    """``x`` in each of ``views`` (:func:`crop_views`) over its image ``axes`` (rows,
    columns), the views one after another along the first axis, in one contiguous array."""
    turned = [np.rot90(np.flip(x, axes[1]) if int(k) >= 4 else x, int(k) % 4, axes=axes)
              for k in views]
    shape = turned[0].shape if turned else x.shape
    out = np.empty((len(turned), *shape), x.dtype)  # (np.concatenate keeps a turned layout)
    for j, view in enumerate(turned):
        out[j] = view
    return out.reshape(-1, *shape[1:])


def _classify(sess: object, crops: np.ndarray, views: Sequence[int],
              confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Class probabilities ``(N, len(CLASSES))`` and "translucent" probabilities ``(N,)`` of
    the crops, each averaged over its ``views`` (:func:`crop_views`, the first of them 0,
    unturned); a crop whose unturned reading reaches ``confidence`` in one class and whose
    "translucent" probability is as sure (at least ``confidence`` or at most one minus it)
    keeps that reading."""
    def run(batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = sess.run(None, {"input": batch})[0]  # type: ignore[attr-defined]
        clear = (_sigmoid(out[:, len(CLASSES)]) if out.shape[1] > len(CLASSES)
                 else np.zeros(len(out)))
        return _softmax(out[:, :len(CLASSES)]), clear

    n = len(views)
    x = _prep(crops)
    if n == 1 or math.isinf(confidence):
        probs, clear = run(_prepared_views(x, views))
        return (probs.reshape(n, len(crops), -1).mean(axis=0),
                clear.reshape(n, len(crops)).mean(axis=0))
    probs, clear = run(x)
    unsure = np.flatnonzero((probs.max(axis=1) < confidence)
                            | (np.minimum(clear, 1.0 - clear) > 1.0 - confidence))
    if len(unsure):
        more, more_clear = run(_prepared_views(x[unsure], views[1:]))
        more = more.reshape(n - 1, len(unsure), -1).sum(axis=0)
        more_clear = more_clear.reshape(n - 1, len(unsure)).sum(axis=0)
        probs[unsure] = (probs[unsure] + more) / n
        clear[unsure] = (clear[unsure] + more_clear) / n
    return probs, clear


def classify(image: np.ndarray, boxes: np.ndarray, config: DiceConfig,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classifier's stage of :func:`read_dice` for top-face ``boxes`` ``(N, 4)``: their
    crops ``(N, CROP, CROP, 3)`` (:func:`crop_batch` at ``crop_aspect``), class probabilities
    ``(N, len(CLASSES))`` and "translucent" probabilities ``(N,)``, each averaged over the
    crop's views (:func:`crop_views`) as ``rotations``, ``upright`` and ``turn_confidence``
    say.

    Convention: ``image`` BGR ``uint8``; boxes ``[x0, y0, x1, y1]`` in its pixels.
    """
    crops = crop_batch(image, boxes, aspect=config.crop_aspect, min_fill=config.crop_min_fill)
    views = [k for k in range(max(1, min(8, config.rotations)))
             if not config.upright or k in UPRIGHT_VIEWS]
    probs, clear = _classify(_session(config.classifier_path), crops, views,
                             config.turn_confidence)
    return crops, probs, clear


def _kept(score: float, p: np.ndarray, config: DiceConfig) -> bool:
    """Whether a candidate of detector score ``score`` and class probabilities ``p`` is a die
    (:func:`_die` keeps it, with or without a value). Any candidate that reaches
    ``weak_threshold`` and reads a value at ``weak_value`` is kept: a weak peak only so, and
    a stronger one never loses where a weaker one with the same reading is kept."""
    if score >= config.weak_threshold and _has_value(p, config.weak_value):
        return True
    return p[0] <= config.none_threshold and score * (1.0 - p[0]) >= config.die_threshold


def _reads_value(p: np.ndarray, config: DiceConfig) -> bool:
    """Whether a kept die of class probabilities ``p`` is read with a value: its best class
    past "none" is one of 1-6 with a probability of ``value_threshold`` or more, taken given
    that the crop is a die where ``value_given_die`` says so."""
    if not config.value_given_die:
        return _has_value(p, config.value_threshold)
    return _has_value(p, config.value_threshold * max(1.0 - float(p[0]), 0.0))


def _has_value(p: np.ndarray, threshold: float) -> bool:
    """Whether class probabilities ``p`` read a value: their best class past "none" is one of
    1-6 and reaches ``threshold``."""
    return int(np.argmax(p[1:])) < 6 and float(p[1:7].max()) >= threshold


def _look_again(image: np.ndarray, boxes: np.ndarray, config: DiceConfig,
                ) -> list[np.ndarray | None]:
    """The second look's box for each of ``boxes`` (``DiceConfig.look_face``): the detector's
    peak nearest the centre of a ``look_window`` square around the box, scaled so that the
    box's longer side is ``look_face`` pixels; None where no peak lies within half a face of
    the centre. Boxes ``[x0, y0, x1, y1]`` in ``image``'s pixels."""
    n = -(-config.look_window // 16) * 16  # the detector's input: a multiple of 16
    windows = crop_batch(image, boxes, size=n, aspect=0.0, context=n / config.look_face,
                         min_fill=0.0)
    sess = _session(config.detector_path, "look")
    out = sess.run(None, {"input": _prep(windows)})[0]  # type: ignore[attr-defined]
    found: list[np.ndarray | None] = []
    for o, (x0, y0, x1, y1) in zip(out, boxes, strict=True):
        peaks, _ = _peaks(o, config.peak_threshold)
        centres = (peaks[:, :2] + peaks[:, 2:]) / 2 - n / 2
        off = np.hypot(centres[:, 0], centres[:, 1])
        if len(off) == 0 or off.min() > config.look_face / 2:
            found.append(None)
            continue
        scale = config.look_face / max(x1 - x0, y1 - y0, 2.0)
        centre = np.array([x0 + x1, y0 + y1, x0 + x1, y0 + y1]) / 2
        found.append(centre + (peaks[int(np.argmin(off))] - n / 2) / scale)
    return found


def _second_look(image: np.ndarray, boxes: np.ndarray, scores: np.ndarray, probs: np.ndarray,
                 crops: np.ndarray, clear: np.ndarray, config: DiceConfig) -> np.ndarray:
    """Look again at each kept candidate read without a value, and at each rejected one of
    detector score ``look_rejected`` or more (:func:`_look_again`), and, where the new box's
    crop reads a value at ``look_threshold`` and is not "none", take its box, crop and
    readings in place of the first. Which candidates were taken (a mask)."""
    taken = np.zeros(len(boxes), bool)
    again = [i for i, (score, p) in enumerate(zip(scores, probs, strict=True))
             if (not _reads_value(p, config) if _kept(score, p, config)
                 else score >= config.look_rejected)]
    if not again:
        return taken
    moved = [(i, box) for i, box in zip(again, _look_again(image, boxes[again], config),
                                        strict=True) if box is not None]
    if not moved:
        return taken
    new_crops, new_probs, new_clear = classify(image, np.array([box for _, box in moved]), config)
    h, w = image.shape[:2]
    for k, (i, box) in enumerate(moved):
        if new_probs[k][0] <= config.none_threshold and _has_value(new_probs[k],
                                                                   config.look_threshold):
            boxes[i] = np.clip(box, 0, [w, h, w, h])
            probs[i], crops[i], clear[i] = new_probs[k], new_crops[k], new_clear[k]
            taken[i] = True
    return taken


def _die(box: tuple[float, ...], score: float, p: np.ndarray, crop: np.ndarray,
         clear: float, config: DiceConfig) -> Die | None:
    """The die a candidate is, from its detector score, class probabilities ``p`` and
    "translucent" probability ``clear``; None when it is not a die or too weak to report."""
    if not _kept(score, p, config):
        return None
    values = p[1:7]
    k = int(np.argmax(p[1:]))
    name = CLASSES[1 + k]
    if name in ("cocked", "unreadable"):
        value, conf = None, float(min(1.0, score * p[1 + k]))
    else:
        value = int(np.argmax(values)) + 1 if _reads_value(p, config) else None
        conf = float(min(1.0, float(values.max()) * math.sqrt(score)))
        name = "flat" if value is not None else "unreadable"
    if value is None and score < config.unreadable_min_score:
        return None
    inner = crop[int(CROP * 0.25):int(CROP * 0.75), int(CROP * 0.25):int(CROP * 0.75)]
    color = ("translucent" if clear >= config.translucent_threshold
             else die_color(inner, config.neutral_saturation))
    return Die(value, color, box, conf, name)


def _is_group(whole: Die, others: Sequence[Die], config: DiceConfig) -> bool:
    """Whether ``whole``, a die found whole, is a group of dice (``group_parts``): at least
    that many of ``others`` (the dice not found whole) are its parts and are read with a value
    more surely than it is."""
    if config.group_parts <= 0:
        return False
    surer = sum(1 for die in others
                if die.value is not None and die.confidence > whole.confidence
                and share_inside(die.bbox, [whole.bbox]) >= config.coarse_part_share)
    return surer >= config.group_parts


def face_shapes(image: np.ndarray, boxes: Sequence[Sequence[float]], config: DiceConfig,
                ) -> np.ndarray:
    """The face net's shapes ``(N, 2)`` of the top faces in ``boxes`` (a square window of
    ``CROP_CONTEXT`` times each box's longer side, ``FACE_CROP`` pixels; see
    :func:`vision.dice.lean.face_shape`), averaged over the first ``lean_views`` views of each
    crop, each turned back: a quarter turn negates a shape, a mirror its second part."""
    crops = crop_batch(image, boxes, size=FACE_CROP, aspect=0.0, min_fill=0.0)
    views = max(1, min(8, config.lean_views))
    sess = _session(config.face_path)
    x = _prepared_views(_prep(crops), range(views))
    out = sess.run(None, {"input": x})[0]  # type: ignore[attr-defined]
    out = out.reshape(views, len(crops), 2)
    return np.mean([view_shapes(out[k], k) for k in range(views)], axis=0)


def lean_angles(image: np.ndarray, dice: Sequence[Die], config: DiceConfig,
                shapes: np.ndarray | None = None, table: TablePlane | None = None,
                ) -> tuple[np.ndarray, TablePlane | None]:
    """Each die's angle ``(N,)`` in degrees from the table's plane, and the plane the dice
    showed (:func:`vision.dice.lean.leans`, with ``config``'s ``lean_tolerance``,
    ``lean_support`` and ``lean_focals``, and ``table`` the plane earlier frames showed), from
    the face net's shapes (:func:`face_shapes`) or, where given, from ``shapes`` ``(N, 2)``."""
    if shapes is None:
        shapes = face_shapes(image, [die.bbox for die in dice], config)
    h, w = image.shape[:2]
    return leans(shapes, np.array([die.center for die in dice]).reshape(-1, 2), (w, h),
                 tolerance=config.lean_tolerance, support=config.lean_support,
                 focals=config.lean_focals, table=table)


def _leaning(image: np.ndarray, dice: list[Die], config: DiceConfig,
             table: TablePlane | None) -> tuple[list[Die], TablePlane | None]:
    """``dice`` with each die read with a value whose face leans more than ``lean_degrees``
    from the plane the dice show (:func:`lean_angles`), or, when they show none, more than
    ``lean_table_degrees`` from ``table``, reported ``"cocked"``; and the plane they showed."""
    angles, plane = lean_angles(image, dice, config, table=table)
    own = plane is not None or table is None   # judged against the frame's own plane
    bar = config.lean_degrees if own else config.lean_table_degrees
    return [replace(die, value=None, state="cocked")
            if die.value is not None and angle > bar else die
            for die, angle in zip(dice, angles, strict=True)], plane


def read_dice(image: np.ndarray, config: DiceConfig | None = None, *,
              table: TablePlane | None = None) -> DiceReading:
    """Read every d6 in a frame.

    Parameters
    ----------
    image : BGR ``uint8`` frame (grey, BGRA, float and uint16 are converted); any size.
    config : thresholds; the default suits 640x480 to 1920x1080 frames and close-up crops.
    table : the table's plane earlier frames of the same camera showed
        (:class:`vision.dice.lean.TableMemory` of their readings' ``table``): when fewer than
        ``lean_support`` dice of this frame share a plane (three dice, one of them leaning),
        they are judged against it (at ``lean_table_degrees``) instead of not at all. A plane
        found in frames of another size (another camera) is not used.

    Returns
    -------
    DiceReading
        One :class:`~vision.readings.Die` per die found, left to right: ``value`` 1-6 with
        ``state "flat"``, or ``None`` with ``state "cocked"`` / ``"unreadable"`` when the top
        face cannot be read (never a guess). ``bbox`` is the box of the top face. The
        reading's ``hand`` tells whether a hand is in view, its ``table`` the plane this
        frame's dice showed (None when they showed none).

    Raises
    ------
    vision.imageio.InvalidImage
        For a zero-size or malformed array.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels of ``image``, origin top-left.

    Examples
    --------
    >>> import numpy as np
    >>> read_dice(np.zeros((48, 64, 3), np.uint8)).dice
    ()
    """
    config = config or _default_config()
    image = as_bgr(image)
    if table is not None and tuple(table.size) != (image.shape[1], image.shape[0]):
        table = None
    # whole: found whole, by a coarser pass or (below) by the second look
    boxes, scores, hand, whole = _candidates(image, config)
    if len(boxes) == 0:
        return DiceReading((), hand)
    crops, probs, clear = classify(image, boxes, config)
    if config.look_face > 0:
        looked = _second_look(image, boxes, scores, probs, crops, clear, config)
        if looked.any():
            keep = sorted(_nms(boxes, scores, config.nms_iou, config.max_dice))
            boxes, scores, probs, crops, clear, whole = (
                a[keep] for a in (boxes, scores, probs, crops, clear, whole | looked))
    read = []  # (die, whether it was found whole)
    for box, score, p, crop, c, found in zip(boxes, scores, probs, crops, clear, whole,
                                             strict=True):
        die = _die(tuple(float(v) for v in box), score, p, crop, c, config)
        if die is not None:
            read.append((die, found))
    parts = [die for die, found in read if not found]
    read = [(die, found) for die, found in read if not (found and _is_group(die, parts, config))]
    wholes = [die.bbox for die, found in read if found]
    dice = [die for die, found in read
            if found or share_inside(die.bbox, wholes) < config.coarse_part_share]
    plane = None
    if math.isfinite(config.lean_degrees) and dice and (
            len(dice) >= config.lean_support or table is not None):
        dice, plane = _leaning(image, dice, config, table)
    dice.sort(key=lambda d: (d.bbox[0], d.bbox[1]))
    return DiceReading(tuple(dice), hand, plane)
