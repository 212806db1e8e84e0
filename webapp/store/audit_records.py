"""The trail vouches for the records: what the audit trail recorded of each ledger entry, case
history row and stored document, and the check that the rows still say so.

The chain (:mod:`.audit`) proves that the entries are as written; it says nothing of the rows
they recorded, which anyone with write access to the database can change once the ledger's
append-only trigger is dropped. :func:`check` recomputes, for every row of ``ledger_entry``,
``case_event`` and ``case_document``, what its entry holds, and reports the first row that differs
(table, row id, field, the entry), rows no entry recorded, and entries whose row is gone.

What an entry records (``detail_json``; the entry's ``kind``, ``actor`` and ``case_id`` as well):

- ``ledger.entry``: from, to, amount (2 decimals), kind, clause, element_id, memo, and for a
  reversal reversal_of and reason; the actor is the officer's user name. Since format 2
  (``"v": 2``) also the instant (``at``), ``panchayat_id`` and ``officer_id``.
- ``case.<kind>``: the row's name, element_id, actor_role and its detail (parsed); the actor is
  the acting user's name. Since format 2 also ``at`` and ``actor_user_id``.
- ``document.issued`` (format 2, one per language version): key, kind, number, language, title,
  clause, issued_at, issued_by and the SHA-256 of the text. A document issued before it is
  checked against its issue's ``case.document`` entry, which holds the number and each
  language's SHA-256.

Entries of format 1 (written before format 2) stay valid: a row is checked on the fields its
entry holds. Entries hold no row id (a row's id is given by the database after the entry is
chained), so rows and entries are paired per case by content: an entry pairs with a row that
still says exactly what it recorded; the rows and entries left over are paired in order (row id,
entry sequence) and the first field that differs is named.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from webapp.store.models import AuditEntry, CaseDocument, CaseEvent, LedgerEntry, User

FORMAT = 2  # the detail format written for new rows ("v"); entries without "v" are format 1


def instant(value: datetime | None) -> str | None:
    """An instant as the trail records it: UTC, ISO 8601 to the microsecond."""
    return value.astimezone(UTC).isoformat(timespec="microseconds") if value is not None else None


def ledger_detail(row: LedgerEntry, version: int = FORMAT) -> dict[str, Any]:
    """What a ``ledger.entry`` entry of format ``version`` records of ``row`` (its detail)."""
    detail: dict[str, Any] = {"from": row.from_account, "to": row.to_account, "amount": f"{row.amount:.2f}",
                              "kind": row.kind, "clause": row.clause, "element_id": row.element_id,
                              "memo": row.memo}
    if row.reversal_of is not None:
        detail.update(reversal_of=row.reversal_of, reason=row.reason)
    if version >= 2:
        detail.update(v=version, at=instant(row.at), panchayat_id=row.panchayat_id, officer_id=row.officer_id)
    return detail


def event_detail(row: CaseEvent, version: int = FORMAT) -> dict[str, Any]:
    """What a ``case.<kind>`` entry of format ``version`` records of ``row`` (its detail)."""
    try:
        parsed = json.loads(row.detail_json or "{}")
    except ValueError:
        parsed = {"raw": row.detail_json}
    detail: dict[str, Any] = {"name": row.name, "element_id": row.element_id, "actor_role": row.actor_role,
                              "detail": parsed}
    if version >= 2:
        detail.update(v=version, at=instant(row.at), actor_user_id=row.actor_user_id)
    return detail


def document_detail(row: CaseDocument) -> dict[str, Any]:
    """What a ``document.issued`` entry records of one stored language version of a document."""
    return {"v": FORMAT, "key": row.key, "kind": row.kind, "number": row.number, "language": row.language,
            "title": row.title, "clause": row.clause, "issued_at": instant(row.issued_at),
            "issued_by": row.issued_by, "sha256": row.sha256}


# -- the check ------------------------------------------------------------------------------------

@dataclass
class Finding:
    """One row that does not match the trail: its ``table`` and ``row_id`` (None for a row that is
    gone), the ``field`` that differs (None when the whole row is unrecorded or gone), the entry's
    ``seq`` (None for a row no entry recorded) and the ``reason`` in words."""

    table: str
    row_id: int | None
    field: str | None
    seq: int | None
    reason: str


@dataclass
class Report:
    """The result of :func:`check`: rows checked, how many problems, and the first one."""

    checked: int = 0
    problems: int = 0
    first: Finding | None = None

    def add(self, finding: Finding) -> None:
        self.problems += 1
        if self.first is None:
            self.first = finding


# entry key -> column, for naming the field that differs ("$actor": the entry's actor, a user name)
LEDGER_COLUMNS = {"from": "from_account", "to": "to_account", "$actor": "officer_id", "$kind": "kind"}
EVENT_COLUMNS = {"detail": "detail_json", "$actor": "actor_user_id", "$kind": "kind"}


def _key(content: dict[str, Any]) -> str:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _stream(session: Session, query: Select[Any]) -> Generator[Any, None, None]:
    result = session.scalars(query.execution_options(yield_per=1000))
    try:
        yield from result
    finally:
        result.close()


def _by_case(items: Iterator[Any]) -> Iterator[tuple[int, list[Any]]]:
    for case_id, group in groupby(items, key=lambda item: item.case_id):
        yield case_id, list(group)


def _recorded(entry: AuditEntry) -> dict[str, Any]:
    """An entry's content: ``$kind``, ``$actor`` and its detail."""
    try:
        detail = json.loads(entry.detail_json)
    except ValueError:
        detail = {}
    return {"$kind": entry.kind, "$actor": entry.actor, **(detail if isinstance(detail, dict) else {})}


