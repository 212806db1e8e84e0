"""A case run on the engine for one unit of work (:class:`CaseRun`: load the instance, fire due
timers, run engine steps, record history, notifications and documents, save), the cases a user may
see (:func:`scoped`, :func:`visible_cases`), and the opening of an act that is not an officer's task
(:func:`open_run`: the case running, the act not before the impoundment).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from SpiffWorkflow.util.task import TaskState
from sqlalchemy import select
from sqlalchemy.orm import Session

import handlers
from handlers.context import HandlerContext
from webapp import logs
from webapp.engine.execution import runtime
from webapp.errors import CLOSED_CASE, CaseHeld, EngineFailure, NotPermitted, Refused, TaskFailed
from webapp.i18n import M_, OR, message_list
from webapp.services.diagrams import repository
from webapp.services.money import ledger
from webapp.services.money.ledger import expectations
from webapp.services.notify import notifications
from webapp.services.papers import documents
from webapp.services.people.scope import get_case
from webapp.services.running import acts, alerts, holds, live, uow
from webapp.store import audit
from webapp.store.models import Case, CaseEvent, Panchayat, TimerFiring, User
from webapp.values import casefile, clock, pound
from webapp.values.casefile import CaseFile, present

# -- running a case ---------------------------------------------------------------------------

def attached_to(task: Any) -> dict[str, Any] | None:
    """The user task whose boundary event led to ``task`` (see :class:`HandlerContext`), or None."""
    owner = runtime.boundary_owner(task)
    if owner is None:
        return None
    spec = owner.task_spec
    return {"element_id": spec.bpmn_id, "name": spec.bpmn_name or spec.bpmn_id, "lane": spec.lane,
            "task_id": str(owner.id), "ready": owner.state == TaskState.READY}


class CaseRun:
    """One case loaded for one unit of work: its file, its engine instance, its ledger.

    Use :meth:`run` to fire due timers and step the engine, then :meth:`save`.
    """

    def __init__(self, session: Session, case: Case, user: User | None, *,
                 start_data: dict[str, Any] | None = None) -> None:
        self.session, self.case, self.user = session, case, user
        logs.bind_case(case.case_number)  # every log line of this unit of work names the case
        if user is not None:
            audit.know_user(session, user)
        uow.note_loaded(session, case)  # a step that fails on a case changed meanwhile is a conflict
        self.cf: CaseFile = casefile.load(case.file_json)
        self.loaded = repository.load_id(session, case.process_version_id)
        self.ledger = ledger.CaseLedger(session, case, user.id if user else None)
        self.notified_roles: set[str] = set()  # roles the diagram notified in this unit of work
        self._ready_before: set[str] | None = None  # ready user tasks before the first run (alerts)
        self._documents_before = documents.due_keys(self.cf)  # an act of this unit of work issues the rest
        # what the ledger invariants were last checked against (by the save that stored this state)
        self._ledger_checked = None if start_data is not None else self._ledger_facts(case.status == "completed")
        self._postings_checked = 0
        self.act: acts.ActRecord | None = None  # set by begin_act: this unit of work is an officer's act
        if start_data is not None:
            self.wf = runtime.new_instance(self.loaded.parsed, start_data, self.call_handler)
        else:
            kept = live.take(session, case)
            if kept is not None:  # the instance this process stored last for exactly this state
                self.wf = runtime.rebind(kept, self.call_handler)
            else:
                self.wf = runtime.load_state(case.state_json, self.loaded.parsed, self.call_handler)

    def begin_act(self) -> None:
        """Mark this unit of work as an officer's act that can later be corrected: the case as
        loaded, before anything of the act, is kept with it (:class:`webapp.store.models.CaseAct`,
        written by :meth:`save`). Call it once, right after loading the case."""
        if self.act is None and self.user is not None:
            self.act = acts.begin(self.session, self.case, self.user)

    def call_handler(self, task: Any, name: str, params: dict[str, Any]) -> Any:
        """Run the handler registered as ``name`` for service task ``task`` with the diagram's
        ``params``; its dict goes to the task's result variable. Raises what the handler raises."""
        fn = handlers.get(name)
        self.ledger.element_id = task.task_spec.bpmn_id
        ctx = HandlerContext(case_file=self.cf, now=clock.now(), ledger=self.ledger, notify=self.notify,
                             task_data=task.data, task_name=task.task_spec.bpmn_id,
                             attached_to=attached_to(task))
        return fn(ctx, **params)

    def notify(self, roles: list[str], template: str, **params: Any) -> None:
        """Notify the officers of ``roles`` in the case's scope and record it in the history."""
        self._sync_columns()
        self.notified_roles.update(roles)
        with self.session.no_autoflush:  # the case row is written once, at save
            rows = notifications.notify(self.session, self.case, roles, template, **params)
        self.event("notification", template, actor_role=",".join(roles), detail={"recipients": len(rows)})

    _caused: list[CaseEvent] | None = None  # while the engine runs: the rows its steps write (see run)

    def event(self, kind: str, name: str, *, element_id: str | None = None, actor_role: str | None = None,
              detail: dict[str, Any] | None = None, at: datetime | None = None) -> None:
        """Add one history row (``at`` defaults to the clock's now; timers and notifications
        carry no acting user)."""
        row = CaseEvent(case_id=self.case.id, at=at or clock.now(), kind=kind, name=name,
                        element_id=element_id, actor_role=actor_role,
                        actor_user_id=(self.user.id if self.user and kind not in ("timer", "notification")
                                       else None),
                        detail_json=json.dumps(detail or {}, default=str))
        if self.act is not None:
            self.act.noted(row)
        if self._caused is not None:  # the engine is running: added after the timers that fired (run)
            self._caused.append(row)
        else:
            self.session.add(row)

    def _held(self) -> None:
        if self.case.held_incident_id is not None:
            incident = present(holds.holding(self.session, self.case), "incident holding the case")
            raise CaseHeld(holds.held_message(self.case.case_number, incident), incident_id=incident.id)

    def _failed(self, failure: EngineFailure, element_id: str | None = None, kind: str | None = None) -> TaskFailed:
        """``failure`` of a diagram element as a :class:`TaskFailed` of this case, with a data snapshot."""
        element_id = getattr(failure, "element_id", None) or element_id
        spec = runtime.task_spec_by_id(self.loaded.parsed, element_id) if element_id else None
        return TaskFailed(failure.message, case_id=self.case.id, element_id=element_id,
                          element_name=getattr(failure, "element_name", None) or getattr(spec, "bpmn_name", None),
                          kind=kind or getattr(failure, "kind", None) or "handler_error",
                          snapshot={"task_data": getattr(failure, "task_data", {}),
                                    "case_file": json.loads(casefile.dump(self.cf))})

    def run(self) -> list[runtime.ArmedTimer]:
        """Fire due timers and run engine steps; record every firing with its lateness (fired minus
        due) and the worker's lag (fired minus the later of due and armed: migration 0016).

        Raises:
            CaseHeld: the case is held by an open incident.
            TaskFailed: an element failed (handler, script, timer expression, ledger invariant).
        """
        self._held()
        if self._ready_before is None:
            self._ready_before = alerts.ready_ids(self)
        # The history lists rows in insertion order within an instant: a timer's row goes in before
        # the rows its firing caused (written while the engine runs), at the instant it fired.
        started, caused = clock.now(), list[Any]()
        armed_before = {timer.task_id for timer in runtime.armed_timers(self.wf)}
        self._caused = caused
        try:
            fired = runtime.run(self.wf)
        except TaskFailed:
            raise
        except EngineFailure as failure:
            raise self._failed(failure) from failure
        finally:
            self._caused = None
        now = clock.now()
        for timer in fired:
            lateness = (now - timer.due).total_seconds()
            # armed in this run and already due (e.g. a case recorded days after the impoundment):
            # the worker's lag counts from the arming, not from the due instant
            armed = timer.due if timer.waited_as in armed_before else max(timer.due, started)
            self.session.add(TimerFiring(case_id=self.case.id, element_id=timer.bpmn_id, due_at=timer.due,
                                         fired_at=now, lateness_seconds=lateness,
                                         lag_seconds=max(0.0, (now - armed).total_seconds())))
            self.event("timer", timer.name or timer.bpmn_id, element_id=timer.bpmn_id, actor_role="timer",
                       detail={"due": timer.due.isoformat(), "lateness_seconds": lateness}, at=max(started, timer.due))
        self.session.add_all(caused)
        alerts.periods_ended(self, fired)
        alerts.deadlines_near(self)
        return fired

    def _sync_columns(self) -> None:
        cf = self.cf
        self.case.receiving_officer_id = cf.dispatch.receiver_user_id if cf.dispatch else None
        self.case.notice_last_day = cf.notice.last_day.isoformat() if cf.notice else None

    def issue_documents(self) -> None:
        """Issue, in this transaction, the documents the acts of this unit of work produced (the notice,
        a sale receipt, an order on an objection, a delivery order, a remittance acknowledgement:
        webapp.services.papers.documents), each with a history row holding its number and hashes."""
        for rows in documents.issue_new(self.session, self.case, self.cf, self._documents_before, self.user,
                                        clock.now()):
            self.event("document", documents.KINDS[rows[0].kind][0], actor_role=self.user.role if self.user else None,
                       detail=documents.history_detail(rows))
        self._documents_before = documents.due_keys(self.cf)

    def forget_documents(self, keys: set[str]) -> None:
        """Have :meth:`save` issue the documents of ``keys`` again although they were due before this
        unit of work (their issue in force was cancelled in it: e.g. the letter sending the cattle to
        a receiving officer, when another officer is named, webapp.services.cases.receivers)."""
        self._documents_before -= keys

    def _ledger_facts(self, closed: bool) -> tuple[bool, str | None, Any, ledger.Expected]:
        """What :func:`ledger.check_invariants` reads besides the entries: closed, outcome,
        shortfall (rupees) and the case file's expectations."""
        return (closed, self.case.outcome, self.case.shortfall, expectations(self.case, self.cf))

    def save(self) -> None:
        """Store state, file and the list columns; issue the documents of the acts done; check the
        ledger invariants (same transaction) when this unit of work posted an entry or changed what
        they read (outcome, shortfall, closed, the file's expectations: :meth:`_ledger_facts`).

        Raises:
            CaseHeld: the case is held by an open incident.
            TaskFailed: a ledger invariant would break (kind ``ledger_invariant``).
        """
        for timer in runtime.armed_timers(self.wf):
            self.cf.timers[timer.bpmn_id] = timer.due.isoformat()
        closed = self.wf.is_completed()
        if self._ready_before is not None:
            alerts.tasks_ready(self, self._ready_before, self.notified_roles)
            self._ready_before = alerts.ready_ids(self)
        self._sync_columns()
        self.issue_documents()
        self.case.state_json = runtime.dump_state(self.wf)
        self.case.file_json = casefile.dump(self.cf)
        uow.remember_state(self.session, self.case, self.wf, self.cf, self.case.state_json,
                           self.user.id if self.user else None)
        live.keep_after_commit(self.session, self.case, self.wf)
        self.case.next_timer_due = runtime.next_timer_due(self.wf)
        self.case.next_alert_at = alerts.next_reminder(self)
        self.case.outcome = self.cf.outcome
        self.case.shortfall = self.cf.shortfall
        self.case.cattle_held = pound.cattle_in_pound(self.cf)
        self.case.updated_at = clock.now()
        if closed and self.case.status != "completed":
            self.case.status, self.case.closed_at = "completed", clock.now()
        self._held()
        facts = self._ledger_facts(closed)
        # written first: a case another transaction changed since this one read it fails here, as
        # a conflict (the lock version), before its ledger is checked against entries it never saw
        self.session.flush()
        if self.act is not None:
            self.act.record(self.session)
        if facts == self._ledger_checked and self.ledger.postings == self._postings_checked:
            # nothing posted and nothing the invariants read changed since the save that stored
            # this state checked them: the same entries against the same facts (check_invariants)
            return
        try:
            ledger.check_invariants(self.session, self.case, closed, facts[3])
        except TaskFailed:
            raise
        except EngineFailure as failure:
            # the element whose postings broke it: the last handler that posted in this unit of work
            raise self._failed(failure, element_id=self.ledger.posted_by, kind="ledger_invariant") from failure
        self._ledger_checked, self._postings_checked = facts, self.ledger.postings


