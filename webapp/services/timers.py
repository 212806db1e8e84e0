"""The timer worker: find cases whose next timer is due, fire them, save, record each firing.

A case is due when ``next_timer_due`` (indexed) is at or before now; SpiffWorkflow fires a timer
only once the clock is strictly past its instant, so the worker looks for ``next_timer_due < now``.
Each case fires in its own transaction with optimistic locking: an officer's act on the same
case at the same moment makes one of the two retry, never lose an update.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from .. import clock
from ..errors import Conflict, Rule130Error
from ..store.models import Case, WorkerLease
from . import cases, uow

log = logging.getLogger("rule130.timers")
LEASE_NAME = "timer-worker"
LEASE_SECONDS = 30


def due_case_ids(session: Session, now: datetime, limit: int = 100) -> list[int]:
    """Running cases whose next timer is due, earliest first."""
    return list(session.scalars(select(Case.id).where(Case.status == "running", Case.next_timer_due.is_not(None),
                                                      Case.next_timer_due < now)
                                .order_by(Case.next_timer_due).limit(limit)))


def _fire(session: Session, case_id: int) -> int:
    case = session.get(Case, case_id)
    if case is None or case.status != "running":
        return 0
    run = cases.CaseRun(session, case, None)
    fired = run.run()
    run.save()
    for timer in fired:
        log.info("case %s: timer %s fired, due %s, late %.3f s", case.case_number, timer.bpmn_id,
                 timer.due.isoformat(), (clock.now() - timer.due).total_seconds())
    return len(fired)


def fire_case(sessions: sessionmaker[Session], case_id: int) -> int:
    """Fire every due timer of one case in one transaction. Returns how many fired."""
    return uow.perform(sessions, "fire_timers", _fire, case_id)


def fire_due(sessions: sessionmaker[Session], limit: int = 100) -> int:
    """One pass of the worker: fire every due case (a conflicting case is retried next pass)."""
    with sessions() as session:
        ids = due_case_ids(session, clock.now(), limit)
    fired = 0
    for case_id in ids:
        try:
            fired += fire_case(sessions, case_id)
        except Conflict:
            log.info("case %s changed while its timers fired; retrying next pass", case_id)
        except Rule130Error as error:
            log.error("case %s: timer firing failed: %s", case_id, error.message)
    return fired


def next_due(sessions: sessionmaker[Session]) -> datetime | None:
    with sessions() as session:
        return session.scalar(select(Case.next_timer_due).where(Case.status == "running",
                                                                Case.next_timer_due.is_not(None))
                              .order_by(Case.next_timer_due).limit(1))


class LeaseHeld(Exception):
    """Another timer worker holds the lease."""


def holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def acquire_lease(sessions: sessionmaker[Session], holder: str) -> None:
    """Take (or renew) the single-worker lease.

    Raises:
        LeaseHeld: another live worker holds it (SQLite runs one worker at a time).
    """
    with sessions() as session:
        now = clock.now()
        lease = session.get(WorkerLease, LEASE_NAME)
        if lease is not None and lease.holder != holder and lease.expires_at > now:
            raise LeaseHeld(f"another timer worker ({lease.holder}) is running until at least "
                            f"{lease.expires_at.isoformat()}")
        if lease is None:
            session.add(WorkerLease(name=LEASE_NAME, holder=holder, expires_at=now + timedelta(seconds=LEASE_SECONDS)))
        else:
            lease.holder, lease.expires_at = holder, now + timedelta(seconds=LEASE_SECONDS)
        session.commit()


def release_lease(sessions: sessionmaker[Session], holder: str) -> None:
    with sessions() as session:
        lease = session.get(WorkerLease, LEASE_NAME)
        if lease is not None and lease.holder == holder:
            session.delete(lease)
            session.commit()


def run_worker(sessions: sessionmaker[Session], stop: threading.Event, *, max_sleep: float = 1.0) -> None:
    """Fire due timers until ``stop`` is set; sleep until the next due instant (at most ``max_sleep`` s).

    Raises:
        LeaseHeld: another worker is running (checked before the first pass).
    """
    holder = holder_id()
    acquire_lease(sessions, holder)
    log.info("timer worker %s started", holder)
    try:
        while not stop.is_set():
            fire_due(sessions)
            acquire_lease(sessions, holder)
            upcoming = next_due(sessions)
            wait = max_sleep
            if upcoming is not None:
                wait = min(max_sleep, max(0.01, (upcoming - clock.now()).total_seconds() + 0.001))
            stop.wait(wait)
    finally:
        release_lease(sessions, holder)
        log.info("timer worker %s stopped", holder)


def overdue(session: Session, now: datetime, grace_seconds: float = 5.0) -> tuple[int, float]:
    """Running cases whose next timer is overdue by more than ``grace_seconds``, and the largest lag.

    Returns:
        (how many cases, the oldest lag in seconds; 0.0 when none) — what the health check reports.
    """
    limit = now - timedelta(seconds=grace_seconds)
    rows = list(session.scalars(select(Case.next_timer_due).where(
        Case.status == "running", Case.next_timer_due.is_not(None), Case.next_timer_due < limit)))
    if not rows:
        return 0, 0.0
    return len(rows), max((now - due).total_seconds() for due in rows)
