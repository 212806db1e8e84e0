"""The timer worker loop: it fires an overdue timer on its own, once, and a second worker is refused."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pytest

from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, TimerFiring


def test_worker_fires_an_overdue_timer_once_and_records_its_lateness(sessions, officers, virtual_clock):
    # Impounded on 2026-01-05 (virtual clock); the worker thread runs on the system clock (later), so
    # the release window timer (00:00 IST of 01-09) is overdue, as after downtime.
    case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])
    stop = threading.Event()
    worker = threading.Thread(target=timers.run_worker, args=(sessions, stop), kwargs={"max_sleep": 0.05})
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with sessions() as session:
                if session.query(TimerFiring).filter_by(case_id=case.id).count():
                    break
            time.sleep(0.05)
        with pytest.raises(timers.LeaseHeld):
            timers.acquire_lease(sessions, "another-host:1:1")
        time.sleep(0.3)  # a few more passes: nothing fires twice
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive()
    with sessions() as session:
        firings = session.query(TimerFiring).filter_by(case_id=case.id).all()
        assert [f.element_id for f in firings] == ["bt_release_window"]
        assert firings[0].due_at.isoformat() == "2026-01-08T18:30:00+00:00"
        assert firings[0].lateness_seconds > 0
        stored = session.get(Case, case.id)
        ready = [t.element_id for t in tasks.case_tasks(session, stored)]
    assert ready == ["ut_publish_notice"]
    timers.acquire_lease(sessions, "another-host:1:1")  # released when the worker stopped


def test_health_reports_the_database_and_an_overdue_timer(client, sessions, officers, virtual_clock):
    healthy = client.get("/health")
    assert healthy.status_code == 200
    assert healthy.get_json() == {"status": "ok", "database": "ok", "overdue_cases": 0, "oldest_timer_lag_seconds": 0.0}
    uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                place_impounded="Kanji House", nearest_village="Bhimpura",
                animals=[{"species": "cow", "description": "brown cow"}])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:10:00+05:30"))  # 10 minutes past the release timer
    late = client.get("/health")
    assert late.status_code == 503
    assert late.get_json()["overdue_cases"] == 1
    assert late.get_json()["oldest_timer_lag_seconds"] == 600.0
    timers.fire_due(sessions)
    assert client.get("/health").status_code == 200


def test_a_failing_pass_does_not_kill_the_worker(sessions, officers, virtual_clock, monkeypatch):
    """An unexpected error in one pass (the worker once died on a DetachedInstanceError) is logged,
    and the next pass fires the overdue timer: the worker thread stays alive."""
    case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])
    real, calls = timers.fire_due_cases, []

    def failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a pass that fails")
        return real(*args, **kwargs)

    monkeypatch.setattr(timers, "fire_due_cases", failing_once)
    stop = threading.Event()
    worker = threading.Thread(target=timers.run_worker, args=(sessions, stop), kwargs={"max_sleep": 0.05})
    worker.start()
    try:
        deadline = time.monotonic() + 20
        fired = 0
        while time.monotonic() < deadline and not fired:
            with sessions() as session:
                fired = session.query(TimerFiring).filter_by(case_id=case.id).count()
            time.sleep(0.05)
        assert worker.is_alive()
    finally:
        stop.set()
        worker.join(10)
    assert len(calls) >= 2
    with sessions() as session:
        assert [f.element_id for f in session.query(TimerFiring).filter_by(case_id=case.id)] == ["bt_release_window"]
