from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.demo import (
    DEMO_CARD_ID,
    demo_description,
    demo_source_path,
    expected_events,
    make_demo,
    truth_frames,
)
from companion.tracker import DiceTracker, SigilTracker
from vision.sources import SourceConfig, open_source

WAIT = 20.0


@pytest.fixture(scope="module")
def decoded() -> list[np.ndarray]:
    cap = cv2.VideoCapture(str(demo_source_path()), cv2.CAP_FFMPEG)
    frames = []
    try:
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            frames.append(frame)
    finally:
        cap.release()
    return frames


def test_demo_is_small_and_decodes_with_opencv(decoded):
    desc = demo_description()
    assert demo_source_path().stat().st_size < 5_000_000
    assert len(decoded) == desc["frames"] == len(list(truth_frames()))
    w, h = desc["size"]
    assert all(f.shape == (h, w, 3) for f in decoded)
    assert 10 <= desc["duration_s"] <= 20 and desc["loop"] is True


def test_demo_loops_through_the_frame_source():
    n = demo_description()["frames"]
    with open_source(str(demo_source_path()), SourceConfig(loop=True, realtime=False)) as src:
        frames, seq = [], 0
        while len(frames) < n + 3:
            frame = src.next_frame(after=seq, timeout=WAIT)
            assert frame is not None
            frames.append(frame)
            seq = frame.seq
    assert [f.index for f in frames[n - 1:]] == [n - 1, 0, 1, 2]
    assert frames[n].loop == 1 and frames[n].t == pytest.approx(n / 10)


@pytest.mark.parametrize("with_hand", [False, True], ids=["no-hand-detector", "hand-flag"])
def test_truth_through_the_trackers_gives_the_expected_events_every_loop(with_hand):
    desc = demo_description()
    truth = list(truth_frames())
    dice, sigil = DiceTracker(), SigilTracker()
    got: list[list[tuple[str, str, float]]] = [[], []]
    for loop in range(2):
        for f in truth:
            t = loop * desc["duration_s"] + f.t
            events = dice.update(f.dice, t, hand=f.hand and with_hand)
            events += sigil.update(DEMO_CARD_ID, f.sigil, t)
            got[loop] += [(e.kind, e.text, f.t) for e in events]
    expected = expected_events()
    assert len(expected) == 7
    for loop in range(2):
        assert [(k, text) for k, text, _ in got[loop]] == [(e.kind, e.text) for e in expected]
        for (_, text, t), e in zip(got[loop], expected, strict=True):
            assert e.t_from <= t <= e.t_until, (text, t)


def test_the_machine_round_rolls_the_dice_a_new_run_has():
    """"Place your 5 black starting dice in front of you": the demo's first machine roll is
    the pool of a new run (yellow dice are the parts' HP dice, won only by destroying parts)."""
    game = pytest.importorskip("companion.machine.game")
    state, _ = game.new_game(seed=6)
    pool = sorted(d["color"] for d in state["dice"])
    truth = list(truth_frames())
    assert sorted(d.color for d in truth[120].dice.dice) == pool == ["black"] * 5


def test_truth_of_key_frames():
    truth = list(truth_frames())
    assert truth[0].sigil == make_demo.S_BLANK and truth[0].dice.dice == ()
    assert truth[95].sigil == make_demo.S_CROSS and not truth[95].hand
    assert sorted(d.value for d in truth[20].dice.dice) == [3, 5, 5]
    assert sorted((d.color, d.value) for d in truth[120].dice.dice) == [
        ("black", 1), ("black", 2), ("black", 3), ("black", 4), ("black", 6)]
    writing = truth[make_demo.TIMELINE[5][0] + 6]  # the line being drawn
    assert writing.hand and "line 2-7" in writing.sigil.unknown
    assert any(f.hand for f in truth) and any(not f.hand for f in truth)


@pytest.mark.parametrize(("index", "colour"), [(20, "white"), (120, "black")])
def test_truth_boxes_sit_on_the_dice_in_the_video(decoded, index, colour):
    frame = decoded[index]
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
    dice = [d for d in list(truth_frames())[index].dice.dice if d.color == colour]
    assert dice
    for d in dice:
        x0, y0, x1, y1 = (round(v) for v in d.bbox)
        cy = (y0 + y1) // 2
        ring = hsv[cy - 4:cy + 5, x0 + 3:x1 - 3]  # the face, pips included
        value = float(np.median(ring[..., 2]))
        if colour == "white":
            assert value > 170
        elif colour == "black":
            assert value < 110
        else:
            hue, saturation = np.median(ring[..., 0]), np.median(ring[..., 1])
            assert 15 <= hue <= 40 and saturation > 100


def test_committed_video_matches_the_generator(decoded):
    renderers = make_demo.Renderers()
    made_with = demo_description()
    if (renderers.names() != made_with["renderers"]
            or renderers.fingerprint() != made_with.get("renderers_fingerprint")):
        pytest.skip("the renderers draw differently from when demo.mp4 was made "
                    "(re-run python -m companion.demo.make_demo to refresh it)")
    background = renderers.background()
    for index in (20, 60, 140):
        frame, truth = make_demo.render_frame(index, renderers, background)
        mse = float(np.mean((frame.astype(np.float32) - decoded[index].astype(np.float32)) ** 2))
        psnr = 10 * np.log10(255.0 ** 2 / max(mse, 1e-9))
        assert psnr > 28, (index, psnr)
        committed = list(truth_frames())[index]
        assert truth["sigil"] == committed.sigil.to_json()
        assert [d["value"] for d in truth["dice"]] == [d.value for d in committed.dice.dice]


def test_shot_is_pure_and_checks_its_range():
    assert make_demo.shot(50) == make_demo.shot(50)
    with pytest.raises(ValueError, match="outside"):
        make_demo.shot(make_demo.N_FRAMES)


def test_a_damaged_demo_json_is_named_in_one_line(tmp_path, monkeypatch):
    """serve (no --source) printed a JSONDecodeError traceback, exit 1."""
    import companion.demo as demo
    from companion.errors import DataFileError

    text = (demo.DEMO_DIR / "demo.json").read_text()
    (tmp_path / "demo.json").write_text(text[:-50])
    monkeypatch.setattr(demo, "DEMO_DIR", tmp_path)
    demo._doc.cache_clear()
    try:
        with pytest.raises(DataFileError) as exc:
            demo.demo_description()
    finally:
        demo._doc.cache_clear()
    assert exc.value.file == str(tmp_path / "demo.json")
    assert exc.value.json_path.startswith("line 1 column ")
