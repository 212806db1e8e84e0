"""The row of a case a unit of work is about to write, read in one statement with what the unit of
work would otherwise ask for one by one.

:func:`load` reads the case row, its Panchayat (the training clock, the documents' letterhead and
the notifications' training check read it, several times a unit of work), the content hash of its
process version (:func:`webapp.services.diagrams.repository.load_id`: whether the kept parse still
serves), the "deadline near" reminders already sent (:func:`webapp.services.running.alerts.loaded_reminders`),
the keys and numbers of its documents (:func:`webapp.services.papers.documents.loaded`: what an act's
documents are numbered after) and the act's marks (:func:`webapp.services.running.acts.begin`), all
in one ``SELECT`` (the lists as JSON arrays, :mod:`webapp.store.json_rows`), and
keeps the rows for the rest of the transaction (:func:`webapp.store.txcache.keep`), so that
``session.get`` of the case or of its Panchayat is answered from the identity map.

On PostgreSQL the unit of work has locked the case row first (:func:`webapp.store.db.lock_case`,
a statement of its own): this ``SELECT`` runs after the lock is granted, so it sees every row the
case's previous writer committed (a statement's snapshot is taken when it starts: the marks must
not be read in the locking statement, which may wait; nor the reminders and documents).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from webapp.services.diagrams import repository
from webapp.services.papers import documents
from webapp.services.running import acts, alerts
from webapp.store import txcache
from webapp.store.json_rows import json_rows
from webapp.store.models import Case, CaseDocument, DeadlineReminder, Panchayat, ProcessVersion

_REMINDERS = (select(json_rows(DeadlineReminder.element_id, DeadlineReminder.due_at))
              .where(DeadlineReminder.case_id == Case.id).scalar_subquery())
_DOCUMENTS = (select(json_rows(CaseDocument.key, CaseDocument.kind, CaseDocument.number,
                               CaseDocument.cancelled_at.is_(None)))
              .where(CaseDocument.case_id == Case.id).scalar_subquery())
_LOAD = (select(Case, Panchayat, ProcessVersion.content_hash, _REMINDERS, _DOCUMENTS, *acts.MARK_COLUMNS)
         .join(Panchayat, Panchayat.id == Case.panchayat_id)
         .join(ProcessVersion, ProcessVersion.id == Case.process_version_id)
         .where(Case.id == bindparam("case_id")))  # built once: every unit of work on a case runs it


def load(session: Session, case_id: int) -> Case | None:
    """The case ``case_id`` (None when there is none), with its Panchayat and its version's content
    hash kept for the transaction and the act's marks noted (:func:`acts.loaded_marks`); one
    statement. A case already in the session is returned as it stands there (nothing flushed)."""
    with session.no_autoflush:
        row = session.execute(_LOAD, {"case_id": case_id}).first()
    if row is None:
        return None
    case: Case = row[0]
    keep_loaded(session, case, row[1], row[2])
    alerts.loaded_reminders(session, case.id, row[3])
    documents.loaded(session, case.id, row[4])
    acts.loaded_marks(session, case.id, row[5:])
    return case


def keep_loaded(session: Session, case: Case, panchayat: Panchayat, content_hash: Any) -> None:
    """Keep ``case`` and its ``panchayat`` for the transaction and note its version's content hash."""
    txcache.keep(session, case, panchayat)
    repository.note_content_hash(session, case.process_version_id, content_hash)
