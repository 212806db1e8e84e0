"""Incidents of other kinds: a ledger invariant that would break (after a timer), and a timer
expression that does not evaluate (after an officer's act) — each holds the case, saves nothing."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

import pytest
from sqlalchemy import select

import handlers
from webapp.errors import CaseHeld
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, Incident, LedgerEntry, TimerFiring
from webapp.values import casefile


def _overpay(ctx, **params):
    """case.raise_report, then a payment out of the pound account, which holds nothing yet."""
    result = handlers.get("case.raise_report")(ctx, **params)
    ctx.ledger.post("pound_account", "pound_keeper", Decimal("250.00"), kind="test_overpay", clause="test only")
    return result


if "test.overpay" not in handlers.REGISTRY:
    handlers.get("case.raise_report")
    handlers.handler("test.overpay", clause="test only")(_overpay)


def deploy(sessions, old: bytes, new: bytes) -> None:
    bpmn, forms = repository.read_bundled()
    assert old in bpmn
    with sessions() as session:
        repository.deploy(session, bpmn.replace(old, new), forms, "tests", note="broken on purpose")
        session.commit()


def impound(sessions, officer) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


def test_a_ledger_invariant_that_would_break_opens_an_incident(sessions, officers, virtual_clock):
    deploy(sessions, b'serviceTaskOperator id="case.raise_report"', b'serviceTaskOperator id="test.overpay"')
    case = impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01+05:30"))
    assert timers.fire_due(sessions) == 0
    with sessions() as session:
        incident = session.scalars(select(Incident)).one()
        assert incident.kind == "ledger_invariant"
        assert (incident.element_id, incident.element_name) == ("svc_raise_report", "Raise report and open file")
        assert incident.message == "ledger: the pound account would go below zero (-₹250.00)"
        assert session.scalars(select(LedgerEntry)).all() == []  # nothing of the posting was kept
        assert session.scalars(select(TimerFiring)).all() == []
        assert session.get(Case, case.id).held_incident_id == incident.id


def test_a_timer_expression_that_does_not_evaluate_holds_the_case_at_the_officers_act(
        sessions, officers, virtual_clock):
    deploy(sessions, b'period_end(notice["published_at"], notice["objection_period_days"], timezone)',
           b'period_end(notice["publishd_at"], notice["objection_period_days"], timezone)')
    case = impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01+05:30"))
    assert timers.fire_due(sessions) == 1
    virtual_clock.set(datetime.fromisoformat("2026-01-09T11:00:00+05:30"))
    secretary = officers["secretary"]
    with sessions() as session:
        task_id = tasks.find_ready(session, session.get(Case, case.id), "ut_publish_notice")
    with pytest.raises(CaseHeld, match="is held"):
        uow.perform(sessions, "complete_task", tasks.complete_task, secretary, case.id, task_id,
                    {"objection_period_days": 30, "full_price": "12000.00"}, case_id=case.id, user=secretary)
    with sessions() as session:
        incident = session.scalars(select(Incident)).one()
        assert incident.kind == "timer_expression" and incident.action == "complete_task"
        assert incident.actor_user_id == secretary.id
        assert "publishd_at" in incident.message
        stored = session.get(Case, case.id)
        assert stored.held_incident_id == incident.id
        assert casefile.load(stored.file_json).notice is None  # the publication was rolled back
        assert json.loads(incident.data_json)["case_file"]["notice"] is not None  # the data at the failure
        assert [t.element_id for t in tasks.case_tasks(session, stored)] == ["ut_publish_notice"]
