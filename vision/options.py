"""``FIELD=VALUE`` texts of a command line to the fields of a dataclass they set.

One parser for every option that sets fields of a configuration dataclass: the dice reader's
``--set`` (``models.dice.validate``) and ``render sigil``'s ``--scene`` and ``--ink``
(:func:`vision.render.sigil.fixed_fields`). Each VALUE is read by its field's declared type.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

__all__ = ["parse_fields"]


def _number(text: str, finite: bool) -> float:
    value = float(text)
    if finite and not math.isfinite(value):
        raise ValueError
    return value


def _value(kind: Any, text: str, choices: tuple[str, ...] | None, finite: bool) -> Any:
    """``text`` read as a value of the type ``kind``; ``ValueError`` when it is not one."""
    if kind is bool:
        if text.lower() not in ("true", "false"):
            raise ValueError
        return text.lower() == "true"
    if kind is int:
        return int(text)
    if kind is float:
        return _number(text, finite)
    if typing.get_origin(kind) is tuple:
        value = tuple(_number(v, finite) for v in text.split(","))
        size = typing.get_args(kind)
        if Ellipsis not in size and len(value) != len(size):
            raise ValueError
        return value
    if choices is not None and text not in choices:
        raise ValueError
    return text


def _wanted(kind: Any, choices: tuple[str, ...] | None) -> str:
    """What a value of the type ``kind`` is, for a message."""
    if kind is bool:
        return "true or false"
    if kind is int:
        return "a whole number"
    if kind is float:
        return "a number"
    if typing.get_origin(kind) is tuple:
        size = typing.get_args(kind)
        return ("" if Ellipsis in size else f"{len(size)} ") + "numbers separated by commas"
    return "one of " + ", ".join(choices) if choices is not None else "a text"


def parse_fields(kind: type, items: Iterable[str], *, names: Iterable[str] | None = None,
                 choices: Mapping[str, tuple[str, ...]] | None = None,
                 finite: bool = True) -> dict[str, Any]:
    """``FIELD=VALUE`` texts to the values of the fields of the dataclass ``kind`` they set.

    Each VALUE is read as its field's declared type: ``true``/``false`` (any case) for a
    bool, a whole number for an int, a number for a float, numbers separated by commas for a
    tuple of floats (as many as a fixed-size tuple holds), a text for a str (one of
    ``choices[FIELD]`` where given). ``names``: the fields that may be set (default all);
    ``finite``: refuse ``inf`` and ``nan`` (a reader's threshold may be ``inf``: "never").

    Raises ``ValueError`` with one line naming the item that is not ``FIELD=VALUE``, the field
    that cannot be set (with those that can), or the field and what its value must be.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Pen:
    ...     width: float = 0.8
    ...     center: tuple[float, float] = (0.5, 0.5)
    ...     dry: bool = False
    >>> parse_fields(Pen, ["width=2", "center=0.4, 0.6", "dry=True"])
    {'width': 2.0, 'center': (0.4, 0.6), 'dry': True}
    >>> parse_fields(Pen, ["center=1"])
    Traceback (most recent call last):
    ...
    ValueError: center='1': center must be 2 numbers separated by commas
    >>> parse_fields(Pen, ["colour=red"])
    Traceback (most recent call last):
    ...
    ValueError: no field 'colour' can be set (fields: width, center, dry)
    """
    types = typing.get_type_hints(kind)
    names = tuple(f.name for f in fields(kind)) if names is None else tuple(names)
    choices = choices or {}
    out: dict[str, Any] = {}
    for item in items:
        name, eq, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not eq or not name:
            raise ValueError(f"{item!r} is not FIELD=VALUE")
        if name not in names:
            raise ValueError(f"no field {name!r} can be set (fields: {', '.join(names)})")
        try:
            out[name] = _value(types[name], text, choices.get(name), finite)
        except ValueError:
            raise ValueError(f"{name}={text!r}: {name} must be "
                             f"{_wanted(types[name], choices.get(name))}") from None
    return out
