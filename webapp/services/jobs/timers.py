"""The timer worker: find cases whose next timer is due, fire them, save, record each firing.

A case is due when ``next_timer_due`` (indexed) is at or before now; SpiffWorkflow fires a timer
only once the clock is strictly past its instant, so the worker looks for ``next_timer_due < now``.
Each case fires in its own transaction with optimistic locking: an officer's act on the same
case at the same moment makes one of the two retry, never lose an update.

On SQLite one worker runs at a time (the ``timer-worker`` lease). On PostgreSQL any number of
workers share the work: each claims one due case per transaction with ``SELECT ... FOR UPDATE
SKIP LOCKED`` (earliest due first), fires it and commits; the row lock is the claim, so a worker
that dies mid-case loses nothing (its transaction rolls back, the lock goes with it). PostgreSQL
workers hold no global lease; each keeps a heartbeat row of its own in ``worker_lease``
(``timer-worker/<hash>``), which the single-worker lease respects.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import Select, delete, select
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import Conflict, Rule130Error
from webapp.services.cases import cases
from webapp.services.jobs import snapshots
from webapp.services.jobs.scopes import _TRAINING_IDS
from webapp.services.jobs.scopes import LIVE as LIVE  # the scopes of a pass, moved there, kept here for callers
from webapp.services.jobs.scopes import in_scope as in_scope
from webapp.services.jobs.scopes import training_clocks as training_clocks
from webapp.services.running import case_rows, uow
from webapp.store import wakeup
from webapp.store.models import Case, WorkerLease
from webapp.values import clock

log = logging.getLogger("rule130.timers")
LEASE_NAME = "timer-worker"
SHARED_PREFIX = "timer-worker/"  # one heartbeat row per PostgreSQL worker
LEASE_SECONDS = 30
STALE_SECONDS = 10 * LEASE_SECONDS
"""A heartbeat row expired this many seconds ago belongs to a worker that was killed (a stopped
worker removes its own): the live workers remove it. Until then it is shown, never counted as live."""


class FiredCase(NamedTuple):
    """What one worker fired in one case (one transaction)."""

    case_id: int
    case_number: str
    timers: tuple[str, ...]
    worker: str = ""


def dialect_name(sessions: sessionmaker[Session]) -> str:
    """``sqlite`` or ``postgresql``: the dialect of the sessions' bind."""
    with sessions() as session:
        return session.get_bind().dialect.name


def _due(now: datetime, panchayat_id: int | None = LIVE) -> Select[Case]:
    """Running cases, not held by an incident, whose next timer is due: of the live Panchayats
    (``LIVE``), or of the one Panchayat ``panchayat_id``."""
    return in_scope(select(Case).where(Case.status == "running", Case.held_incident_id.is_(None),
                                       Case.next_timer_due.is_not(None), Case.next_timer_due < now), panchayat_id)


def due_case_ids(session: Session, now: datetime, limit: int = 100, panchayat_id: int | None = LIVE) -> list[int]:
    """Running cases whose next timer is due, earliest first (of the live Panchayats, or of one)."""
    return list(session.scalars(_due(now, panchayat_id).with_only_columns(Case.id)
                                .order_by(Case.next_timer_due).limit(limit)))


def _run(session: Session, case: Case) -> tuple[str, ...]:
    run = cases.CaseRun(session, case, None)
    fired = run.run()
    run.save()
    for timer in fired:
        log.info("case %s: timer %s fired, due %s, late %.3f s", case.case_number, timer.bpmn_id,
                 timer.due.isoformat(), (clock.now() - timer.due).total_seconds())
    return tuple(timer.bpmn_id for timer in fired)


def _fire(session: Session, case_id: int) -> int:
    case = case_rows.load(session, case_id)
    if case is None or case.status != "running":
        return 0
    return len(_run(session, case))


def fire_case(sessions: sessionmaker[Session], case_id: int) -> int:
    """Fire every due timer of one case in one transaction. Returns how many fired."""
    return uow.perform(sessions, "fire_timers", _fire, case_id)


