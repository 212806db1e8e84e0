"""Moving running cases to another version of their process (SpiffWorkflow's spec diff).

A case runs on the version it started with until an administrator moves it. For each running case
:func:`plan` says whether it can move and, if not, why, in plain words; :func:`move_case` moves one
case and :func:`move_all` every movable case, each in its own transaction (a failure leaves that
case exactly as it was and the others go on).

How a case is moved (SPIFFWORKFLOW.md, "Migrating running instances"): the instance is loaded on
its own version's spec; ``SpecDiff`` (one per process and per subprocess the instance has) aligns
the old task specs with the new ones by BPMN id; ``WorkflowDiff`` lists the instance's tasks whose
spec changed or was removed; ``migrate_workflow`` re-points every task at the new spec and resets
the READY and WAITING branches so that what follows them is predicted again from the new diagram.
The project then stores the state without the spec and changes the case's version id
(``webapp.engine.execution.runtime``: the spec is re-attached by version).

A case may NOT move when
- a task whose spec changed in substance (anything but its name or documentation) is already
  completed, ready, waiting, running or failed: the new diagram would disagree with what happened;
- a task that is not in the new version is completed, ready, waiting, running or failed;
- a subprocess the case has entered is not in the new version;
- after the move an armed timer would be due at another instant, or disappear (a legal deadline
  must not move), or the open tasks would change;
- the moved state cannot be read back on the new version;
- the case is held by an open incident (its failed step must be retried or skipped first).
The ledger is never touched: money already posted stays as it is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from threading import Lock
from typing import Any

from SpiffWorkflow.bpmn.util.diff import SpecDiff, WorkflowDiff, migrate_workflow
from SpiffWorkflow.util.task import TaskState
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from handlers import get as handler_of  # the handler registry
from handlers.context import HandlerContext
from webapp.engine.execution import runtime, state
from webapp.engine.scripts.sandbox import SERVICE_LEVEL_OPERATION
from webapp.errors import NotFound, Refused, Rule130Error
from webapp.i18n import M_, N_, message_list
from webapp.services.diagrams import repository, versions
from webapp.services.running import uow
from webapp.services.running.case_run import CaseRun
from webapp.store.models import Case, ProcessVersion, User, get_row
from webapp.values import casefile, clock

# Changes that do not alter how a task runs: a task renamed or re-documented may have run already.
COSMETIC = {"bpmn_name", "documentation", "description"}
# Tasks in these states have happened or are happening: their spec must not change under them.
SETTLED = TaskState.COMPLETED | TaskState.READY | TaskState.WAITING | TaskState.STARTED | TaskState.ERROR
STATE_WORDS = {TaskState.COMPLETED: N_("already completed"), TaskState.READY: N_("ready (open)"),
               TaskState.WAITING: N_("waiting"), TaskState.STARTED: N_("running"), TaskState.ERROR: N_("failed")}
CHANGE_WORDS = {"outputs": N_("its outgoing flows"), "inputs": N_("its incoming flows"), "lane": N_("its lane"),
                "extensions": N_("its form or service operator"),
                "event_definition": N_("its event (timer or message)"),
                "cond_task_specs": N_("its conditions"), "default_task_spec": N_("its default flow"),
                "typename": N_("its type"), "script": N_("its script"), "prescript": N_("its script"),
                "postscript": N_("its script"), "manual": N_("its type"), "bpmn_name": N_("its name"),
                "documentation": N_("its documentation"), "io_specification": N_("its data inputs and outputs"),
                "data_input_associations": N_("its data"), "data_output_associations": N_("its data")}


@dataclass
class Verdict:
    """Whether one running case can move to the target version, and why not."""

    case_id: int
    case_number: str
    version_from: int
    version_to: int
    movable: bool
    reasons: list[str] = field(default_factory=list)
    timers: list[tuple[str, str]] = field(default_factory=list)  # (element id, due instant ISO UTC)

    def as_json(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "case_number": self.case_number, "version_from": self.version_from,
                "version_to": self.version_to, "movable": self.movable, "reasons": self.reasons,
                "timers": [{"element_id": e, "due": d} for e, d in self.timers]}

    def line(self) -> str:
        """One line for the command line."""
        head = f"{self.case_number}: version {self.version_from} -> {self.version_to}: "
        return head + ("can move" if self.movable else "cannot move: " + "; ".join(self.reasons))


@dataclass
class Moved:
    """The outcome of one move: the verdict, and whether the case was moved."""

    verdict: Verdict
    moved: bool

    def as_json(self) -> dict[str, Any]:
        return {**self.verdict.as_json(), "moved": self.moved}


def _task_label(task: Any) -> str:
    spec = task.task_spec
    if spec.__class__.__name__ in ("BoundaryEventSplit", "BoundaryEventJoin"):
        # SpiffWorkflow's own wrapper around a task with boundary events: name the task itself
        near = list(spec.outputs if spec.__class__.__name__ == "BoundaryEventSplit" else spec.inputs)
        spec = next((s for s in near if s.__class__.__name__ != "BoundaryEvent"
                     and getattr(s, "bpmn_id", None)), spec)
    name = getattr(spec, "bpmn_name", None) or getattr(spec, "bpmn_id", None) or spec.name
    bpmn_id = getattr(spec, "bpmn_id", None)
    if bpmn_id and bpmn_id != name:
        return M_("task '%(name)s' (%(id)s)", name=M_(name), id=bpmn_id)
    return M_("task '%(name)s'", name=M_(name))


def _wrapped_task(task: Any) -> Any:
    """For SpiffWorkflow's split in front of a task with boundary events, the task itself (its
    state is the one an administrator knows); any other task as it is."""
    if task.task_spec.__class__.__name__ == "BoundaryEventSplit":
        return next((c for c in task.children if c.task_spec.__class__.__name__ != "BoundaryEvent"), task)
    return task


def _state_words(task: Any) -> str:
    return M_(next((words for state, words in STATE_WORDS.items() if task.state == state),
                   TaskState.get_name(task.state).lower()))


def _blocking(diff: WorkflowDiff, spec_diff: SpecDiff, target: int) -> list[str]:
    reasons: list[str] = []
    for task in diff.changed:
        keys = set(spec_diff.changed.get(task.task_spec, ())) - COSMETIC
        if keys and task.state & SETTLED:
            what = message_list([M_(w) for w in sorted({CHANGE_WORDS.get(k, k) for k in keys})])
            shown = _wrapped_task(task)
            reasons.append(M_("%(task)s changed in version %(number)s (%(what)s) and is %(state)s",
                              task=_task_label(shown), number=target, what=what, state=_state_words(shown)))
    for task in diff.removed:
        if task.state & SETTLED:
            reasons.append(M_("%(task)s is not in version %(number)s and is %(state)s", task=_task_label(task),
                              number=target, state=_state_words(task)))
    return list(dict.fromkeys(reasons))  # a loop's many instances of one task: say it once


def _open_tasks(workflow: Any) -> Counter[tuple[str, str]]:
    return Counter((getattr(t.task_spec, "bpmn_id", None) or t.task_spec.name, TaskState.get_name(t.state))
                   for t in workflow.get_tasks(state=TaskState.READY | TaskState.WAITING | TaskState.STARTED)
                   if getattr(t.task_spec, "bpmn_id", None))


def _timers(workflow: Any) -> list[tuple[str, str]]:
    return [(t.bpmn_id, t.due.isoformat()) for t in runtime.armed_timers(workflow)]


_SPEC_DIFFS: dict[tuple[int, int], SpecDiff] = {}  # (id of the old spec, id of the new spec) -> diff
_SPEC_DIFF_LOCK = Lock()


def _spec_diff(original: Any, new: Any) -> SpecDiff:
    """SpiffWorkflow's SpecDiff of two spec objects, computed once per pair (parsed specs are
    immutable and shared by every instance loaded on them; the diff only reads them). Keyed by the
    objects themselves: the diff matches an instance's tasks by their spec objects."""
    key = (id(original), id(new))  # the cached diff holds both objects, so their ids stay theirs
    with _SPEC_DIFF_LOCK:
        found = _SPEC_DIFFS.get(key)
    if found is None:
        found = SpecDiff(state.SERIALIZER.registry, original, new)
        with _SPEC_DIFF_LOCK:
            if len(_SPEC_DIFFS) > 64:
                _SPEC_DIFFS.clear()
            _SPEC_DIFFS[key] = found
    return found


