"""The one ``FIELD=VALUE`` parser (``--set``, ``--scene``, ``--ink``)."""

from __future__ import annotations

import doctest
import math
from dataclasses import dataclass

import pytest

from vision import options
from vision.options import parse_fields


@dataclass
class Kind:
    width: float = 0.8
    count: int = 3
    dry: bool = False
    center: tuple[float, float] = (0.5, 0.5)
    focals: tuple[float, ...] = (0.0, 1.0)
    colour: str = "black"
    path: str = ""


def test_doctests():
    assert doctest.testmod(options).failed == 0


def test_each_value_is_read_by_its_fields_type():
    got = parse_fields(Kind, ["width=2", " count = 5 ", "dry=TRUE", "center=0.4, 0.6",
                              "focals=1,2,3", "colour=red", "path=/x=y"],
                       choices={"colour": ("black", "red")})
    assert got == {"width": 2.0, "count": 5, "dry": True, "center": (0.4, 0.6),
                   "focals": (1.0, 2.0, 3.0), "colour": "red", "path": "/x=y"}
    assert parse_fields(Kind, ["dry=false"]) == {"dry": False}
    assert parse_fields(Kind, []) == {}


def test_a_threshold_may_be_infinite_where_asked():
    assert parse_fields(Kind, ["width=inf"], finite=False) == {"width": math.inf}


@pytest.mark.parametrize("item, message", [
    ("width", "'width' is not FIELD=VALUE"),
    ("=2", "'=2' is not FIELD=VALUE"),
    ("size=2", "no field 'size' can be set (fields: width, count)"),
    ("dry=1", "no field 'dry' can be set"),
    ("width=wide", "width='wide': width must be a number"),
    ("width=inf", "width='inf': width must be a number"),
    ("width=", "width='': width must be a number"),
    ("count=2.5", "count='2.5': count must be a whole number"),
])
def test_a_mistake_names_the_field_and_what_it_takes(item, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_fields(Kind, [item], names=("width", "count"))


@pytest.mark.parametrize("item, message", [
    ("dry=yes", "dry='yes': dry must be true or false"),
    ("center=1", "center='1': center must be 2 numbers separated by commas"),
    ("center=1,nan", "center='1,nan': center must be 2 numbers separated by commas"),
    ("focals=0,,2", "focals='0,,2': focals must be numbers separated by commas"),
    ("colour=pink", "colour='pink': colour must be one of black, red"),
])
def test_a_value_its_type_refuses_says_what_it_must_be(item, message):
    with pytest.raises(ValueError) as caught:
        parse_fields(Kind, [item], choices={"colour": ("black", "red")})
    assert str(caught.value) == message
