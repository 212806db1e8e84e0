"""Rows of a correlated subquery as one JSON array, in either database: lets one ``SELECT`` bring
a case row and the short lists that belong to it (its reminders sent, its documents' keys).

``json_rows(a, b, ...)`` is an aggregate: each row of its group becomes the array ``[a, b, ...]``,
and the group one array of them. SQLite: ``json_group_array(json_array(...))`` (its JSON1
functions, built in since 3.38); PostgreSQL: ``json_agg(json_build_array(...))``, which gives NULL
for no rows. The construct's type is SQLAlchemy's ``JSON``, which decodes the value on both; :func:`parsed`
turns it (or None) into a list of lists. A value keeps its JSON form: an instant is its
database text (SQLite: ``2026-05-01 18:30:00.000000``, UTC, no offset; PostgreSQL: ISO 8601 with
its offset), which :func:`instant` reads back as an aware UTC datetime; a boolean is 0/1 on SQLite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import JSON


class json_rows(FunctionElement[Any]):  # lower case: the name of an SQL function
    """The aggregate described in the module text."""

    type = JSON()
    name = "json_rows"
    inherit_cache = True


@compiles(json_rows, "sqlite")
def _sqlite(element: json_rows, compiler: Any, **kw: Any) -> str:
    return f"json_group_array(json_array({compiler.process(element.clauses, **kw)}))"


@compiles(json_rows, "postgresql")
def _postgresql(element: json_rows, compiler: Any, **kw: Any) -> str:
    return f"json_agg(json_build_array({compiler.process(element.clauses, **kw)}))"


def parsed(value: Any) -> list[list[Any]]:
    """The rows of a :class:`json_rows` value as decoded (``[]`` for none: PostgreSQL's NULL)."""
    return [list(row) for row in value or ()]


def instant(text: str | None) -> datetime | None:
    """An instant as :class:`json_rows` gives it, as an aware datetime in UTC."""
    if text is None:
        return None
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
