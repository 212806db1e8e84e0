"""Rows that are only ever added, written in bulk: case history, timer firings, notifications,
issued documents (each language version) and audit entries.

The service layer adds these rows to the session like any other (so an autoflush writes them
before a query that reads them). A flush writes them with one multi-row ``INSERT`` per table and
key set (a Core ``executemany``) instead of the unit of work's one ``INSERT ... RETURNING`` per
row: nothing reads their database ids in the transaction that adds them, and on SQLite the unit
of work cannot batch rows whose key the database assigns (SQLAlchemy 2 "insertmanyvalues": SQLite
has no ordered RETURNING form). It saves a few per cent of a case's cost (docs/benchmarks.md,
"Third round").

:func:`write` is called at the end of the audit trail's ``before_flush`` hook, after the entries
for the flush's rows are chained, so the rows and their entries go in the same transaction. A
row written this way leaves the session: its ``id`` stays None. A notification that a delivery
added in the same flush refers to stays with the unit of work (the delivery needs its id).
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Insert, Table, insert, inspect
from sqlalchemy.orm import Mapper, Session

from webapp.store.models import AuditEntry, CaseDocument, CaseEvent, Delivery, Notification, TimerFiring

# A document's rows are read back by their case and number, never by the id of a row just issued
# (the history and the audit trail record its number and hashes): the English and Hindi versions
# go in one INSERT on SQLite too, where the unit of work would send one each.
BULK = (CaseEvent, TimerFiring, Notification, CaseDocument, AuditEntry)
CHAINED = (AuditEntry,)  # written after their hashes are chained
UNCHAINED = tuple(model for model in BULK if model not in CHAINED)


_COLUMNS: dict[type[Any], tuple[str, ...]] = {model: tuple(attr.key for attr in cast(Mapper[Any], inspect(model)).column_attrs)
                                              for model in BULK}
_INSERTS: dict[type[Any], Insert] = {model: insert(cast(Table, model.__table__)) for model in BULK}  # column defaults fill the keys a row lacks


def write(session: Session, models: tuple[type, ...] = BULK) -> int:
    """Write the pending rows of ``models`` (some of the ``BULK`` tables) with one INSERT per table
    and key set, and take them out of the session (the rest of the flush does not write them again).

    Must run inside ``before_flush`` (autoflush is off there). Returns the number of rows written.
    Raises what the database raises (the caller's transaction is then rolled back).
    """
    pending = [obj for obj in session.new if type(obj) in models]
    if not pending:
        return 0
    wanted = {id(row.notification) for row in session.new if isinstance(row, Delivery) and row.notification is not None}
    pending = sorted((obj for obj in pending if id(obj) not in wanted), key=lambda obj: inspect(obj).insert_order)
    written = 0
    for model in models:
        rows = [obj for obj in pending if type(obj) is model]
        if not rows:
            continue
        by_keys: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for obj in rows:
            state = inspect(obj).dict
            values = {key: state[key] for key in _COLUMNS[model] if key in state}
            by_keys.setdefault(tuple(values), []).append(values)
            session.expunge(obj)
        connection = session.connection()
        for batch in by_keys.values():
            connection.execute(_INSERTS[model], batch)
            written += len(batch)
    return written
