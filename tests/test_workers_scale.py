"""Timer workers scale out on PostgreSQL (row locks, SKIP LOCKED) and run one at a time on SQLite.

Real databases, no mocks: the PostgreSQL tests run only with RULE130_TEST_POSTGRES set.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, Notification, TimerFiring, WorkerLease

POSTGRES = os.environ.get("RULE130_TEST_POSTGRES")
on_postgres = pytest.mark.skipif(not POSTGRES, reason="needs RULE130_TEST_POSTGRES (PostgreSQL)")
on_sqlite = pytest.mark.skipif(bool(POSTGRES), reason="the single-worker lease is the SQLite set-up")


def start_cases(sessions, officers, virtual_clock, count: int) -> list[int]:
    """``count`` cases impounded from 2026-01-01 to 01-05 (virtual clock), in id order, so that their
    release timers (00:00 IST four days later) are due in id order and overdue on the system clock,
    as after downtime."""
    ids = []
    for position in range(count):
        impounded = datetime.fromisoformat(f"2026-01-0{1 + position * 5 // count}T09:{position:02d}:00+05:30")
        virtual_clock.set(impounded)
        case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                           impounded_at=impounded, place_seized="Bhimpura", place_impounded="Kanji House",
                           nearest_village="Bhimpura", animals=[{"species": "cow", "description": f"cow {position}"}])
        ids.append(case.id)
    return ids


def firings(sessions) -> list[TimerFiring]:
    with sessions() as session:
        return list(session.scalars(select(TimerFiring).order_by(TimerFiring.id)))


def wait_for(predicate, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def run_workers(sessions, count: int):
    """``count`` worker threads on the system clock; returns (threads, stop, log, errors)."""
    stop, log, errors = threading.Event(), [], []

    def work():
        try:
            timers.run_worker(sessions, stop, max_sleep=0.05, fired_log=log)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads, stop, log, errors


def stop_workers(threads, stop) -> None:
    stop.set()
    for thread in threads:
        thread.join(20)
    assert not any(thread.is_alive() for thread in threads)


@on_postgres
@pytest.mark.parametrize("workers", [2, 4])
def test_workers_share_overdue_timers_and_fire_each_once(sessions, officers, virtual_clock, workers):
    ids = start_cases(sessions, officers, virtual_clock, 30)
    threads, stop, log, errors = run_workers(sessions, workers)
    try:
        wait_for(lambda: len(firings(sessions)) >= len(ids))
        time.sleep(0.3)  # a few more passes by every worker: nothing fires twice
    finally:
        stop_workers(threads, stop)
    assert errors == []
    fired = firings(sessions)
    assert Counter((f.case_id, f.element_id) for f in fired) == {(i, "bt_release_window"): 1 for i in ids}
    assert all(f.lateness_seconds > 0 for f in fired)
    due = {f.case_id: f.due_at for f in fired}
    assert [due[i] for i in ids] == sorted(due.values())  # ids are in due order
    assert due[ids[0]].isoformat() == "2026-01-04T18:30:00+00:00" and due[ids[-1]].date().isoformat() == "2026-01-08"
    for worker in {entry.worker for entry in log}:  # each worker fired earliest due first
        mine = [entry.case_id for entry in log if entry.worker == worker]
        assert mine == sorted(mine)
    assert sorted(entry.case_id for entry in log) == ids
    assert all(entry.timers == ("bt_release_window",) for entry in log)
    assert len({entry.worker for entry in log}) > 1, f"one worker did everything: {Counter(e.worker for e in log)}"
    with sessions() as session:
        raised = Counter((n.case_id, n.user_id) for n in session.scalars(
            select(Notification).where(Notification.template == "report_raised")))
        assert raised == {(i, officers["secretary"].id): 1 for i in ids}
        for case_id in ids:
            ready = [t.element_id for t in tasks.case_tasks(session, session.get(Case, case_id))]
            assert ready == ["ut_publish_notice"]
        assert session.scalars(select(timers.WorkerLease)).all() == []  # heartbeat rows left with the workers


@on_postgres
def test_a_locked_case_is_skipped_and_fired_once_the_lock_is_gone(sessions, officers, virtual_clock):
    first, second, third = start_cases(sessions, officers, virtual_clock, 3)
    virtual_clock.set(datetime.fromisoformat("2026-01-09T01:00:00+05:30"))  # all three overdue
    holder = sessions()
    try:
        holder.execute(select(Case).where(Case.id == first).with_for_update())  # an officer's act in progress
        dying = sessions()  # a worker that claims the second case, fires it, then dies before committing
        claimed: list[int] = []
        assert timers._claim_and_fire(dying, virtual_clock.now(), frozenset(), claimed).case_id == second
        # Another worker skips the two locked cases and fires the third; its commit waits for the
        # audit trail's head, which the dying worker holds until its transaction ends.
        other: list[list[int]] = []
        worker = threading.Thread(target=lambda: other.append(
            [f.case_id for f in timers.fire_due_cases(sessions)]))
        worker.start()
        worker.join(timeout=2)
        assert worker.is_alive()  # waiting on the chain head, not failed
        dying.rollback()
        dying.close()
        worker.join(timeout=60)
        assert not worker.is_alive()
        # the third first (claimed while the second was locked), then the second, free again
        assert other == [[third, second]]
        assert timers.fire_due(sessions) == 0  # the first is still locked
    finally:
        holder.rollback()
        holder.close()
    assert [f.case_id for f in timers.fire_due_cases(sessions)] == [first]
    assert timers.fire_due(sessions) == 0
    assert Counter(f.case_id for f in firings(sessions)) == {first: 1, second: 1, third: 1}


@on_postgres
def test_postgres_workers_hold_no_global_lease_but_the_single_lease_keeps_them_out(sessions, virtual_clock):
    timers.join_workers(sessions, "host-a:1:1")
    timers.join_workers(sessions, "host-b:2:2")  # a second PostgreSQL worker joins
    with pytest.raises(timers.LeaseHeld):
        timers.acquire_lease(sessions, "single")  # the single-worker lease waits for them
    timers.leave_workers(sessions, "host-a:1:1")
    timers.leave_workers(sessions, "host-b:2:2")
    timers.acquire_lease(sessions, "single")
    with pytest.raises(timers.LeaseHeld, match="single"):
        timers.join_workers(sessions, "host-c:3:3")


def test_a_killed_workers_heartbeat_row_is_never_live_and_is_removed_by_the_live_workers(sessions, virtual_clock):
    """A killed worker never removes its heartbeat row: once expired it no longer counts as live (a
    single-worker lease is granted), and once expired for a while (STALE_SECONDS, 5 minutes; an hour
    here) the live workers remove it."""
    def heartbeats() -> dict[str, datetime]:
        with sessions() as session:
            return {row.holder: row.expires_at for row in session.scalars(select(WorkerLease))
                    if row.name.startswith(timers.SHARED_PREFIX)}

    timers.join_workers(sessions, "killed-host:1:1")  # then killed: it never leaves
    joined = virtual_clock.now()
    virtual_clock.set(joined + timedelta(seconds=timers.LEASE_SECONDS + 1))  # expired: not live
    timers.join_workers(sessions, "live-host:2:2")
    assert set(heartbeats()) == {"killed-host:1:1", "live-host:2:2"}  # kept a while, for whoever looks
    with sessions() as session:
        assert timers._live_others(session, "live-host:2:2", virtual_clock.now()) == []
    virtual_clock.set(joined + timedelta(hours=1))
    timers.join_workers(sessions, "live-host:2:2")  # its next pass
    assert heartbeats() == {"live-host:2:2": virtual_clock.now() + timedelta(seconds=timers.LEASE_SECONDS)}
    timers.leave_workers(sessions, "live-host:2:2")
    timers.join_workers(sessions, "killed-host:3:3")  # killed too; the single-worker lease comes later
    virtual_clock.set(virtual_clock.now() + timedelta(hours=1))
    timers.acquire_lease(sessions, "single")  # the stale row does not keep it out, and is removed
    assert heartbeats() == {}


@on_sqlite
def test_a_second_worker_on_sqlite_is_refused(sessions, officers, virtual_clock):
    ids = start_cases(sessions, officers, virtual_clock, 3)
    threads, stop, log, errors = run_workers(sessions, 1)
    try:
        wait_for(lambda: len(firings(sessions)) >= len(ids))
        second, _, second_log, second_errors = run_workers(sessions, 1)
        second[0].join(20)
        assert [type(error) for error in second_errors] == [timers.LeaseHeld]
        assert second_log == []
    finally:
        stop_workers(threads, stop)
    assert errors == []
    assert sorted(entry.case_id for entry in log) == ids
    assert len({entry.worker for entry in log}) == 1
    assert Counter(f.case_id for f in firings(sessions)) == {i: 1 for i in ids}
