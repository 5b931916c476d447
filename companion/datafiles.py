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


def read_json(path: str | Path) -> Any:
    """Read a JSON file; a missing, unreadable or malformed file raises :class:`BadInput`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(str(path), f"line {exc.lineno} column {exc.colno}",
                            f"not valid JSON: {exc.msg}") from None


@cache
def _schema(path: str) -> dict[str, Any]:
    schema = read_json(path)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    return schema


def validate(document: Any, schema: dict[str, Any] | str | Path, *, source: str) -> None:
    """Validate ``document`` against ``schema`` (a dict or the path of a schema file).

    Raises :class:`DataFileError` naming ``source``, the JSON path of the first (deepest) error
    and the rule it breaks.
    """
    if not isinstance(schema, dict):
        schema = _schema(str(Path(schema).resolve()))
    validator_cls = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_cls(schema).iter_errors(document),
                    key=lambda e: (-len(e.absolute_path), json_path(e.absolute_path)))
    if errors:
        best = jsonschema.exceptions.best_match(errors) or errors[0]
        raise DataFileError(source, json_path(best.absolute_path), best.message)


def load_validated(path: str | Path, schema: dict[str, Any] | str | Path) -> Any:
    """Read the JSON file at ``path`` and validate it against ``schema``; return the document."""
    document = read_json(path)
    validate(document, schema, source=str(path))
    return document