def _fire_listed(session: Session, case_id: int) -> FiredCase | None:
    case = case_rows.load(session, case_id)
    if case is None or case.status != "running":
        return None
    return FiredCase(case.id, case.case_number, _run(session, case))


def _claim_and_fire(session: Session, now: datetime, passed: frozenset[int], claimed: list[int],
                    panchayat_id: int | None = LIVE) -> FiredCase | None:
    """Lock the earliest due case no other transaction holds (skip the locked ones), fire it.

    The lock is held until the caller commits or rolls back: that is the claim.
    """
    query = _due(now, panchayat_id).order_by(Case.next_timer_due, Case.id).limit(1).with_for_update(skip_locked=True)
    if passed:
        query = query.where(Case.id.not_in(passed))
    case = session.scalars(query).first()
    if case is None:
        return None
    claimed.append(case.id)
    return FiredCase(case.id, case.case_number, _run(session, case))


def _fire_due_sqlite(sessions: sessionmaker[Session], limit: int, panchayat_id: int | None) -> list[FiredCase]:
    with sessions() as session:
        ids = due_case_ids(session, clock.now(), limit, panchayat_id)
    done: list[FiredCase] = []
    for case_id in ids:
        try:
            fired = uow.perform(sessions, "fire_timers", _fire_listed, case_id)
        except Conflict:
            log.info("case %s changed while its timers fired; retrying next pass", case_id)
        except Rule130Error as error:
            log.error("case %s: timer firing failed: %s", case_id, error.message)
        else:
            if fired is not None:
                done.append(fired)
    return done


def _fire_due_claiming(sessions: sessionmaker[Session], limit: int, panchayat_id: int | None) -> list[FiredCase]:
    """PostgreSQL: claim and fire one case per transaction until none is due (or ``limit`` cases)."""
    passed: set[int] = set()  # cases this pass has handled (fired, or failed: retried next pass)
    done: list[FiredCase] = []
    while len(passed) < limit:
        claimed: list[int] = []
        try:
            fired = uow.perform(sessions, "fire_timers", _claim_and_fire, clock.now(), frozenset(passed), claimed,
                                panchayat_id)
        except Conflict:
            log.info("case %s changed while its timers fired; retrying next pass", claimed)
        except Rule130Error as error:
            log.error("case %s: timer firing failed: %s", claimed, error.message)
        else:
            if fired is None:
                break
            done.append(fired)
        if not claimed:
            break
        passed.update(claimed)
    return done


def fire_due_cases(sessions: sessionmaker[Session], limit: int = 100, *, settle_seconds: float = 0.0,
                   panchayat_id: int | None = LIVE) -> list[FiredCase]:
    """One pass of the worker: fire every due case, earliest first; what was fired, case by case.

    On PostgreSQL each case is claimed with a row lock (cases locked by another worker or by an
    officer's transaction are left to them or to the next pass); elsewhere the due cases are listed
    and fired one by one. A conflicting case is retried next pass.

    Args:
        settle_seconds: the pass runs this far behind the clock (RULE130.md, "One instant per act"):
            a timer fires only once its instant is that far in the past, at the instant
            ``now - settle_seconds``, so an act whose request arrived before the timer's instant and
            is still being applied is applied first (the act then cancels or precedes the timer).
        panchayat_id: only that Panchayat's cases, at the installed clock as it reads (a training
            clock's move installs its new reading: :func:`webapp.services.panchayats.training.move_clock`).
            Otherwise the live Panchayats' cases at the installed clock, then each training
            Panchayat's at its own clock (the installed one read its offset ahead), so the timers of
            a training case fall due as its trainer moves its clock, and a live case's never early.
    """
    with clock.installed(clock.LaggingClock(clock.current(), timedelta(seconds=max(0.0, settle_seconds)))):
        fire = _fire_due_claiming if dialect_name(sessions) == "postgresql" else _fire_due_sqlite
        if panchayat_id is not LIVE:
            return fire(sessions, limit, panchayat_id)
        done = fire(sessions, limit, LIVE)
        with sessions() as session:
            training = training_clocks(session)
        for training_id, offset in training:
            with clock.installed(clock.ShiftedClock(clock.current(), offset)):
                done.extend(fire(sessions, limit, training_id))
        return done


