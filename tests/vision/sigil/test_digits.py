from __future__ import annotations

import numpy as np
import pytest

from models.digits.synth import sample
from vision.sigil import digits as dg


def _read(crops: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    model = dg.DigitModel()
    circ = np.stack([dg.circle_input(c) for c in crops])
    _, pc = model.predict(np.zeros((len(crops), dg.GLYPH, dg.GLYPH), np.float32), circ)
    glyphs = []
    for c, p in zip(crops, pc, strict=True):
        rest = c
        if p >= 0.5:
            ring = dg.find_ring(c)
            rest = dg.remove_ring(c, ring) if ring is not None else c
        g = dg.glyph(rest)
        glyphs.append(np.zeros((dg.GLYPH, dg.GLYPH), np.float32) if g is None else g)
    pd, _ = model.predict(np.stack(glyphs), circ)
    return pd.argmax(1) + 1, pc >= 0.5


def test_model_file_is_small_and_present() -> None:
    assert dg.MODEL_PATH.is_file()
    assert dg.MODEL_PATH.stat().st_size < 512 * 1024


@pytest.mark.parametrize("source", [0, 1, 2])
def test_digits_and_circles_on_held_out_synthetic_crops(source: int) -> None:
    if source == 2:  # scikit-learn's bundled scans: a training-only dependency
        pytest.importorskip("sklearn", reason="scikit-learn (the [train] extra) is not installed")
    rng = np.random.default_rng(12345 + source)
    truth = [(int(rng.integers(1, 7)), bool(rng.random() < 0.5)) for _ in range(60)]
    crops = [sample(rng, d, c, sk_part="test", source=source) for d, c in truth]
    values, circled = _read(crops)
    digit_acc = np.mean([v == d for v, (d, _) in zip(values, truth, strict=True)])
    circle_acc = np.mean([k == c for k, (_, c) in zip(circled, truth, strict=True)])
    # floors well below the model card's figures (MODEL.md)
    assert digit_acc >= 0.85
    assert circle_acc >= 0.9


def test_ring_is_found_and_removed() -> None:
    crop = np.zeros((dg.CROP, dg.CROP), np.float32)
    yy, xx = np.mgrid[0:dg.CROP, 0:dg.CROP]
    r = np.hypot(xx - 24, yy - 24)
    crop[np.abs(r - 19) < 1.5] = 1.0           # the ring
    crop[14:34, 22:26] = 1.0                     # a "1" inside
    ring = dg.find_ring(crop)
    assert ring is not None and ring.coverage > 0.8 and ring.gap > 0.5
    rest = dg.remove_ring(crop, ring)
    assert rest[np.abs(r - 19) < 1.5].max() == 0.0
    assert rest[14:34, 22:26].mean() > 0.9


def test_empty_crop_has_no_glyph_and_no_ring() -> None:
    empty = np.zeros((dg.CROP, dg.CROP), np.float32)
    assert dg.glyph(empty) is None
    assert dg.find_ring(empty) is None


def test_finetune_reads_back_the_onnx_weights_and_cuts_photo_crops(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models.digits.finetune import load_onnx_weights, photo_set
    from models.digits.train import DigitNet

    net = DigitNet().eval()
    load_onnx_weights(net, str(dg.MODEL_PATH))
    rng = np.random.default_rng(5)
    crops = [sample(rng, d, c) for d, c in ((2, False), (5, True), (3, False))]
    want, _ = _read(crops)
    with torch.no_grad():
        circ = torch.from_numpy(np.stack([dg.circle_input(c) for c in crops])[:, None])
        glyphs = torch.from_numpy(np.stack([dg.glyph(c) for c in crops])[:, None])
        logits, _ = net(glyphs, circ)
    # the same weights as the ONNX file: the same digits on uncircled crops
    assert list(logits.argmax(1).numpy()[[0, 2]] + 1) == list(want[[0, 2]])
    path = tmp_path / "crops.npz"
    np.savez(path, bx=np.stack([*crops, np.zeros_like(crops[0])]).astype(np.float16),
             by=np.array([[2, 0], [5, 1], [3, 0], [0, 0]]))
    gl, cr, dig, circ_y = photo_set([str(path)])
    assert list(dig) == [1, 4, 2] and list(circ_y) == [0.0, 1.0, 0.0]   # the empty box left out
    assert gl.shape == (3, 1, dg.GLYPH, dg.GLYPH) and cr.shape[:2] == (3, 1)
