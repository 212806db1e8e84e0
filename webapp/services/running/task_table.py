"""Keeping the task table (``case_task``) in step with the engine, in the same transaction.

:func:`sync_case` makes a case's ``ready`` rows equal its engine's READY user tasks; the unit of
work (:mod:`webapp.services.running.uow`) calls it before every flush that changes a case's engine state,
case file or status, whatever service changed it. Reading the table, claims and reassignments are
:mod:`webapp.services.tasks.tasklist`'s. A row's due day and the legal deadline it serves come from
:mod:`webapp.values.deadlines` (RULE130.md, "Service levels for officers' tasks").
"""

from __future__ import annotations

from datetime import date
from typing import Any

from SpiffWorkflow.util.task import TaskState
from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from webapp.engine.execution import runtime
from webapp.store import txcache
from webapp.store.models import Case, CaseTask
from webapp.values import clock
from webapp.values.casefile import CaseFile
from webapp.values.deadlines import service_level

READY, COMPLETED, CANCELLED = "ready", "completed", "cancelled"
ESCALATION_OPERATION = "notify.task_escalated"  # the diagram's escalation path (handlers.notify)
# run by every unit of work, built once: SQLAlchemy reuses its compiled form (values bound per call)
_READY_ROWS = select(CaseTask).where(CaseTask.case_id == bindparam("case_id"), CaseTask.state == READY)
# the same rows, each touched (a write that changes nothing) to lock it until the transaction ends
_HOLD_READY = (update(CaseTask).where(CaseTask.case_id == bindparam("p_case_id"), CaseTask.state == READY)
               .values(claimed_by=CaseTask.claimed_by).returning(CaseTask)
               .execution_options(synchronize_session=False, populate_existing=True))
_HELD = "ready_rows"  # txcache: case id -> (flushes when read, the ready rows held)


def hold_ready(session: Session, case_id: int) -> list[CaseTask]:
    """The ``ready`` rows of case ``case_id``, each locked until the transaction ends (one
    ``UPDATE ... RETURNING`` that changes nothing: on PostgreSQL the rows' locks, on SQLite the
    database's write lock, so a claim made at the same moment waits and then finds the task
    completed). :func:`sync_case` takes these rows instead of reading them again while the session
    has not flushed since. Nothing is flushed first."""
    with session.no_autoflush:
        rows = list(session.scalars(_HOLD_READY, {"p_case_id": case_id}))
    txcache.of(session, _HELD)[case_id] = (txcache.flushes(session), rows)
    return rows


def _subject(cf: CaseFile, task: Any) -> str | None:
    """The person the task concerns: the objector of a claim, the appellant, the buyer."""
    element = task.task_spec.bpmn_id
    if element == "ut_decide_objection":
        return (task.data.get("objection") or {}).get("objector")
    if element == "ut_decide_appeal":
        pending = cf.pending_appeal()
        return pending.appellant if pending else None
    if element == "ut_return_by_buyer":
        return cf.sale.buyer if cf.sale else None
    if element == "ut_return_by_objector":  # the objector who holds the cattle on security
        return cf.interim.objector if cf.interim is not None else None
    if element == "ut_deliver_to_objector":  # the owner: the proved objector, or an appellant made owner
        if cf.winning_objector:
            return cf.winning_objector
        proved = next((o for o in cf.objections if o.decision == "proved"), None)
        if proved is not None:
            return proved.objector
        return cf.interim.objector if cf.interim is not None else None
    return None


def _earliest(*days: date | None) -> date | None:
    known = [d for d in days if d is not None]
    return min(known) if known else None


def sync_case(session: Session, case: Case, workflow: Any, cf: CaseFile, actor_id: int | None) -> None:
    """Make the case's ``ready`` rows equal the engine's READY user tasks (same transaction).

    New READY tasks get a row (``ready_since`` = the clock's now); rows whose task is no longer
    READY become ``completed`` (by ``actor_id``) or ``cancelled``; the due dates and subjects of
    the others are refreshed (a later decision moves the appeal deadline). Called by
    :mod:`webapp.services.running.uow` before each flush; services need not call it.
    """
    now = clock.now()
    engine_ready = {str(t.id): t for t in runtime.ready_user_tasks(workflow)}
    held = txcache.of(session, _HELD).pop(case.id, None)
    if held is not None and held[0] == txcache.flushes(session):
        rows = held[1]  # read and locked by the act's holder check, nothing flushed since
    else:
        with session.no_autoflush:
            rows = list(session.scalars(_READY_ROWS, {"case_id": case.id}))
    for row in rows:
        task = engine_ready.pop(row.task_id, None)
        if task is None:
            engine_task = runtime.find_task(workflow, row.task_id)
            done = engine_task is not None and engine_task.state == TaskState.COMPLETED
            row.state = COMPLETED if done else CANCELLED
            row.ended_at = now
            row.completed_by = actor_id if done else None
            continue
        _fill(row, case, cf, task)
    for task_id, task in engine_ready.items():
        row = CaseTask(case_id=case.id, task_id=task_id, state=READY, ready_since=now)
        _fill(row, case, cf, task)
        session.add(row)


def _fill(row: CaseTask, case: Case, cf: CaseFile, task: Any) -> None:
    spec = task.task_spec
    due, label, deadline = service_level(cf, spec.bpmn_id)
    values = {"case_number": case.case_number, "panchayat_id": case.panchayat_id,
              "process_version_id": case.process_version_id,
              "receiver_id": cf.dispatch.receiver_user_id if cf.dispatch else None,
              "element_id": spec.bpmn_id, "title": (spec.bpmn_name or spec.bpmn_id)[:200], "lane": spec.lane or "",
              "subject": (_subject(cf, task) or None), "due_on": due, "deadline_label": label,
              "deadline_on": deadline, "act_by": _earliest(due, deadline)}
    for key, value in values.items():
        if getattr(row, key) != value:
            setattr(row, key, value)
    if row.escalated_at is None and ESCALATION_OPERATION in runtime.boundary_paths_run(task):
        row.escalated_at = clock.now()  # the escalation timer fired in this unit of work


def engine_ready_tasks(workflow: Any) -> set[tuple[str, str, str]]:
    """(task id, element id, lane) of every READY user task: what the table's ready rows must equal."""
    return {(str(t.id), t.task_spec.bpmn_id, t.task_spec.lane or "") for t in runtime.ready_user_tasks(workflow)}


def table_ready_tasks(session: Session, case_id: int) -> set[tuple[str, str, str]]:
    """(task id, element id, lane) of the case's ``ready`` rows."""
    rows = session.execute(select(CaseTask.task_id, CaseTask.element_id, CaseTask.lane)
                           .where(CaseTask.case_id == case_id, CaseTask.state == READY))
    return {(task_id, element_id, lane) for task_id, element_id, lane in rows}
