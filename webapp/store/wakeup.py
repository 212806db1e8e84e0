"""Waking timer workers when a nearer timer is saved, instead of polling.

A timer worker sleeps until the earliest known due instant (``min(case_instance.next_timer_due)``).
When a transaction saves a case whose ``next_timer_due`` moves earlier (a new case, or a step that
arms a nearer timer), sleeping workers must learn of it:

- **PostgreSQL**: the saving transaction runs ``SELECT pg_notify('rule130_timers', '<instant>')``
  just before it commits; PostgreSQL delivers a notification only when (and if) that transaction
  commits, to every connection that ran ``LISTEN rule130_timers`` — each worker keeps one such
  connection (:func:`listen`, psycopg), in whatever process or host it runs.
- **In-process** (``rule130 serve`` runs the web application and the worker in one process):
  after the commit, every :class:`Waiter` registered on the same SQLAlchemy engine is woken through
  a ``threading.Event``. This is also the only wake-up on SQLite; a worker in another process than
  the saver (``rule130 worker`` beside ``rule130 serve --no-worker``) relies on its short bounded
  sleep there (see ``timers.DEFAULT_MAX_SLEEP``).

A notification is a hint, never the source of truth: the worker always re-reads the due cases.
"""

from __future__ import annotations

import logging
import threading
import weakref
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.orm import Session, sessionmaker

from webapp.store.models import Case

log = logging.getLogger("rule130.timers")
CHANNEL = "rule130_timers"
_PENDING = "rule130.wake_due"  # session.info key: the earliest nearer due instant saved in this transaction


class Waiter:
    """One sleeping worker: woken (its ``event`` set) by a saved due instant before its target.

    ``target`` is the instant the worker means to sleep until; None means "wake me for any
    saved timer" (set while a pass runs, so nothing saved during the pass is missed).
    """

    def __init__(self) -> None:
        self.event = threading.Event()
        self.target: datetime | None = None
        self._lock = threading.Lock()

    def begin_pass(self) -> None:
        """Before a pass: forget earlier wake-ups; any save from now on wakes the next sleep."""
        with self._lock:
            self.target = None
            self.event.clear()

    def sleep(self, target: datetime | None, seconds: float) -> bool:
        """Sleep ``seconds`` (at most) unless woken by a due instant before ``target``.

        Returns True when woken early (including by a wake-up that came during the pass).
        """
        with self._lock:
            self.target = target
        return self.event.wait(max(0.0, seconds))

    def nearer(self, due: datetime | None) -> None:
        """A timer due at ``due`` was saved (None: unknown, wake anyway)."""
        with self._lock:
            if due is None or self.target is None or due < self.target:
                self.event.set()

    def wake(self) -> None:
        """Wake unconditionally (stop, or a lost LISTEN connection that may have missed a notice)."""
        self.event.set()


_waiters: weakref.WeakKeyDictionary[Engine, set[Waiter]] = weakref.WeakKeyDictionary()
_waiters_lock = threading.Lock()


def register(engine: Engine, waiter: Waiter) -> None:
    """Let saves through ``engine`` in this process wake ``waiter``."""
    with _waiters_lock:
        _waiters.setdefault(engine, set()).add(waiter)


def unregister(engine: Engine, waiter: Waiter) -> None:
    with _waiters_lock:
        _waiters.get(engine, set()).discard(waiter)


def signal_local(engine: Engine, due: datetime | None) -> None:
    """Wake the waiters registered on ``engine`` in this process whose target is after ``due``."""
    with _waiters_lock:
        waiters = list(_waiters.get(engine, ()))
    for waiter in waiters:
        waiter.nearer(due)


# -- watching saves ---------------------------------------------------------------------------------

def _nearer_due(case: Case) -> datetime | None:
    """The case's new next_timer_due if this flush moves it earlier (or sets it), else None."""
    if case.status != "running" or case.next_timer_due is None:
        return None
    history = inspect(case).attrs.next_timer_due.history
    if not history.added:
        return None
    old = history.deleted[0] if history.deleted else None
    new = history.added[0]
    return new if old is None or new < old else None


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    for obj in [*session.new, *session.dirty]:
        if isinstance(obj, Case):
            due = _nearer_due(obj)
            if due is not None:
                pending = session.info.get(_PENDING)
                session.info[_PENDING] = due if pending is None or due < pending else pending


def _before_commit(session: Session) -> None:
    session.flush()  # what is still pending must be seen by _before_flush first
    due = session.info.get(_PENDING)
    if due is not None and session.get_bind().dialect.name == "postgresql":
        # delivered by PostgreSQL at commit, only if the transaction commits
        session.execute(text("SELECT pg_notify(:channel, :due)"), {"channel": CHANNEL, "due": due.isoformat()})


def _after_commit(session: Session) -> None:
    due = session.info.pop(_PENDING, None)
    if due is not None:
        signal_local(session.get_bind().engine, due)


def _after_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)


def watch(factory: sessionmaker[Session]) -> sessionmaker[Session]:
    """Install the save hooks on every session of ``factory`` (``db.session_factory`` does this)."""
    event.listen(factory, "before_flush", _before_flush)
    event.listen(factory, "before_commit", _before_commit)
    event.listen(factory, "after_commit", _after_commit)
    event.listen(factory, "after_soft_rollback", lambda session, _previous: _after_rollback(session))
    return factory


# -- PostgreSQL: LISTEN ------------------------------------------------------------------------------

def _conninfo(engine: Engine) -> str:
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def listen(engine: Engine, waiter: Waiter, stop: threading.Event) -> threading.Thread:
    """PostgreSQL: a daemon thread that ``LISTEN``s on :data:`CHANNEL` and wakes ``waiter``.

    The thread holds its own autocommit psycopg connection, reconnects after a failure (waking
    the worker, since a notice may have been missed while disconnected) and ends within a second
    of ``stop`` being set.
    """
    import psycopg

    def run() -> None:
        backoff = 0.5
        while not stop.is_set():
            try:
                with psycopg.connect(_conninfo(engine), autocommit=True) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    waiter.wake()
                    backoff = 0.5
                    while not stop.is_set():
                        for notice in connection.notifies(timeout=1.0):
                            try:
                                due = datetime.fromisoformat(notice.payload)
                            except ValueError:
                                due = None
                            waiter.nearer(due)
            except psycopg.Error as error:
                log.warning("timer wake-up: LISTEN connection lost (%s); retrying in %.1f s", error, backoff)
                waiter.wake()
                stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    thread = threading.Thread(target=run, name="rule130-timer-listen", daemon=True)
    thread.start()
    return thread
