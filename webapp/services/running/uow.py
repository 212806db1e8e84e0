"""Units of work: one business operation = one transaction; refusals change nothing.

:func:`perform` runs a service function in a fresh session, commits on success, and on any
refusal rolls back everything and records only the refused attempt in the case history.
A lost optimistic-lock race becomes :class:`Conflict` with a message the officer can act on.

The task table follows the engine here too: before every flush, each case whose engine state or
case file changed has its ``case_task`` rows re-synced with its READY user tasks
(:func:`webapp.services.running.task_table.sync_case`), in the same transaction, whatever service changed it.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import event, inspect
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from webapp.engine.execution import runtime
from webapp.errors import CONFLICT_MESSAGE as CONFLICT_MESSAGE
from webapp.errors import Conflict, NotFound, Rule130Error, TaskFailed
from webapp.i18n import message_json
from webapp.services.diagrams import repository
from webapp.services.running import case_rows, follows, holds, task_table
from webapp.store import db
from webapp.store.models import Case, CaseEvent, ProcessVersion, User, get_row
from webapp.values import casefile, clock

T = TypeVar("T")
RACE_SQLSTATES = ("40P01", "40001")  # PostgreSQL: deadlock_detected, serialization_failure
refusal_log = logging.getLogger("rule130.refusals")



def perform(sessions: sessionmaker[Session], action: str, fn: Callable[..., T], *args: Any,
            case_id: int | None = None, user: User | None = None, **kwargs: Any) -> T:
    """Run ``fn(session, *args, **kwargs)`` as one transaction.

    The unit of work is judged at one instant (RULE130.md, "One instant per act"): the clock is
    fixed for it with :func:`webapp.values.clock.fixed` — at the instant its request arrived when a
    request carries it (the web application fixes that instant on arrival), else at its start —
    so its deadline checks, its history rows, documents and ledger entries, and the timers the
    engine fires while it runs all use that instant and no later one.

    Args:
        action: the name of the act, for the history of a refusal (e.g. ``file_objection``).
        case_id: the case concerned, if any (a refusal is recorded against it).
        user: the acting user, if any.
    Raises:
        Rule130Error: the refusal, after rolling back (Conflict for a lost race).
    """
    with clock.fixed():
        return _perform(sessions, action, fn, args, kwargs, case_id, user)


def perform_told(sessions: sessionmaker[Session], action: str, fn: Callable[..., T], *args: Any,
                 case_id: int | None = None, user: User | None = None, **kwargs: Any) -> tuple[T, list[Any]]:
    """:func:`perform`, and what followed from the act in words (a list of
    :class:`webapp.services.running.follows.Follow`), read off the case in the same transaction.

    Raises:
        Rule130Error: as :func:`perform`.
    """
    with clock.fixed():
        return _perform(sessions, action, _told(fn, case_id), args, kwargs, case_id, user)


def preview(sessions: sessionmaker[Session], action: str, fn: Callable[..., Any], *args: Any,
            case_id: int | None = None, user: User | None = None, log_refusal: bool = False,
            **kwargs: Any) -> list[Any]:
    """What would follow from the act, without recording it (the check step and the API's dry run).

    The act is applied for real — the same services, the same checks, the same engine — in a
    transaction that is then rolled back, at the act's one instant (:func:`webapp.values.clock.fixed`):
    its words (:class:`webapp.services.running.follows.Follow`) are those of the real act at that instant.
    A refusal is raised as :func:`perform` raises it and is never written into the case history
    (nothing was attempted: the case's history holds what happened to the case); with
    ``log_refusal`` (a page's check step) it is written to the log ``rule130.refusals`` — the
    action, the case, the user and the refusal's words — where an administrator finds what
    officers were refused; an API dry run asks and logs nothing. An act that would fail in the
    diagram raises the failure without holding the case.

    Raises:
        Rule130Error: the refusal the act would meet (Conflict for a lost race).
    """
    with clock.fixed():
        _, said = _perform(sessions, action, _told(fn, case_id), args, kwargs, case_id, user, dry_run=True,
                           record=False, log_it=log_refusal)
    for follow in said:  # the documents were rolled back with the act: no page to link to yet
        follow.document_id = None
    return said


def rehearse(sessions: sessionmaker[Session], action: str, fn: Callable[..., T], *args: Any,
             user: User | None = None, **kwargs: Any) -> T:
    """Run ``fn(session, *args, **kwargs)`` for real and roll it back: its result, nothing kept (the
    check step of a unit of work that makes a new case, e.g. a paper case brought in, whose
    result says what would be recorded). A refusal is raised as :func:`perform` raises it, and
    recorded nowhere.

    Raises:
        Rule130Error: the refusal the unit of work would meet (Conflict for a lost race).
    """
    with clock.fixed():
        return _perform(sessions, action, fn, args, kwargs, None, user, dry_run=True, record=False)


def _told(fn: Callable[..., T], case_id: int | None) -> Callable[..., tuple[T, list[Any]]]:
    def run(session: Session, *args: Any, **kwargs: Any) -> tuple[T, list[Any]]:
        before = follows.snapshot(session, case_id if isinstance(case_id, int) else None)
        result = fn(session, *args, **kwargs)
        session.flush()
        made = getattr(result, "id", None) if isinstance(result, Case) else None
        return result, follows.describe(session, before, made)
    return run


def _perform(sessions: sessionmaker[Session], action: str, fn: Callable[..., T], args: tuple[Any, ...],
             kwargs: dict[str, Any], case_id: int | None, user: User | None, *, dry_run: bool = False,
             record: bool = True, log_it: bool = False) -> T:
    with sessions() as session:
        try:
            if isinstance(case_id, int):
                db.lock_case(session, case_id)  # every writer of a case locks its row first: no deadlock
                case_rows.load(session, case_id)  # then reads it, with its Panchayat and the act's marks
            # a copy of the context: the case number a CaseRun binds for the logs stays in this unit
            result = contextvars.copy_context().run(fn, session, *args, **kwargs)
            if dry_run:
                session.rollback()
                return result
            session.commit()
            return result
        except StaleDataError:
            session.rollback()
            error: Rule130Error = Conflict(CONFLICT_MESSAGE)
        except OperationalError as failed:
            # PostgreSQL broke a deadlock or a serialization failure by aborting this transaction:
            # a lost race like a stale version (nothing was saved), not a fault of the server
            if getattr(failed.orig, "sqlstate", None) not in RACE_SQLSTATES:
                raise
            session.rollback()
            error = Conflict(CONFLICT_MESSAGE)
        except TaskFailed as failed:  # rolled back; the incident and the hold are their own transaction
            session.rollback()
            if dry_run:
                raise
            if _moved_on(sessions, session, failed.case_id):
                # the step failed on a case another transaction changed meanwhile (two acts at the
                # same moment: the second one's ledger no longer adds up): a lost race, not an incident
                error = Conflict(CONFLICT_MESSAGE)
            else:
                held = holds.open_incident(sessions, failed, action, user)
                raise held from None
        except Rule130Error as refused:
            session.rollback()
            error = refused
    if case_id is not None and not isinstance(error, NotFound) and record:
        record_refusal(sessions, case_id, action, error, user)
    if log_it:
        refusal_log.info("refused at the check step: %s on case %s by %s (%s): %s", action, case_id,
                 user.username if user else None, error.code, error.message)
    raise error


_LOADED = "rule130.loaded_lock_versions"  # session.info: case id -> the lock version a unit of work read


def note_loaded(session: Session, case: Any) -> None:
    """Note the lock version of ``case`` as this unit of work read it (the first reading counts)."""
    session.info.setdefault(_LOADED, {}).setdefault(case.id, case.lock_version)


def _moved_on(sessions: sessionmaker[Session], session: Session, case_id: int | None) -> bool:
    """Whether the case's stored lock version differs from the one the failed unit of work read
    (read in a transaction of its own, after the failed one was rolled back)."""
    seen = session.info.get(_LOADED, {}).get(case_id)
    if case_id is None or seen is None:
        return False
    with sessions() as fresh:
        stored = fresh.get(Case, case_id)
        return stored is not None and stored.lock_version != seen


def record_refusal(sessions: sessionmaker[Session], case_id: int, action: str, error: Rule130Error,
                   user: User | None) -> None:
    """Append the refused attempt to the case history (its only trace)."""
    with sessions() as session:
        if session.get(Case, case_id) is None:
            return
        session.add(CaseEvent(case_id=case_id, at=clock.now(), kind="refusal", name=action, element_id=None,
                              actor_role=user.role if user else None, actor_user_id=user.id if user else None,
                              detail_json=json.dumps({"code": error.code, "message": error.message,
                                                      "message_i18n": message_json(error.message)})))
        session.commit()


# -- the task table follows the engine ---------------------------------------------------------------

_RUNS = "rule130.case_runs"


def remember_state(session: Session, case: Case, workflow: Any, cf: Any, state_json: str,
                   actor_id: int | None) -> None:
    """Note the live engine instance whose serialized state ``state_json`` was just stored on
    ``case``, so the flush re-syncs the task table without deserializing it again."""
    session.info.setdefault(_RUNS, {})[id(case)] = (case, workflow, cf, state_json, actor_id)


def _changed(case: Case) -> bool:
    attrs = inspect(case).attrs
    return any(attrs[name].history.has_changes() for name in ("state_json", "file_json", "status"))


@event.listens_for(Session, "before_flush")
def _sync_task_table(session: Session, _context: Any, _instances: Any) -> None:
    """Before any flush: re-sync the task rows of every case whose engine state, file or status
    changed in this session (a task completed, a timer fired, a message delivered, a case started
    or an instance moved), from the instance that produced the state, else from the stored state."""
    changed = [obj for obj in list(session.new) + list(session.dirty)
               if isinstance(obj, Case) and obj.state_json not in (None, "", "{}") and
               (obj in session.new or _changed(obj))]
    if not changed:
        return
    runs = session.info.get(_RUNS, {})
    for case in changed:
        noted = runs.pop(id(case), None)
        if noted is not None and noted[0] is case and noted[3] == case.state_json:
            _, workflow, cf, _, actor_id = noted
        else:
            workflow, cf, actor_id = _load(session, case), casefile.load(case.file_json), None
        task_table.sync_case(session, case, workflow, cf, actor_id)


def _load(session: Session, case: Case) -> Any:
    """The case's engine instance from its stored state (no handler may run: the state is only read)."""

    def no_handler(*_args: Any) -> Any:
        raise RuntimeError("the stored state is only read here")

    with session.no_autoflush:
        version = get_row(session, ProcessVersion, case.process_version_id)
    return runtime.load_state(case.state_json, repository.load(version).parsed, no_handler)
