"""JSON Schemas of every request body the API takes (checked before anything else runs)."""

from __future__ import annotations

from typing import Any

from companion.session.campaigns import SETUP_SCHEMA as CAMPAIGN_SETUP
from companion.session.hub import TITLE_MAX
from companion.store import EXPORT_FORMAT

TITLE = {"type": "string", "maxLength": TITLE_MAX}
EVENT = {"type": "object", "maxProperties": 32}

CREATE_GAME: dict[str, Any] = {
    "type": "object",
    "required": ["kind", "setup"],
    "additionalProperties": False,
    "properties": {
        "kind": {"enum": ["cat", "machine"]},
        "title": TITLE,
        "setup": {"type": "object", "maxProperties": 32},
        "campaign_id": {"type": ["integer", "null"], "minimum": 1},
    },
}

SUBMIT_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event"],
    "additionalProperties": False,
    "properties": {"event": EVENT},
}

EMPTY: dict[str, Any] = {"type": "object", "maxProperties": 0}

CREATE_CAMPAIGN: dict[str, Any] = {
    "type": "object",
    "required": ["title", "goals"],
    "additionalProperties": False,
    "properties": {
        "title": {**TITLE, "minLength": 1},
        **CAMPAIGN_SETUP["properties"],
        "players": {**CAMPAIGN_SETUP["properties"]["players"], "minItems": 1},
    },
}

FAMILIAR_CHOICE: dict[str, Any] = {
    "type": "object", "required": ["player", "familiar"], "additionalProperties": False,
    "properties": {"player": {"type": "string", "minLength": 1, "maxLength": 24},
                   "familiar": {"type": "string", "pattern": "^F0[1-9]$"}},
}

_OP = {
    "type": "object",
    "required": ["op"],
    "additionalProperties": False,
    "properties": {
        "op": {"enum": ["action", "amend", "undo", "redo"]},
        "target": {"type": ["integer", "null"]},
        "event": {"type": ["object", "null"], "maxProperties": 32},
        "created": {"type": ["string", "null"], "maxLength": 40},
        "ref": {"type": ["integer", "null"]},
    },
}

IMPORT_GAME: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "game", "ops"],
    "properties": {
        "format": {"const": EXPORT_FORMAT},
        "version": {"const": 1},
        "game": {
            "type": "object",
            "required": ["kind", "title", "setup"],
            "properties": {
                "kind": {"enum": ["cat", "machine"]},
                "title": TITLE,
                "created": {"type": ["string", "null"], "maxLength": 40},
                "setup": {"type": "object"},
                "result": {"type": ["object", "null"]},
            },
        },
        "ops": {"type": "array", "items": _OP, "maxItems": 20000},
    },
}

CAMERA_CARD: dict[str, Any] = {
    "type": "object", "required": ["player", "card"], "additionalProperties": False,
    "properties": {"player": {"type": "integer", "minimum": 0, "maximum": 5},
                   "card": {"type": "integer", "minimum": 0, "maximum": 1}},
}

CAMERA_FEEDS: dict[str, Any] = {
    "type": "object", "required": ["kind"], "additionalProperties": False,
    "properties": {"kind": {"enum": ["cat", "machine"]}},
}

_FRACTION = {"type": "number", "minimum": 0, "maximum": 1}

ROLL_AREA: dict[str, Any] = {
    "type": "object", "required": ["area"], "additionalProperties": False,
    "properties": {"area": {"oneOf": [
        {"type": "null"},
        {"type": "array", "items": _FRACTION, "minItems": 4, "maxItems": 4}]}},
}
