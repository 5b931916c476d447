"""Loading JSON data files validated by a JSON Schema that lives beside them.

Every catalogue the project ships (sigil layouts, goals, familiars, machine parts) and every
file a user edits goes through :func:`load_validated`, so that a mistake is reported the same
way everywhere: the file, the JSON path inside it and the rule broken.

Examples
--------
>>> from companion.datafiles import validate
>>> validate({"a": 1}, {"type": "object", "required": ["b"]}, source="x.json")
Traceback (most recent call last):
...
companion.errors.DataFileError: x.json: at $: 'b' is a required property
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from companion.errors import BadInput, DataFileError

DATA_DIR = Path(__file__).resolve().parent / "data"


def json_path(parts: Iterable[str | int]) -> str:
    """Render a path into a JSON document as ``$.candles[3].center``."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


class _NonFinite(str):
    """What ``Infinity``, ``-Infinity``, ``NaN`` or ``1e999`` parse to: the reason to refuse it."""


def _constant(name: str) -> _NonFinite:
    return _NonFinite(f"{name} is not a number JSON allows")


def _float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(f"{text} is too large a number")


def _non_finite(document: Any, parts: tuple[str | int, ...] = ()) -> tuple[Any, ...] | None:
    """The JSON path of the first non-finite number in ``document`` and the reason, or None."""
    if isinstance(document, _NonFinite):
        return (*parts, str(document))
    items = document.items() if isinstance(document, dict) else \
        enumerate(document) if isinstance(document, list) else ()
    for key, value in items:
        found = _non_finite(value, (*parts, key))
        if found:
            return found
    return None


def _decode(data: bytes, source: str) -> str:
    """UTF-8 bytes as text (a leading byte order mark, which some editors write, dropped);
    bytes in another encoding raise :class:`DataFileError` naming the line and column."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise DataFileError(source, f"line {line} column {column}",
                            f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


def parse_json(text: str | bytes, source: str) -> Any:
    """Parse JSON text read from ``source``; malformed JSON raises :class:`DataFileError`.

    Bytes are UTF-8 (a byte order mark is allowed); others are refused naming their line and
    column. Python's ``json`` takes ``Infinity``, ``-Infinity`` and ``NaN``, which JSON does not
    allow, and reads ``1e999`` as infinity: no data file means them, so they are refused too,
    naming their JSON path.

    >>> parse_json('{"size_mm": [NaN, 1]}', "x.json")
    Traceback (most recent call last):
    ...
    companion.errors.DataFileError: x.json: at $.size_mm[0]: NaN is not a number JSON allows
    """
    if isinstance(text, (bytes, bytearray)):
        text = _decode(bytes(text), source)
    try:
        document = json.loads(text, parse_constant=_constant, parse_float=_float)
        found = _non_finite(document)
    except json.JSONDecodeError as exc:
        raise DataFileError(source, f"line {exc.lineno} column {exc.colno}",
                            f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise DataFileError(source, "$", "not usable JSON: nested too deeply") from None
    if found:
        raise DataFileError(source, json_path(found[:-1]), found[-1])
    return document


def read_json(path: str | Path) -> Any:
    """Read a JSON file; a missing, unreadable or malformed file raises :class:`BadInput`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_json(data, str(path))


