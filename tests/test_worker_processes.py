"""Timer workers as separate processes on PostgreSQL (issue 4, "done when"): four processes share
1,000 due timers and fire each exactly once, every case moving exactly one step; a worker killed
with SIGKILL in the middle of a firing leaves nothing behind, and after a restart the timer fires
once. Real processes, a real PostgreSQL database; runs only with RULE130_TEST_POSTGRES set.

The workers run ``timers.run_worker`` (what ``rule130 worker`` runs) under a virtual clock fixed at
00:00:01 IST of 2026-01-09, just past the release windows of cases impounded on 2026-01-05, so
that the only timers due are the release windows (the overdue reminders they arm fall due later).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from webapp.services.cases import cases
from webapp.services.running import uow
from webapp.store.models import Case, CaseEvent, CaseTask, Notification, TimerFiring

ROOT = Path(__file__).resolve().parents[1]
POSTGRES = os.environ.get("RULE130_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(not POSTGRES, reason="needs RULE130_TEST_POSTGRES (PostgreSQL)")
# the workers' (frozen) clock: past the due instant by more than the settle time (timers.SETTLE_SECONDS),
# for a worker fires a timer only once it has been due that long
NOW = "2026-01-09T00:00:10+05:30"
DUE = datetime.fromisoformat("2026-01-09T00:00:00+05:30")

WORKER = textwrap.dedent('''
    import signal, sys, threading, time
    from datetime import datetime
    from pathlib import Path
    from sqlalchemy import event
    from sqlalchemy.orm import Session
    from webapp.values import clock
    from webapp.services.jobs import timers
    from webapp.store import db

    url, now, pause_file = sys.argv[1:]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if pause_file != "-":
        def pause(session, *_args):
            # after the flush that stored the fired case (its row is among the flushed changes): the
            # firing's writes (firing, history, task rows, notification) are flushed, not committed
            if any(type(row).__name__ == "Case" for row in session.dirty):
                Path(pause_file).write_text("paused")
                time.sleep(120)  # the parent kills us here
        event.listen(Session, "after_flush", pause)
    sessions = db.session_factory(db.make_engine(url))
    with clock.installed(clock.VirtualClock(datetime.fromisoformat(now))):
        timers.run_worker(sessions, stop, max_sleep=0.2)
''')


def start_worker(database_url: str, tmp_path: Path, pause_file: str = "-") -> subprocess.Popen:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    return subprocess.Popen([sys.executable, str(script), database_url, NOW, pause_file],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop_workers(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def due_cases(sessions, count: int, officers) -> list[int]:
    """``count`` running cases impounded 2026-01-05 10:00 IST (release timer due 01-09 00:00 IST): one
    through the services, the rest copied from it in the database (engine state, file, task row)."""
    with_clock = datetime.fromisoformat("2026-01-05T10:00:00+05:30")
    from webapp.values import clock
    with clock.installed(clock.VirtualClock(with_clock)):
        template = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                               impounded_at=with_clock, place_seized="Bhimpura", place_impounded="Kanji House",
                               nearest_village="Bhimpura", animals=[{"species": "cow", "description": "brown cow"}])
    with sessions() as session:
        params = {"template": template.id, "count": count - 1}
        session.execute(text(
            "INSERT INTO case_instance (case_number, panchayat_id, process_version_id, status, outcome, file_json, "
            "state_json, next_timer_due, receiving_officer_id, notice_last_day, lock_version, created_at, updated_at) "
            "SELECT 'RMP/2026/C' || n, t.panchayat_id, t.process_version_id, t.status, t.outcome, t.file_json, "
            "t.state_json, t.next_timer_due, t.receiving_officer_id, t.notice_last_day, t.lock_version, t.created_at, "
            "t.updated_at FROM case_instance t, generate_series(1, :count) n WHERE t.id = :template ORDER BY n"),
            params)
        session.execute(text(
            "INSERT INTO case_task (case_id, case_number, panchayat_id, process_version_id, task_id, element_id, "
            "title, lane, state, ready_since, due_on, deadline_label, deadline_on, act_by) "
            "SELECT c.id, c.case_number, c.panchayat_id, t.process_version_id, t.task_id, t.element_id, t.title, "
            "t.lane, t.state, t.ready_since, t.due_on, t.deadline_label, t.deadline_on, t.act_by "
            "FROM case_instance c JOIN case_task t ON t.case_id = :template WHERE c.id <> :template"), params)
        session.commit()
        ids = list(session.scalars(select(Case.id).order_by(Case.id)))
    assert len(ids) == count
    return ids


def fired_count(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count(TimerFiring.id)))


def wait_until(predicate, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"not done within {seconds} s")


def lock_versions(sessions) -> set[int]:
    with sessions() as session:
        return set(session.scalars(select(Case.lock_version)))


def one_step_each(sessions, ids: list[int], secretary_id: int, lock_before: int) -> None:
    """Each case fired its release window once and moved exactly one step: "Release cattle to
    owner" cancelled, "Publish notice" ready, one "report raised" notice, one timer event."""
    with sessions() as session:
        firings = Counter((f.case_id, f.element_id, f.due_at) for f in session.scalars(select(TimerFiring)))
        assert firings == {(i, "bt_release_window", DUE): 1 for i in ids}
        tasks = Counter((t.case_id, t.element_id, t.state) for t in session.scalars(select(CaseTask)))
        assert tasks == {**{(i, "ut_release", "cancelled"): 1 for i in ids},
                         **{(i, "ut_publish_notice", "ready"): 1 for i in ids}}
        events = Counter((e.case_id, e.name) for e in session.scalars(select(CaseEvent).where(CaseEvent.kind == "timer")))
        assert events == {(i, "Release window ends (3 days)"): 1 for i in ids}
        notes = Counter((n.case_id, n.user_id) for n in session.scalars(
            select(Notification).where(Notification.template == "report_raised")))
        assert notes == {(i, secretary_id): 1 for i in ids}
        assert set(session.scalars(select(Case.next_timer_due).where(Case.id.in_(ids)))) == {
            datetime.fromisoformat("2026-01-11T00:00:00+05:30")}  # each case's next: its overdue reminder
        assert set(session.scalars(select(Case.lock_version))) == {lock_before + 1}  # one save each