def fire_due(sessions: sessionmaker[Session], limit: int = 100, *, settle_seconds: float = 0.0) -> int:
    """One pass of the worker (see :func:`fire_due_cases`). Returns how many timers fired."""
    return sum(len(fired.timers) for fired in fire_due_cases(sessions, limit, settle_seconds=settle_seconds))


def next_due(sessions: sessionmaker[Session]) -> datetime | None:
    """The instant, on the installed clock, at which the earliest timer falls due: a live case's
    at its instant, a training case's its Panchayat's clock offset earlier; None when none waits."""
    with sessions() as session:
        waiting = select(Case.next_timer_due).where(Case.status == "running", Case.held_incident_id.is_(None),
                                                    Case.next_timer_due.is_not(None))
        found = [session.scalar(waiting.where(Case.panchayat_id.not_in(_TRAINING_IDS))
                                .order_by(Case.next_timer_due).limit(1))]
        for training_id, offset in training_clocks(session):
            due = session.scalar(waiting.where(Case.panchayat_id == training_id)
                                 .order_by(Case.next_timer_due).limit(1))
            found.append(due - offset if due is not None else None)
        return min((due for due in found if due is not None), default=None)


class LeaseHeld(Exception):
    """Another timer worker holds the lease."""


def holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def _shared_name(holder: str) -> str:
    return SHARED_PREFIX + hashlib.sha256(holder.encode()).hexdigest()[:24]


def _live_others(session: Session, holder: str, now: datetime) -> list[WorkerLease]:
    rows = session.scalars(select(WorkerLease).where(WorkerLease.expires_at > now, WorkerLease.holder != holder))
    return [row for row in rows if row.name == LEASE_NAME or row.name.startswith(SHARED_PREFIX)]


def _remove_stale(session: Session, now: datetime) -> None:
    """Delete the heartbeat rows (``timer-worker/...``) that expired more than :data:`STALE_SECONDS`
    before ``now``: their workers were killed and will never remove them (in the caller's transaction).
    Rows another live worker is removing at the same moment are skipped (PostgreSQL ``SKIP LOCKED``),
    so two workers never wait on each other here."""
    stale = list(session.scalars(select(WorkerLease.name).where(
        WorkerLease.name.startswith(SHARED_PREFIX, autoescape=True),
        WorkerLease.expires_at < now - timedelta(seconds=STALE_SECONDS)).with_for_update(skip_locked=True)))
    if stale:
        session.execute(delete(WorkerLease).where(WorkerLease.name.in_(stale)))


def acquire_lease(sessions: sessionmaker[Session], holder: str) -> None:
    """Take (or renew) the single-worker lease; remove the heartbeat rows of killed workers
    (:func:`_remove_stale`).

    Raises:
        LeaseHeld: another live worker holds it, or a PostgreSQL worker is running (SQLite runs one
            worker at a time).
    """
    with sessions() as session:
        now = clock.now()
        others = _live_others(session, holder, now)
        if others:
            raise LeaseHeld(f"another timer worker ({others[0].holder}) is running until at least "
                            f"{others[0].expires_at.isoformat()}")
        _remove_stale(session, now)
        _renew(session, LEASE_NAME, holder, now)
        session.commit()


def _renew(session: Session, name: str, holder: str, now: datetime) -> None:
    """Create or extend the lease row ``name`` for ``holder`` until now + LEASE_SECONDS."""
    row = session.get(WorkerLease, name)
    if row is None:
        session.add(WorkerLease(name=name, holder=holder, expires_at=now + timedelta(seconds=LEASE_SECONDS)))
    else:
        row.holder, row.expires_at = holder, now + timedelta(seconds=LEASE_SECONDS)


def release_lease(sessions: sessionmaker[Session], holder: str) -> None:
    with sessions() as session:
        lease = session.get(WorkerLease, LEASE_NAME)
        if lease is not None and lease.holder == holder:
            session.delete(lease)
            session.commit()


