"""Answers kept for the rest of one transaction.

A unit of work asks some questions several times (who are the officers of a lane in this case's
scope, which channels they chose): :func:`of` gives a dict, named by the caller, that lives in
``session.info`` until the transaction ends (commit or rollback; a savepoint ending drops it too),
so the next transaction asks the database again.

:func:`keep` holds rows of this transaction (the Panchayat of the case a unit of work writes) so
that ``session.get`` finds them in the identity map, which holds rows only weakly, instead of
reading them again; :func:`flushes` counts the session's flushes, so that an answer read before a
flush can tell whether it still stands.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

_KEY = "rule130.txcache"
_FLUSHES = "rule130.flushes"


def of(session: Session, name: str) -> dict[Any, Any]:
    """The dict ``name`` of this session's current transaction (empty at first)."""
    caches: dict[str, dict[Any, Any]] = session.info.setdefault(_KEY, {})
    return caches.setdefault(name, {})


def keep(session: Session, *rows: Any) -> None:
    """Hold ``rows`` (ORM instances of ``session``) until this transaction ends, so that
    ``session.get`` of their keys is answered from the identity map without a query."""
    kept = of(session, "kept")
    for row in rows:
        kept[id(row)] = row


def flushes(session: Session) -> int:
    """How many flushes ``session`` has made (ever: compare two readings in one transaction)."""
    count: int = session.info.get(_FLUSHES, 0)
    return count


@event.listens_for(Session, "after_flush")
def _count_flush(session: Session, _context: Any) -> None:
    session.info[_FLUSHES] = session.info.get(_FLUSHES, 0) + 1


@event.listens_for(Session, "after_transaction_end")
def _drop(session: Session, transaction: Any) -> None:
    """A transaction or savepoint ended (not the inner transaction each flush opens)."""
    if transaction.parent is not None and not transaction.nested:
        return
    session.info.pop(_KEY, None)
