"""The project's error types.

``BadInput`` is the one exception that means "the user gave us something wrong": the command
line turns it into one line on stderr and exit code 2, the web app into a 4xx with the message.
Its message must say what is wrong and where (file, JSON path, line, field), in one line.
"""

from __future__ import annotations


class BadInput(ValueError):
    """Input that cannot be used: a corrupt image, a malformed file, an unknown name, ..."""


class DataFileError(BadInput):
    """A data file (layout, goals, familiars, machine parts, labels) that breaks its schema.

    Convention: the message reads ``<file>: at <json path>: <rule broken>``.
    """

    def __init__(self, file: str, json_path: str, rule: str) -> None:
        self.file = file
        self.json_path = json_path
        self.rule = rule
        super().__init__(f"{file}: at {json_path}: {rule}")