def _reading_handler(case: Case) -> Any:
    """The handler call of an instance loaded only to be compared: it answers the one read-only
    operation a timer's expression may call (``service_level.end``, from ``case``'s file, so an
    overdue timer's due instant can be compared before and after the move) and refuses every other
    (no service task runs while a case is being moved)."""


    def call(task: Any, name: str, params: dict[str, Any]) -> Any:
        if name != SERVICE_LEVEL_OPERATION:
            raise Refused(M_("no service task runs while a case is being moved"),
                          then=M_("The administrator can move the case when no service task of it is running."))
        ctx = HandlerContext(case_file=casefile.load(case.file_json), now=clock.now(), ledger=None,  # type: ignore[arg-type]
                             notify=lambda *a, **k: None, task_data=task.data, task_name=task.task_spec.bpmn_id)
        return handler_of(name)(ctx, **params)

    return call


def migrate_instance(case: Case, source: repository.LoadedVersion, target: repository.LoadedVersion,
                     ) -> tuple[Any | None, Verdict]:
    """Try to move one case's instance from ``source`` to ``target`` in memory (nothing stored).

    Returns:
        (the instance re-attached to the target spec, or None when it cannot move; the verdict).
    """
    verdict = Verdict(case.id, case.case_number, source.version.version, target.version.version, False)
    number = target.version.version
    if case.status != "running":
        verdict.reasons.append(M_("the case is %(status)s (%(outcome)s)", status=M_(case.status),
                                  outcome=M_(case.outcome.replace("_", " "))))
        return None, verdict
    if case.held_incident_id is not None:  # its last step failed and was rolled back (services.incidents)
        verdict.reasons.append(M_("the case is held by an open incident; retry or skip it at /admin/incidents first"))
        return None, verdict
    if source.version.id == target.version.id:
        verdict.reasons.append(M_("the case is already on version %(number)s", number=number))
        return None, verdict
    workflow = runtime.load_state(case.state_json, source.parsed, _reading_handler(case))
    verdict.timers = _timers(workflow)
    timers_before, open_before = verdict.timers, _open_tasks(workflow)

    spec_diff = _spec_diff(workflow.spec, target.parsed.spec)
    top = WorkflowDiff(workflow, spec_diff)
    verdict.reasons += _blocking(top, spec_diff, number)
    sub_diffs: dict[Any, tuple[WorkflowDiff, Any]] = {}
    for sp_id, sub in workflow.subprocesses.items():
        new_spec = target.parsed.subprocess_specs.get(sub.spec.name)
        if new_spec is None:
            verdict.reasons.append(M_("subprocess '%(name)s' is not in version %(number)s and the case has entered it",
                                      name=M_(sub.spec.name), number=number))
            continue
        sub_spec_diff = _spec_diff(sub.spec, new_spec)
        sub_diff = WorkflowDiff(sub, sub_spec_diff)
        verdict.reasons += _blocking(sub_diff, sub_spec_diff, number)
        sub_diffs[sp_id] = (sub_diff, new_spec)
    if verdict.reasons:
        verdict.reasons = list(dict.fromkeys(verdict.reasons))
        return None, verdict

    migrate_workflow(top, workflow, target.parsed.spec)
    for sp_id, (sub_diff, new_spec) in sub_diffs.items():
        migrate_workflow(sub_diff, workflow.subprocesses[sp_id], new_spec)
    workflow.subprocess_specs = target.parsed.subprocess_specs
    try:
        moved = runtime.load_state(runtime.dump_state(workflow), target.parsed, _reading_handler(case))
    except Exception as error:  # any failure to read the state back means: do not move
        verdict.reasons.append(M_("its state cannot be read on version %(number)s (%(error)s)", number=number,
                                  error=f"{type(error).__name__}: {error}"))
        return None, verdict
    timers_after = _timers(moved)
    if timers_after != timers_before:
        before, after = dict(timers_before), dict(timers_after)
        for element in sorted(set(before) | set(after)):
            if before.get(element) != after.get(element):
                verdict.reasons.append(M_("timer %(element)s would be due at %(after)s instead of %(before)s",
                                          element=element, after=after.get(element) or M_("no time (not armed)"),
                                          before=before.get(element) or M_("not armed")))
    open_after = _open_tasks(moved)
    if open_after != open_before:
        gone = sorted((open_before - open_after).elements())
        new = sorted((open_after - open_before).elements())
        verdict.reasons.append(M_("the open tasks would change (no longer open: %(gone)s; newly open: %(new)s)",
                                  gone=", ".join(e for e, _ in gone) or M_("none"),
                                  new=", ".join(e for e, _ in new) or M_("none")))
    if verdict.reasons:
        return None, verdict
    verdict.movable = True
    return moved, verdict


