"""The acts officers record on a case, each kept with the case as it found it.

An *act* is a unit of work in which an officer changes a case: a task completed (a bid, the
notice, an order, a decision), an objection or an appeal filed, a death, escape or birth recorded
(:meth:`webapp.services.cases.cases.CaseRun.begin_act`). Timer firings, reminders, claims and ledger
reversals are not acts. Each act leaves one :class:`~webapp.store.models.CaseAct` row with:

- ``before``: the case row as the act found it — engine state, case file, status, outcome, the
  timer and reminder instants, the list columns — as zlib-compressed JSON (:func:`snapshot`,
  :func:`restore_columns`);
- ``marks_json``: the highest ids of the case's history rows, ledger entries, documents and task
  rows, and of all notifications, just before the act — the rows above them are the act's;
- ``last_event_id``: the act's last history row (a later history row other than a notification,
  a refusal or a document means the case moved on after it).

This is what a correction (:mod:`webapp.services.cases.corrections`) needs to put the case back exactly
as it was; recording it costs one compression per act and no statement of its own: the marks are
read with the case row (:mod:`webapp.services.running.case_rows`), the last history row in the
act's INSERT.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import BindParameter, Table, and_, bindparam, func, insert, select
from sqlalchemy.orm import Session

from webapp.store import txcache
from webapp.store.models import Case, CaseAct, CaseDocument, CaseEvent, CaseTask, LedgerEntry, Notification, User
from webapp.values import casefile, clock, pound

# the columns of a case row that an act may change and a correction puts back
COLUMNS = ("state_json", "file_json", "status", "outcome", "next_timer_due", "next_alert_at",
           "receiving_officer_id", "notice_last_day", "closed_at", "shortfall")
INSTANTS = ("next_timer_due", "next_alert_at", "closed_at")
MARKS = ("event", "ledger", "document", "task", "notification")

_CASE: BindParameter[int] = bindparam("case_id")
# the highest id of each kind of row before an act (notifications of all cases: their case column has no index)
MARK_COLUMNS = (
    select(func.max(CaseEvent.id)).where(CaseEvent.case_id == _CASE).scalar_subquery(),
    select(func.max(LedgerEntry.id)).where(LedgerEntry.case_id == _CASE).scalar_subquery(),
    select(func.max(CaseDocument.id)).where(CaseDocument.case_id == _CASE).scalar_subquery(),
    select(func.max(CaseTask.id)).where(CaseTask.case_id == _CASE).scalar_subquery(),
    select(func.max(Notification.id)).scalar_subquery(),
)
_MARKS = select(*MARK_COLUMNS)
_LOADED_MARKS = "marks"  # txcache: case id -> (flushes when read, the marks read with the case row)
# the act's row, with its last history row read in the same statement (bound as act_case_id: the
# VALUES clause owns the name case_id)
_INSERT_ACT = insert(cast(Table, CaseAct.__table__)).values(
    last_event_id=select(func.max(CaseEvent.id)).where(CaseEvent.case_id == bindparam("act_case_id"))
    .scalar_subquery())


def loaded_marks(session: Session, case_id: int, values: Sequence[int | None]) -> None:
    """Note the marks (:data:`MARK_COLUMNS`, in :data:`MARKS` order) read with the row of case
    ``case_id`` (:func:`webapp.services.running.case_rows.load`): :func:`begin` takes them
    instead of asking again while the session has not flushed since."""
    txcache.of(session, _LOADED_MARKS)[case_id] = (txcache.flushes(session),
                                                  {name: int(value or 0) for name, value in zip(MARKS, values, strict=True)})


def snapshot(case: Case) -> bytes:
    """The columns of ``case`` an act may change (:data:`COLUMNS`), as zlib-compressed JSON
    (instants as ISO text in UTC, the shortfall as rupees text)."""
    values: dict[str, Any] = {}
    for name in COLUMNS:
        value = getattr(case, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, Decimal):
            value = f"{value:.2f}"
        values[name] = value
    return zlib.compress(json.dumps(values).encode("utf-8"), 1)


def before_values(before: bytes) -> dict[str, Any]:
    """The columns :func:`snapshot` kept, as stored (instants and rupees as text)."""
    values: dict[str, Any] = json.loads(zlib.decompress(before).decode("utf-8"))
    return values


def restore_columns(case: Case, before: bytes) -> dict[str, Any]:
    """Put the columns :func:`snapshot` kept back on ``case``; returns them as stored."""
    values = before_values(before)
    for name in COLUMNS:
        value = values.get(name)
        if name in INSTANTS and value is not None:
            value = datetime.fromisoformat(value)
        elif name == "shortfall":
            value = Decimal(value if value is not None else "0.00")
        setattr(case, name, value)
    case.cattle_held = pound.cattle_in_pound(casefile.load(case.file_json))  # follows the file put back
    return values


@dataclass
class ActRecord:
    """An act in progress: what :func:`begin` read, and the history rows the act writes."""

    case: Case
    user: User
    at: datetime
    before: bytes
    marks: dict[str, int]
    version_id: int
    name: str | None = None
    element_id: str | None = None
    recorded: bool = False

    def noted(self, row: CaseEvent) -> None:
        """A history row the act writes; the first task or act row names the act."""
        if self.name is None and row.kind in ("task", "act"):
            self.name, self.element_id = row.name, row.element_id

    def record(self, session: Session) -> None:
        """Add the act's :class:`CaseAct` row (once; after the flush that gave its rows their ids)."""
        if self.recorded:
            return
        self.recorded = True
        # one INSERT, now (as the ORM row would be at the next flush), with the act's last history
        # row read in it: the history rows are written in bulk and keep no id (webapp.store.append).
        # Core, not the unit of work: the row and its compressed snapshot never pass through the
        # flush hooks (audit, task table, immutable rows), none of which has anything to do with it.
        session.connection().execute(_INSERT_ACT, {
            "case_id": self.case.id, "act_case_id": self.case.id, "at": self.at,
            "name": act_name(self.name, self.element_id, self), "element_id": self.element_id,
            "actor_user_id": self.user.id, "actor_role": self.user.role, "process_version_id": self.version_id,
            "before": self.before, "marks_json": json.dumps(self.marks)})


