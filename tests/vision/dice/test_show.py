"""The failure sheet tool (models/dice/show.py): what it draws for a labelled folder."""

from __future__ import annotations

import json
import sys

import cv2
import numpy as np

from models.dice import show
from vision.dice import read_dice
from vision.render.dice import DieSpec, draw_dice


def _folder(tmp_path, value_offset: int):
    """One rendered image of two dice, labelled with each value plus ``value_offset`` (mod 6):
    0 labels them right, 1 wrong."""
    frame = np.full((240, 320, 3), (60, 110, 150), np.uint8)
    labels = draw_dice(frame, [DieSpec(3, "red", (100.0, 120.0), 50.0),
                               DieSpec(5, "white", (220.0, 120.0), 50.0)],
                       np.random.default_rng(0))
    cv2.imwrite(str(tmp_path / "a.png"), frame)
    dice = [{"value": (lb["value"] - 1 + value_offset) % 6 + 1, "bbox": lb["bbox"]}
            for lb in labels]
    (tmp_path / "labels.json").write_text(json.dumps([{"image": "a.png", "dice": dice}]))
    return frame


def test_a_folder_read_right_has_no_failures(tmp_path):
    frame = _folder(tmp_path, 0)
    assert sorted(d.value for d in read_dice(frame).dice) == [3, 5]
    assert show.failure_tiles(tmp_path, 10) == ([], [])
    assert show.failure_tiles(tmp_path, 10, with_candidates=True) == ([], [])


def test_each_failure_comes_with_the_candidates_the_classifier_read(tmp_path, monkeypatch,
                                                                    capsys):
    _folder(tmp_path, 1)  # both dice labelled wrong: two failures
    plain, captions = show.failure_tiles(tmp_path, 10)
    assert len(captions) == 2
    assert len(plain) == 2 and all(t.shape == (show.TILE, show.TILE, 3) for t in plain)
    tiles, with_candidates = show.failure_tiles(tmp_path, 10, with_candidates=True)
    assert with_candidates == captions  # one caption per failure, not per tile
    assert len(tiles) == 2 * (1 + show.CANDIDATES)
    assert all(t.shape == (show.TILE, show.TILE, 3) for t in tiles)
    for k in (0, 1 + show.CANDIDATES):  # each failure's tile, then its strongest candidate
        assert np.array_equal(tiles[k], plain[k // (1 + show.CANDIDATES)])
        assert tiles[k + 1].std() > 10  # a die's crop, not a blank tile
    assert len(show.failure_tiles(tmp_path, 1, with_candidates=True)[0]) == 1 + show.CANDIDATES
    monkeypatch.setattr(sys, "argv", ["show", str(tmp_path), str(tmp_path / "out"), "--sheet",
                                      "--candidates"])
    show.main()
    assert "2 failures on" in capsys.readouterr().out
    sheet = cv2.imread(str(tmp_path / "out" / f"{tmp_path.name}.jpg"))
    assert sheet.shape == (show.TILE, 2 * (1 + show.CANDIDATES) * show.TILE, 3)
    captions = (tmp_path / "out" / f"{tmp_path.name}.txt").read_text().splitlines()
    assert len(captions) == 2 and all(line.startswith("a.png: ") for line in captions)


def test_the_limit_cuts_the_tiles_and_their_captions(tmp_path):
    _folder(tmp_path, 1)
    tiles, captions = show.failure_tiles(tmp_path, 1)
    assert len(tiles) == 1
    assert len(captions) == 1 and " -> " in captions[0]
