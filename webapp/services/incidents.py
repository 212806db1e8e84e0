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

import json
import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from .. import clock
from ..errors import CaseHeld, Conflict, NotFound, NotPermitted, Refused, StartFailed, TaskFailed
from ..i18n import M_, N_
from ..store.models import Case, CaseEvent, Incident, Panchayat, User
from . import notifications, uow, users

log = logging.getLogger("rule130.incidents")
SNAPSHOT_LIMIT = 20_000  # characters of the data snapshot kept with an incident


def _snapshot(failure: TaskFailed) -> str:
    text = json.dumps(failure.snapshot or {}, default=str, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= SNAPSHOT_LIMIT else text[:SNAPSHOT_LIMIT] + "…"


def held_message(case_number: str, incident: Incident) -> str:
    """What officers read about a held case, in plain words."""
    where = M_(incident.element_name) if incident.element_name else incident.element_id or M_("a step of the process")
    return M_("case %(case)s is held: “%(where)s” failed (%(error)s). An administrator has been told and must retry or "
              "skip it (incident %(id)s); nothing can be done in this case until then.", case=case_number, where=where,
              error=incident.message, id=incident.id)


def open_incident(sessions: sessionmaker[Session], failure: TaskFailed, action: str,
                  user: User | None) -> CaseHeld | StartFailed:
    """Record ``failure`` as an incident and hold its case (its own transaction, after the failing
    one was rolled back); notify the administrators. A case already held gets no second incident.
    When another transaction changes the case row at the same moment (the optimistic lock), the
    case is read again and the incident recorded then (three tries).

    Returns:
        the :class:`CaseHeld` refusal to raise to whoever acted (officer, API client or worker); a
        :class:`StartFailed` refusal when the case does not exist (the failure was in the first
        steps of a new case, whose recording was rolled back with them: nothing half-made is kept).
    Raises:
        Conflict: the case changed under every try.
    """
    for _ in range(3):
        try:
            return _open_incident(sessions, failure, action, user)
        except StaleDataError:
            continue
    raise Conflict(uow.CONFLICT_MESSAGE)


def start_failed(failure: TaskFailed) -> StartFailed:
    """The refusal of a new case whose first steps failed (see :func:`open_incident`)."""
    where = M_(failure.element_name) if failure.element_name else failure.element_id or M_("a step of the process")
    log.error("a new case was not recorded: %s failed: %s", failure.element_id, failure.message)
    return StartFailed(M_("the case was not recorded: the process step “%(where)s” failed (%(error)s). Nothing was "
                          "saved; an administrator must deploy a corrected process version before cases can be "
                          "recorded.", where=where, error=failure.message))


def _open_incident(sessions: sessionmaker[Session], failure: TaskFailed, action: str,
                   user: User | None) -> CaseHeld | StartFailed:
    with sessions() as session:
        case = session.get(Case, failure.case_id)
        if case is None:
            return start_failed(failure)
        if case.held_incident_id is not None:  # a retry that failed again: the same incident, one more attempt
            incident = session.get(Incident, case.held_incident_id)
            incident.attempts += 1
            incident.message, incident.kind, incident.data_json = failure.message, failure.kind, _snapshot(failure)
            _audit(session, case, "incident", "Incident: the step failed again; case still held", failure.element_id,
                   user, {"incident": incident.id, "message": failure.message, "action": action})
            session.commit()
            return CaseHeld(held_message(case.case_number, incident), incident_id=incident.id)
        now = clock.now()
        incident = Incident(case_id=case.id, element_id=failure.element_id, element_name=failure.element_name,
                            kind=failure.kind, message=failure.message, data_json=_snapshot(failure),
                            action=action, raised_at=now, status="open", actor_user_id=user.id if user else None,
                            attempts=1)
        session.add(incident)
        session.flush()
        case.held_incident_id = incident.id
        _audit(session, case, "incident", "Incident opened: case held", failure.element_id, user,
               {"incident": incident.id, "kind": failure.kind, "message": failure.message, "action": action})
        notifications.notify(session, case, ["administrator"], "incident_opened", incident=str(incident.id),
                             element=failure.element_name or failure.element_id or N_("a step"),
                             error=failure.message)
        session.commit()
        log.error("case %s held by incident %s: %s failed while %s: %s", case.case_number, incident.id,
                  failure.element_id, action, failure.message)
        return CaseHeld(held_message(case.case_number, incident), incident_id=incident.id)


def _audit(session: Session, case: Case, kind: str, name: str, element_id: str | None, user: User | None,
           detail: dict[str, Any]) -> None:
    session.add(CaseEvent(case_id=case.id, at=clock.now(), kind=kind, name=name, element_id=element_id,
                          actor_role=user.role if user else None, actor_user_id=user.id if user else None,
                          detail_json=json.dumps(detail, default=str)))


def holding(session: Session, case: Case) -> Incident | None:
    """The open incident holding ``case``, or None."""
    return session.get(Incident, case.held_incident_id) if case.held_incident_id is not None else None


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
        raise Refused(M_("incident %(incident_id)s is already %(status)s", incident_id=incident_id, status=M_(incident.status)))
    return incident, case


def retry(sessions: sessionmaker[Session], user: User, incident_id: int) -> Incident:
    """Run the held case again (fire what is due, step the engine) in one transaction and, if it
    succeeds, close the incident as ``retried`` and release the hold.

    Raises:
        CaseHeld: the step failed again (the incident stays open with the new error and one more
            attempt; see :func:`open_incident`).
        Refused: the incident is not open. NotFound / NotPermitted: scope and role.
    """
    from . import cases

    def attempt(session: Session) -> Incident:
        incident, case = _open(session, user, incident_id)
        case.held_incident_id = None
        run = cases.CaseRun(session, case, None)
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
    from sqlalchemy import func
    return session.scalar(select(func.count(Incident.id)).where(Incident.status == "open")) or 0
