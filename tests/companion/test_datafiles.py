from __future__ import annotations

import pytest

from companion.datafiles import json_path, load_validated, parse_json, read_json, repeats, validate
from companion.errors import BadInput, DataFileError

SCHEMA = {
    "type": "object",
    "required": ["name", "candles"],
    "properties": {
        "name": {"type": "string"},
        "candles": {"type": "array", "items": {
            "type": "object", "required": ["number"],
            "properties": {"number": {"type": "integer", "minimum": 1, "maximum": 6}}}},
    },
}


@pytest.mark.parametrize(("parts", "expected"), [
    ([], "$"), (["candles", 3, "center"], "$.candles[3].center"), ([0], "$[0]"),
])
def test_json_path(parts, expected):
    assert json_path(parts) == expected


@pytest.mark.parametrize(("keys", "expected"), [
    ([], {}), (["a", "b"], {}), (["a", "b", "a", "b", "a"], {2: 0, 3: 1, 4: 0}),
    ([0, 1, 0], {2: 0}), ([1, 1.0], {1: 0}),
])
def test_repeats_names_where_each_key_met_again_was_first(keys, expected):
    assert repeats(keys) == expected
    assert repeats(iter(keys)) == expected


def test_a_valid_document_passes():
    validate({"name": "A", "candles": [{"number": 3}]}, SCHEMA, source="a.json")


@pytest.mark.parametrize(("doc", "path", "rule"), [
    ({"name": "A"}, "$", "'candles' is a required property"),
    ({"name": "A", "candles": [{"number": 3}, {"number": 9}]}, "$.candles[1].number",
     "9 is greater than the maximum of 6"),
    ({"name": 5, "candles": []}, "$.name", "5 is not of type 'string'"),
])
def test_errors_name_file_path_and_rule(doc, path, rule):
    with pytest.raises(DataFileError) as exc:
        validate(doc, SCHEMA, source="layouts/A.json")
    assert exc.value.file == "layouts/A.json"
    assert exc.value.json_path == path
    assert exc.value.rule == rule
    assert str(exc.value) == f"layouts/A.json: at {path}: {rule}"


@pytest.mark.parametrize(("doc", "schema", "rule"), [
    (list(range(40)), {"type": "array", "minItems": 41},
     "a list of 40 items is too short (at least 41 items)"),
    ({f"key{i}": i for i in range(30)}, {"type": "array"},
     "an object of 30 keys is not of type 'array'"),
    ("x" * 300, {"type": "string", "maxLength": 10},
     f"\"{'x' * 40}...\" (300 characters) is too long (at most 10 characters)"),
    ([1, 2], {"type": "array", "minItems": 3}, "[1, 2] is too short (at least 3 items)"),
])
def test_a_rule_broken_by_a_large_value_describes_it_instead_of_printing_it(doc, schema, rule):
    """A goals.json with a goal deleted used to print the whole catalogue in its message."""
    with pytest.raises(DataFileError) as exc:
        validate(doc, schema, source="goals.json")
    assert exc.value.rule == rule


def test_malformed_json_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "A",\n "candles": [}\n')
    with pytest.raises(DataFileError, match=r"bad.json: at line 2 column 14: not valid JSON"):
        read_json(bad)


@pytest.mark.parametrize(("text", "path", "rule"), [
    ('{"a": [1, Infinity]}', "$.a[1]", "Infinity is not a number JSON allows"),
    ('[{"b": -Infinity}]', "$[0].b", "-Infinity is not a number JSON allows"),
    ('{"a": {"b": NaN}}', "$.a.b", "NaN is not a number JSON allows"),
    ('{"a": -1e999}', "$.a", "-1e999 is too large a number"),
])
def test_non_finite_numbers_are_refused_with_their_path(text, path, rule):
    with pytest.raises(DataFileError) as exc:
        parse_json(text, "x.json")
    assert (exc.value.file, exc.value.json_path, exc.value.rule) == ("x.json", path, rule)
    assert parse_json('{"NaN": "Infinity", "a": 1e300}', "x.json")["a"] == 1e300


@pytest.mark.parametrize(("data", "where"), [
    (b'{"name": "\xff"}', "line 1 column 11"),
    (b'{"a": 1,\n "name": "caf\xe9"}', "line 2 column 14"),
])
def test_text_that_is_not_utf8_names_line_and_column(tmp_path, data, where):
    path = tmp_path / "latin1.json"
    path.write_bytes(data)
    for parse in (lambda: read_json(path), lambda: parse_json(data, str(path))):
        with pytest.raises(DataFileError) as exc:
            parse()
        assert exc.value.file == str(path) and exc.value.json_path == where
        assert exc.value.rule.startswith("not UTF-8 text (byte 0x")


def test_a_utf8_byte_order_mark_is_read(tmp_path):
    """Some editors (Windows Notepad) start a UTF-8 file with a byte order mark."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + '{"name": "Zoë"}'.encode())
    assert read_json(path) == {"name": "Zoë"}
    assert parse_json(path.read_bytes(), "x") == {"name": "Zoë"}


def test_missing_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="no such file"):
        load_validated(tmp_path / "nope.json", SCHEMA)


def test_load_validated_reads_a_schema_file(tmp_path):
    import json
    schema = tmp_path / "s.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    doc = tmp_path / "d.json"
    doc.write_text(json.dumps({"name": "B", "candles": []}))
    assert load_validated(doc, schema)["name"] == "B"