# -- loading within scope -----------------------------------------------------------------------

def fire_due_first(session: Session, case: Case) -> list[runtime.ArmedTimer]:
    """Fire the timers of ``case`` already due at the act's instant (:func:`webapp.values.clock.now`,
    fixed for the unit of work), in the act's own transaction, before the act is judged: the act
    meets the case as the rule leaves it at that instant, whatever the timer worker's lag
    (RULE130.md, "One instant per act"; issue 34, item 3). A task's completion does this through
    :meth:`CaseRun.run`; an act that does not run the engine (a correction, a corrigendum, a
    replaced receiving officer) calls this first.

    Nothing fires for a case that is not running, is held by an incident, or has no timer due
    (SpiffWorkflow fires a timer only once the clock is strictly past its instant, as the worker
    does). If the act is then refused, the firing is rolled back with it and the worker fires the
    timer. Returns the timers fired (empty when none was due).

    Raises:
        TaskFailed: an element failed while the engine ran (as in :meth:`CaseRun.run`).
    """
    if (case.status != "running" or case.held_incident_id is not None or case.next_timer_due is None
            or case.next_timer_due >= clock.now()):
        return []
    run = CaseRun(session, case, None)
    fired = run.run()
    run.save()
    session.flush()
    return fired


def scoped(query: Any, user: User) -> Any:
    """``query`` (a select of Case) narrowed to the user's scope, as :func:`users.can_see` decides
    one case; None when the user may see no case at all."""
    if user.role == "receiving_officer":
        return query.where(Case.receiving_officer_id == user.id)
    if user.panchayat_id is None and user.samiti_code:
        return query.join(Panchayat, Panchayat.id == Case.panchayat_id).where(Panchayat.samiti_code == user.samiti_code)
    if user.panchayat_id is not None:
        return query.where(Case.panchayat_id == user.panchayat_id)
    if user.role != "administrator":
        return None
    return query