def test_four_worker_processes_fire_a_thousand_due_timers_each_exactly_once(database_url, sessions, officers,
                                                                             tmp_path):
    ids = due_cases(sessions, 1000, officers)
    [lock_before] = lock_versions(sessions)
    procs = [start_worker(database_url, tmp_path) for _ in range(4)]
    try:
        wait_until(lambda: fired_count(sessions) >= 1000 or any(p.poll() is not None for p in procs), 900)
        time.sleep(2)  # more passes by every worker: nothing fires twice
        assert [p.poll() for p in procs] == [None] * 4, [p.stderr.read().decode()[-2000:] for p in procs
                                                          if p.poll() is not None]
    finally:
        stop_workers(procs)
    assert [p.returncode for p in procs] == [0] * 4
    one_step_each(sessions, ids, officers["secretary"].id, lock_before)


def test_a_worker_killed_mid_firing_leaves_nothing_and_after_a_restart_the_timer_fires_once(
        database_url, sessions, officers, tmp_path):
    ids = due_cases(sessions, 3, officers)
    [lock_before] = lock_versions(sessions)
    pause_file = tmp_path / "paused"
    victim = start_worker(database_url, tmp_path, str(pause_file))
    try:
        wait_until(lambda: pause_file.exists() or victim.poll() is not None, 120)
        assert pause_file.read_text() == "paused"
    finally:
        if victim.poll() is None:
            os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    assert fired_count(sessions) == 0  # the killed transaction left nothing: no firing, notice or task
    with sessions() as session:
        assert session.scalar(select(func.count(Notification.id))) == 0
        assert {(c.lock_version, c.next_timer_due) for c in session.scalars(select(Case))} == {(lock_before, DUE)}
    restarted = start_worker(database_url, tmp_path)
    try:
        wait_until(lambda: fired_count(sessions) >= len(ids), 300)
        time.sleep(1.5)
    finally:
        stop_workers([restarted])
    one_step_each(sessions, ids, officers["secretary"].id, lock_before)