def _target(session: Session, process_id: str, to: int) -> repository.LoadedVersion:
    return repository.load(versions.get_version(session, process_id, to))


def running_cases(session: Session, process_id: str) -> list[Case]:
    """The running cases of ``process_id`` (any version), oldest first."""
    return list(session.scalars(select(Case).join(ProcessVersion, ProcessVersion.id == Case.process_version_id)
                                .where(ProcessVersion.process_id == process_id, Case.status == "running")
                                .order_by(Case.id)))


def _find_case(session: Session, process_id: str, case_ref: int | str) -> Case:
    text = str(case_ref)
    case = session.scalar(select(Case).where(Case.case_number == text)) if len(text) <= 40 else None
    if case is None and text.isascii() and text.isdigit() and len(text) <= 18:
        case = session.get(Case, int(text))
    if case is None or get_row(session, ProcessVersion, case.process_version_id).process_id != process_id:
        raise NotFound(M_("no case %(case_ref)s of process %(process_id)s", case_ref=case_ref, process_id=process_id))
    return case


def plan(session: Session, actor: User | str, process_id: str, to: int,
         case_ref: int | str | None = None) -> list[Verdict]:
    """The dry run: for each running case of ``process_id`` (or the one case ``case_ref``, a case
    number or id) whether it can move to version ``to``, and why not. Changes nothing.

    Raises:
        NotPermitted: a user who is not an administrator. NotFound: no such version or case.
    """
    versions.actor_name(actor)
    target = _target(session, process_id, to)
    cases = [_find_case(session, process_id, case_ref)] if case_ref is not None else running_cases(session, process_id)
    verdicts = []
    for case in cases:
        source = repository.load(get_row(session, ProcessVersion, case.process_version_id))
        verdicts.append(migrate_instance(case, source, target)[1])
    return verdicts