INTERIM_DELIVERY = "Order of interim delivery on security"  # the act's name (a catalogue string)


def act_name(task_name: str | None, element_id: str | None, record: ActRecord) -> str:
    """The name an act is known by in the history, the corrections and their notices: its task's
    name (e.g. "Record bid"), but the decision on an objection that delivered the cattle to the
    objector on security is the order of interim delivery (Rule 130(c) Explanation), not a
    decision of the claim: its name says what it did."""
    if element_id == "ut_decide_objection":
        before = casefile.load(before_values(record.before)["file_json"])
        after = casefile.load(record.case.file_json)
        if after.interim is not None and before.interim is None:
            return INTERIM_DELIVERY
    return (task_name or "Act")[:200]


def begin(session: Session, case: Case, user: User) -> ActRecord:
    """Start recording an act of ``user`` on ``case``, as loaded and not yet changed. The marks
    are those read with the case row (:func:`loaded_marks`) when the session has not flushed
    since, so they are still the highest ids; else one query reads them."""
    known = txcache.of(session, _LOADED_MARKS).get(case.id)
    if known is not None and known[0] == txcache.flushes(session):
        marks = dict(known[1])
    else:
        with session.no_autoflush:
            row = session.execute(_MARKS, {"case_id": case.id}).one()
        marks = {name: int(value or 0) for name, value in zip(MARKS, row, strict=False)}
    return ActRecord(case=case, user=user, at=clock.now(), before=snapshot(case), marks=marks,
                     version_id=case.process_version_id)


def marks(act: CaseAct) -> dict[str, int]:
    """The act's marks: the highest id of each kind of row before it (:data:`MARKS`)."""
    return parse_marks(act.marks_json)


def parse_marks(text: str | None) -> dict[str, int]:
    """The marks kept in a :class:`CaseAct`'s ``marks_json`` text (0 for a kind it lacks)."""
    found = json.loads(text or "{}")
    return {name: int(found.get(name) or 0) for name in MARKS}


def latest(session: Session, case_id: int) -> CaseAct | None:
    """The case's latest act that was not corrected, or None."""
    return session.scalar(select(CaseAct).where(CaseAct.case_id == case_id, CaseAct.corrected_at.is_(None))
                          .order_by(CaseAct.id.desc()).limit(1))


def of_case(session: Session, case_id: int) -> list[CaseAct]:
    """Every act of the case, oldest first (corrected ones too)."""
    return list(session.scalars(select(CaseAct).where(CaseAct.case_id == case_id).order_by(CaseAct.id)))


def papers_of(session: Session, entries: Sequence[LedgerEntry]) -> dict[int, list[str]]:
    """The numbers of the documents issued by the act that posted each of ``entries`` (ledger entries
    of any cases), by entry id: e.g. ``{41: ["RMP/2026/0001/R1"]}`` for a release; ``[]`` for an entry
    no act posted (a ledger reversal, a firing of the timer worker) or an act that issued no document.

    Nothing links an entry to a document by key: both belong to an act (:class:`CaseAct`) by its
    case, its one instant (the entry's ``at`` and the document's ``issued_at`` are the act's ``at``:
    docs/RULE130.md, "One instant per act") and its marks (the rows of the case above the act's
    marks were written by it, up to the next act's). So one query reads the acts of these cases at
    these instants with the documents issued at their instant; an entry or a document belongs to
    the last of its case's acts at its instant whose mark is below its id. A document is listed
    once for both languages (one number); a cancelled one is listed too, as issued."""
    if not entries:
        return {}
    found = session.execute(
        select(CaseAct.id, CaseAct.case_id, CaseAct.at, CaseAct.marks_json, CaseDocument.id, CaseDocument.number)
        .outerjoin(CaseDocument, and_(CaseDocument.case_id == CaseAct.case_id, CaseDocument.issued_at == CaseAct.at))
        .where(CaseAct.case_id.in_(sorted({e.case_id for e in entries})),
               CaseAct.at.in_(sorted({e.at for e in entries})))
        .order_by(CaseAct.id, CaseDocument.id)).all()
    acts_at: dict[tuple[int, datetime], dict[int, dict[str, int]]] = defaultdict(dict)  # in act order
    issued: dict[int, tuple[int, datetime, str]] = {}
    for act_id, case_id, at, marks_json, document_id, number in found:
        acts_at[case_id, at].setdefault(act_id, parse_marks(marks_json))
        if document_id is not None:
            issued[document_id] = (case_id, at, number)

    def act_of(case_id: int, at: datetime, row_id: int, kind: str) -> int | None:
        return next((act_id for act_id, marks in reversed(acts_at.get((case_id, at), {}).items())
                     if marks[kind] < row_id), None)

    numbers: dict[int, list[str]] = defaultdict(list)
    for document_id in sorted(issued):
        case_id, at, number = issued[document_id]
        issuer = act_of(case_id, at, document_id, "document")
        if issuer is not None and number not in numbers[issuer]:
            numbers[issuer].append(number)
    result = {}
    for entry in entries:
        poster = act_of(entry.case_id, entry.at, entry.id, "ledger")
        result[entry.id] = list(numbers.get(poster, [])) if poster is not None else []
    return result
