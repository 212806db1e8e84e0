"""Rows that are only ever added: ledger entries and tariff rates.

A ``before_flush`` hook on every session refuses a flush that would change or delete a
:class:`~webapp.store.models.LedgerEntry` or a :class:`~webapp.store.models.TariffRate`. A
correction of the ledger is a reversing entry (webapp.services.ledger.reverse); a new tariff is
a new row with its effective date (webapp.services.tariffs.add). On PostgreSQL and SQLite a
trigger (migration 0011_ledger) refuses UPDATE and DELETE on ``ledger_entry`` as well, for
writes that do not go through the ORM.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from ..errors import EngineFailure
from .models import LedgerEntry, TariffRate

MESSAGES = {
    LedgerEntry: "ledger entry #%s cannot be %s: entries are never edited or deleted; post a reversing entry",
    TariffRate: "tariff rate #%s cannot be %s: tariffs are never edited; add a new rate with its effective date",
}


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
            raise EngineFailure(template % (obj.id, verb))
