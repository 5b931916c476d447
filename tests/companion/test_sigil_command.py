"""The ``sigil``, ``eval sigil`` and ``bench sigil`` commands, end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.commands.sigil import all_layouts
from companion.doomcat.layouts import load_layout
from tests.vision.sigil.cards import draw_state, photograph
from vision.readings import SigilState, TopBox

LAYOUT = load_layout("A")
STATES = [
    SigilState.of("A", lines=[(0, 1), (2, 6)], crossed=[4], top=[TopBox(3)] + [None] * 6),
    SigilState.of("A", lines=[(7, 9)], crossed=[], top=[TopBox(5), TopBox(2, True)] + [None] * 5),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sigil_set")
    labels = []
    for i, st in enumerate(STATES):
        rng = np.random.default_rng(100 + i)
        frame, _ = photograph(draw_state(LAYOUT, st, rng), rng)
        cv2.imwrite(str(out / f"card_{i}.png"), frame)
        labels.append({"image": f"card_{i}.png", "sigil": st.to_json(),
                       "conditions": {"tilt_deg": 20.0, "pen_color": "blue", "markers": True}})
    (out / "labels.json").write_text(json.dumps(labels))
    return out


def test_sigil_json(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sigil", str(folder / "card_0.png"), "--layout", "A", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["layout"] == "A"
    assert set(map(tuple, doc["lines"])) <= {(0, 1), (2, 6)} | set()
    assert {"lines", "crossed", "top", "unknown", "pose"} <= set(doc)


def test_sigil_text(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sigil", str(folder / "card_1.png"), "--layout", "A"]) == 0
    assert "lines:" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["sigil", "nope.png", "--layout", "A"], "no such file"),
    (["sigil", "{folder}/labels.json", "--layout", "A"], "not an image"),
    (["sigil", "{folder}/card_0.png", "--layout", "Z"], "Z"),
    (["eval", "sigil", "{folder}/missing"], "not a folder"),
])
def test_bad_input_exits_2(args: list[str], message: str, folder: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    args = [a.format(folder=folder) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("where", "message"), [
    ("afile/sub", "cannot create the folder: Not a directory"),
    ("afile", "exists and is not a folder"),
])
def test_eval_sigil_show_into_a_folder_that_cannot_be_made_exits_2_before_reading(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], where: str, message: str) -> None:
    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setattr("companion.commands.sigil._reader", lambda: pytest.fail("read a card"))
    assert main(["eval", "sigil", str(folder), "--show", str(tmp_path / where)]) == 2
    assert capsys.readouterr().err == f"doomcompanion: error: {tmp_path / where}: {message}\n"


@pytest.mark.parametrize("command", ["eval", "bench"])
@pytest.mark.parametrize(("sigil", "message"), [
    ({"layout": None}, "at $[1].sigil.layout: expected the layout name"),
    ({"layout": "Z"}, "at $[1].sigil.layout: unknown layout 'Z'"),
])
def test_eval_and_bench_refuse_a_label_without_a_usable_layout_alike(
        folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
        sigil: dict, message: str) -> None:
    labels = json.loads((folder / "labels.json").read_text())
    for entry in labels:
        (tmp_path / entry["image"]).write_bytes((folder / entry["image"]).read_bytes())
    labels[1]["sigil"] |= sigil
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    assert main([command, "sigil", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"doomcompanion: error: {tmp_path / 'labels.json'}")
    assert message in err and err.count("\n") == 1


def test_bench_sigil_on_a_folder_without_labels_says_so(
        folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "card_0.png").write_bytes((folder / "card_0.png").read_bytes())
    assert main(["bench", "sigil", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"doomcompanion: error: {tmp_path}: no labels.json in this folder\n")


def test_eval_sigil_refuses_a_label_with_a_misspelt_key(
        folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = json.loads((folder / "labels.json").read_text())
    for entry in labels:
        (tmp_path / entry["image"]).write_bytes((folder / entry["image"]).read_bytes())
    labels[1]["sigil"]["lnes"] = labels[1]["sigil"].pop("lines")
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    assert main(["eval", "sigil", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"doomcompanion: error: {tmp_path / 'labels.json'}: at $[1].sigil.lnes: not a key of "
        "a sigil state: did you mean 'lines'?\n")


@pytest.mark.parametrize(("ghosts", "where"), [
    ("0-1", "$[0].ghost_lines"),
    (5, "$[0].ghost_lines"),     # not a list, nor anything a loop could walk: no traceback
    ([[0, 1], [2]], "$[0].ghost_lines[1]"),
    ([[0, 12]], "$[0].ghost_lines[0]"),
])
def test_eval_sigil_refuses_malformed_ghost_lines(
        folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], ghosts: object,
        where: str) -> None:
    labels = json.loads((folder / "labels.json").read_text())
    for entry in labels:
        (tmp_path / entry["image"]).write_bytes((folder / entry["image"]).read_bytes())
    labels[0]["ghost_lines"] = ghosts
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    assert main(["eval", "sigil", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"doomcompanion: error: {tmp_path / 'labels.json'}: at {where}: expected a list of "
        "erased lines, each a pair of candle indices 0-11\n")


def test_a_broken_registered_card_does_not_block_reading_card_a(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path))
    broken = tmp_path / "cards" / "X3" / "layout.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{")
    monkeypatch.setattr("companion.commands.sigil.all_layouts",
                        all_layouts.__wrapped__)  # not the cached list of another test
    assert main(["sigil", str(folder / "card_0.png"), "--layout", "A", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layout"] == "A"


@pytest.mark.parametrize("command", ["sigil", "eval"])
def test_a_registered_card_with_a_corrupt_reference_is_named_not_the_photo(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], command: str) -> None:
    """The blank card's image of a registered card is the registry's file: a corrupt one was
    reported as the photo's problem ("card_0.png: .../reference.png: ..."), and eval sigil
    counted every card of the design as refused by the reader, exit 0."""
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path / "home"))
    card = tmp_path / "home" / "cards" / "mine"
    card.mkdir(parents=True)
    (card / "layout.json").write_text(json.dumps(LAYOUT.to_json() | {"name": "mine"}))
    (card / "reference.png").write_bytes(b"not a png")
    labels = json.loads((folder / "labels.json").read_text())
    for entry in labels:
        (tmp_path / entry["image"]).write_bytes((folder / entry["image"]).read_bytes())
        entry["sigil"]["layout"] = "mine"
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    monkeypatch.setattr("companion.commands.sigil._reader",
                        lambda: lambda *a, **k: pytest.fail("read a card"))
    args = (["sigil", str(tmp_path / "card_0.png"), "--layout", "mine"] if command == "sigil"
            else ["eval", "sigil", str(tmp_path)])
    assert main(args) == 2
    assert capsys.readouterr().err == (
        f"doomcompanion: error: {card / 'reference.png'}: not an image, or a corrupt or "
        "truncated one (the blank card of registered card 'mine': register it again with "
        "cards register)\n")


@pytest.mark.parametrize(("shape", "message"), [
    ((360, 640, 3), "no sigil card in view"),
    ((1, 1, 3), "image of 1x1 px is too small"),
])
def test_no_card_in_view_exits_2_naming_the_image(tmp_path: Path, shape: tuple[int, ...],
                                                  message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cv2.imwrite(str(tmp_path / "table.png"), np.full(shape, 90, np.uint8))
    assert main(["sigil", str(tmp_path / "table.png"), "--layout", "A"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"doomcompanion: error: {tmp_path / 'table.png'}: {message}")
    assert err.count("\n") == 1


def test_eval_sigil_json(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "sigil", str(folder), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    for key in ("images", "line_precision", "line_recall", "line_f1", "crossed_accuracy",
                "digit_accuracy", "circle_accuracy", "exact_rate", "unknown_share",
                "ghost_lines_counted"):
        assert key in rep
    assert rep["images"] == 2
    assert rep["line_f1"] >= 0.8 and rep["ghost_lines_counted"] == 0
    assert "tilt 15-30" in rep["by_condition"] and "pen_color blue" in rep["by_condition"]


def test_bench_sigil_json(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "sigil", str(folder), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["images"] == 2 and rep["ms_median"] > 0 and rep["peak_mb"] > 0


def test_eval_sigil_show_draws_each_failure(folder: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A label that disagrees with the card and a photo with no card: both are failures, and
    ``--show`` writes a picture of each (and none of the card read exactly)."""
    bad = tmp_path / "set"
    bad.mkdir()
    labels = json.loads((folder / "labels.json").read_text())
    for entry in labels:
        (bad / entry["image"]).write_bytes((folder / entry["image"]).read_bytes())
    wrong = SigilState.of("A", lines=[(0, 1), (2, 6), (3, 5)], crossed=[4],
                          top=[TopBox(3)] + [None] * 6)
    labels[0]["sigil"] = wrong.to_json()             # a line the card does not have
    cv2.imwrite(str(bad / "table.png"), np.full((360, 640, 3), 90, np.uint8))
    labels.append({**labels[1], "image": "table.png"})
    (bad / "labels.json").write_text(json.dumps(labels))
    shown = tmp_path / "shown"
    assert main(["eval", "sigil", str(bad), "--json", "--show", str(shown)]) == 0
    rep = json.loads(capsys.readouterr().out)
    failed = {w["image"] for w in rep["worst"]}
    assert {"card_0.png", "table.png"} <= failed
    assert {p.name for p in shown.iterdir()} == {Path(n).stem + ".jpg" for n in failed}
    drawn = cv2.imread(str(shown / "card_0.jpg"))
    photo = cv2.imread(str(bad / "card_0.png"))
    assert drawn.shape == photo.shape and np.abs(drawn.astype(int) - photo).mean() > 0.5
