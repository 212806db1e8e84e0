"""Answers kept for the rest of one transaction.

A unit of work asks some questions several times (who are the officers of a lane in this case's
scope, which channels they chose): :func:`of` gives a dict, named by the caller, that lives in
``session.info`` until the transaction ends (commit or rollback; a savepoint ending drops it too),
so the next transaction asks the database again.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

_KEY = "rule130.txcache"


def of(session: Session, name: str) -> dict[Any, Any]:
    """The dict ``name`` of this session's current transaction (empty at first)."""
    caches: dict[str, dict[Any, Any]] = session.info.setdefault(_KEY, {})
    return caches.setdefault(name, {})


@event.listens_for(Session, "after_transaction_end")
def _drop(session: Session, transaction: Any) -> None:
    """A transaction or savepoint ended (not the inner transaction each flush opens)."""
    if transaction.parent is not None and not transaction.nested:
        return
    session.info.pop(_KEY, None)