def _first_difference(said: dict[str, Any], recorded: dict[str, Any]) -> str | None:
    for name in [*said, *(name for name in recorded if name not in said)]:
        if said.get(name) != recorded.get(name):
            return name
    return None


def _pair(table: str, columns: dict[str, str], case_id: int, rows: list[Any], entries: list[AuditEntry],
          says: Callable[[Any, int], dict[str, Any]], report: Report) -> None:
    """Pair one case's rows with the entries that recorded them (by content), and report the rest."""
    recorded = [(entry, _recorded(entry)) for entry in entries]
    versions = {content.get("v", 1) for _entry, content in recorded}
    index: dict[tuple[int, str], list[int]] = defaultdict(list)
    for position, row in enumerate(rows):
        for version in versions:
            index[(version, _key(says(row, version)))].append(position)
    paired: set[int] = set()
    left: list[tuple[AuditEntry, dict[str, Any]]] = []
    for entry, content in recorded:
        candidates = index.get((content.get("v", 1), _key(content)), [])
        while candidates and candidates[0] in paired:
            candidates.pop(0)
        if candidates:
            paired.add(candidates.pop(0))
        else:
            left.append((entry, content))
    report.checked += len(rows)
    unpaired = [row for position, row in enumerate(rows) if position not in paired]
    for row, (entry, content) in zip(unpaired, left, strict=False):
        said = says(row, content.get("v", 1))
        name = _first_difference(said, content) or "?"
        report.add(Finding(table, row.id, columns.get(name, name), entry.seq,
                           f"{table} row {row.id} (case {case_id}) differs from what audit entry {entry.seq} "
                           f"recorded: {columns.get(name, name)} is {said.get(name)!r} in the table, "
                           f"{content.get(name)!r} in the trail"))
    for row in unpaired[len(left):]:
        report.add(Finding(table, row.id, None, None, f"{table} row {row.id} (case {case_id}) was never recorded "
                                                       "in the audit trail: no entry holds it"))
    for entry, _content in left[len(unpaired):]:
        report.add(Finding(table, None, None, entry.seq, f"audit entry {entry.seq} ({entry.kind}) recorded a "
                                                          f"{table} row of case {case_id} that is no longer in "
                                                          "the table"))


