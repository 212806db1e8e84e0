"""Rows that are only ever added: ledger entries and tariff rates; documents as issued.

A ``before_flush`` hook on every session refuses a flush that would change or delete a
:class:`~webapp.store.models.LedgerEntry` or a :class:`~webapp.store.models.TariffRate`. A
correction of the ledger is a reversing entry (webapp.services.money.ledger.reverse); a new tariff is
a new row with its effective date (webapp.services.money.tariffs.add). On PostgreSQL and SQLite a
trigger (migration 0011_ledger) refuses UPDATE and DELETE on ``ledger_entry`` as well, for
writes that do not go through the ORM.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from webapp.errors import EngineFailure
from webapp.store.models import CaseDocument, LedgerEntry, TariffRate

MESSAGES = {
    LedgerEntry: "ledger entry #%s cannot be %s: entries are never edited or deleted; post a reversing entry",
    TariffRate: "tariff rate #%s cannot be %s: tariffs are never edited; add a new rate with its effective date",
    CaseDocument: "document #%s cannot be %s: a document is kept as issued; a correction cancels it",
}
CANCELLATION = ("cancelled_at", "cancelled_by", "cancel_reason")


@event.listens_for(Session, "before_flush")
def _refuse_changes(session: Session, _context: Any, _instances: Any) -> None:
    """Raise :class:`EngineFailure` (the unit of work rolls back) for a changed or deleted row."""
    for verb, objects in (("deleted", session.deleted), ("changed", session.dirty)):
        for obj in objects:
            template = MESSAGES.get(type(obj))
            if template is None:
                continue
            if verb == "changed" and not session.is_modified(obj, include_collections=False):
                continue
            if verb == "changed" and isinstance(obj, CaseDocument) and _cancelled_once(obj):
                continue
            raise EngineFailure(template % (obj.id, verb))


def _cancelled_once(document: CaseDocument) -> bool:
    """Whether the only change to ``document`` is its cancellation, written where there was none."""
    attrs = inspect(document).attrs
    changed = {attr.key for attr in attrs if attr.history.has_changes()}
    if not changed or not changed <= set(CANCELLATION):
        return False
    return all(next(iter(attrs[name].history.deleted or ()), None) is None for name in CANCELLATION)