def join_workers(sessions: sessionmaker[Session], holder: str) -> None:
    """PostgreSQL: register (or renew) this worker's heartbeat row, every pass; several workers
    may run. The heartbeat rows of killed workers are removed (:func:`_remove_stale`).

    Raises:
        LeaseHeld: a live single-worker lease is held by someone else.
    """
    with sessions() as session:
        now = clock.now()
        lease = session.get(WorkerLease, LEASE_NAME)
        if lease is not None and lease.holder != holder and lease.expires_at > now:
            raise LeaseHeld(f"a single timer worker ({lease.holder}) holds the lease until at least "
                            f"{lease.expires_at.isoformat()}")
        _remove_stale(session, now)
        _renew(session, _shared_name(holder), holder, now)
        session.commit()


def leave_workers(sessions: sessionmaker[Session], holder: str) -> None:
    with sessions() as session:
        row = session.get(WorkerLease, _shared_name(holder))
        if row is not None:
            session.delete(row)
            session.commit()


SETTLE_SECONDS = 3.0
"""How far behind the clock the timer worker fires (``RULE130_TIMER_SETTLE_SECONDS`` overrides it):
longer than an act takes to be applied, so that an act that arrived before a deadline is never
overtaken by the deadline's timer (RULE130.md, "One instant per act")."""


def settle_seconds() -> float:
    """The worker's settle time in seconds: ``RULE130_TIMER_SETTLE_SECONDS`` or :data:`SETTLE_SECONDS`.

    Raises:
        ValueError: the variable is not a number from 0 to 60, naming it.
    """
    raw = os.environ.get("RULE130_TIMER_SETTLE_SECONDS")
    if raw is None or raw.strip() == "":
        return SETTLE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 60.0:
        raise ValueError(f"RULE130_TIMER_SETTLE_SECONDS must be a number of seconds from 0 to 60, not {raw!r}")
    return value


DEFAULT_MAX_SLEEP = {"postgresql": 60.0, "sqlite": 0.5}
"""Longest sleep between passes when no wake-up comes. PostgreSQL: a safety net only (NOTIFY wakes
the workers). SQLite: saves made in another process cannot wake the worker, so it looks again
after at most half a second."""


def default_max_sleep(dialect: str) -> float:
    """The default longest sleep (seconds) of a worker on ``dialect`` (see :data:`DEFAULT_MAX_SLEEP`)."""
    return DEFAULT_MAX_SLEEP.get(dialect, 0.5)


def run_worker(sessions: sessionmaker[Session], stop: threading.Event, *, max_sleep: float | None = None,
               fired_log: list[FiredCase] | None = None, settle: float | None = None) -> None:
    """Fire due timers until ``stop`` is set, sleeping until the next due instant between passes.

    The worker sleeps until the earliest ``next_timer_due`` of a running case (a millisecond past
    it: SpiffWorkflow fires only once the clock is strictly past the instant), or ``max_sleep``
    seconds when that is sooner or nothing is armed, and is woken early when a nearer timer is
    saved: through PostgreSQL ``LISTEN``/``NOTIFY`` from any process, and in-process from saves on
    the same engine (``rule130 serve``) — see :mod:`webapp.store.wakeup`.

    On PostgreSQL several workers may run side by side (row locks share the work); on SQLite one.

    Every :data:`webapp.services.jobs.snapshots.SWEEP_SECONDS` (and at its first pass; every second
    while a backlog lasts) it also lets go the acts' snapshots that can no longer serve
    (:func:`webapp.services.jobs.snapshots.let_go_due`), as far behind the clock as it fires.

    The worker reads the real clock: the installed clock (:func:`webapp.values.clock.current`), but never
    ahead of the wall clock (:class:`webapp.values.clock.NotAheadOfRealTime`), so in a live database no
    timer fires before its instant on the real clock, whatever wrote the timer or the clock.

    Args:
        max_sleep: longest sleep in seconds; None: :func:`default_max_sleep` of the dialect.
        fired_log: if given, every :class:`FiredCase` is appended to it, with this worker's id.
        settle: seconds the worker stays behind the clock (see :func:`fire_due_cases`); None:
            :func:`settle_seconds`. A timer fires once its instant is ``settle`` seconds past.
    Raises:
        LeaseHeld: another worker is running (SQLite) or holds the single-worker lease (checked
            before the first pass).
    """
    with clock.installed(clock.NotAheadOfRealTime(clock.current())):
        _work(sessions, stop, max_sleep, fired_log, settle)


