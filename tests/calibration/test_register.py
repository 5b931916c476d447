from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from calibration.register import register_card
from companion.cli import main
from companion.doomcat.layouts import LAYOUTS_DIR, load_layout
from companion.errors import BadInput
from vision.render.sigil import CardStyle, photograph, render_card, sample_conditions
from vision.sigil.pose import find_card


def _blank_photo(letter: str, art: str, design: int, seed: int, **fixed):
    rng = np.random.default_rng(seed)
    card = render_card(load_layout(letter), None, CardStyle(art, design, 8.0), rng)
    conditions = sample_conditions(rng, hand=False, glare=0.0, shadow=0.0, motion_px=0.0,
                                   **fixed)
    frame, info = photograph(card, rng, conditions)
    _, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return cv2.imdecode(data, cv2.IMREAD_COLOR), info


CASES = [
    # letter, art, design, seed, background, tilt
    ("A", "companion", 0, 1, "wood", 10.0),
    ("B", "companion", 0, 2, "dark", 30.0),
    ("C", "companion", 0, 3, "clutter", 20.0),
    ("D", "printed", 0, 4, "wood", 5.0),
    ("A", "printed", 1, 5, "paper", 15.0),
    ("B", "printed", 2, 6, "felt", 20.0),
    ("C", "printed", 3, 7, "dark", 10.0),
]


@pytest.mark.parametrize(("letter", "art", "design", "seed", "background", "tilt"), CASES)
def test_find_card_recovers_the_corners(letter, art, design, seed, background, tilt):
    frame, info = _blank_photo(letter, art, design, seed, background=background, tilt_deg=tilt,
                               fill=0.4)
    found = find_card(frame, load_layout(letter))
    assert found.method == ("markers" if art == "companion" else "outline")
    # Corners in the printed order (orientation resolved), within a few pixels.
    assert np.abs(found.corners - info.card_corners_px).max() < 4.0


@pytest.mark.parametrize("art", ["companion", "printed"])
def test_register_stores_layout_and_reference(tmp_path, monkeypatch, art):
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path))
    frame, info = _blank_photo("B", art, 2, 11, background="wood", tilt_deg=12.0, fill=0.45)
    photo = tmp_path / "blank.jpg"
    cv2.imwrite(str(photo), frame)
    assert main(["cards", "register", str(photo), "--layout", str(LAYOUTS_DIR / "B.json"),
                 "--name", "my-card"]) == 0
    folder = tmp_path / "cards" / "my-card"
    ref = cv2.imread(str(folder / "reference.png"))
    assert ref.shape == (126 * 8, 88 * 8, 3)
    layout = load_layout("my-card")
    assert layout.name == "my-card" and layout.candles == load_layout("B").candles
    meta = json.loads((folder / "reference.json").read_text())
    assert np.abs(np.array(meta["corners_px"]) - info.card_corners_px).max() < 4.0
    # The reference is the blank card: it matches a fresh rendering of the face closely.
    face = render_card(load_layout("B"), None, CardStyle(art, 2, 8.0)).image
    diff = np.abs(cv2.GaussianBlur(ref, (0, 0), 3).astype(int)
                  - cv2.GaussianBlur(face, (0, 0), 3).astype(int))
    assert np.median(diff) < 40


