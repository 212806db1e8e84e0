"""Holding a case whose step failed: the incident recorded, the case held, the administrators told.

An element of the diagram that fails while a unit of work runs it (a handler, a script, a timer
expression, a ledger invariant) rolls that unit back; :func:`open_incident` then records the
failure as an :class:`~webapp.store.models.Incident` in a transaction of its own and holds the
case until an administrator retries or skips the step (:mod:`webapp.services.jobs.incidents`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from webapp.errors import CONFLICT_MESSAGE, CaseHeld, Conflict, StartFailed, TaskFailed
from webapp.i18n import M_, N_
from webapp.services.notify import notifications
from webapp.store.models import Case, CaseEvent, Incident, User, get_row
from webapp.values import clock

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
    raise Conflict(CONFLICT_MESSAGE)


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
            incident = get_row(session, Incident, case.held_incident_id)
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