def _check_table(session: Session, report: Report, model: Any, entries: Select[Any], columns: dict[str, str],
                 says: Callable[[Any, int], dict[str, Any]]) -> None:
    table = model.__tablename__
    rows = _stream(session, select(model).order_by(model.case_id, model.id))
    recorded = _stream(session, entries.where(AuditEntry.case_id.is_not(None))
                       .order_by(AuditEntry.case_id, AuditEntry.seq))
    with contextlib.closing(rows), contextlib.closing(recorded):
        by_rows, by_entries = _by_case(rows), _by_case(recorded)
        row_group, entry_group = next(by_rows, None), next(by_entries, None)
        while row_group is not None or entry_group is not None:
            row_case = row_group[0] if row_group is not None else None
            entry_case = entry_group[0] if entry_group is not None else None
            case_id = min(c for c in (row_case, entry_case) if c is not None)
            case_rows = row_group[1] if row_group is not None and row_case == case_id else []
            case_entries = entry_group[1] if entry_group is not None and entry_case == case_id else []
            _pair(table, columns, case_id, case_rows, case_entries, says, report)
            if row_case == case_id:
                row_group = next(by_rows, None)
            if entry_case == case_id:
                entry_group = next(by_entries, None)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_documents(session: Session, report: Report, names: Callable[[int | None], str | None]) -> None:
    """Each stored language version against its ``document.issued`` entry (every field, and the text
    against the recorded SHA-256), and against the hash its issue's ``case.document`` entry holds."""
    issued: dict[tuple[int, str, str], tuple[AuditEntry, dict[str, Any]]] = {}
    hashes: dict[tuple[int, str, str], tuple[AuditEntry, str]] = {}
    for entry in _stream(session, select(AuditEntry).where(AuditEntry.kind.in_(("document.issued", "case.document")))
                         .order_by(AuditEntry.seq)):
        content = _recorded(entry)
        if entry.kind == "document.issued":
            issued[(entry.case_id, str(content.get("key")), str(content.get("language")))] = (entry, content)
            continue
        raw = content.get("detail")
        detail: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for name, digest in detail.items():
            if name.startswith("sha256_"):
                hashes[(entry.case_id, str(detail.get("document")), name[len("sha256_"):])] = (entry, digest)
    table = CaseDocument.__tablename__
    for row in _stream(session, select(CaseDocument).order_by(CaseDocument.id)):
        report.checked += 1
        where = f"{table} row {row.id} ({row.number}, {row.language})"
        full = issued.pop((row.case_id, row.key, row.language), None)
        legacy = hashes.pop((row.case_id, row.number, row.language), None)
        if full is None and legacy is None:
            report.add(Finding(table, row.id, None, None, f"{where} was never recorded in the audit trail: no "
                                                           "entry holds it"))
            continue
        checks: list[tuple[AuditEntry, str, Any, Any]] = []
        if full is not None:
            entry, content = full
            said = {"$actor": names(row.issued_by), **document_detail(row)}
            checks += [(entry, name, said.get(name), content.get(name))
                       for name in [*said, *(n for n in content if n not in said and n != "$kind")]]
            checks.append((entry, "html", _sha256(row.html), content.get("sha256")))
        if legacy is not None:
            entry, digest = legacy
            checks += [(entry, "sha256", row.sha256, digest), (entry, "html", _sha256(row.html), digest)]
        for entry, name, value, wanted in checks:
            if value != wanted:
                field = {"$actor": "issued_by"}.get(name, name)
                shown = "the SHA-256 of the text is" if name == "html" else f"{field} is"
                report.add(Finding(table, row.id, field, entry.seq,
                                   f"{where} differs from what audit entry {entry.seq} recorded: {shown} "
                                   f"{value!r} in the table, {wanted!r} in the trail"))
                break
    for entry, _content in [*issued.values(), *((entry, None) for entry, _digest in hashes.values())]:
        report.add(Finding(table, None, None, entry.seq, f"audit entry {entry.seq} ({entry.kind}) recorded a "
                                                          f"document of case {entry.case_id} that is no longer "
                                                          "stored"))


def check(session: Session) -> Report:
    """Check every ledger entry, case history row and stored document against the audit entries
    that recorded them (see the module docstring). Read only. Run it on a chain that verifies (the
    entries are the reference)."""
    users = {user_id: username for user_id, username in session.execute(select(User.id, User.username))}

    def name(user_id: int | None) -> str | None:
        return None if user_id is None else users.get(user_id, f"user {user_id}")

    report = Report()
    _check_table(session, report, LedgerEntry, select(AuditEntry).where(AuditEntry.kind == "ledger.entry"),
                 LEDGER_COLUMNS, lambda row, version: {"$kind": "ledger.entry", "$actor": name(row.officer_id),
                                                       **ledger_detail(row, version)})
    _check_table(session, report, CaseEvent, select(AuditEntry).where(AuditEntry.kind.startswith("case.")),
                 EVENT_COLUMNS, lambda row, version: {"$kind": f"case.{row.kind}", "$actor": name(row.actor_user_id),
                                                      **event_detail(row, version)})
    _check_documents(session, report, name)
    return report