@pytest.mark.parametrize(("photo", "layout", "name", "message"), [
    ("plain", "B", "x1", "no card found"),
    ("notimage", "B", "x1", "not an image"),
    ("missing", "B", "x1", "no such file"),
    ("card", "B", "b", "built in"),
    ("card", "B", "bad name!", "--name"),
    ("card", "broken", "x1", "broken.json"),
    ("card", "nofile", "x1", "no such"),
    ("tiny", "B", "x1", "too small"),
    ("card", "A", "x1", "does not match"),
    ("printed", "C", "x1", "does not match"),
])
def test_register_refuses_bad_input(tmp_path, monkeypatch, capsys, photo, layout, name, message):
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path / "home"))
    path = tmp_path / "photo.jpg"
    if photo == "plain":
        cv2.imwrite(str(path), np.full((720, 1280, 3), 90, np.uint8))
    elif photo == "notimage":
        path.write_text("hello")
    elif photo == "card":
        cv2.imwrite(str(path), _blank_photo("B", "companion", 0, 3, background="wood")[0])
    elif photo == "printed":
        cv2.imwrite(str(path), _blank_photo("B", "printed", 1, 4, background="wood")[0])
    elif photo == "tiny":
        frame = _blank_photo("B", "printed", 0, 3, background="wood", tilt_deg=0.0, fill=0.2)[0]
        cv2.imwrite(str(path), cv2.resize(frame, (320, 180), interpolation=cv2.INTER_AREA))
    layout_path = LAYOUTS_DIR / f"{layout}.json"
    if layout == "broken":
        layout_path = tmp_path / "broken.json"
        doc = json.loads((LAYOUTS_DIR / "B.json").read_text())
        del doc["candles"][0]
        layout_path.write_text(json.dumps(doc))
    elif layout == "nofile":
        layout_path = tmp_path / "nofile.json"
    code = main(["cards", "register", str(path), "--layout", str(layout_path), "--name", name])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "home" / "cards" / name).exists()


def test_register_accepts_an_array(tmp_path):
    frame, _ = _blank_photo("C", "companion", 0, 5, background="felt")
    result = register_card(frame, LAYOUTS_DIR / "C.json", "card-c", registry=tmp_path)
    assert result.method == "markers" and (result.folder / "reference.png").is_file()
    with pytest.raises(BadInput):
        register_card(frame, LAYOUTS_DIR / "C.json", "A", registry=tmp_path)


@pytest.mark.parametrize("blocked", ["home", "home/cards", "home/cards/mine"])
def test_register_into_a_registry_that_cannot_be_written_exits_2(tmp_path, monkeypatch, capsys,
                                                                   blocked):
    """A file where the registry's folder goes (a read-only home fails alike): one line."""
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path / "home"))
    (tmp_path / blocked).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / blocked).write_text("a file, not a folder")
    photo = tmp_path / "photo.jpg"
    cv2.imwrite(str(photo), _blank_photo("C", "companion", 0, 5, background="felt")[0])
    code = main(["cards", "register", str(photo), "--layout", str(LAYOUTS_DIR / "C.json"),
                 "--name", "mine"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"doomcompanion: error: {tmp_path / blocked}")
    assert (tmp_path / blocked).read_text() == "a file, not a folder"


def test_a_registration_that_fails_to_be_written_leaves_the_earlier_one_whole(tmp_path,
                                                                             monkeypatch):
    frame, _ = _blank_photo("C", "companion", 0, 5, background="felt")
    first = register_card(frame, LAYOUTS_DIR / "C.json", "mine", registry=tmp_path)
    before = {p.name: p.read_bytes() for p in first.folder.iterdir()}
    other = tmp_path / "C2.json"
    other.write_text(json.dumps(json.loads((LAYOUTS_DIR / "C.json").read_text())
                                | {"title": "second"}))
    monkeypatch.setattr("calibration.register.cv2.imwrite", lambda *a, **k: False)
    with pytest.raises(BadInput, match=r"reference\.png: cannot write"):
        register_card(frame, other, "mine", registry=tmp_path)
    assert {p.name: p.read_bytes() for p in first.folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["C2.json", "cards"]  # no leftovers
    assert sorted(p.name for p in (tmp_path / "cards").iterdir()) == ["mine"]


def test_a_card_registered_again_gives_its_new_blank_to_a_running_reader(tmp_path, monkeypatch):
    """A server that read a registered card once reads its new blank after ``cards register``
    writes it again (the reference was cached for the process's life)."""
    from calibration.references import references

    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path))
    first, _ = _blank_photo("C", "companion", 0, 5, background="felt")
    register_card(first, LAYOUTS_DIR / "C.json", "mine", registry=tmp_path)
    (old,) = references("mine")
    second, _ = _blank_photo("B", "printed", 2, 6, background="wood", tilt_deg=10.0, fill=0.45)
    register_card(second, LAYOUTS_DIR / "B.json", "mine", registry=tmp_path)
    (new,) = references("mine")
    stored = cv2.imread(str(tmp_path / "cards" / "mine" / "reference.png"))
    assert np.array_equal(new, stored) and not np.array_equal(new, old)
    assert references("mine")[0] is new  # unchanged on disk: not read again