def output_folder(path: str | Path) -> Path:
    """Make the folder a command writes into (and its parents); :class:`BadInput` when the
    path cannot be a folder (a file on the way, no permission, ...)."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise BadInput(f"{out}: exists and is not a folder") from None
    except OSError as exc:
        raise BadInput(f"{out}: cannot create the folder: {exc.strerror}") from None
    return out


def unlabel(folder: Path) -> None:
    """Remove ``folder/labels.json`` before a command writes new photos into ``folder``: until
    its new labels are written (:func:`write_whole`), the folder is
    unlabelled, never labelled with what describes other photos (a render stopped half-way)."""
    try:
        (folder / "labels.json").unlink(missing_ok=True)
    except IsADirectoryError:
        raise BadInput(f"{folder / 'labels.json'}: is a folder, not a file") from None
    except OSError as exc:
        raise BadInput(f"{folder / 'labels.json'}: cannot replace: {exc.strerror}") from None


def write_whole(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` whole or not at all: into a
    temporary file beside it, then renamed over it (a disk filling up, a failure or Ctrl-C
    half-way leaves the file that was there, and no half-written one). A failure raises
    :class:`BadInput` naming the file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise BadInput(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def file_stamp(path: str | Path) -> tuple[int, int]:
    """A file's modification time (ns) and size, ``(0, 0)`` when it cannot be looked at: part
    of the key of a cache of what was read from it, so that a file edited or written again
    while the program runs is read again."""
    try:
        stat = Path(path).stat()
    except OSError:
        return (0, 0)
    return (stat.st_mtime_ns, stat.st_size)


@cache
def _schema(path: str) -> dict[str, Any]:
    schema = read_json(path)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    return schema


SHOWN_CHARS = 60   # a value longer than this in JSON is described, not written, in a message
ENUM_CHARS = 120   # the choices of an enum are written up to this many characters


def as_json(value: Any, limit: int | None = None) -> str:
    """A value as JSON writes it (``null``, ``true``, ``"x"``: as a client sent it), cut to
    ``limit`` characters when given."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if limit is None or len(text) <= limit else text[:limit - 1] + "…"


def shown(value: Any) -> str:
    """A value as a message shows it: in JSON, or described when that is longer than
    :data:`SHOWN_CHARS` (a whole catalogue when one item is missing would run to pages).

    >>> shown(None), shown([1, 2]), shown(list(range(40)))
    ('null', '[1, 2]', 'a list of 40 items')
    >>> shown("ab" * 35)
    '"abababababababababababababababababababab..." (70 characters)'
    """
    text = as_json(value)
    if len(text) <= SHOWN_CHARS:
        return text
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return f"an object of {len(value)} key{'s' if len(value) != 1 else ''}"
    if isinstance(value, str):
        return f"{as_json(value[:40])[:-1]}...\" ({len(value)} characters)"
    return text[:SHOWN_CHARS] + "..."


def _first_repeated(items: list[Any]) -> Any:
    """The first item of ``items`` met a second time (``1`` and ``true`` differ)."""
    seen: set[str] = set()
    for item in items:
        key = json.dumps(item, sort_keys=True, default=repr)
        if key in seen:
            return item
        seen.add(key)
    return items


def repeats(keys: Iterable[Any]) -> dict[int, int]:
    """Where each key met again was first met: ``{index: index of the first}`` for every key
    of ``keys`` equal to an earlier one, so that a catalogue's check of a name or number used
    twice names both places (``also at $[0].name``).

    >>> repeats(["a", "b", "a", "c", "a"])
    {2: 0, 4: 0}
    """
    first: dict[Any, int] = {}
    return {i: j for i, key in enumerate(keys) if (j := first.setdefault(key, i)) != i}


