"""A problem of a diagram or a form, as every surface shows it (CLI lines, the modeler, the API), and
the refusal (:class:`webapp.errors.InvalidDiagram`) that carries them."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from webapp.errors import InvalidDiagram


@dataclass
class Problem:
    """One reason a diagram cannot be deployed (or a warning), tied to its element and line.

    ``element_id`` is the id of the element the problem is about (or of the nearest element around
    it that has an id); ``line`` its line in the file; ``path`` the element's place in the document
    (``/definitions/process[2]/userTask[3]``), given when the line alone does not point to one
    element (a file written on one line). The message names the element in words (its kind and
    name) and says what to do.
    """

    message: str
    element_id: str | None = None
    line: int | None = None
    severity: str = "error"  # error | warning
    path: str | None = None

    def __str__(self) -> str:
        where = []
        if self.element_id:
            where.append(self.element_id)
        if self.line:
            where.append(f"line {self.line}")
        if self.path:
            where.append(f"at {self.path}")
        prefix = f"{', '.join(where)}: " if where else ""
        return f"{self.severity}: {prefix}{self.message}"


def refusal(message: str, problems: list[Problem], lines: list[str] | None = None) -> InvalidDiagram:
    """An InvalidDiagram carrying ``problems`` as Problem objects and as text lines (``lines``, by
    default ``str(problem)`` each)."""
    return InvalidDiagram(message, lines if lines is not None else [str(p) for p in problems], problems)


def problems_of(error: InvalidDiagram) -> list[Problem]:
    """The structured problems of a refusal (a plain message becomes one problem with no element)."""
    return list(error.found) or [Problem(p) for p in error.problems]


class _Words(string.Formatter):
    """``str.format`` with one more conversion: ``{what!l}`` is the field in lower case."""

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "l":
            return str(value).lower()
        return super().convert_field(value, conversion)


_WORDS = _Words()


class Phrasebook:
    """A library's messages put into an administrator's words, by a table (one row per message).

    Each row is ``(pattern, words)``: ``pattern`` a regular expression searched in the library's
    message, ``words`` a ``str.format`` template over the pattern's named groups and the fields the
    caller gives (``{subject}`` for the element, ``{encoding}`` for a file's declared encoding);
    ``{name!l}`` puts a field in lower case. Used for SpiffWorkflow's parser failures
    (:mod:`.engine_errors`) and libxml2's well-formedness errors (:mod:`.safe_xml`).
    """

    def __init__(self, rows: Iterable[tuple[str, str]], flags: int = 0) -> None:
        self.rows = [(re.compile(pattern, flags), words) for pattern, words in rows]

    def say(self, text: str, **fields: str) -> str | None:
        """The words of the first row whose pattern is found in ``text`` (its groups and ``fields``
        filled in), or None when no row knows the message."""
        for pattern, words in self.rows:
            match = pattern.search(text)
            if match:
                return _WORDS.format(words, **fields, **{k: v or "" for k, v in match.groupdict().items()})
        return None
