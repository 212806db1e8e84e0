"""Officer tasks: "My tasks", one task with its form, and completing it.

A task is a READY user task of a case the user may see, in a lane equal to the user's role. Due
dates follow RULE130.md's service levels; the legal deadline each task serves is shown with it.
The list comes from the task table (:mod:`webapp.services.tasks.tasklist`); one task's form from the
engine. A task claimed by another officer cannot be completed (409 naming the holder).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from SpiffWorkflow.util.task import TaskState
from sqlalchemy.orm import Session

from webapp.engine.execution import runtime
from webapp.errors import CLOSED_CASE, RELOAD, Conflict, DeadlinePassed, NotFound, Refused
from webapp.i18n import M_, message_list
from webapp.services.cases import cases
from webapp.services.people import users
from webapp.services.tasks import rules, tasklist, why_not_open
from webapp.store.models import Case, User
from webapp.values import clock, legal_time
from webapp.values.casefile import CaseFile


@dataclass
class TaskView:
    """A ready task as lists and pages show it."""

    case_id: int
    case_number: str
    task_id: str
    element_id: str
    name: str
    lane: str
    form_key: str | None
    schema: dict[str, Any] | None
    due: date | None
    deadline_label: str | None
    deadline: date | None
    data: dict[str, Any]
    lock_version: int


def _view(case: Case, cf: CaseFile, loaded: Any, task: Any, today: date) -> TaskView:
    form = runtime.form_name(task)
    due, label, deadline = tasklist.service_level(cf, task.task_spec.bpmn_id)
    data = {k: v for k, v in task.data.items() if k in ("objection",)}
    pending = cf.pending_appeal()
    if task.task_spec.bpmn_id == "ut_decide_appeal" and pending is not None:
        data["appeal"] = {"appellant": pending.appellant, "filed_on": pending.filed_on.isoformat(),
                          "against": pending.against}
    return TaskView(case_id=case.id, case_number=case.case_number, task_id=str(task.id),
                    element_id=task.task_spec.bpmn_id, name=task.task_spec.bpmn_name or task.task_spec.bpmn_id,
                    lane=task.task_spec.lane, form_key=runtime.form_key(task),
                    schema=loaded.parsed.forms.get(form) if form else None, due=due, deadline_label=label,
                    deadline=deadline, data=data, lock_version=case.lock_version)


def case_tasks(session: Session, case: Case) -> list[TaskView]:
    """Every ready user task of a case (any lane)."""
    run = cases.CaseRun(session, case, None)
    today = legal_time.local_day(clock.now(), run.cf.timezone)
    return [_view(case, run.cf, run.loaded, t, today) for t in runtime.ready_user_tasks(run.wf)]


def my_tasks(session: Session, user: User, *, role: str | None = None, status: str = "ready",
             case: str | None = None) -> tasklist.TaskList:
    """The user's task list, read from the task table only (no engine state is loaded): ready
    tasks of the user's lanes within scope, most urgent first. See :func:`tasklist.task_list`."""
    return tasklist.task_list(session, user, role=role, status=status, case=case)


def get_task(session: Session, user: User, case_id: int | str, task_id: str) -> TaskView:
    """One ready task of the user's lane.

    Raises:
        NotFound: no such case or task in the user's scope. NotPermitted: another role's task.
        Conflict: the task is no longer open.
    """
    case = cases.get_case(session, user, case_id)
    run = cases.CaseRun(session, case, user)
    task = runtime.find_task(run.wf, task_id)
    if task is None or not task.task_spec.manual:
        raise NotFound(M_("no task %(task_id)s in case %(case_number)s", task_id=task_id, case_number=case.case_number))
    users.check_lane(user, task.task_spec.lane)
    if task.state != TaskState.READY:
        raise Conflict(M_("the task '%(bpmn_name)s' is no longer open: it was completed or closed", bpmn_name=M_(task.task_spec.bpmn_name)))
    return _view(case, run.cf, run.loaded, task, legal_time.local_day(clock.now(), run.cf.timezone))


def complete_task(session: Session, user: User, case_id: int | str, task_id: str, data: dict[str, Any],
                  expected_lock_version: int | None = None) -> Case:
    """Complete a ready task with its form: check, run the engine, save (one transaction).

    Args:
        data: the submitted form (strings from a page, or JSON values from the API).
        expected_lock_version: the case version the officer saw; a different one is a conflict.
    Raises:
        NotFound, NotPermitted, Conflict, Refused, DeadlinePassed.
    """
    case = cases.get_case(session, user, case_id)
    if expected_lock_version is not None and case.lock_version != expected_lock_version:
        raise Conflict(M_("this case changed since you opened the task; nothing was saved. Reload and check."))
    if case.status != "running":
        raise Conflict(M_("case %(case_number)s is closed; the task is no longer open", case_number=case.case_number))
    run = cases.CaseRun(session, case, user)
    task = runtime.find_task(run.wf, task_id)
    if task is None or not task.task_spec.manual:
        raise NotFound(M_("no task %(task_id)s in case %(case_number)s", task_id=task_id, case_number=case.case_number))
    users.check_lane(user, task.task_spec.lane)
    if task.state != TaskState.READY:
        # A timer may have closed it: a missed deadline is named before the task is called closed.
        form = runtime.task_form_name(task.task_spec)
        rules.clean(session, form.split(".")[0], run.loaded.parsed.forms[form], run.cf, data or {}, clock.now())
        raise Conflict(M_("the task '%(bpmn_name)s' is no longer open: it was completed or closed", bpmn_name=M_(task.task_spec.bpmn_name)))
    return _complete(session, user, run, task.task_spec, data, lambda: runtime.find_task(run.wf, task_id))


