"""Officers imported in bulk from a CSV file, and the officers list exported as CSV (issue 31,
item 1; issue 34, item 5). This module's reading of CSV is its own (the paper cases' import has
another).

The file: one header row naming the columns ``username`` and ``role`` (required) and
``display_name``, ``panchayat`` (its code), ``samiti`` (its code), ``district`` (optional), in any
order and case; then one officer a row, as :func:`webapp.services.panchayats.officers.create`
takes them. Separated by commas (or by tabs, as a spreadsheet's "Unicode text" saves it).

- **Size:** at most :data:`MAX_BYTES` (10 MB) and :data:`MAX_ROWS` (100,000) officer rows; a larger
  file is refused before any row is read, naming the limit.
- **Encodings:** UTF-8, with or without its byte-order mark (as spreadsheets save "CSV UTF-8"), and
  UTF-16 with its byte-order mark; anything else (say Windows-1252) is refused, naming the byte
  where it stops being UTF-8, and saying how to save it — never guessed, so no name is garbled.
- **Formula cells:** a cell starting with ``=``, ``+``, ``-`` or ``@`` is text like any other: read
  as typed, stored as typed, never evaluated; the export (:func:`export`) writes such a cell with a
  leading apostrophe, so a spreadsheet shows it as text and never runs it (OWASP, "CSV injection").
- **Check, then all or nothing:** :func:`check_rows` checks every row with the same checks as a
  single new officer (and user names repeated within the file, in any case), and reports every row
  with its errors by row number (the header is row 1) and column, creating nothing;
  :func:`import_rows` checks again and creates every row in one transaction, or none.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import Refused, Rule130Error
from webapp.i18n import M_, Message, localize
from webapp.services.panchayats import officers as service
from webapp.store.models import Panchayat, User
from webapp.values import clock

MAX_BYTES = 10 * 1024 * 1024
MAX_ROWS = 100_000
COLUMNS = ("username", "display_name", "role", "panchayat", "samiti", "district")
REQUIRED = ("username", "role")
FIELD_COLUMN = {"username": "username", "display_name": "display_name", "role": "role",
                "panchayat_code": "panchayat", "samiti_code": "samiti", "district": "district"}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Row:
    """One officer row: its number in the file (the header is 1), its cells by column, its errors
    by column (empty when it would be created), and what would follow."""

    number: int
    cells: dict[str, str]
    errors: dict[str, Message | str] = field(default_factory=dict)
    follows: list[Message] = field(default_factory=list)


@dataclass
class Report:
    """The check of a file: every row, and the errors as ``(row, column, message)``."""

    rows: list[Row]

    @property
    def errors(self) -> list[tuple[int, str, Message | str]]:
        return [(row.number, column, message) for row in self.rows for column, message in row.errors.items()]


class ImportRefused(Refused):
    """A file with errors: nothing was created; ``report`` lists every row."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


