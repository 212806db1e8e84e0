"""Timer workers sleep until the next due instant and are woken when a nearer timer is saved.

Real elapsed time: the worker and the test read an OffsetClock (the wall clock shifted to a few
seconds before 00:00 IST of 2026-01-09, when a case impounded on 2026-01-05 leaves its release
window), and the worker's longest sleep is 30 s — so a firing within seconds proves the wake-up.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.running import uow
from webapp.store import db, wakeup
from webapp.store.models import Case, TimerFiring
from webapp.values import clock

POSTGRES = os.environ.get("RULE130_TEST_POSTGRES")
on_postgres = pytest.mark.skipif(not POSTGRES, reason="needs RULE130_TEST_POSTGRES (PostgreSQL)")
RELEASE_DUE = datetime.fromisoformat("2026-01-09T00:00:00+05:30")  # release window of a 01-05 impoundment


def impound(sessions, officer, day: str = "2026-01-05") -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat(f"{day}T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


def start_worker(worker_sessions, real_clock: clock.Clock, **kwargs):
    stop, errors = threading.Event(), []

    def work() -> None:
        clock.install(real_clock)  # a new thread starts on the system clock
        try:
            timers.run_worker(worker_sessions, stop, **kwargs)
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=work)
    thread.start()
    return thread, stop, errors


def wait_for_firing(sessions, case_id: int, seconds: float) -> TimerFiring:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with sessions() as session:
            firing = session.scalar(select(TimerFiring).where(TimerFiring.case_id == case_id))
        if firing is not None:
            return firing
        time.sleep(0.02)
    raise AssertionError(f"no timer fired within {seconds} s")


def check_woken(saver_sessions, worker_sessions, officer) -> None:
    real = clock.OffsetClock(RELEASE_DUE - timedelta(seconds=2.5))
    thread, stop, errors = start_worker(worker_sessions, real, max_sleep=30.0)
    try:
        time.sleep(0.5)  # the worker has made its first pass and sleeps (nothing armed: 30 s)
        with clock.installed(real):
            case = impound(saver_sessions, officer)
        started = time.monotonic()
        firing = wait_for_firing(saver_sessions, case.id, 15.0)
        waited = time.monotonic() - started
    finally:
        stop.set()
        thread.join(10)
    assert errors == [] and not thread.is_alive()
    assert firing.element_id == "bt_release_window"
    assert firing.due_at.isoformat() == "2026-01-08T18:30:00+00:00"
    assert firing.fired_at > firing.due_at  # never early: SpiffWorkflow fires strictly after the instant
    assert 0 < firing.lateness_seconds < 5.0, firing.lateness_seconds
    assert waited < 10.0  # woken and slept until the due instant (~2 s after the save), not 30 s


def test_a_saved_nearer_timer_wakes_the_in_process_worker(sessions, officers):
    # rule130 serve: the web application and the worker share one engine (threading.Event)
    check_woken(sessions, sessions, officers["pound_keeper"])


@on_postgres
def test_postgres_notify_wakes_a_worker_in_another_engine(sessions, officers, database_url):
    # rule130 worker beside the web processes: only PostgreSQL's NOTIFY can reach it
    engine = db.make_engine(database_url)
    try:
        check_woken(sessions, db.session_factory(engine), officers["pound_keeper"])
    finally:
        engine.dispose()


@on_postgres
def test_notify_is_sent_only_when_the_saving_transaction_commits_an_earlier_timer(sessions, officers,
                                                                                  database_url):
    import psycopg

    engine = db.make_engine(database_url)
    listener = psycopg.connect(wakeup._conninfo(engine), autocommit=True)
    engine.dispose()
    listener.execute(f"LISTEN {wakeup.CHANNEL}")

    def received() -> list[str]:
        return [n.payload for n in listener.notifies(timeout=0.5)]

    try:
        with clock.installed(clock.VirtualClock(datetime.fromisoformat("2026-01-05T11:00:00+05:30"))):
            with sessions() as session:  # a case started and rolled back: nothing announced
                cases.start_case(session, session.merge(officers["pound_keeper"]),
                                 impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"),
                                 place_seized="B", place_impounded="K", nearest_village="B",
                                 animals=[{"species": "cow", "description": "cow"}])
                session.flush()
                assert received() == []
                session.rollback()
            assert received() == []
            case = impound(sessions, officers["pound_keeper"])
            assert received() == ["2026-01-08T18:30:00+00:00"]
            with sessions() as session:  # a later timer is no news to a sleeping worker
                stored = session.get(Case, case.id)
                stored.next_timer_due = stored.next_timer_due + timedelta(days=1)
                session.commit()
            assert received() == []
            with sessions() as session:  # an earlier one is
                stored = session.get(Case, case.id)
                stored.next_timer_due = stored.next_timer_due - timedelta(days=2)
                session.commit()
            assert received() == ["2026-01-07T18:30:00+00:00"]
    finally:
        listener.close()


def test_after_downtime_overdue_timers_fire_once_in_due_order_with_lateness(sessions, officers):
    # real instants: cases impounded 2026-01-01..05 (virtual clock); the worker runs on the wall clock,
    # long after their release timers, as after downtime
    ids = []
    for day in ("2026-01-03", "2026-01-01", "2026-01-05", "2026-01-02"):
        with clock.installed(clock.VirtualClock(datetime.fromisoformat(f"{day}T11:00:00+05:30"))):
            ids.append(impound(sessions, officers["pound_keeper"], day).id)
    thread, stop, errors = start_worker(sessions, clock.SystemClock(), max_sleep=30.0)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with sessions() as session:
                if len(session.scalars(select(TimerFiring)).all()) >= 4:
                    break
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(10)
    assert errors == []
    with sessions() as session:
        fired = session.scalars(select(TimerFiring).order_by(TimerFiring.id)).all()
    assert [f.case_id for f in fired] == [ids[1], ids[3], ids[0], ids[2]]  # earliest due first, once each
    assert [f.due_at.isoformat() for f in fired] == ["2026-01-04T18:30:00+00:00", "2026-01-05T18:30:00+00:00",
                                                   "2026-01-06T18:30:00+00:00", "2026-01-08T18:30:00+00:00"]
    for firing in fired:
        assert firing.lateness_seconds == pytest.approx((firing.fired_at - firing.due_at).total_seconds(), abs=0.01)
        assert firing.lateness_seconds > 86400


class TickingClock:
    """Each reading is ``step`` later than the last: the run that arms a timer takes time."""

    def __init__(self, start: datetime, step: timedelta) -> None:
        self.instant, self.step = start, step

    def now(self) -> datetime:
        self.instant += self.step
        return self.instant


def test_a_timer_falling_due_while_it_is_armed_is_fired_not_lost(sessions, officers):
    # Cases started ever closer to their release timer's instant (00:00 IST 01-09), the clock moving
    # 250 microseconds per reading: at some start the timer falls due inside the engine step that
    # arms it. Every case must then either have fired it (recorded) or still have it armed.
    due = datetime.fromisoformat("2026-01-08T18:30:00+00:00")
    outcomes = set()
    for steps_before in range(0, 40):
        with clock.installed(TickingClock(due - timedelta(microseconds=250 * steps_before),
                                          timedelta(microseconds=250))):
            case = impound(sessions, officers["pound_keeper"])
        with sessions() as session:
            stored = session.get(Case, case.id)
            fired = session.scalars(select(TimerFiring).where(TimerFiring.case_id == case.id)).all()
        if fired:
            assert [(f.element_id, f.due_at) for f in fired] == [("bt_release_window", due)]
            # next: "Publish notice"'s overdue reminder, 00:00 IST after its due day (the file opens
            # 01-09, the notice is due a day later, 01-10)
            assert stored.next_timer_due == datetime.fromisoformat("2026-01-10T18:30:00+00:00")
            outcomes.add("fired")
        else:
            assert stored.next_timer_due == due, f"{steps_before}: the release timer was lost"
            outcomes.add("armed")
    assert outcomes == {"fired", "armed"}
