"""A crash in the middle of a task completion: a real process completing "Release cattle to owner"
is killed with SIGKILL (after its writes were flushed but before the commit; after the commit; at
random moments). The case is always exactly as before or exactly as after — engine state, case
file, ledger, history and audit trail — never in between.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import select

from webapp.services.cases import cases
from webapp.services.money import ledger
from webapp.store import audit
from webapp.store.models import AuditEntry, Case

from .driver import TWO_COWS, Driver

ROOT = Path(__file__).resolve().parents[1]
WHEN = "2026-01-08T23:00:00+05:30"  # within the 3-day release window

CHILD = textwrap.dedent('''
    import sys, time
    from datetime import datetime
    from pathlib import Path
    from sqlalchemy import event, select
    from sqlalchemy.orm import Session
    from webapp.values import clock
    from webapp.services.running import uow
    from webapp.services.tasks import tasks
    from webapp.store import db
    from webapp.store.models import User

    url, case_id, pause_at, signal_file, when = sys.argv[1:]

    def pause(*_args):
        Path(signal_file).write_text("paused")
        time.sleep(120)  # the parent kills us here

    if pause_at == "flush":
        event.listen(Session, "after_flush", pause)  # the writes are sent; no commit yet
    elif pause_at == "commit":
        event.listen(Session, "after_commit", pause)  # committed; nothing after it ran
    sessions = db.session_factory(db.make_engine(url))
    with sessions() as session:
        keeper = session.scalar(select(User).where(User.username == "pk"))
    with clock.installed(clock.VirtualClock(datetime.fromisoformat(when))):
        Path(signal_file).write_text("started")
        uow.perform(sessions, "ut_release", tasks.act, keeper, int(case_id), "ut_release", {"owner": "Owner M"},
                    case_id=int(case_id), user=keeper)
    Path(signal_file).write_text("done")
''')


def snapshot(sessions, case_id):
    """Everything a task completion changes."""
    with sessions() as session:
        case = session.get(Case, case_id)
        entries = [(e.from_account, e.to_account, e.amount, e.kind) for e in ledger.entries(session, case_id)]
        history = [(e.kind, e.name) for e in cases.history(session, case)]
        trail = [(e.seq, e.kind) for e in session.scalars(select(AuditEntry).order_by(AuditEntry.seq))]
        return {"state": case.state_json, "file": case.file_json, "status": case.status, "outcome": case.outcome,
                "lock": case.lock_version, "timer": case.next_timer_due, "ledger": entries, "history": history,
                "audit": trail}


def run_child(database_url, case_id, pause_at, tmp_path, kill_after=None):
    """Start the child; kill it with SIGKILL when it reports the pause (or after ``kill_after``
    seconds from its start); return what it reported last."""
    signal_file = tmp_path / f"signal-{pause_at}-{time.monotonic_ns()}"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, str(script), database_url, str(case_id), pause_at, str(signal_file),
                              WHEN], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    started_at = None
    while time.monotonic() < deadline and child.poll() is None:
        report = signal_file.read_text() if signal_file.exists() else ""
        if report == "started" and started_at is None:
            started_at = time.monotonic()
        if report == "paused" or (kill_after is not None and started_at is not None
                                  and time.monotonic() - started_at >= kill_after):
            break
        time.sleep(0.002)
    if child.poll() is None:
        os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    return signal_file.read_text() if signal_file.exists() else "", child


@pytest.fixture
def started(sessions, officers, virtual_clock):
    drive = Driver(sessions, officers, virtual_clock)
    drive.start(TWO_COWS)
    return drive


def is_after(snap, before):
    return (snap["status"], snap["outcome"]) == ("completed", "released_by_owner") \
        and snap["ledger"] == [("owner", "pound_account", Decimal("1480.00"), "fine_and_feeding")] \
        and snap["history"][:len(before["history"])] == before["history"] \
        and ("task", "Release cattle to owner") in snap["history"] \
        and snap["state"] != before["state"] and snap["lock"] > before["lock"]


def test_killed_after_its_writes_but_before_the_commit_the_case_is_exactly_as_before(
        started, sessions, database_url, tmp_path):
    before = snapshot(sessions, started.case_id)
    report, child = run_child(database_url, started.case_id, "flush", tmp_path)
    assert report == "paused", child.stderr.read().decode()[-2000:]
    assert child.returncode == -signal.SIGKILL
    assert snapshot(sessions, started.case_id) == before
    with sessions() as session:
        assert audit.verify(session).ok
    # and the case goes on: the same completion in a process left alone succeeds
    report, child = run_child(database_url, started.case_id, "none", tmp_path)
    assert report == "done", child.stderr.read().decode()[-2000:]
    assert is_after(snapshot(sessions, started.case_id), before)


def test_killed_right_after_the_commit_the_case_is_exactly_as_after(started, sessions, database_url, tmp_path):
    before = snapshot(sessions, started.case_id)
    report, child = run_child(database_url, started.case_id, "commit", tmp_path)
    assert report == "paused" and child.returncode == -signal.SIGKILL
    after = snapshot(sessions, started.case_id)
    assert is_after(after, before)
    assert {"ledger.entry", "case.task"} <= {kind for _, kind in after["audit"][len(before["audit"]):]}
    with sessions() as session:
        assert audit.verify(session).ok


def test_killed_at_random_moments_the_case_is_before_or_after_never_between(
        started, sessions, database_url, tmp_path):
    before = snapshot(sessions, started.case_id)
    rng = random.Random(130)
    seen = set()
    for _ in range(6):
        run_child(database_url, started.case_id, "none", tmp_path, kill_after=rng.uniform(0.0, 0.4))
        snap = snapshot(sessions, started.case_id)
        if snap == before:
            seen.add("before")
            continue
        assert is_after(snap, before), snap
        seen.add("after")
        break  # once completed, the task is no longer open
    with sessions() as session:
        assert audit.verify(session).ok
    print(f"random kills left the case: {sorted(seen)}")
