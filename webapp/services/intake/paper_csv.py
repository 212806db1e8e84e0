"""Several running paper cases from one CSV file (issue 31, item 2; the attack tests of issue 34,
item 5), read into :func:`webapp.services.intake.paper_cases.bring_in_many`: all of them or none.

The file: one header row, then one row per line of the paper files, grouped by the ``case`` column
(the paper file's own reference, e.g. its register number):

- ``do`` = ``impound``: the case's impoundment (``at``, ``place_seized``, ``place_impounded``,
  ``nearest_village``, and optionally its first animal: ``species``, ``description``, ``tag``), first
  of its case's rows;
- ``do`` = ``animal``: one more animal of the case (``species``, ``description``, ``tag``);
- any other ``do``: a past fact (:data:`webapp.services.intake.paper_cases.FACTS`) in the columns of
  :data:`~webapp.services.intake.paper_cases.ROW_COLUMNS`, in the order it happened.

``at`` is ``YYYY-MM-DD HH:MM`` in the Panchayat's zone, or ISO 8601 with its offset. Every cell is
text: one that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@`` first) is kept as
the text it is, never evaluated (an amount written so is refused as not an amount); the registers'
CSV export prefixes such a cell with an apostrophe (webapp.services.reports.registers_csv).

Read as UTF-8 (with or without its byte-order mark) or as UTF-16 with its mark; anything else is
refused, as is a file over :data:`MAX_BYTES` or with more than :data:`MAX_ROWS` rows, naming the
limit. Each refusal names the row (the file's line number, the header being row 1) and the column.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from webapp.errors import Refused
from webapp.i18n import M_
from webapp.services.intake import paper_cases

MAX_BYTES = 10 * 1024 * 1024  # 10 MB
MAX_ROWS = 100_000
MAX_CASES = 500  # cases in one file: all are replayed in one transaction
CASE_COLUMNS = ("case", "place_seized", "place_impounded", "nearest_village", "species", "description", "tag")
COLUMNS = CASE_COLUMNS + paper_cases.ROW_COLUMNS
REQUIRED = ("case", "do", "at")
ANIMAL = ("species", "description", "tag")


def decode(data: bytes) -> str:
    """The file's text: UTF-8 (its byte-order mark dropped) or UTF-16 with its mark.

    Raises:
        Refused: over :data:`MAX_BYTES`; not UTF-8 or UTF-16 text (naming the row of the first bad
            byte); a NUL character in the text.
    """
    if len(data) > MAX_BYTES:
        raise Refused(M_("the file is larger than the limit of 10 MB; split it into several files"),
                      {"file": M_("larger than 10 MB")})
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise Refused(M_("the file starts as UTF-16 text but is not; save it as CSV UTF-8"),
                          {"file": M_("not UTF-16 text")}) from None
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            row = data[:error.start].count(b"\n") + 1
            raise Refused(M_("row %(num)s is not UTF-8 text (another encoding?); save the file as CSV UTF-8",
                             num=row), {"file": M_("not UTF-8 text")}) from None
    if "\x00" in text:
        row = text[:text.index("\x00")].count("\n") + 1
        raise Refused(M_("row %(num)s holds a NUL character; this is not a CSV text file", num=row),
                      {"file": M_("not a text file")})
    return text


def read(data: bytes, tz: str) -> list[dict[str, Any]]:
    """The paper cases of a CSV file, ready for :func:`paper_cases.bring_in_many` (their dates and
    acts are checked there).

    Args:
        tz: the Panchayat's zone, for the instants written without an offset.
    Raises:
        Refused: as :func:`decode`; more than :data:`MAX_ROWS` rows; a missing, unknown or repeated
            column; a row of a case with no ``impound`` row before it, a second ``impound`` of one
            case, or a fact that is not well formed: naming the row and the column.
    """
    text = decode(data)
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(rows, None)
    except csv.Error as error:
        raise Refused(M_("row 1 is not CSV: %(problem)s", problem=str(error)), {"row 1": M_("not CSV")}) from None
    if header is None:
        raise Refused(M_("the file is empty; it needs a header row and one row per fact"), {"file": M_("empty")})
    columns = [name.strip().lower() for name in header]
    for name in columns:
        if name not in COLUMNS:
            raise Refused(M_("row 1: unknown column %(column)s; the columns are %(known)s", column=name[:40],
                             known=", ".join(COLUMNS)), {f"row 1.{name[:40]}": M_("unknown column")})
        if columns.count(name) > 1:
            raise Refused(M_("row 1: the column %(column)s is given twice", column=name), {f"row 1.{name}": M_("twice")})
    for name in REQUIRED:
        if name not in columns:
            raise Refused(M_("row 1: the column %(column)s is missing", column=name), {f"row 1.{name}": M_("missing")})
    papers: dict[str, dict[str, Any]] = {}
    line = 1
    try:
        for cells in rows:
            line += 1
            if line > MAX_ROWS + 1:
                raise Refused(M_("the file has more than the limit of %(num)s rows; split it into several files",
                                 num=f"{MAX_ROWS:,}"), {"file": M_("more than 100,000 rows")})
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(columns):
                raise Refused(M_("row %(num)s has %(cells)s cells, but the header has %(columns)s columns", num=line,
                                 cells=len(cells), columns=len(columns)), {f"row {line}": M_("too many cells")})
            row = dict.fromkeys(columns, "") | dict(zip(columns, cells, strict=False))
            _add(papers, row, line, tz)
    except csv.Error as error:
        raise Refused(M_("row %(num)s is not CSV: %(problem)s", num=line, problem=str(error)),
                      {f"row {line}": M_("not CSV")}) from None
    if not papers:
        raise Refused(M_("the file holds no case: give an impound row for each case"), {"file": M_("no case")})
    return list(papers.values())


def _where(line: int) -> Any:
    return M_("row %(num)s", num=line)


def _add(papers: dict[str, dict[str, Any]], row: dict[str, str], line: int, tz: str) -> None:
    """Add one row to the case it names (the impoundment, an animal or a past fact)."""
    where = _where(line)
    reference = " ".join(row["case"].split())
    if not reference:
        raise paper_refusal(where, "case", M_("missing: the paper file's reference groups its rows"))
    do = row.get("do", "").strip().lower()
    paper = papers.get(reference.upper())
    if do == "impound":
        if paper is not None:
            raise paper_refusal(where, "do", M_("case %(case)s was already impounded on %(row)s; one impound row per "
                                                "case", case=reference, row=paper["where"]))
        extra = [name for name in paper_cases.ROW_COLUMNS[2:] if row.get(name, "").strip()]
        if extra:
            raise paper_refusal(where, extra[0], M_("not a column of the impound row"))
        if len(papers) >= MAX_CASES:
            raise paper_refusal(where, "case", M_("a file holds at most %(num)s cases; split it into several files",
                                                  num=MAX_CASES))
        papers[reference.upper()] = {
            "impounded_field": "at",
            "impounded_at": paper_cases.local_instant(row.get("at", ""), tz),
            "place_seized": row.get("place_seized", ""), "place_impounded": row.get("place_impounded", ""),
            "nearest_village": row.get("nearest_village", ""), "animals": [], "facts": [], "where": where}
        if any(row.get(name, "").strip() for name in ANIMAL):
            papers[reference.upper()]["animals"].append({k: row.get(k, "").strip() for k in ANIMAL})
        return
    if paper is None:
        raise paper_refusal(where, "case", M_("case %(case)s has no impound row before this one", case=reference))
    if do == "animal":
        if paper["facts"]:
            raise paper_refusal(where, "do", M_("the animals of case %(case)s come before its facts", case=reference))
        paper["animals"].append({k: row.get(k, "").strip() for k in ANIMAL})
        return
    for name in ("place_seized", "place_impounded", "nearest_village", *ANIMAL):
        if row.get(name, "").strip():
            raise paper_refusal(where, name, M_("a column of the impound and animal rows, not of a fact"))
    if len(paper["facts"]) >= paper_cases.MAX_FACTS:
        raise paper_refusal(where, "case", M_("a paper case holds at most %(num)s facts", num=paper_cases.MAX_FACTS))
    fact_row = {name: row.get(name, "") for name in paper_cases.ROW_COLUMNS}
    fact_row["do"] = do
    paper["facts"].append(paper_cases.fact_from_row(fact_row, where, tz))


def paper_refusal(where: Any, column: str, problem: Any) -> Refused:
    """A refusal naming the row and the column."""
    return Refused(M_("%(where)s, %(field)s: %(problem)s", where=where, field=column, problem=problem),
                   {f"{where}.{column}": problem})
