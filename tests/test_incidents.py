"""Incidents: a failing handler holds the case instead of a 500 or a silent failure; an administrator
retries after the cause is fixed (or skips with a reason). A real diagram deployed with a test
handler that fails until told otherwise."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from sqlalchemy import select

import handlers
from tests.conftest import PASSWORD
from webapp.errors import CaseHeld
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, CaseEvent, Incident, Notification, TimerFiring

FLAKY = {"broken": True}
RELEASE_DUE = "2026-01-08T18:30:00+00:00"


def _flaky_report(ctx, **params):
    """Stands in for case.raise_report; fails while FLAKY["broken"] (an unreachable service)."""
    if FLAKY["broken"]:
        raise RuntimeError("the report register is unreachable")
    return handlers.get("case.raise_report")(ctx, **params)


if "test.flaky_report" not in handlers.REGISTRY:
    handlers.get("case.raise_report")  # load the real handlers first
    handlers.handler("test.flaky_report", clause="test only")(_flaky_report)


@pytest.fixture
def flaky_version(sessions):
    """The bundled Rule 130 process, deployed again with svc_raise_report calling the flaky handler."""
    FLAKY["broken"] = True
    bpmn, forms = repository.read_bundled()
    bpmn = bpmn.replace(b'serviceTaskOperator id="case.raise_report"', b'serviceTaskOperator id="test.flaky_report"')
    with sessions() as session:
        version, created = repository.deploy(session, bpmn, forms, "tests", note="flaky report handler")
        session.commit()
    assert created and version.version == 2
    yield version
    FLAKY["broken"] = True


def impound(sessions, officer) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


def sign_in(client, username: str) -> None:
    assert client.post("/login", data={"username": username, "password": PASSWORD}).status_code == 302


def ready(sessions, case_id: int) -> list[str]:
    with sessions() as session:
        return [t.element_id for t in tasks.case_tasks(session, session.get(Case, case_id))]


def held_case(sessions, officers, virtual_clock) -> tuple[Case, Incident]:
    case = impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01+05:30"))
    assert timers.fire_due(sessions) == 0  # the firing failed: rolled back, nothing fired
    with sessions() as session:
        incident = session.scalars(select(Incident).where(Incident.case_id == case.id)).one()
        return session.get(Case, case.id), incident


def test_a_failing_handler_holds_the_case_and_a_retry_after_the_fix_runs_it_on(
        client, sessions, officers, virtual_clock, flaky_version):
    case, incident = held_case(sessions, officers, virtual_clock)
    assert case.process_version_id == flaky_version.id
    # the incident: case, element, error in plain words, data snapshot, instant
    assert (incident.element_id, incident.element_name) == ("svc_raise_report", "Raise report and open file")
    assert incident.kind == "handler_error" and incident.status == "open" and incident.attempts == 1
    assert "the report register is unreachable" in incident.message
    assert incident.action == "fire_timers"
    assert incident.raised_at.isoformat() == "2026-01-08T18:30:01+00:00"
    snapshot = json.loads(incident.data_json)
    assert snapshot["case_file"]["case_number"] == case.case_number == "RMP/2026/0001"
    # the case is held where it stood: nothing of the failed firing was saved
    assert case.held_incident_id == incident.id
    assert case.next_timer_due.isoformat() == RELEASE_DUE
    assert ready(sessions, case.id) == ["ut_release"]
    with sessions() as session:
        assert session.scalars(select(TimerFiring)).all() == []
        told = session.scalars(select(Notification).where(Notification.template == "incident_opened")).all()
        assert [n.user_id for n in told] == [officers["administrator"].id]
        assert "Raise report and open file" in told[0].message
        assert session.scalars(select(Notification).where(Notification.template == "report_raised")).all() == []
    # the worker skips a held case; the health check does not count it as timer lag
    assert timers.fire_due(sessions) == 0
    assert timers.next_due(sessions) is None
    assert client.get("/health").get_json()["overdue_cases"] == 0
    with sessions() as session:
        assert len(session.scalars(select(Incident)).all()) == 1
    # an officer's act is refused, naming the hold; officers see it on the case and task pages
    with pytest.raises(CaseHeld, match="is held: “Raise report and open file” failed"):
        uow.perform(sessions, "record_animal_event", cases.record_animal_event, officers["pound_keeper"], case.id,
                    "death", position=1, case_id=case.id, user=officers["pound_keeper"])
    with sessions() as session:
        token = users.create_token(session, "pk")
        session.commit()
    refused = client.post(f"/api/v1/cases/{case.id}/animal-events", json={"kind": "death", "position": 1},
                          headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "case_held"
    assert "Raise report and open file" in refused.get_json()["error"]["message"]
    with sessions() as session:
        assert json.loads(session.get(Case, case.id).file_json)["animals"][0]["died_on"] is None
    sign_in(client, "pk")
    page = client.get(f"/cases/{case.id}").get_data(as_text=True)
    assert "This case is held." in page and "the report register is unreachable" in page
    with sessions() as session:
        task_id = tasks.case_tasks(session, session.get(Case, case.id))[0].task_id
    assert "This case is held." in client.get(f"/cases/{case.id}/tasks/{task_id}").get_data(as_text=True)
    assert client.get("/admin/incidents").status_code == 403
    client.post("/logout")
    # the administrator sees it; a retry before the fix fails again and keeps the hold
    sign_in(client, "admin")
    assert "\nrule130_open_incidents 1.0\n" in client.get("/metrics").get_data(as_text=True)
    listing = client.get("/admin/incidents").get_data(as_text=True)
    assert case.case_number in listing and "svc_raise_report" in listing
    detail = client.get(f"/admin/incidents/{incident.id}").get_data(as_text=True)
    assert "RMP/2026/0001" in detail and "the report register is unreachable" in detail
    response = client.post(f"/admin/incidents/{incident.id}/retry")
    assert response.status_code == 302
    with sessions() as session:
        again = session.get(Incident, incident.id)
        assert (again.status, again.attempts) == ("open", 2)
        assert session.get(Case, case.id).held_incident_id == incident.id
    # the cause fixed, the retry fires the timer and runs the case on
    FLAKY["broken"] = False
    virtual_clock.set(datetime.fromisoformat("2026-01-09T09:00:00+05:30"))
    response = client.post(f"/admin/incidents/{incident.id}/retry")
    assert response.status_code == 302 and response.headers["Location"].endswith("/admin/incidents")
    with sessions() as session:
        done = session.get(Incident, incident.id)
        assert (done.status, done.resolved_by_id) == ("retried", officers["administrator"].id)
        assert done.resolved_at.isoformat() == "2026-01-09T03:30:00+00:00"
        stored = session.get(Case, case.id)
        # the case ran on: what waits now is the notice task's overdue reminder (due 01-10: 00:00 IST 01-11)
        assert stored.held_incident_id is None and stored.next_timer_due.isoformat() == "2026-01-10T18:30:00+00:00"
        firing = session.scalars(select(TimerFiring)).one()
        assert (firing.element_id, firing.due_at.isoformat()) == ("bt_release_window", RELEASE_DUE)
        assert firing.lateness_seconds == 9 * 3600.0  # due 00:00 IST, fired by the retry at 09:00 IST
        raised = session.scalars(select(Notification).where(Notification.template == "report_raised")).all()
        assert [n.user_id for n in raised] == [officers["secretary"].id]
        audit = [(e.name, e.actor_user_id) for e in session.scalars(
            select(CaseEvent).where(CaseEvent.case_id == case.id, CaseEvent.kind == "incident").order_by(CaseEvent.id))]
    assert audit == [("Incident opened: case held", None),
                     ("Incident: the step failed again; case still held", officers["administrator"].id),
                     ("Incident retried: case released", officers["administrator"].id)]
    assert ready(sessions, case.id) == ["ut_publish_notice"]
    assert "This case is held." not in client.get(f"/cases/{case.id}").get_data(as_text=True)
    assert "\nrule130_open_incidents 0.0\n" in client.get("/metrics").get_data(as_text=True)


def test_skip_needs_a_reason_and_releases_the_case_without_running_the_step(
        client, sessions, officers, virtual_clock, flaky_version):
    case, incident = held_case(sessions, officers, virtual_clock)
    sign_in(client, "admin")
    client.post(f"/admin/incidents/{incident.id}/skip", data={"reason": "   "})
    with sessions() as session:
        assert session.get(Incident, incident.id).status == "open"
    reason = "report raised on paper on 09-01-2026; register back tomorrow"
    assert client.post(f"/admin/incidents/{incident.id}/skip", data={"reason": reason}).status_code == 302
    with sessions() as session:
        skipped = session.get(Incident, incident.id)
        assert (skipped.status, skipped.resolution_note) == ("skipped", reason)
        stored = session.get(Case, case.id)
        assert stored.held_incident_id is None
        assert stored.next_timer_due.isoformat() == RELEASE_DUE  # nothing ran: the timer is still due
        event = session.scalars(select(CaseEvent).where(CaseEvent.name == "Incident skipped: case released")).one()
        assert json.loads(event.detail_json)["reason"] == reason
    assert client.post(f"/admin/incidents/{incident.id}/retry").status_code == 302  # already skipped: refused
    with sessions() as session:
        assert session.get(Incident, incident.id).status == "skipped"
    FLAKY["broken"] = False
    assert timers.fire_due(sessions) == 1  # released: the worker fires it on its next pass
    assert ready(sessions, case.id) == ["ut_publish_notice"]
