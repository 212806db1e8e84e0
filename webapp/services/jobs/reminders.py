"""Sending the "deadline near" notices that fell due: one unit of work per case.

What a notice says and when it is due is :mod:`webapp.services.running.alerts`'s (read by every act of a
case); this module runs the passes that send them — the delivery loop's
(:mod:`webapp.services.jobs.delivery_worker`) and the simulator's — each case through its engine
(:class:`webapp.services.cases.cases.CaseRun`) in a transaction of its own (:func:`webapp.services.running.uow.perform`).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import Conflict, Rule130Error
from webapp.services.jobs import timers
from webapp.services.running import alerts, uow
from webapp.services.running.case_run import CaseRun
from webapp.store.models import Case
from webapp.values import clock

log = logging.getLogger("rule130.notify")


def _remind(session: Session, case_id: int) -> None:
    case = session.get(Case, case_id)
    if case is None or case.status != "running":
        return
    run = CaseRun(session, case, None)
    alerts.deadlines_near(run)
    case.next_alert_at = alerts.next_reminder(run)
    case.updated_at = clock.now()  # the case row changes, so its optimistic lock serializes us with any act
    session.flush()


def remind_case(sessions: sessionmaker[Session], case_id: int) -> None:
    """Send the due "deadline near" notices of one case in one transaction (its optimistic lock
    makes a concurrent act or timer firing win or lose as a whole; a loser retries later)."""
    uow.perform(sessions, "deadline_reminders", _remind, case_id)


def remind_due(sessions: sessionmaker[Session], limit: int = 100) -> list[int]:
    """One pass: every running case whose ``next_alert_at`` has come, on its Panchayat's clock, as
    the timer worker reads it (:func:`webapp.services.jobs.timers.fire_due_cases`): a live Panchayat's
    case on the installed clock, a training Panchayat's on its own (the installed clock read its
    offset ahead: :mod:`webapp.services.panchayats.training`), one put away by a reset never. Returns the ids
    of the cases visited (at most ``limit`` per Panchayat scope)."""
    with sessions() as session:
        scopes = [(timers.LIVE, timedelta(0)), *timers.training_clocks(session)]
    visited: list[int] = []
    for panchayat_id, offset in scopes:
        with clock.installed(clock.ShiftedClock(clock.current(), offset)):
            visited.extend(_remind_scope(sessions, limit, panchayat_id))
    return visited


def _remind_scope(sessions: sessionmaker[Session], limit: int, panchayat_id: int | None) -> list[int]:
    """:func:`remind_due` over the cases of one scope (:func:`webapp.services.jobs.timers.in_scope`)."""
    with sessions() as session:
        ids = list(session.scalars(timers.in_scope(
            select(Case.id).where(Case.status == "running", Case.next_alert_at.is_not(None),
                                  Case.next_alert_at <= clock.now()), panchayat_id)
            .order_by(Case.next_alert_at).limit(limit)))
    for case_id in ids:
        try:
            remind_case(sessions, case_id)
        except Conflict:
            log.info("case %s changed while its reminders were sent; retrying next pass", case_id)
        except Rule130Error as error:
            log.error("case %s: reminders failed: %s", case_id, error.message)
    return ids
