"""The dice trainer's nets against the reader's files (needs torch: the [train] extra)."""

from __future__ import annotations

import inspect
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.dice import DiceConfig
from vision.dice.reader import CLASSES, CROP, MODEL_DIR, float_file
from vision.onnxmodel import onnx_session
from vision.render.dice import COCKED_RATE, render_closeup, render_scene

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from models.dice.train import (  # noqa: E402
    BIG_DIE_LOOKS,
    SCENE,
    SMALL_DICE_LOOKS,
    STEM,
    TABLE_LOOKS,
    Classifier,
    CropCut,
    Detector,
    SceneMix,
    cache_cut,
    camera_augment,
    check_cache_crops,
    closeup_tiles,
    colour_augment,
    crops_from,
    edge_negatives,
    export,
    load_onnx,
    render_data,
    scene,
    tie_colour,
    train_detector,
    training_view,
)
from models.dice.validate import CLOSEUP_LOOKS, rate_key  # noqa: E402
from models.dice.validate import TABLE_LOOKS as SCENE_LOOKS  # noqa: E402

COMMITTED = float_file(MODEL_DIR, "classifier")  # the float net, as trained
DETECTOR = Path(DiceConfig().detector_path)


def _crops(n: int = 6) -> np.ndarray:
    return np.random.default_rng(0).random((n, 3, CROP, CROP), np.float32) - 0.5


@pytest.mark.skipif(not COMMITTED.is_file(), reason="dice classifier not trained")
def test_a_file_of_another_arch_is_refused() -> None:
    with pytest.raises(ValueError, match="layers in the file"):
        load_onnx(Classifier(arch="small"), COMMITTED)


def _frames(n: int = 2) -> np.ndarray:
    return np.random.default_rng(1).random((n, 3, 48, 80), np.float32) - 0.5


@pytest.mark.parametrize("make, path, inputs, shape", [
    (Classifier, COMMITTED, _crops, (6, len(CLASSES) + 1)),
    (Detector, DETECTOR, _frames, (2, 4, 12, 20)),
], ids=["classifier", "detector"])
def test_the_committed_nets_load_into_the_default_nets(make, path, inputs, shape) -> None:
    if not path.is_file():
        pytest.skip(f"{path.name} not trained")
    net = make()
    load_onnx(net, path)
    with torch.no_grad():
        mine = net.eval()(torch.from_numpy(inputs())).numpy()
    theirs = onnx_session(str(path), "dice model").run(None, {"input": inputs()})[0]
    assert mine.shape == theirs.shape == shape
    assert np.allclose(mine, theirs, atol=1e-4)


def test_a_detector_stem_exported_as_blocks_folded_into_channels_loads_as_one_conv(
        tmp_path) -> None:
    """The stem as exported until session 26 (space-to-depth, then a 1x1 convolution) is the
    function of the 4x4, stride-4 convolution the detector has now: a file of the old layout
    loads into it and computes what the file computes."""
    torch.manual_seed(3)
    old = Detector()
    old.stem = torch.nn.Sequential(torch.nn.PixelUnshuffle(STEM),
                                   torch.nn.Conv2d(3 * STEM * STEM, 32, 1, bias=False),
                                   torch.nn.BatchNorm2d(32), torch.nn.ReLU(inplace=True))
    with torch.no_grad():  # trained-looking batch norms (equal biases would be shared)
        for m in old.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    export(old, torch.zeros(1, 3, 64, 64), tmp_path / "old.onnx", dynamic_hw=True)
    net = Detector()
    load_onnx(net, tmp_path / "old.onnx")
    with torch.no_grad():
        mine = net.eval()(torch.from_numpy(_frames())).numpy()
        before = old.eval()(torch.from_numpy(_frames())).numpy()
    theirs = onnx_session(str(tmp_path / "old.onnx"), "dice detector").run(
        None, {"input": _frames()})[0]
    assert np.allclose(mine, theirs, atol=1e-4) and np.allclose(mine, before, atol=1e-4)
    assert float(np.abs(mine).max()) > 0.1  # not a net that outputs nothing


