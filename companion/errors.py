"""The project's error types.

``BadInput`` is the one exception that means "the user gave us something wrong": the command
line turns it into one line on stderr and exit code 2, the web app into a 4xx with the message.
Its message must say what is wrong and where (file, JSON path, line, field), in one line.
"""

from __future__ import annotations

from collections.abc import Iterable


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


def unknown_name(what: str, name: object, known: Iterable[str], *,
                 option: str | None = None) -> BadInput:
    """The error for a name that is not one of ``known``, worded alike wherever a name is
    looked up (give the command line's ``option`` when it came from one).

    Examples
    --------
    >>> str(unknown_name("policy", "smart", {"random": 1, "greedy": 2}, option="--policy"))
    "--policy: unknown policy 'smart' (known: greedy, random)"
    """
    where = f"{option}: " if option else ""
    return BadInput(f"{where}unknown {what} {name!r} (known: {', '.join(sorted(known))})")