def schema_message(error: jsonschema.exceptions.ValidationError) -> str:
    """The rule a schema error says is broken, in one short line, its value written as JSON
    (:func:`shown`) where jsonschema writes Python's repr: a value fitting none of the types an
    ``anyOf`` allows names them all, a repeated item is named, and a length bound is given.

    >>> v = jsonschema.Draft202012Validator({"minItems": 3, "uniqueItems": True})
    >>> schema_message(next(v.iter_errors([None, True])))
    '[null, true] is too short (at least 3 items)'
    >>> schema_message(next(v.iter_errors([[0] * 50])))
    'a list of 1 item is too short (at least 3 items)'
    >>> schema_message(next(v.iter_errors([1, 2, 2])))
    '2 is listed twice: each must be different'
    """
    instance = error.instance
    if error.context and all(e.validator == "type" and not e.path for e in error.context):
        types = " or ".join(f"'{e.validator_value}'" for e in error.context)
        return f"{shown(instance)} is not of type {types}"
    if error.validator == "uniqueItems" and isinstance(instance, list):
        return f"{shown(_first_repeated(instance))} is listed twice: each must be different"
    message = " ".join(error.message.split())
    python = " ".join(repr(instance).split())
    if message.startswith(python):
        message = shown(instance) + message[len(python):]
    if error.validator == "enum" and message.endswith(repr(error.validator_value)):
        message = (message[:-len(repr(error.validator_value))]
                   + as_json(error.validator_value, ENUM_CHARS))
    bound = {"minItems": "at least", "maxItems": "at most", "minLength": "at least",
             "maxLength": "at most"}.get(str(error.validator))
    if bound and isinstance(error.validator_value, int):
        unit = "items" if error.validator.endswith("Items") else "characters"
        message += f" ({bound} {error.validator_value} {unit})"
    return message


def validate(document: Any, schema: dict[str, Any] | str | Path, *, source: str) -> None:
    """Validate ``document`` against ``schema`` (a dict or the path of a schema file).

    Raises :class:`DataFileError` naming ``source``, the JSON path of the first (deepest) error
    and the rule it breaks.
    """
    if not isinstance(schema, dict):
        schema = _schema(str(Path(schema).resolve()))
    found = schema_problem(document, schema)
    if found:
        raise DataFileError(source, *found)


def schema_problem(document: Any, schema: dict[str, Any],
                   validator: jsonschema.protocols.Validator | None = None,
                   ) -> tuple[str, str] | None:
    """The JSON path and the rule of the error of ``document`` to report, or None: the deepest
    and first in the document (of several there, jsonschema's best match, which looks inside
    ``anyOf``/``oneOf`` for the closest choice), the rule in one short line
    (:func:`schema_message`). ``validator``: one made for
    ``schema`` already (the web app keeps one per schema)."""
    if validator is None:
        validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(document),
                    key=lambda e: (-len(e.absolute_path), json_path(e.absolute_path)))
    if not errors:
        return None
    first = [e for e in errors if e.absolute_path == errors[0].absolute_path]
    best = jsonschema.exceptions.best_match(first) or errors[0]
    return json_path(best.absolute_path), schema_message(best)


def load_validated(path: str | Path, schema: dict[str, Any] | str | Path) -> Any:
    """Read the JSON file at ``path`` and validate it against ``schema``; return the document."""
    document = read_json(path)
    validate(document, schema, source=str(path))
    return document


def read_labels(folder: str | Path, key: str) -> list[dict[str, Any]]:
    """The entries of a labelled folder's ``labels.json`` (``eval`` and ``bench``).

    Checked here for every kind of label: the folder and the file exist, the file is a
    non-empty list of objects, and each ``image`` names a file inside the folder (not ``..``,
    not an absolute path). ``key`` (``"dice"``, ``"sigil"``) only words the messages; what the
    labels say is checked by their kind's own check.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"{folder}: not a folder")
    path = folder / "labels.json"
    if not path.is_file():
        raise BadInput(f"{folder}: no labels.json in this folder")
    doc = read_json(path)
    if not isinstance(doc, list) or not doc:
        raise DataFileError(str(path), "$",
                            f'expected a non-empty list of {{"image": ..., "{key}": ...}} objects')
    for i, entry in enumerate(doc):
        if not isinstance(entry, dict) or not isinstance(entry.get("image"), str):
            raise DataFileError(str(path), f"$[{i}].image", "expected the image file name")
        name = Path(entry["image"])
        if name.is_absolute() or ".." in name.parts:
            raise DataFileError(str(path), f"$[{i}].image",
                                f"{entry['image']!r} is outside the labelled folder")
        if not (folder / name).is_file():
            raise DataFileError(str(path), f"$[{i}].image",
                                f"no such file {entry['image']!r} in {folder}")
    return doc
