"""The engine instances kept between the transactions of a case (webapp.services.running.live).

A kept instance must be exactly what reading the stored state gives: it is used only for the state
text its own committed transaction stored, never after a rollback, never after another writer
changed the state, and the case's acts and timers come out the same either way.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest
from sqlalchemy import select, update

from webapp.engine.execution import runtime
from webapp.errors import Refused
from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.running import live, uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, CaseTask
from webapp.values import casefile

IST = "+05:30"


@pytest.fixture
def loads(monkeypatch):
    """Counts the instances read back from their stored state."""
    live.clear()
    counted = []
    real = runtime.load_state

    def counting(state, parsed, call_handler):
        counted.append(len(state))
        return real(state, parsed, call_handler)

    monkeypatch.setattr(runtime, "load_state", counting)
    yield counted
    live.clear()


def impound(sessions, officer) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00" + IST), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


def publish(sessions, officer, case_id: int, full_price: str = "12000.00") -> Case:
    return uow.perform(sessions, "ut_publish_notice", tasks.act, officer, case_id, "ut_publish_notice",
                       {"objection_period_days": 30, "full_price": full_price}, case_id=case_id)


def ready(sessions, case_id: int) -> list[str]:
    with sessions() as session:
        return sorted(session.scalars(select(CaseTask.element_id).where(CaseTask.case_id == case_id,
                                                                        CaseTask.state == "ready")))


def test_the_next_step_of_a_case_takes_the_instance_its_last_transaction_stored(sessions, officers, virtual_clock,
                                                                                 loads):
    case = impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01" + IST))
    assert timers.fire_case(sessions, case.id) == 1
    publish(sessions, officers["secretary"], case.id)
    assert loads == []  # start, timer pass and act: never read back
    assert ready(sessions, case.id) == ["ut_record_bid"]
    # what was kept is what the stored state reads as
    live.clear()
    with sessions() as session:
        stored = session.get(Case, case.id)
        run = cases.CaseRun(session, stored, None)
        assert [t.task_spec.bpmn_id for t in runtime.ready_user_tasks(run.wf)] == ["ut_record_bid"]
    assert len(loads) == 1


def test_a_refused_act_keeps_nothing_and_the_next_step_reads_the_stored_state(sessions, officers, virtual_clock,
                                                                              loads):
    case = impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01" + IST))
    timers.fire_case(sessions, case.id)
    with pytest.raises(Refused):
        publish(sessions, officers["secretary"], case.id, full_price="-5")
    assert loads == []  # the refused act took the kept instance (and changed it); the rollback dropped it
    assert live.kept_count() == 0
    publish(sessions, officers["secretary"], case.id)
    assert len(loads) == 1  # read back from the stored state, not from the refused act's instance
    with sessions() as session:
        assert casefile.load(session.get(Case, case.id).file_json).notice.full_price == Decimal("12000.00")
    assert ready(sessions, case.id) == ["ut_record_bid"]


def test_a_state_written_by_anyone_else_is_read_back_not_taken_from_memory(sessions, officers, virtual_clock, loads):
    case = impound(sessions, officers["pound_keeper"])
    with sessions() as session:  # another writer (another process, a version move): the text differs
        stored = session.get(Case, case.id)
        changed = stored.state_json.replace('"success":true', '"success": true')
        session.execute(update(Case).where(Case.id == case.id).values(state_json=changed))
        session.commit()
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01" + IST))
    assert timers.fire_case(sessions, case.id) == 1
    assert len(loads) == 1
    assert ready(sessions, case.id) == ["ut_publish_notice"]


def test_an_instance_changed_after_its_state_was_stored_is_not_kept(sessions, officers, virtual_clock, loads):
    case = impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01" + IST))

    def fire_then_step(session, case_id):
        run = cases.CaseRun(session, session.get(Case, case_id), None)
        run.run()
        run.save()
        [task] = runtime.ready_user_tasks(run.wf)
        task.data["stray"] = 1
        task.complete()  # a change after the save: the stored state no longer describes it

    uow.perform(sessions, "test", fire_then_step, case.id)
    assert live.kept_count() == 0
    assert ready(sessions, case.id) == ["ut_publish_notice"]
