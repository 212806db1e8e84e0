"""A problem of a diagram or a form, as every surface shows it (CLI lines, the modeler, the API), and
the refusal (:class:`webapp.errors.InvalidDiagram`) that carries them."""

from __future__ import annotations

from dataclasses import dataclass

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
