"""Incidents: a step of a case that fails puts the case on hold instead of failing silently.

A *task failure* is a diagram element that cannot run: a service-task handler raising, a script
or expression the sandbox refuses, a timer expression that does not evaluate, a ledger invariant
that would break (:class:`webapp.errors.TaskFailed`, raised by ``cases.CaseRun``). The unit of
work that met it is rolled back entirely (nothing of it is saved); then, in a separate
transaction, :func:`open_incident` records the incident (case, element id and name, the error in
plain words, a snapshot of the data, the instant, what was being done), marks the case *held*,
writes a history (audit) event and notifies the administrators whose scope covers the case.

A held case is skipped by the timer workers and refuses officers' acts (:class:`CaseHeld`);
officers see on the case and task pages that it is held and why. An administrator, after fixing
the cause (a corrected handler, or a corrected process version deployed and the case moved to it),
*retries* — the case runs again in one transaction; if it fails again the incident stays open
with the new error — or *skips* it with a reason: the hold is released and nothing is run; the
case stays where it was before the failing step (a timer that was due fires again on the next
pass, an officer may act again). Both are recorded in the case history with the administrator.
"""

from __future__ import annotations

import logging

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.running.case_run import CaseRun
from webapp.services.running.holds import _audit
from webapp.services.running.holds import held_message as held_message
from webapp.services.running.holds import holding as holding
from webapp.services.running.holds import open_incident as open_incident
from webapp.services.running.holds import start_failed as start_failed
from webapp.store.models import Case, Incident, Panchayat, User
from webapp.values import clock

log = logging.getLogger("rule130.incidents")


def _require_admin(session: Session, user: User, case: Case | None = None) -> None:
    if user.role != "administrator":
        raise NotPermitted(M_("only an administrator may handle incidents"))
    if case is not None and not users.can_see(session, user, case):
        raise NotFound(M_("no such incident is open to you"))


def listing(session: Session, user: User, *, status: str | None = "open", limit: int = 200) -> list[tuple[Incident, Case]]:
    """Incidents within the administrator's scope, newest first (``status`` None: all)."""
    _require_admin(session, user)
    query = (select(Incident, Case).join(Case, Case.id == Incident.case_id)
             .join(Panchayat, Panchayat.id == Case.panchayat_id).order_by(Incident.id.desc()).limit(limit))
    if status:
        query = query.where(Incident.status == status)
    if user.panchayat_id is not None:
        query = query.where(Case.panchayat_id == user.panchayat_id)
    elif user.samiti_code is not None:
        query = query.where(Panchayat.samiti_code == user.samiti_code)
    return [(incident, case) for incident, case in session.execute(query).all()]


def get(session: Session, user: User, incident_id: int) -> tuple[Incident, Case]:
    """One incident and its case. Raises NotFound (unknown or outside scope), NotPermitted."""
    _require_admin(session, user)
    incident = session.get(Incident, incident_id)
    case = session.get(Case, incident.case_id) if incident is not None else None
    if incident is None or case is None:
        raise NotFound(M_("no incident %(incident_id)s", incident_id=incident_id))
    _require_admin(session, user, case)
    return incident, case


def _open(session: Session, user: User, incident_id: int) -> tuple[Incident, Case]:
    incident, case = get(session, user, incident_id)
    if incident.status != "open":
        raise Refused(M_("incident %(incident_id)s is already %(status)s", incident_id=incident_id, status=M_(incident.status)),
                      then=M_("Nothing more is needed: the incident is closed; the monitor lists the open ones."))
    return incident, case


def retry(sessions: sessionmaker[Session], user: User, incident_id: int) -> Incident:
    """Run the held case again (fire what is due, step the engine) in one transaction and, if it
    succeeds, close the incident as ``retried`` and release the hold.

    Raises:
        CaseHeld: the step failed again (the incident stays open with the new error and one more
            attempt; see :func:`open_incident`).
        Refused: the incident is not open. NotFound / NotPermitted: scope and role.
    """

    def attempt(session: Session) -> Incident:
        incident, case = _open(session, user, incident_id)
        case.held_incident_id = None
        run = CaseRun(session, case, None)
        fired = run.run()
        run.save()
        incident.status, incident.resolved_at, incident.resolved_by_id = "retried", clock.now(), user.id
        _audit(session, case, "incident", "Incident retried: case released", incident.element_id, user,
               {"incident": incident.id, "timers_fired": [t.bpmn_id for t in fired]})
        return incident

    return uow.perform(sessions, "retry_incident", attempt, user=user)


def skip(sessions: sessionmaker[Session], user: User, incident_id: int, reason: str) -> Incident:
    """Close the incident as ``skipped`` with the administrator's ``reason`` and release the hold,
    running nothing: the case stays where it was before the failing step.

    Raises:
        Refused: no reason given, or the incident is not open. NotFound / NotPermitted.
    """
    reason = (reason or "").strip()
    if not reason:
        raise Refused(M_("give the reason for skipping the incident"), {"reason": M_("this field is required")})
    if len(reason) > 1000:
        raise Refused(M_("the reason is longer than 1000 characters"), {"reason": M_("too long")})

    def close(session: Session) -> Incident:
        incident, case = _open(session, user, incident_id)
        case.held_incident_id = None
        case.updated_at = clock.now()
        incident.status, incident.resolved_at, incident.resolved_by_id = "skipped", clock.now(), user.id
        incident.resolution_note = reason
        _audit(session, case, "incident", "Incident skipped: case released", incident.element_id, user,
               {"incident": incident.id, "reason": reason})
        return incident

    return uow.perform(sessions, "skip_incident", close, user=user)


def open_count(session: Session) -> int:
    """How many incidents are open (every Panchayat): the ``/metrics`` gauge."""
    return session.scalar(select(func.count(Incident.id)).where(Incident.status == "open")) or 0