@pytest.mark.parametrize("arch", ["small", "wide"])
def test_every_arch_exports_what_the_reader_reads(tmp_path, arch) -> None:
    torch.manual_seed(0)
    net = Classifier(arch=arch)
    export(net, torch.zeros(1, 3, CROP, CROP), tmp_path / "c.onnx", dynamic_hw=False)
    out = onnx_session(str(tmp_path / "c.onnx"), "dice classifier").run(
        None, {"input": _crops(5)})[0]
    assert out.shape == (5, len(CLASSES) + 1)
    with torch.no_grad():
        assert np.allclose(out, net.eval()(torch.from_numpy(_crops(5))).numpy(), atol=1e-4)


def test_the_scene_mix_decides_what_the_training_scenes_hold() -> None:
    extras: dict = {}
    image, labels = scene(np.random.default_rng(0), SceneMix(tile_rate=1.0), extras)
    assert len(labels) >= 4  # a die in each close-up, neighbours maybe
    assert image.shape == (SCENE, SCENE, 3) and len(extras["tiles"]) == 4
    for seed in range(5):
        extras = {}
        scene(np.random.default_rng(seed), SceneMix(tile_rate=0.0), extras)
        assert "tiles" not in extras


def test_the_scene_mix_passes_the_close_ups_looks_on() -> None:
    """Every look of CLOSEUP_LOOKS (--vivid-rate, ..., --stamp-rate) is a rate of
    render_closeup's and reaches the close-ups (they are drawn otherwise), and at 0 the scenes
    are those drawn without it."""
    def tiles(**looks: float) -> np.ndarray:
        return scene(np.random.default_rng(11), SceneMix(tile_rate=1.0, looks=looks))[0]

    keywords = inspect.signature(render_closeup).parameters
    for name, _ in CLOSEUP_LOOKS:
        rate = rate_key(name)
        assert keywords[rate].default == 0.0
        assert np.array_equal(tiles(), tiles(**{rate: 0.0}))
        assert not np.array_equal(tiles(), tiles(**{rate: 1.0})), rate


def test_the_scene_mix_passes_the_table_scenes_looks_on() -> None:
    """Every look of TABLE_LOOKS (--stone-rate, ..., --sheet-rate) is a rate of render_scene's
    and reaches the table scenes (some scene of a few is drawn otherwise), and at 0 the scenes
    are those drawn without it."""
    def tables(**looks: float) -> list[np.ndarray]:
        return [scene(np.random.default_rng(seed), SceneMix(table_looks=looks))[0]
                for seed in range(6)]

    keywords = inspect.signature(render_scene).parameters
    plain = tables()
    for name, _ in TABLE_LOOKS:
        rate = rate_key(name)
        assert keywords[rate].default == 0.0
        same = [np.array_equal(a, b) for a, b in zip(plain, tables(**{rate: 0.0}), strict=True)]
        drawn = [np.array_equal(a, b) for a, b in zip(plain, tables(**{rate: 1.0}), strict=True)]
        assert all(same) and not all(drawn), rate
    for kind in (SMALL_DICE_LOOKS, BIG_DIE_LOOKS):
        assert set(kind) <= {name for name, _ in TABLE_LOOKS}


def test_the_scene_mix_passes_the_cocked_rate_on() -> None:
    """--cocked-rate reaches the table scenes: by default, the scenes are those drawn at
    render_scene's own rate; at 0 no die leans, at 1 every die does (those leaning less than
    about 26 degrees keep a face near level and are labelled flat, as render_scene labels
    them); the close-ups keep their own rate."""
    def labels(rate: float, tile_rate: float = 0.0) -> list[list[dict]]:
        return [scene(np.random.default_rng(seed), SceneMix(cocked_rate=rate,
                                                            tile_rate=tile_rate))[1]
                for seed in range(16)]

    assert inspect.signature(render_scene).parameters["cocked_rate"].default == COCKED_RATE
    drawn = [scene(np.random.default_rng(seed), SceneMix())[0] for seed in range(4)]
    assert all(np.array_equal(a, scene(np.random.default_rng(seed),
                                       SceneMix(cocked_rate=COCKED_RATE))[0])
               for seed, a in enumerate(drawn))
    never = [lb["state"] for scene_labels in labels(0.0) for lb in scene_labels]
    always = [lb["state"] for scene_labels in labels(1.0) for lb in scene_labels]
    assert "cocked" not in never
    assert always.count("cocked") > 0.4 * len(always)
    assert labels(1.0, tile_rate=1.0) == labels(COCKED_RATE, tile_rate=1.0)