def act(session: Session, user: User, case_id: int | str, element_id: str, data: dict[str, Any],
        expected_lock_version: int | None = None, **match: Any) -> Case:
    """Complete the ready task of element ``element_id`` (e.g. ``ut_record_bid``), optionally the one
    whose objection matches ``match`` (``objector=...``). Used by the simulator and the API.

    The rule checks run first, so an act after its deadline is refused naming the last day even
    when the timer has already closed the task.
    Args:
        expected_lock_version: the case version the caller saw, if given; a different one is a conflict.
    Raises:
        NotFound, NotPermitted, Conflict, Refused, DeadlinePassed.
    """
    case = cases.get_case(session, user, case_id)
    if expected_lock_version is not None and case.lock_version != expected_lock_version:
        raise Conflict(M_("this case changed since you opened the task; nothing was saved. Reload and check."))
    run = cases.CaseRun(session, case, user)
    task_spec = runtime.task_spec_by_id(run.loaded.parsed, element_id)
    if task_spec is None or not task_spec.manual:
        raise NotFound(M_("the process has no task %(element_id)s", element_id=element_id))
    users.check_lane(user, task_spec.lane)
    if case.status != "running":
        # A case closed by a timer (e.g. the return period forfeiting the security): an act after
        # its deadline is still refused naming the last day; any other act, as the case is closed.
        form = runtime.task_form_name(task_spec)
        try:
            rules.clean(session, form.split(".")[0], run.loaded.parsed.forms[form], run.cf, data or {}, clock.now())
        except DeadlinePassed:
            raise
        except Refused:
            pass
        raise Refused(M_("case %(case_number)s is closed (%(outcome)s)", case_number=case.case_number, outcome=M_(case.outcome.replace("_", " "))),
                      then=CLOSED_CASE)

    def ready() -> Any:
        found = [task for task in runtime.ready_user_tasks(run.wf) if task.task_spec.bpmn_id == element_id and all(
            (task.data.get("objection") or {}).get(k) == v for k, v in match.items())]
        if len(found) > 1:
            # several open tasks of this element (one "Decide ownership claim" per objection): an
            # act must name which one, never land on whichever comes first
            claims = [(t.data.get("objection") or {}).get("objector") for t in found]
            if all(claims):
                raise Refused(M_("%(count)s tasks '%(bpmn_name)s' are open in case %(case_number)s; name the "
                                 "objector whose claim this decides: %(objectors)s", count=len(found),
                                 bpmn_name=M_(task_spec.bpmn_name), case_number=run.case.case_number,
                                 objectors=message_list(claims)), {"objector": M_("choose one of the open claims")})
            raise Refused(M_("%(count)s tasks '%(bpmn_name)s' are open in case %(case_number)s; complete one "
                             "by its task id", count=len(found), bpmn_name=M_(task_spec.bpmn_name),
                             case_number=run.case.case_number),
                          then=M_("Complete it from the task list, where each open task has its own link."))
        return found[0] if found else None

    return _complete(session, user, run, task_spec, data, ready, objector=match.get("objector"))


def _complete(session: Session, user: User, run: cases.CaseRun, task_spec: Any, data: dict[str, Any],
              find: Any, *, objector: str | None = None) -> Case:
    run.begin_act()
    cases.check_after_impoundment(run.cf, clock.now())
    form = runtime.task_form_name(task_spec)
    schema = run.loaded.parsed.forms[form]
    cleaned = rules.clean(session, form.split(".")[0], schema, run.cf, data or {}, clock.now())
    run.run()  # timers due before this act fire first
    task = find()
    if task is None or task.state != TaskState.READY:
        why = why_not_open.why_not_open(task_spec.bpmn_id, run.cf, clock.now(), objector)
        if why is not None:
            raise Refused(M_("the task '%(bpmn_name)s' is not open in case %(case_number)s now: %(why)s",
                             bpmn_name=M_(task_spec.bpmn_name), case_number=run.case.case_number, why=why), then=RELOAD)
        raise Refused(M_("the task '%(bpmn_name)s' is not open in case %(case_number)s now", bpmn_name=M_(task_spec.bpmn_name), case_number=run.case.case_number),
                      then=RELOAD)
    tasklist.check_holder(session, run.case, str(task.id), user)  # claimed by another officer: 409
    runtime.complete_user_task(run.wf, task, cleaned)
    run.event("task", task_spec.bpmn_name or task_spec.bpmn_id, element_id=task_spec.bpmn_id,
              actor_role=user.role, detail={k: (v if isinstance(v, (int, str)) else str(v))
                                            for k, v in cleaned.items()})
    run.run()
    run.save()
    return run.case


def find_ready(session: Session, case: Case, element_id: str, **match: Any) -> str | None:
    """The id of a ready task of ``element_id`` whose data matches (e.g. objection's objector)."""
    run = cases.CaseRun(session, case, None)
    for task in runtime.ready_user_tasks(run.wf):
        if task.task_spec.bpmn_id != element_id:
            continue
        if all((task.data.get("objection") or {}).get(k) == v for k, v in match.items()):
            return str(task.id)
    return None


