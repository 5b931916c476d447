"""The ``dice``, ``eval dice``, ``bench dice`` and ``render dice`` commands."""

from __future__ import annotations

import json
import shutil

import cv2
import numpy as np
import pytest

from companion.cli import main


def _jpg(path, image):
    assert cv2.imwrite(str(path), image)
    return path


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("render")
    assert main(["render", "dice", str(out), "--count", "3", "--seed", "5"]) == 0
    return out


def test_render_writes_images_and_labels(rendered):
    labels = json.loads((rendered / "labels.json").read_text())
    assert [e["image"] for e in labels] == ["scene_00000.jpg", "scene_00001.jpg",
                                            "scene_00002.jpg"]
    for entry in labels:
        image = cv2.imread(str(rendered / entry["image"]))
        assert image.shape == (entry["height"], entry["width"], 3)
        for die in entry["dice"]:
            assert die["bbox_kind"] == "top_face"


def test_render_is_seeded(rendered, tmp_path):
    assert main(["render", "dice", str(tmp_path), "--count", "1", "--seed", "5"]) == 0
    assert (json.loads((tmp_path / "labels.json").read_text())[0]
            == json.loads((rendered / "labels.json").read_text())[0])


def test_a_render_stopped_half_way_leaves_no_labels_that_describe_other_photos(
        rendered, tmp_path, monkeypatch, capsys):
    """Rendering again into a labelled folder and stopping (Ctrl-C) half-way left the old
    labels.json beside photos partly replaced by new ones: eval then scored the reader against
    the wrong labels, exit 0. The folder is unlabelled until the new labels are written."""
    out = tmp_path / "set"
    shutil.copytree(rendered, out)
    from companion.commands import dice as command

    real = command.render_scene
    calls = []

    def interrupted(rng):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(rng)

    monkeypatch.setattr(command, "render_scene", interrupted)
    assert main(["render", "dice", str(out), "--count", "3", "--seed", "9"]) == 130
    assert not (out / "labels.json").exists()
    assert sorted(p.name for p in out.iterdir()) == [  # the photos, and no temporary file
        "scene_00000.jpg", "scene_00001.jpg", "scene_00002.jpg"]
    capsys.readouterr()
    assert main(["eval", "dice", str(out)]) == 2
    assert "no labels.json in this folder" in capsys.readouterr().err


def test_eval_refuses_a_labelled_box_outside_its_image(rendered, tmp_path, capsys):
    """A box off the photo (x and y swapped, another photo's box) can match no reading: it
    was counted as a die the reader missed, exit 0."""
    out = tmp_path / "set"
    shutil.copytree(rendered, out)
    labels = json.loads((out / "labels.json").read_text())
    w, h = labels[1]["width"], labels[1]["height"]
    labels[1]["dice"][0]["bbox"] = [w + 10, 20, w + 60, 70]
    (out / "labels.json").write_text(json.dumps(labels))
    assert main(["eval", "dice", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"doomcompanion: error: {out / 'labels.json'}: at $[1].dice[0].bbox: "
        f"[{w + 10}, 20, {w + 60}, 70] lies outside the {w}x{h} image\n")


def test_eval_prints_the_fixed_keys(rendered, capsys):
    assert main(["eval", "dice", str(rendered), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"images", "dice", "accuracy", "recall", "fp_per_image",
                           "exact_rate", "confusion"}
    assert report["images"] == 3


def test_eval_scores_the_colours_the_labels_name(rendered, tmp_path, capsys):
    """Rendered labels name each die's colour: eval counts the matched dice named so, in its
    JSON and in its text; a folder whose labels name no colour has no colour figure."""
    assert main(["eval", "dice", str(rendered), "--json"]) == 0
    colour = json.loads(capsys.readouterr().out)["colour"]
    assert colour["dice"] > 0 and 0 <= colour["named"] <= colour["dice"]
    assert colour["named"] == sum(row.get(k, 0) for k, row in colour["confusion"].items())
    assert main(["eval", "dice", str(rendered)]) == 0
    assert f"colour: {colour['named']} of {colour['dice']} named as labelled" in \
        capsys.readouterr().out
    plain = shutil.copytree(rendered, tmp_path / "plain")
    labels = json.loads((plain / "labels.json").read_text())
    for entry in labels:
        for die in entry["dice"]:
            del die["color"]
    (plain / "labels.json").write_text(json.dumps(labels))
    assert main(["eval", "dice", str(plain), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["colour"] is None


def test_bench_prints_the_fixed_keys(rendered, capsys):
    assert main(["bench", "dice", str(rendered), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"images", "ms_median", "ms_p95", "peak_mb"}
    assert report["images"] == 3 and report["ms_median"] > 0


def test_dice_reads_images_as_json_lines(rendered, capsys):
    files = sorted(str(p) for p in rendered.glob("*.jpg"))[:2]
    assert main(["dice", *files, "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line, name in zip(lines, files, strict=True):
        doc = json.loads(line)
        assert doc["image"] == name and isinstance(doc["dice"], list)


def test_dice_on_a_blank_image_finds_nothing(tmp_path, capsys):
    path = _jpg(tmp_path / "blank.jpg", np.full((120, 160, 3), 200, np.uint8))
    assert main(["dice", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dice"] == []


def _truncated(tmp_path):
    _, buf = cv2.imencode(".jpg", np.full((50, 50, 3), 100, np.uint8))
    path = tmp_path / "cut.jpg"
    path.write_bytes(buf.tobytes()[:200])
    return path


def _zero_size(tmp_path):
    from tests.vision.test_imageio import _png_of_size

    path = tmp_path / "zero.png"
    path.write_bytes(_png_of_size(0, 0))
    return path


@pytest.mark.parametrize(("make", "message"), [
    (lambda d: (d / "notes.jpg").write_text("hello") and d / "notes.jpg", "not an image"),
    (lambda d: (d / "empty.png").write_bytes(b"") or d / "empty.png", "empty"),
    (_truncated, "truncated"),
    (lambda d: d / "missing.jpg", "no such file"),
    (_zero_size, "zero-size"),
])
def test_bad_images_exit_2_with_one_line(tmp_path, capsys, make, message):
    path = make(tmp_path)
    assert main(["dice", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and str(path.name) in err


@pytest.mark.parametrize(("setup", "message"), [
    (lambda d: None, "labels.json"),
    (lambda d: (d / "labels.json").write_text("[{]"), "not valid JSON"),
    (lambda d: (d / "labels.json").write_text('[{"image": "x.jpg", "dice": []}]'), "x.jpg"),
])
def test_eval_bad_folders_exit_2(tmp_path, capsys, setup, message):
    setup(tmp_path)
    assert main(["eval", "dice", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_bench_of_a_folder_without_images_exits_2(tmp_path, capsys):
    assert main(["bench", "dice", str(tmp_path)]) == 2
    assert "no images" in capsys.readouterr().err