@pytest.mark.parametrize("tool", ["train", "validate"])
def test_the_close_ups_looks_are_options_of_both_tools(tool: str) -> None:
    """train and validate offer a --NAME-rate for each look of CLOSEUP_LOOKS, each naming the
    render_closeup keyword it sets, and one for each of the table scenes' looks, each naming
    the render_scene keyword it sets: validate for every look of its TABLE_LOOKS, train for
    all but the look-alikes, which its SceneMix sets apart."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", f"models.dice.{tool}", "--help"],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3]).stdout
    for name, _ in CLOSEUP_LOOKS:
        assert f"--{name}-rate" in out
        assert f"render_closeup's {rate_key(name)}" in " ".join(out.split())
    for name, _ in TABLE_LOOKS if tool == "train" else SCENE_LOOKS:
        assert f"render_scene's {rate_key(name)}" in " ".join(out.split())
    assert [name for name, _ in SCENE_LOOKS if name != "distractor"] == \
        [name for name, _ in TABLE_LOOKS]


def test_the_scene_mix_passes_the_close_ups_tilt_on() -> None:
    """--closeup-tilt reaches the close-ups: by default the scenes are those render_closeup
    draws at its own tilt, and a low camera squashes the top faces (their height over width)."""
    def tiles(tilt: tuple[float, float]) -> tuple[np.ndarray, list[dict]]:
        return scene(np.random.default_rng(11), SceneMix(tile_rate=1.0, closeup_tilt=tilt))

    rng = np.random.default_rng(11)
    rng.random()  # scene's draw of the kind of scene
    assert np.array_equal(scene(np.random.default_rng(11), SceneMix(tile_rate=1.0))[0],
                          closeup_tiles(rng)[0])  # render_closeup's default tilt

    def squash(labels: list[dict]) -> float:
        return float(np.median([(b[3] - b[1]) / max(b[2] - b[0], 1e-6)
                                for b in (lb["bbox"] for lb in labels)]))

    assert squash(tiles((60.0, 65.0))[1]) < 0.8 * squash(tiles((0.0, 5.0))[1])


def test_the_training_crops_are_cut_as_the_reader_is_told_to() -> None:
    square = render_data(3, np.random.default_rng(4), SceneMix(), CropCut(aspect=0.0))
    shaped = render_data(3, np.random.default_rng(4), SceneMix())  # the reader's default
    assert DiceConfig().crop_aspect > 0
    assert all(np.array_equal(a, b) for a, b in zip(square[0], shaped[0], strict=True))
    assert square[6] == shaped[6] and len(square[6]) > 0  # the same scenes and labels
    crops0, crops5 = np.concatenate(square[5]), np.concatenate(shaped[5])
    assert crops0.shape == crops5.shape == (len(square[6]), CROP, CROP, 3)
    assert not np.array_equal(crops0, crops5)  # the windows follow the boxes' shapes


def test_the_colour_augment_scrambles_the_colours_of_its_share_and_keeps_the_rest() -> None:
    """A scrambled scene keeps its shapes (its channels are the old ones in another order,
    washed towards their mean) but not its palette; the others are left as they were."""
    rng = np.random.default_rng(5)
    images = rng.integers(0, 256, (40, 24, 32, 3), dtype=np.uint8)
    images[..., 0] //= 4  # a palette: little blue, so that a channel swap shows
    out = colour_augment(images, np.random.default_rng(1), 0.5)
    assert out.shape == images.shape and out.dtype == np.uint8
    assert np.array_equal(out, colour_augment(images, np.random.default_rng(1), 0.5))
    changed = [i for i in range(len(images)) if not np.array_equal(out[i], images[i])]
    assert 10 <= len(changed) <= 30  # about half of them
    for i in changed:
        a, b = images[i].astype(np.float32), out[i].astype(np.float32)
        # each pixel's mean over the channels stays (to rounding): lightness and shapes kept
        assert np.abs(a.mean(axis=2) - b.mean(axis=2)).max() <= 1.0
        assert abs(float(b[..., 0].mean()) - float(a[..., 0].mean())) > 5  # palette moved
    assert np.array_equal(colour_augment(images, np.random.default_rng(1), 0.0), images)


def _blind(path: Path) -> bool:
    """Whether the detector file gives the same map for frames whose channels are swapped."""
    frames = _frames()
    sess = onnx_session(str(path), "dice detector")
    out = sess.run(None, {"input": frames})[0]
    return all(np.allclose(out, sess.run(None, {"input": np.ascontiguousarray(
        frames[:, order])})[0], atol=1e-5) for order in ([2, 1, 0], [1, 2, 0]))


@pytest.mark.skipif(not DETECTOR.is_file(), reason="dice detector not trained")
def test_a_tied_detector_sees_only_the_grey_of_a_frame(tmp_path) -> None:
    """tie_colour makes a net colour-blind (the mean of its stem's weights over the channels)
    and changes nothing else: on a grey frame it computes what the untied net computes."""
    assert not _blind(DETECTOR)  # the committed net does see colour: the check can fail
    net = Detector()
    load_onnx(net, DETECTOR)
    grey = np.repeat(_frames()[:, :1], 3, axis=1)
    with torch.no_grad():
        before = net.eval()(torch.from_numpy(grey)).numpy()
        tie_colour(net)
        after = net(torch.from_numpy(grey)).numpy()
    assert np.allclose(before, after, atol=1e-4)
    export(net, torch.zeros(1, 3, 64, 64), tmp_path / "dice_detector.onnx", dynamic_hw=True)
    assert _blind(tmp_path / "dice_detector.onnx")


@pytest.mark.skipif(not DETECTOR.is_file(), reason="dice detector not trained")
def test_a_grey_detector_stays_colour_blind_through_training(tmp_path) -> None:
    """--grey-detector: the committed net made colour-blind and continued; the tie is made
    again after every step, so the trained file is as colour-blind as the net it started
    from."""
    data = render_data(3, np.random.default_rng(7), SceneMix())
    images, heats, sizes, masks, hands = (np.stack(a) for a in data[:5])
    torch.manual_seed(0)
    train_detector(images, heats, sizes, masks, hands, tmp_path, 3.0,
                   np.random.default_rng(0), init=DETECTOR.parent, lr=1e-2, grey=True)
    assert _blind(tmp_path / "dice_detector.onnx")


def test_the_camera_augment_softens_the_crops_without_moving_what_is_in_them() -> None:
    crops = np.concatenate(render_data(4, np.random.default_rng(2), SceneMix())[5])[:64]
    soft = camera_augment(crops, np.random.default_rng(0))
    assert soft.shape == crops.shape and soft.dtype == np.float32
    assert soft.min() >= 0 and soft.max() <= 255
    assert np.array_equal(soft, camera_augment(crops, np.random.default_rng(0)))  # seeded
    grey, soft_grey = crops.astype(np.float32).mean(axis=3), soft.mean(axis=3)
    same_place = [np.corrcoef(a.ravel(), b.ravel())[0, 1] for a, b in zip(grey, soft_grey,
                                                                            strict=True)
                  if a.std() > 5]
    assert np.median(same_place) > 0.8  # photometric and resolution changes only

    def edges(g: np.ndarray) -> float:
        return float(np.mean([np.abs(cv2.Laplacian(x, cv2.CV_32F)).mean() for x in g]))

    assert edges(soft_grey) < 0.9 * edges(grey)  # softer on the whole


def test_a_die_is_cut_from_a_box_of_its_top_face_shape() -> None:
    """The detector boxes a flattened top face with a flat box; so must the training crops,
    or crop_batch's aspect never changes a die's crop (--square-crops: the old squares)."""
    face = {"bbox": (100.0, 100.0, 180.0, 120.0), "die_bbox": (100.0, 100.0, 180.0, 150.0),
            "value": 3, "state": "flat", "color": "red"}
    image = np.zeros((300, 300, 3), np.uint8)
    for square in (False, True):
        boxes, classes = crops_from(image, [face], np.random.default_rng(1), per_scene_neg=0,
                                    cut=CropCut(square=square))
        shapes = [(y1 - y0) / (x1 - x0) for (x0, y0, x1, y1), c in zip(boxes, classes,
                                                                     strict=True) if c == 3]
        assert len(shapes) == 2
        if square:
            assert shapes == pytest.approx([1.0, 1.0])
        else:
            assert all(0.15 < r < 0.45 for r in shapes)  # the face's 0.25, each side a bit off
    assert 0 in classes  # the front side face below it: not a top face


@pytest.mark.parametrize("rate, top_lo, top_hi", [
    ("steep_rate", 0.0, 0.6),  # a low camera: the side faces show below a thin top face
    ("big_rate", 0.75, 1.0),  # a moderate tilt: the top face is most of the die's height
])
def test_large_dice_scenes(rate: str, top_lo: float, top_hi: float) -> None:
    """--steep-rate and --big-rate: table scenes of dice larger than the other scenes' median,
    seen at their own tilt (the median share of the die's box height that its top face takes)."""
    plain, large = [], []
    for seed in range(12):
        for mix, out in ((SceneMix(), plain), (SceneMix(**{rate: 1.0}), large)):
            extras: dict = {}
            _, labels = scene(np.random.default_rng(seed), mix, extras)
            assert "tiles" not in extras
            out.extend(lb for lb in labels if lb["state"] == "flat")
    assert large and plain

    def edge(lb: dict) -> float:
        x0, y0, x1, y1 = lb["die_bbox"]
        return max(x1 - x0, y1 - y0)

    assert min(edge(lb) for lb in large) > np.median([edge(lb) for lb in plain])
    top = np.median([(lb["bbox"][3] - lb["bbox"][1]) / (lb["die_bbox"][3] - lb["die_bbox"][1])
                     for lb in large])
    assert top_lo < top < top_hi


def test_low_camera_scenes_of_small_dice() -> None:
    """--low-rate: table scenes of small dice (about the size of the other scenes') seen by a
    low camera: their top faces take a thin share of each die's box height, thinner than
    in the plain scenes; at 0 the scenes are those drawn without it."""
    plain, low = [], []
    for seed in range(12):
        extras: dict = {}
        frame, labels = scene(np.random.default_rng(seed), SceneMix(), extras)
        again, _ = scene(np.random.default_rng(seed), SceneMix(low_rate=0.0))
        assert np.array_equal(frame, again)
        plain.extend(lb for lb in labels if lb["state"] == "flat")
        _, labels = scene(np.random.default_rng(seed), SceneMix(low_rate=1.0), extras)
        low.extend(lb for lb in labels if lb["state"] == "flat")
    assert low and plain

    def edge(lb: dict) -> float:
        x0, y0, x1, y1 = lb["die_bbox"]
        return max(x1 - x0, y1 - y0)

    def top(lb: dict) -> float:
        return (lb["bbox"][3] - lb["bbox"][1]) / (lb["die_bbox"][3] - lb["die_bbox"][1])

    # about the plain scenes' sizes, not the large dice of --steep-rate
    assert np.median([edge(lb) for lb in low]) < 1.25 * np.median([edge(lb) for lb in plain])
    assert np.median([top(lb) for lb in low]) < 0.5 < np.median([top(lb) for lb in plain])


def test_the_box_jitter_spreads_the_shape_of_a_die_s_training_box() -> None:
    """--box-jitter: each side scaled by exp(N(0, jitter)), so the spread of log(h / w) of a
    die's boxes is jitter x sqrt(2), for the detector's error in a box's shape."""
    face = {"bbox": (100.0, 100.0, 180.0, 140.0), "die_bbox": (100.0, 100.0, 180.0, 150.0),
            "value": 3, "state": "flat", "color": "red"}
    image = np.zeros((300, 300, 3), np.uint8)
    rng = np.random.default_rng(2)
    for jitter in (0.1, 0.2):
        shapes = [np.log((y1 - y0) / (x1 - x0)) for _ in range(300) for (x0, y0, x1, y1), c in
                  zip(*crops_from(image, [face], rng, per_scene_neg=0, cut=CropCut(jitter=jitter)),
                      strict=True) if c == 3]
        assert np.median(shapes) == pytest.approx(np.log(0.5), abs=0.03)
        assert np.std(shapes) == pytest.approx(jitter * np.sqrt(2), rel=0.15)


def test_a_scene_cache_is_refused_when_its_crops_were_cut_otherwise(tmp_path) -> None:
    path = tmp_path / "scenes.npz"
    np.savez(path, crops=np.zeros((1, CROP, CROP, 3), np.uint8),
             **cache_cut(CropCut(aspect=0.75)))
    with np.load(path) as data:
        check_cache_crops(path, data, CropCut(aspect=0.75))  # the cut asked for: accepted
        with pytest.raises(SystemExit, match=r"scenes\.npz.*--crop-aspect 0\.75 --crop-min-fill "
                           r"0\.8 --box-jitter 0\.1, not with --crop-aspect 0\.5 "
                           r"--crop-min-fill 0\.8 --box-jitter 0\.1 as asked"):
            check_cache_crops(path, data, CropCut(aspect=0.5))
        with pytest.raises(SystemExit, match=r"--square-crops --box-jitter 0\.1 as asked"):
            check_cache_crops(path, data, CropCut(aspect=0.75, square=True))
        with pytest.raises(SystemExit, match=r"--box-jitter 0\.2 as asked"):
            check_cache_crops(path, data, CropCut(aspect=0.75, jitter=0.2))
        with pytest.raises(SystemExit, match=r"--crop-min-fill 0 --box-jitter 0\.1 as asked"):
            check_cache_crops(path, data, CropCut(aspect=0.75, min_fill=0.0))
    before = tmp_path / "before46.npz"  # written before the min_fill was recorded: none
    recorded = cache_cut(CropCut(aspect=0.75, min_fill=0.0))
    del recorded["crop_min_fill"]
    np.savez(before, crops=np.zeros((1, CROP, CROP, 3), np.uint8), **recorded)
    with np.load(before) as data:
        check_cache_crops(before, data, CropCut(aspect=0.75, min_fill=0.0))
        with pytest.raises(SystemExit, match=r"--crop-min-fill 0 --box-jitter 0\.1, not with"):
            check_cache_crops(before, data, CropCut(aspect=0.75))
    old = tmp_path / "old.npz"  # written before the cut was recorded
    np.savez(old, crops=np.zeros((1, CROP, CROP, 3), np.uint8))
    with np.load(old) as data, pytest.raises(SystemExit, match=r"old\.npz.*does not record"):
        check_cache_crops(old, data, CropCut())


def _on_a_die_and_off(labels: list[dict]) -> tuple[list, list]:
    """Boxes centred on each die's top face, on its side faces, and off every die."""
    on, off = [], []
    for lb in labels:
        x0, y0, x1, y1 = lb["bbox"]
        on.append((x0, y0, x1, y1))
        _, dy0, _, dy1 = lb["die_bbox"]
        cy = dy1 - 0.1 * (dy1 - dy0)  # low on the die: its front side face
        on.append((x0, cy - 3, x1, cy + 3))
    for cx in np.linspace(5, SCENE - 5, 12):
        for cy in np.linspace(5, SCENE - 5, 12):
            if not any(lb["die_bbox"][0] - 8 <= cx <= lb["die_bbox"][2] + 8
                       and lb["die_bbox"][1] - 8 <= cy <= lb["die_bbox"][3] + 8
                       for lb in labels):
                off.append((cx - 4, cy - 4, cx + 4, cy + 4))
    return on, off


def test_mined_negatives_are_the_proposals_off_every_die(monkeypatch) -> None:
    import models.dice.train as train

    image, labels = scene(np.random.default_rng(3), SceneMix(distractor_rate=1.0))
    on, off = _on_a_die_and_off(labels)
    assert labels and off
    proposals = np.array(on + off[:2] + on, np.float64)
    monkeypatch.setattr(train, "candidates", lambda img, cfg: (proposals, None, False))
    assert train.mined_negatives(image, labels, DiceConfig()) == off[:2]
    proposals = np.array(off, np.float64)  # many off the dice: the strongest few
    assert train.mined_negatives(image, labels, DiceConfig()) == off[:train.MINE_PER_SCENE]


@pytest.mark.parametrize("kind", ["miner", "pos_miner"])
def test_mining_adds_crops_to_the_same_scenes(kind) -> None:
    """Mined negatives are "none" crops, mined positives the crops of a die (its class)."""
    mix = SceneMix(distractor_rate=1.0)
    plain = render_data(4, np.random.default_rng(6), mix)
    low = 0.05 if kind == "miner" else 0.2
    mined = render_data(4, np.random.default_rng(6), mix,
                        **{kind: DiceConfig(peak_threshold=low, die_threshold=low)})
    assert all(np.array_equal(a, b) for a, b in zip(plain[0], mined[0], strict=True))
    # per scene: the same crops and classes first (mining draws nothing from the generator),
    # then the mined ones
    i = j = added = 0
    for a, b in zip(plain[5], mined[5], strict=True):
        assert np.array_equal(b[:len(a)], a)
        assert mined[6][j:j + len(a)] == plain[6][i:i + len(a)]
        more = set(mined[6][j + len(a):j + len(b)])
        assert more <= {0} if kind == "miner" else 0 not in more
        added += len(b) - len(a)
        i, j = i + len(a), j + len(b)
    assert (i, j) == (len(plain[6]), len(mined[6])) and added > 0


def test_mined_positives_are_the_proposals_on_one_top_face_with_its_class(monkeypatch):
    import models.dice.train as train

    image, labels = scene(np.random.default_rng(11), SceneMix(distractor_rate=1.0))
    on, off = _on_a_die_and_off(labels)

    def tops(box: tuple) -> int:  # how many top faces the box's centre lies on
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        return sum(lb["bbox"][0] <= cx <= lb["bbox"][2] and lb["bbox"][1] <= cy <= lb["bbox"][3]
                   for lb in labels)

    faces = on[0::2]  # each die's top face; then its front side face, where that is off it
    sides = [b for b in on[1::2] if tops(b) == 0]
    assert sides
    proposals = np.array(off[:2] + sides + faces, np.float64)
    monkeypatch.setattr(train, "candidates", lambda img, cfg: (proposals, None, False))
    boxes, classes = train.mined_positives(image, labels, DiceConfig())
    lone = [k for k, box in enumerate(faces) if tops(box) == 1]
    assert lone and boxes == [faces[k] for k in lone][:train.MINE_PER_SCENE]
    assert classes == [train.crop_class(labels[k]) for k in lone][:train.MINE_PER_SCENE]


@pytest.mark.parametrize("flag, value", [("--mine-negatives", "d.onnx"),
                                         ("--mine-positives", "d.onnx"),
                                         ("--edge-negatives", "0.5")])
def test_crops_added_while_rendering_are_refused_on_rendered_caches(tmp_path, monkeypatch, flag,
                                                                    value) -> None:
    import sys

    import models.dice.train as train

    cache = tmp_path / "c.npz"
    np.savez(cache, crops=np.zeros((1, CROP, CROP, 3), np.uint8))
    monkeypatch.setattr(sys, "argv", ["train", "--out", str(tmp_path / "o"), "--cache",
                                      str(cache), flag, value])
    with pytest.raises(SystemExit, match=f"{flag} adds crops while rendering"):
        train.main()


@pytest.mark.parametrize("flag", ["--mine-negatives", "--mine-positives"])
def test_mining_is_refused_without_its_detector(tmp_path, monkeypatch, flag) -> None:
    import sys

    import models.dice.train as train

    monkeypatch.setattr(sys, "argv", ["train", "--out", str(tmp_path / "o"), "--cache",
                                      str(tmp_path / "new.npz"), flag,
                                      str(tmp_path / "missing.onnx")])
    with pytest.raises(SystemExit, match=r"missing\.onnx: no such detector file"):
        train.main()


def test_a_proposal_whose_window_holds_much_of_a_top_face_can_be_left_unmined(monkeypatch):
    import models.dice.train as train

    labels = [{"bbox": [40.0, 40.0, 60.0, 60.0], "die_bbox": [38.0, 38.0, 62.0, 70.0]}]
    # centred off the die (right of its grown box) with a box of 30 px: the 45 px window
    # reaches x = 48.5, so it holds 11.5 / 20 of the top face
    beside = (56.0, 35.0, 86.0, 65.0)
    far = (150.0, 150.0, 170.0, 170.0)
    monkeypatch.setattr(train, "candidates",
                        lambda img, cfg: (np.array([beside, far]), None, False))
    image = np.zeros((192, 192, 3), np.uint8)
    assert train.mined_negatives(image, labels, DiceConfig()) == [beside, far]
    assert train.mined_negatives(image, labels, DiceConfig(), face_share=0.6) == [beside, far]
    assert train.mined_negatives(image, labels, DiceConfig(), face_share=0.25) == [far]


def test_edge_negatives_lie_along_an_edge_of_a_top_face() -> None:
    """--edge-negatives: each box spans one side of a die's top face, 0.3-0.7 of the face
    across it, its centre 0.1 inside to 0.4 beyond that side: never where a face's centre
    lies (positives are shifted by N(0, 0.1) of the face), and every side is drawn."""
    face = {"bbox": (100.0, 120.0, 180.0, 160.0), "die_bbox": (100.0, 120.0, 180.0, 190.0),
            "value": 4, "state": "flat", "color": "red"}
    rng = np.random.default_rng(3)
    assert edge_negatives([face] * 50, rng, 0.0, 300, 300) == []
    boxes = [b for _ in range(100) for b in edge_negatives([face], rng, 1.0, 300, 300)]
    assert len(boxes) == 100  # rate 1: one box per die
    sides = set()
    for x0, y0, x1, y1 in boxes:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        dx, dy = (cx - 140.0) / 80.0, (cy - 140.0) / 40.0  # in the face's sizes
        if (x0, x1) == (100.0, 180.0):  # above or below: the face's width, a strip across
            assert 0.4 - 1e-9 <= abs(dy) <= 0.9 + 1e-9 and dx == 0
            assert 0.3 * 40 - 1e-9 <= y1 - y0 <= 0.7 * 40 + 1e-9
            sides.add("above" if dy < 0 else "below")
        else:  # left or right: the face's height
            assert (y0, y1) == (120.0, 160.0)
            assert 0.4 - 1e-9 <= abs(dx) <= 0.9 + 1e-9 and dy == 0
            assert 0.3 * 80 - 1e-9 <= x1 - x0 <= 0.7 * 80 + 1e-9
            sides.add("left" if dx < 0 else "right")
    assert sides == {"above", "below", "left", "right"}
    # a die at the image's edge: a box whose centre leaves the image is dropped
    corner = {**face, "bbox": (0.0, 0.0, 20.0, 20.0)}
    kept = [b for _ in range(200) for b in edge_negatives([corner], rng, 1.0, 300, 300)]
    assert 0 < len(kept) < 200
    assert all(b[0] + b[2] >= 0 and b[1] + b[3] >= 0 for b in kept)


def test_edge_negatives_add_none_crops_and_change_nothing_else() -> None:
    """render_data with edge_rate: the same scenes and crops as without (edge_rng is their own
    stream), and more crops, each of class "none"."""
    mix = SceneMix(tile_rate=0.5)
    plain = render_data(4, np.random.default_rng(5), mix)
    more = render_data(4, np.random.default_rng(5), mix, edge_rate=1.0,
                       edge_rng=np.random.default_rng(6))
    for a, b in zip(plain[:5], more[:5], strict=True):  # images and detector targets
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    old, new = np.concatenate(plain[5]), np.concatenate(more[5])
    assert len(new) > len(old)
    extra = [c for c in more[6] if c == 0]
    assert len(extra) - sum(c == 0 for c in plain[6]) == len(new) - len(old)
    # the plain run's crops are all among the new ones (every seventh is checked)
    assert all(any(np.array_equal(x, y) for y in new) for x in old[::7])
    with pytest.raises(ValueError, match="edge_rng"):
        render_data(1, np.random.default_rng(5), mix, edge_rate=0.5)


@pytest.mark.parametrize(("upright", "views"), [(False, set(range(8))), (True, {0, 4})])
def test_the_classifier_is_shown_its_crops_turned_unless_upright(upright, views) -> None:
    rng = np.random.default_rng(0)
    assert {training_view(rng, upright) for _ in range(400)} == views