def _too_big() -> Refused:
    return Refused(M_("the file is larger than %(limit)s MB: import at most %(limit)s MB (and %(rows)s officers) "
                      "at a time", limit=MAX_BYTES // (1024 * 1024), rows=f"{MAX_ROWS:,}"), {"file": M_("too large")})


def decode(data: bytes) -> str:
    """The text of an uploaded file (module docstring: UTF-8 with or without BOM, UTF-16 with BOM).

    Raises:
        Refused: more than :data:`MAX_BYTES`; empty; not UTF-8 (the byte named); a NUL character.
    """
    if len(data) > MAX_BYTES:
        raise _too_big()
    if data.startswith(codecs.BOM_UTF8):
        data, encoding = data[len(codecs.BOM_UTF8):], "utf-8"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as bad:
        raise Refused(M_("the file is not UTF-8 text (byte %(at)s cannot be read): save it from the spreadsheet as "
                         "\"CSV UTF-8\" and try again", at=bad.start + 1), {"file": M_("not UTF-8")}) from None
    if "\x00" in text:
        raise Refused(M_("the file holds a NUL character: it is not a CSV text file"), {"file": M_("not text")})
    if not text.strip():
        raise Refused(M_("the file is empty: give a header row and one row per officer"), {"file": M_("empty")})
    return text


def read_upload(upload: Any, text: str | None) -> str:
    """The text of a page's upload (a werkzeug ``FileStorage``), or of the checked text sent back with
    Confirm. Reads at most :data:`MAX_BYTES` + 1 bytes.

    Raises:
        Refused: no file; as :func:`decode`.
    """
    if text:
        if len(text) > MAX_BYTES or len(text.encode("utf-8")) > MAX_BYTES:
            raise _too_big()
        return decode(text.encode("utf-8"))
    if upload is None or not getattr(upload, "filename", ""):
        raise Refused(M_("choose a CSV file of officers"), {"file": M_("required")})
    return decode(upload.stream.read(MAX_BYTES + 1))


def parse(text: str) -> list[Row]:
    """The officer rows of a CSV text, each cell trimmed.

    Raises:
        Refused: more than :data:`MAX_ROWS` rows; a header without ``username`` or ``role``, with an
            unknown or repeated column; a row with more cells than the header.
    """
    first_line = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in first_line and "," not in first_line else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False)
    try:
        header = [cell.strip().lower() for cell in next(reader)]
    except StopIteration:
        raise Refused(M_("the file is empty: give a header row and one row per officer"), {"file": M_("empty")}) from None
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        raise Refused(M_("unknown column %(name)s in the header (row 1); the columns are %(columns)s",
                         name=repr(unknown[0]), columns=", ".join(COLUMNS)), {"file": M_("unknown column")})
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise Refused(M_("the column %(name)s appears twice in the header (row 1)", name=repeated[0]),
                      {"file": M_("repeated column")})
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise Refused(M_("the header (row 1) has no column %(name)s; the columns are %(columns)s",
                         name=missing[0], columns=", ".join(COLUMNS)), {"file": M_("missing column")})
    rows: list[Row] = []
    try:
        for cells in reader:
            number = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            if len(rows) >= MAX_ROWS:
                raise Refused(M_("the file has more than %(rows)s officer rows: import at most %(rows)s at a time",
                                 rows=f"{MAX_ROWS:,}"), {"file": M_("too many rows")})
            row = Row(number, {name: (cells[i].strip() if i < len(cells) else "") for i, name in enumerate(header)})
            if len(cells) > len(header) and any(cell.strip() for cell in cells[len(header):]):
                row.errors["row"] = M_("%(count)s cells, but the header has %(columns)s columns", count=len(cells),
                                       columns=len(header))
            rows.append(row)
    except csv.Error as bad:
        raise Refused(M_("the file is not CSV from row %(row)s on: %(error)s", row=reader.line_num, error=str(bad)),
                      {"file": M_("not CSV")}) from None
    if not rows:
        raise Refused(M_("the file has a header but no officer"), {"file": M_("no rows")})
    return rows


def _check(session: Session, admin: User | None, rows: list[Row]) -> None:
    seen: dict[str, int] = {}
    for row in rows:
        if row.errors:
            continue
        name = "".join(row.cells.get("username", "").split()).lower()
        if name in seen:
            row.errors["username"] = M_("the same user name as row %(row)s (user names differing only in case or "
                                        "blanks are the same)", row=seen[name])
            continue
        if name:
            seen[name] = row.number
        try:
            clean = service.check_new(session, admin, row.cells.get("username", ""), row.cells.get("role", ""),
                                      display_name=row.cells.get("display_name", ""),
                                      panchayat_code=row.cells.get("panchayat", ""),
                                      samiti_code=row.cells.get("samiti", ""), district=row.cells.get("district", ""))
        except Rule130Error as refused:
            fields = getattr(refused, "field_errors", None) or {}
            named = next(iter(fields), None) or str(refused.details.get("field", "") or "row")
            row.errors[FIELD_COLUMN.get(named, named)] = refused.message
            continue
        where = clean["panchayat_code"] or clean["samiti_code"] or clean["district"] or "—"
        row.follows = [M_("%(username)s becomes a %(role)s of %(where)s.", username=clean["username"],
                          role=M_(clean["role"].replace("_", " ")), where=where)]


def check_rows(sessions: sessionmaker[Session], admin: User | None, text: str) -> Report:
    """The check step of an import: every row of ``text`` checked, nothing written.

    Raises:
        Refused: the file as a whole (:func:`parse`). Errors of single rows are in the report.
    """
    rows = parse(text)
    with clock.fixed(), sessions() as session:
        try:
            _check(session, admin, rows)
        finally:
            session.rollback()
    return Report(rows)


def import_rows(sessions: sessionmaker[Session], admin: User | None, text: str, *,
                password_method: str = "scrypt") -> list[service.Outcome]:
    """Create every officer of ``text`` in one transaction, or none; each with a first password.

    Raises:
        ImportRefused: any row has an error (the report lists them all); nothing is created.
        Refused: the file as a whole (:func:`parse`).
    """
    rows = parse(text)
    made: list[service.Outcome] = []
    with clock.fixed(), sessions() as session:
        try:
            _check(session, admin, rows)
            report = Report(rows)
            if report.errors:
                raise ImportRefused(M_("%(count)s rows have errors; nothing was imported. Correct them and check the "
                                       "file again.", count=len({number for number, _, _ in report.errors})), report)
            for row in rows:
                made.append(service.create(session, admin, row.cells.get("username", ""), row.cells.get("role", ""),
                                           display_name=row.cells.get("display_name", ""),
                                           panchayat_code=row.cells.get("panchayat", ""),
                                           samiti_code=row.cells.get("samiti", ""),
                                           district=row.cells.get("district", ""), password_method=password_method))
            session.commit()
        except Exception:
            session.rollback()
            raise
    return made


def report_json(report: Report) -> dict[str, Any]:
    """The check of a file as the API shows it: each row's number, cells, errors by column and what follows."""
    return {"rows": [{"row": row.number, "cells": row.cells,
                      "errors": {column: localize(message) for column, message in row.errors.items()},
                      "follows": [localize(line) for line in row.follows]} for row in report.rows],
            "errors": [{"row": number, "column": column, "message": localize(message)}
                       for number, column, message in report.errors]}


def cell(value: object) -> str:
    """A value as an exported CSV cell: text that a spreadsheet would read as a formula (starting
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading apostrophe."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def export(session: Session, people: Iterable[User]) -> bytes:
    """The officers as CSV bytes (UTF-8 with a byte-order mark, so spreadsheets read Hindi names):
    the import's columns and ``active``, every cell through :func:`cell`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([*COLUMNS, "active"])
    codes: dict[int, str] = {}
    for user in people:
        if user.panchayat_id is not None and user.panchayat_id not in codes:
            panchayat = session.get(Panchayat, user.panchayat_id)
            codes[user.panchayat_id] = panchayat.code if panchayat else ""
        samiti = "" if user.samiti_code in (None, "@district") or user.panchayat_id is not None else user.samiti_code
        writer.writerow([cell(v) for v in (user.username, user.display_name, user.role,
                                           codes.get(user.panchayat_id or 0, ""), samiti, user.district or "",
                                           "yes" if user.active else "no")])
    return codecs.BOM_UTF8 + out.getvalue().encode("utf-8")