def _move(session: Session, actor: User | str, process_id: str, to: int, case_ref: int | str) -> Verdict:

    name = versions.actor_name(actor)
    target = _target(session, process_id, to)
    case = _find_case(session, process_id, case_ref)
    source = repository.load(get_row(session, ProcessVersion, case.process_version_id))
    moved, verdict = migrate_instance(case, source, target)
    if moved is None:
        raise Refused(M_("case %(case)s cannot move to version %(number)s: %(reasons)s", case=case.case_number,
                         number=to, reasons=message_list(verdict.reasons, "; ")), verdict=verdict,
                      then=M_("The case stays on its version and runs on; the administrator can deploy a version "
                              "that accepts it and move it then."))
    user = actor if isinstance(actor, User) else None
    run = CaseRun(session, case, user)
    moved.script_engine = run.wf.script_engine  # the restricted engine, with this unit of work's handlers
    run.wf = moved
    case.process_version_id = target.version.id
    detail = {"version_from": verdict.version_from, "version_to": verdict.version_to,
              "timers": dict(verdict.timers)}
    run.event("migration", f"Moved from version {verdict.version_from} to version {verdict.version_to}",
              actor_role=user.role if user else "administrator", detail=detail)
    versions.audit(session, process_id, "move", name, version_from=verdict.version_from,
                   version_to=verdict.version_to, case_id=case.id, note=case.case_number, detail=detail)
    run.save()
    return verdict


def move_case(sessions: sessionmaker[Session], actor: User | str, process_id: str, to: int,
              case_ref: int | str) -> Verdict:
    """Move one running case to version ``to`` in its own transaction (checked again inside it).

    Its armed timers keep their due instants and its ledger is untouched; the case history gets a
    "migration" row and the process audit trail a "move" row, both with the before and after versions.

    Raises:
        Refused: the case cannot move (the message gives every reason; ``details["verdict"]``).
        Conflict: the case changed at the same moment (e.g. a timer fired); nothing was moved.
        NotPermitted, NotFound.
    """
    return uow.perform(sessions, "move_case", _move, actor, process_id, to, case_ref)


def move_all(sessions: sessionmaker[Session], actor: User | str, process_id: str, to: int) -> list[Moved]:
    """Move every movable running case to version ``to``, each in its own transaction; a case that
    cannot move (or changed meanwhile) is reported with its reasons and left exactly as it was.

    Raises:
        NotPermitted: a user who is not an administrator. NotFound: no such version.
    """
    with sessions() as session:
        verdicts = plan(session, actor, process_id, to)
    results = []
    for verdict in verdicts:
        if not verdict.movable:
            results.append(Moved(verdict, False))
            continue
        try:
            results.append(Moved(move_case(sessions, actor, process_id, to, verdict.case_id), True))
        except Rule130Error as error:
            again = error.details.get("verdict")
            if not isinstance(again, Verdict):
                again = Verdict(verdict.case_id, verdict.case_number, verdict.version_from, to, False, [error.message])
            results.append(Moved(again, False))
    return results