def visible_cases(session: Session, user: User, *, status: str | None = None, limit: int = 500) -> list[Case]:
    """Cases within the user's scope, newest first."""
    query = select(Case).order_by(Case.id.desc()).limit(limit)
    if status:
        query = query.where(Case.status == status)
    query = scoped(query, user)
    return [] if query is None else list(session.scalars(query))


def require_role(user: User, *roles: str) -> None:
    if user.role not in roles:
        raise NotPermitted(M_("only the %(roles)s may do this; you are signed in as %(role)s",
                              roles=message_list([M_(r.replace("_", " ")) for r in roles], M_(OR)),
                              role=M_(user.role.replace("_", " "))))


# -- acts that are not officer tasks --------------------------------------------------------------

def open_run(session: Session, user: User, case_id: int | str) -> CaseRun:
    case = get_case(session, user, case_id)
    if case.status != "running":
        raise Refused(M_("case %(number)s is closed (%(outcome)s)", number=case.case_number,
                         outcome=M_(case.outcome.replace("_", " "))), then=CLOSED_CASE)
    run = CaseRun(session, case, user)
    run.begin_act()
    check_after_impoundment(run.cf, clock.now())
    return run


def check_after_impoundment(cf: CaseFile, at: datetime) -> None:
    """Refuse an act at instant ``at`` (aware) before the case's impoundment: a case has nothing to
    record before its cattle were impounded (a simulated or replayed act dated earlier; the live
    clock never is, as an impoundment cannot be recorded in the future).

    Raises:
        Refused: naming the impoundment's local day and time.
    """
    if at < cf.impounded_at:
        local = cf.impounded_at.astimezone(ZoneInfo(cf.timezone))
        raise Refused(M_("the cattle of case %(case)s were impounded on %(day)s at %(time)s; nothing is recorded "
                         "in the case before that", case=cf.case_number, day=local.date(),
                         time=local.strftime("%H:%M")),
                      then=M_("Record the act at its true time, after the impoundment."))