def _work(sessions: sessionmaker[Session], stop: threading.Event, max_sleep: float | None,
          fired_log: list[FiredCase] | None, settle: float | None) -> None:
    """:func:`run_worker`'s loop, on the clock it installed."""
    holder = holder_id()
    dialect = dialect_name(sessions)
    shared = dialect == "postgresql"
    if max_sleep is None:
        max_sleep = default_max_sleep(dialect)
    if settle is None:
        settle = settle_seconds()
    register, unregister = (join_workers, leave_workers) if shared else (acquire_lease, release_lease)
    register(sessions, holder)
    with sessions() as session:
        engine = session.get_bind().engine
    waiter = wakeup.Waiter()
    wakeup.register(engine, waiter)
    listener = wakeup.listen(engine, waiter, stop) if shared else None
    def stop_waiting() -> None:
        stop.wait()
        waiter.wake()

    stopper = threading.Thread(target=stop_waiting, name="rule130-timer-stop", daemon=True)
    stopper.start()
    log.info("timer worker %s started (%s; sleeps until the next due timer, at most %.2f s)", holder,
             "shared, row locks, LISTEN" if shared else "single, lease", max_sleep)
    sweep_after = 0.0  # time.monotonic() of the next housekeeping of the acts' snapshots
    try:
        while not stop.is_set():
            waiter.begin_pass()
            try:
                fired = fire_due_cases(sessions, settle_seconds=settle)
                if fired_log is not None:
                    fired_log.extend(f._replace(worker=holder) for f in fired)
                if time.monotonic() >= sweep_after:  # the snapshots that can no longer serve, let go
                    with clock.installed(clock.LaggingClock(clock.current(), timedelta(seconds=settle))):
                        swept = snapshots.let_go_due(sessions)
                    sweep_after = time.monotonic() + swept.wait_seconds
                register(sessions, holder)
                upcoming = next_due(sessions)
            except Exception:  # a worker that dies silently leaves every timer unfired: log, wait, go on
                log.exception("timer worker %s: the pass failed; trying again in %.2f s", holder, max_sleep)
                waiter.sleep(None, max_sleep)
                continue
            wait = max_sleep
            if upcoming is not None:
                ahead = (upcoming - clock.now()).total_seconds() + settle
                # due but not fired by this pass (locked by another transaction, or a conflict):
                # look again shortly rather than spin
                wait = min(max_sleep, ahead + 0.001 if ahead > 0 else 0.05)
            waiter.sleep(upcoming, wait)
    finally:
        wakeup.unregister(engine, waiter)
        waiter.wake()
        unregister(sessions, holder)
        if listener is not None:
            listener.join(5)
        log.info("timer worker %s stopped", holder)


def overdue(session: Session, now: datetime, grace_seconds: float | None = None) -> tuple[int, float]:
    """Running cases whose next timer is overdue by more than ``grace_seconds``, and the largest lag.

    ``grace_seconds`` defaults to the worker's settle time (:func:`settle_seconds`) plus 5 s.

    Returns:
        (how many cases, the oldest lag in seconds; 0.0 when none) — what the health check reports.
    """
    if grace_seconds is None:
        grace_seconds = settle_seconds() + 5.0
    limit = now - timedelta(seconds=grace_seconds)
    rows = list(session.scalars(select(Case.next_timer_due).where(  # held cases are incidents, not lag
        Case.status == "running", Case.held_incident_id.is_(None), Case.next_timer_due.is_not(None),
        Case.next_timer_due < limit)))
    if not rows:
        return 0, 0.0
    return len(rows), max((now - due).total_seconds() for due in rows if due is not None)
