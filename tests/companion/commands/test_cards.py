"""``render sigil --layout L``: photos of any layout (a letter, a registered card, a file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from companion.cli import main
from companion.commands.sigil import evaluate_folder
from companion.doomcat.layouts import load_layout

LAYOUT_E = Path(__file__).resolve().parents[2] / "vision" / "sigil" / "layout_e.json"


def _labels(folder: Path) -> list[dict]:
    return json.loads((folder / "labels.json").read_text())


@pytest.fixture(scope="module")
def rendered_e(tmp_path_factory):
    out = tmp_path_factory.mktemp("render_e") / "set"
    assert main(["render", "sigil", str(out), "--count", "4", "--seed", "3",
                 "--layout", str(LAYOUT_E)]) == 0
    return out


def test_a_layout_file_travels_with_the_photos(rendered_e):
    labels = _labels(rendered_e)
    assert len(labels) == 4
    assert {e["sigil"]["layout"] for e in labels} == {"layouts/E.json"}
    assert {e["layout"] for e in labels} == {"E"}
    assert load_layout(rendered_e / "layouts" / "E.json") == load_layout(LAYOUT_E)


def test_eval_reads_a_layout_files_photos_with_that_layout(rendered_e, tmp_path, monkeypatch):
    # moved elsewhere and evaluated from another folder: the labels still say what to read with
    moved = tmp_path / "moved"
    shutil.copytree(rendered_e, moved)
    monkeypatch.chdir(tmp_path)
    report = evaluate_folder(moved)
    assert report["images"] == 4
    assert not any(err.startswith("refused") for w in report["worst"] for err in w["errors"])
    assert report["line_f1"] >= 0.9


def test_eval_command_reads_them_too(rendered_e, capsys):
    assert main(["eval", "sigil", str(rendered_e), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["images"] == 4


def test_letters_and_files_mix(tmp_path):
    out = tmp_path / "mix"
    assert main(["render", "sigil", str(out), "--count", "6", "--seed", "1",
                 "--layout", "b", "--layout", str(LAYOUT_E)]) == 0
    names = {e["sigil"]["layout"] for e in _labels(out)}
    assert names <= {"B", "layouts/E.json"} and len(names) == 2
    assert sorted(p.name for p in (out / "layouts").iterdir()) == ["E.json"]


def test_a_registered_card_is_rendered_from_its_layout(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "cards" / "mycard").mkdir(parents=True)
    shutil.copy(LAYOUT_E, home / "cards" / "mycard" / "layout.json")
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(home))
    out = tmp_path / "reg"
    assert main(["render", "sigil", str(out), "--count", "1", "--seed", "2",
                 "--layout", "mycard"]) == 0
    assert _labels(out)[0]["sigil"]["layout"] == "layouts/mycard.json"
    copied = load_layout(out / "layouts" / "mycard.json")
    assert copied.name == "mycard" and copied.candles == load_layout(LAYOUT_E).candles


def _render_bytes(out: Path, *extra: str) -> dict[str, bytes]:
    assert main(["render", "sigil", str(out), "--count", "3", "--seed", "11", *extra]) == 0
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_without_layout_the_photos_are_those_of_a_to_d(tmp_path):
    default = _render_bytes(tmp_path / "default")
    explicit = _render_bytes(tmp_path / "explicit", *[a for letter in "ABCD"
                                                      for a in ("--layout", letter)])
    assert default == explicit
    assert not (tmp_path / "default" / "layouts").exists()
    # the states drawn for seed 11 before --layout existed
    got = [(e["layout"], e["sigil"]["lines"], e["sigil"]["crossed"])
           for e in _labels(tmp_path / "default")]
    assert got == [
        ("A", [[0, 2], [1, 7], [2, 5], [3, 11], [4, 5]], [0, 4, 5, 6, 10]),
        ("B", [[0, 9], [2, 10], [4, 5], [5, 11], [7, 9], [8, 9], [9, 10]],
         [1, 2, 4, 5, 7, 8, 11]),
        ("A", [[1, 3], [1, 7], [3, 7], [10, 11]], [0, 5, 8, 9]),
    ]


def _against_schema(tmp_path: Path) -> str:
    doc = json.loads(LAYOUT_E.read_text())
    del doc["candles"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("layout, named", [
    ("Zed", "'Zed'"),
    ("nowhere/missing.json", "nowhere/missing.json"),
    (_against_schema, "broken.json"),
])
def test_a_bad_layout_exits_2_with_one_line_naming_it(layout, named, tmp_path, capsys):
    if callable(layout):
        layout = layout(tmp_path)
    out = tmp_path / "out"
    assert main(["render", "sigil", str(out), "--count", "1", "--layout", layout]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err
    assert not out.exists()


# ``render sigil --scene FIELD=VALUE`` / ``--ink FIELD=VALUE``: one condition fixed for a
# whole set (a far card, a steep angle, a pale or thick pen), to measure the reader on it

def test_scene_and_ink_fields_fix_those_conditions_for_every_photo(tmp_path):
    out = tmp_path / "fixed"
    assert main(["render", "sigil", str(out), "--count", "3", "--seed", "11",
                 "--scene", "tilt_deg=12.5", "--scene", "hand=false",
                 "--ink", "width_mm=2", "--ink", "pen_color=green"]) == 0
    conds = [e["conditions"] for e in _labels(out)]
    assert [c["tilt_deg"] for c in conds] == [12.5] * 3
    assert [c["hand"] for c in conds] == [False] * 3
    assert [c["pen_width_mm"] for c in conds] == [2.0] * 3
    assert [c["pen_color"] for c in conds] == ["green"] * 3
    # the states are those the seed draws without the options (what a hand hides differs:
    # hand=false takes the hands away)
    default = tmp_path / "default"
    assert main(["render", "sigil", str(default), "--count", "3", "--seed", "11"]) == 0

    def drawn(folder):
        return [{k: v for k, v in e["sigil"].items() if k != "unknown"} for e in _labels(folder)]

    assert drawn(out) == drawn(default)
    assert not any(e["sigil"]["unknown"] for e in _labels(out))


def test_a_pale_pen_set_reads_with_fainter_ink(tmp_path):
    """--ink opacity=0.4 draws the same strokes paler: the photos differ from the default's
    only where ink is, and are lighter there."""
    import cv2
    import numpy as np

    pale, default = tmp_path / "pale", tmp_path / "default"
    assert main(["render", "sigil", str(pale), "--count", "1", "--seed", "5",
                 "--ink", "opacity=0.4", "--scene", "jpeg_quality=95"]) == 0
    assert main(["render", "sigil", str(default), "--count", "1", "--seed", "5",
                 "--scene", "jpeg_quality=95"]) == 0
    a = cv2.imread(str(pale / "sigil_00000.jpg")).astype(np.float32)
    b = cv2.imread(str(default / "sigil_00000.jpg")).astype(np.float32)
    changed = np.abs(a - b).max(axis=2) > 40
    assert 0.001 < changed.mean() < 0.2
    assert (a.mean(axis=2)[changed] > b.mean(axis=2)[changed]).mean() > 0.9


@pytest.mark.parametrize("args, named", [
    (["--scene", "tilt=5"], "tilt"),
    (["--ink", "colour=red"], "colour"),
    (["--scene", "tilt_deg=steep"], "tilt_deg"),
    (["--ink", "pen_color=pink"], "pink"),
    (["--scene", "background=moon"], "moon"),
    (["--scene", "hand"], "hand"),
])
def test_a_bad_field_exits_2_with_one_line_naming_it(args, named, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["render", "sigil", str(out), "--count", "1", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err
    assert not out.exists()


def test_without_scene_or_ink_the_photos_are_byte_identical_to_before(tmp_path):
    """The digest of seed 11's first six photos and labels as main d96dc83 rendered them,
    before the options existed."""
    import hashlib

    out = tmp_path / "s11"
    assert main(["render", "sigil", str(out), "--count", "6", "--seed", "11"]) == 0
    files = sorted(p.name for p in out.iterdir())
    lines = "".join(f"{hashlib.sha256((out / f).read_bytes()).hexdigest()}  {f}\n"
                    for f in files)
    assert hashlib.sha256(lines.encode()).hexdigest() == \
        "d4cc0cf8b624497768760e63ba7f98167aa7198d0b77ed0d82940e9d7358444c"
