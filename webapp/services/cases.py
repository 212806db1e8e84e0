"""Cases: start one, load it within the user's scope, run it on the engine, and the acts that are
not officer tasks (objections, appeals, deaths and escapes); plus the case summary that pages,
the API and the simulator show (deadlines, sale, fees, ledger, payments).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from SpiffWorkflow.util.task import TaskState
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import handlers
from handlers.context import HandlerContext

from .. import casefile, clock, fees, legal_time, logs, textguard
from ..casefile import Animal, Appeal, CaseFile, Objection, name_key, present

# re-exported: the services and pages ask cases for a case's deadlines, its ledger's expectations and
# the case itself within scope, whichever module computes them
from ..deadlines import appeal_last_day as appeal_last_day
from ..deadlines import deadlines as deadlines
from ..deadlines import transfer_lock_until as transfer_lock_until
from ..engine import runtime
from ..errors import (
    AlreadySubmitted,
    CaseHeld,
    DeadlinePassed,
    EngineFailure,
    NotPermitted,
    Refused,
    TaskFailed,
)
from ..i18n import M_, OR, message_list
from ..store import audit
from ..store.models import Case, CaseEvent, CaseNumberSequence, Panchayat, TimerFiring, User, get_row
from . import acts, alerts, documents, holds, ledger, live, notifications, repository, tariffs, uow
from .ledger import expectations as expectations
from .scope import get_case as get_case

ZERO = Decimal("0.00")
MAX_AGE_DAYS = 366  # a case is opened for cattle impounded within the last year
ANIMAL_FIELDS = ("species", "description", "tag")  # what a request gives of each animal


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
        webapp.services.documents), each with a history row holding its number and hashes."""
        for rows in documents.issue_new(self.session, self.case, self.cf, self._documents_before, self.user,
                                        clock.now()):
            self.event("document", documents.KINDS[rows[0].kind][0], actor_role=self.user.role if self.user else None,
                       detail=documents.history_detail(rows))
        self._documents_before = documents.due_keys(self.cf)

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


def _require_role(user: User, *roles: str) -> None:
    if user.role not in roles:
        raise NotPermitted(M_("only the %(roles)s may do this; you are signed in as %(role)s",
                              roles=message_list([M_(r.replace("_", " ")) for r in roles], M_(OR)),
                              role=M_(user.role.replace("_", " "))))


# -- starting a case ----------------------------------------------------------------------------

def _text(value: Any, label: str, field: str) -> str:
    if value is not None and not isinstance(value, str):
        raise Refused(M_("%(label)s must be text", label=label), {field: M_("not text")})
    text = (value or "").strip()
    textguard.check(text, field, label)
    if textguard.is_blank(text):  # zero-width characters alone are as empty as spaces
        raise Refused(M_("%(label)s is required", label=label), {field: M_("this field is required")})
    textguard.check_one_line(text, field, label)
    if len(text) > 200:
        raise Refused(M_("%(label)s is longer than 200 characters", label=label), {field: M_("too long")})
    return text


class TypedTime(str):
    """A date and time as typed in a page's form field, which the page could not read: refused in
    the page's words (the API's message speaks of UTC offsets)."""


def _impounded_instant(value: datetime | str) -> datetime:
    """The instant of impoundment: a valid date and time, not in the future, at most
    :data:`MAX_AGE_DAYS` days ago. Raises Refused naming the problem."""
    if isinstance(value, TypedTime):
        raise Refused(M_("the time of impoundment must be a valid date and time"),
                      {"impounded_at": M_("not a date and time")})
    try:
        when = legal_time.parse_instant(value)
    except (ValueError, TypeError):
        raise Refused(M_("the time of impoundment must be a valid date and time (in the API with its UTC offset, "
                      "e.g. 2026-01-05T10:00:00+05:30)"), {"impounded_at": M_("not a date and time")}) from None
    if when > clock.now():
        raise Refused(M_("the time of impoundment cannot be in the future"), {"impounded_at": M_("in the future")})
    if when < clock.now() - timedelta(days=MAX_AGE_DAYS):
        raise Refused(M_("the time of impoundment is more than %(days)s days ago; check the date", days=MAX_AGE_DAYS),
                      {"impounded_at": M_("too long ago")})
    return when


def _animal_records(animals: Any, tariff: dict[str, dict[str, Decimal]]) -> list[Animal]:
    """The impounded animals (one or more) priced by ``tariff``. Raises Refused at the first problem."""
    if not animals:
        raise Refused(M_("record at least one animal"), {"animals": M_("no animals")})
    if not isinstance(animals, list):
        raise Refused(M_("the animals must be a list"), {"animals": M_("not a list")})
    if len(animals) > 500:
        raise Refused(M_("a case holds at most 500 animals"), {"animals": M_("too many")})
    records: list[Animal] = []
    tags: set[str] = set()
    for position, raw in enumerate(animals, start=1):
        if not isinstance(raw, dict):
            raise Refused(M_("animal %(position)s: give species, description and tag", position=position), {"animals": M_("animal %(position)s", position=position)})
        unknown = sorted(str(key) for key in raw if key not in ANIMAL_FIELDS)
        if unknown:  # e.g. a fine: the Panchayat's tariff sets it, never the request
            raise Refused(M_("animal %(position)s: unknown field %(fields)s; give species, description and tag",
                             position=position, fields=", ".join(unknown)), {"animals": M_("unknown field")})
        textguard.check(raw, f"animals[{position - 1}]")
        species = str(raw.get("species") or "").strip().lower()
        if not species:
            raise Refused(M_("animal %(position)s: choose its species (%(known)s)", position=position,
                             known=message_list([M_(s) for s in tariff])),
                          {"animals": M_("animal %(position)s: no species", position=position)})
        if species not in tariff:
            raise Refused(M_("animal %(position)s: unknown species %(species)s; known: %(known)s", position=position,
                             species=species, known=message_list([M_(s) for s in tariff])),
                          {"animals": M_("animal %(position)s: unknown species", position=position)})
        typed_tag = str(raw.get("tag") or "").strip()
        textguard.check_one_line(typed_tag, "animals", M_("animal %(position)s: the tag", position=position))
        tag = None if textguard.is_blank(typed_tag) else typed_tag
        if tag and tag.casefold() in tags:  # an ear tag reads the same in either letter case
            raise Refused(M_("animal %(position)s: the tag %(tag)s is given twice", position=position, tag=tag), {"animals": M_("duplicate tag")})
        if tag:
            tags.add(tag.casefold())
        records.append(Animal(position=position, species=species,
                              description=_text(raw.get("description"), M_("animal %(position)s: the description", position=position),
                                                "animals"),
                              tag=tag, fine=Decimal(str(tariff[species]["fine"])),
                              feeding_per_day=Decimal(str(tariff[species]["feeding_per_day"]))))
    return records


def start_case(session: Session, user: User, *, impounded_at: datetime | str, place_seized: str,
               place_impounded: str, nearest_village: str, animals: list[dict[str, Any]],
               tariff: dict[str, dict[str, Decimal]] | None = None, submission_key: str | None = None) -> Case:
    """The pound keeper records impounded cattle: a new case on the current process version.

    Args:
        impounded_at: the instant of impoundment (offset-aware; not in the future).
        animals: ``[{"species", "description", "tag" (optional)}]``, one or more.
        tariff: fine and feeding per species (rupees); default: the tariff in force on the local
            impoundment day in the Panchayat's zone (webapp.services.tariffs.for_case).
        submission_key: the key of the form or API call (8 to 80 letters, digits, ``-`` or ``_``),
            kept on the case with a hash of what was sent: the same key sent again in the Panchayat
            starts nothing; sent again with other details, it is refused.
    Returns:
        the case, with its 3-day release timer armed.
    Raises:
        NotPermitted: not a pound keeper of a Panchayat. Refused: any invalid field or key, or a
            key that recorded a case with other details.
        AlreadySubmitted: a case was started with this key (named; nothing recorded again).
    """
    _require_role(user, "pound_keeper")
    panchayat = get_row(session, Panchayat, user.panchayat_id)
    sent = _fingerprint(impounded_at, place_seized, place_impounded, nearest_village, animals)
    if submission_key is not None:
        _check_submission_key(submission_key)
        earlier = case_for_submission(session, user, submission_key)
        if earlier is not None and earlier.submission_hash not in (None, sent):
            raise Refused(M_("this form already recorded case %(number)s, with other details; nothing was "
                             "recorded now. Check that case; to record another impoundment, send the form again",
                             number=earlier.case_number), {"submission": M_("already used for another case")})
        if earlier is not None:
            raise AlreadySubmitted(M_("this form was already sent: it recorded case %(number)s, which is not "
                                      "recorded again", number=earlier.case_number), earlier.id, earlier.case_number)
    # every field is checked, so that a form with several mistakes shows them all at once
    refusals: list[Refused] = []

    def checked(check: Callable[[], Any]) -> Any:
        try:
            return check()
        except Refused as refused:
            refusals.append(refused)
            return None

    when = checked(lambda: _impounded_instant(impounded_at))
    places = {field: checked(functools.partial(_text, value, label, field))
              for field, value, label in (("place_seized", place_seized, M_("the place seized")),
                                          ("place_impounded", place_impounded, M_("the place impounded")),
                                          ("nearest_village", nearest_village,
                                           M_("the village nearest the place of seizure")))}
    # the tariff in force on the local impoundment day (today's, to check the species, when the day is wrong)
    records = checked(lambda: _animal_records(animals, tariff or tariffs.for_case(session, panchayat,
                                                                                  when or clock.now())))
    if len(refusals) == 1:
        raise refusals[0]
    if refusals:
        field_errors: dict[str, Any] = {}
        for refused in refusals:
            for field, error in refused.field_errors.items():
                field_errors.setdefault(field, error)
        raise Refused(M_("the form has errors: %(summary)s",
                         summary=message_list([refused.message for refused in refusals], "; ")), field_errors)
    version_id = repository.current_id(session)
    impounded_on = legal_time.local_day(when, panchayat.timezone)
    number = f"{panchayat.code}/{impounded_on.year}/{next_case_sequence(session, panchayat, impounded_on.year):04d}"
    cf = CaseFile(case_number=number, timezone=panchayat.timezone, impounded_at=when, impounded_on=impounded_on,
                  place_seized=places["place_seized"], place_impounded=places["place_impounded"],
                  nearest_village=places["nearest_village"],
                  animals=records, appeal_period_days=panchayat.appeal_period_days,
                  return_period_days=panchayat.return_period_days)
    now = clock.now()
    case = Case(case_number=number, panchayat_id=panchayat.id, process_version_id=version_id, status="running",
                outcome="pending", file_json=casefile.dump(cf), state_json="{}", created_at=now, updated_at=now,
                submission_key=submission_key, submission_hash=sent if submission_key is not None else None)
    session.add(case)
    try:
        session.flush()
    except IntegrityError as error:  # the same key, sent twice at once: the other request recorded the case
        if submission_key is None or "submission_key" not in str(error.orig):
            raise
        raise AlreadySubmitted(M_("this form was already sent and is being recorded; it is not recorded again"),
                               0, "") from None
    start_data = {"case_number": number, "impounded_at": when.isoformat(), "timezone": panchayat.timezone,
                  "appeal_period_days": panchayat.appeal_period_days,
                  "return_period_days": panchayat.return_period_days}
    run = CaseRun(session, case, user, start_data=start_data)
    run.event("start", "Cattle impounded", element_id="start_impounded", actor_role=user.role,
              detail={"animals": len(records)})
    run.run()
    run.save()
    return case


def next_case_sequence(session: Session, panchayat: Panchayat, year: int) -> int:
    """The next number (from 1) of ``panchayat``'s cases impounded in ``year``, counted in the database.

    One ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` (PostgreSQL, SQLite 3.35+): the first case of
    a year makes its row with 1, each later one adds 1; the write holds the row's lock (PostgreSQL) or
    the database's (SQLite) until this transaction ends, so cases started at the same moment get
    different numbers, and a rolled-back start gives its number back.
    """
    statement = _NEXT_NUMBER[session.get_bind().dialect.name == "postgresql"]
    return int(session.execute(statement, {"panchayat_id": panchayat.id, "year": year, "last": 1}).scalar_one())


def _next_number(insert: Any) -> Any:
    return (insert(CaseNumberSequence)
            .on_conflict_do_update(index_elements=[CaseNumberSequence.panchayat_id, CaseNumberSequence.year],
                                   set_={"last": CaseNumberSequence.last + 1})
            .returning(CaseNumberSequence.last))


_NEXT_NUMBER = {False: _next_number(sqlite_insert), True: _next_number(postgresql_insert)}  # built once each


SUBMISSION_KEY = re.compile(r"[A-Za-z0-9_-]{8,80}")


def _fingerprint(impounded_at: Any, place_seized: Any, place_impounded: Any, nearest_village: Any,
                 animals: Any) -> str:
    """SHA-256 (hex) of what a new-case call sent, as sent (an instant as its ISO text): the same
    call repeated gives the same hash; any other detail, another."""
    instant = impounded_at.isoformat() if isinstance(impounded_at, datetime) else impounded_at
    payload = [instant, place_seized, place_impounded, nearest_village, animals]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _check_submission_key(key: Any) -> None:
    if not isinstance(key, str) or not SUBMISSION_KEY.fullmatch(key):
        raise Refused(M_("the submission key must be 8 to 80 letters, digits, '-' or '_'"),
                      {"submission": M_("not a submission key")})


def case_for_submission(session: Session, user: User, key: str) -> Case | None:
    """The case of the user's Panchayat started with submission key ``key``, if any."""
    if user.panchayat_id is None or not isinstance(key, str):
        return None
    return session.scalar(select(Case).where(Case.panchayat_id == user.panchayat_id, Case.submission_key == key))


# -- acts that are not officer tasks --------------------------------------------------------------

def _open_run(session: Session, user: User, case_id: int | str) -> CaseRun:
    case = get_case(session, user, case_id)
    if case.status != "running":
        raise Refused(M_("case %(number)s is closed (%(outcome)s)", number=case.case_number,
                         outcome=M_(case.outcome.replace("_", " "))))
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
                         time=local.strftime("%H:%M")))


def file_objection(session: Session, user: User, case_id: int | str, objector: str) -> Case:
    """Record an objection (a claim of ownership) filed during the notice period (Rule 130(a), (c)).

    Raises:
        DeadlinePassed: after the end of the last day of the period (the message names it).
        Refused: no notice yet, no name, or the same person's claim already pending.
    """
    get_case(session, user, case_id)  # scope first: another Panchayat's case is "not found", not "forbidden"
    _require_role(user, "secretary")
    objector = " ".join(_text(objector, M_("the objector's name"), "objector").split())
    run = _open_run(session, user, case_id)
    cf, now = run.cf, clock.now()
    if cf.notice is None:
        raise Refused(M_("no notice has been published yet; objections are received during the notice period"))
    if not legal_time.is_within(now, cf.notice.last_day, cf.timezone):
        raise DeadlinePassed(M_("the objection period ended on %(day)s; no objection is entertained after it "
                                "(Rule 130(a))", day=cf.notice.last_day), last_day=cf.notice.last_day.isoformat())
    filed = cf.objection_of(objector)  # the same name but for letter case and spaces is the same person
    if filed is not None:
        raise Refused(M_("%(name)s has already filed an objection in this case", name=filed.objector))
    run.run()
    if not runtime.is_waiting_for_message(run.wf, "objection_filed"):
        raise Refused(M_("this case is not receiving objections now"))
    cf.objections.append(Objection(objector=objector, filed_at=now, filed_on=legal_time.local_day(now, cf.timezone)))
    runtime.deliver_message(run.wf, "objection_filed", {"objector": objector})
    run.event("task", "Objection filed", element_id="n_ice_objection", actor_role=user.role,
              detail={"objector": objector})
    run.run()
    run.notify(["sarpanch"], "objection_filed", objector=objector)
    run.save()
    return run.case


def _check_appeal_deadline(cf: CaseFile, now: datetime) -> None:
    """Raise DeadlinePassed (naming D + M) when ``now`` is after the appeal period."""
    last = appeal_last_day(cf)
    if last is not None and not legal_time.is_within(now, last, cf.timezone):
        raise DeadlinePassed(M_("the appeal period ended on %(day)s", day=last), last_day=last.isoformat())


def file_appeal(session: Session, user: User, case_id: int | str, appellant: str) -> Case:
    """Record an appeal against the Panchayat's decision (Rule 130(e) proviso); any person may appeal.

    Raises:
        DeadlinePassed: after the last day of the appeal period (named).
        Refused: no decision yet, an appeal already pending or decided, or an objector whose own claim
            stands proved (an objector appeals only against the decision on their own claim).
    """
    get_case(session, user, case_id)  # scope first: another Panchayat's case is "not found", not "forbidden"
    _require_role(user, "secretary")
    appellant = _text(appellant, M_("the appellant's name"), "appellant")
    case = get_case(session, user, case_id)
    if case.status != "running":  # a case closed by the appeal timer: a late appeal still names the last day
        _check_appeal_deadline(casefile.load(case.file_json), clock.now())
    run = _open_run(session, user, case_id)
    cf, now = run.cf, clock.now()
    run.run()
    if cf.decision_on is None:
        raise Refused(M_("the Panchayat has made no decision in this case yet; an appeal lies against its decision"))
    _check_appeal_deadline(cf, now)
    pending = cf.pending_appeal()
    if pending is not None:
        raise Refused(M_("the appeal of %(name)s is pending; one appeal at a time", name=pending.appellant))
    if cf.final_on is not None:
        raise Refused(M_("the appeal has been decided and the outcome is final") if any(a.decision for a in cf.appeals)
                      else M_("the outcome became final on %(day)s", day=cf.final_on))
    decided = next((a for a in cf.appeals if a.decision and name_key(a.appellant) == name_key(appellant)), None)
    if decided is not None:  # the appellate authority's decision on it is final (Rule 130(e) proviso)
        raise Refused(M_("the appeal of %(name)s was decided on %(day)s (%(decision)s); that decision is final",
                         name=decided.appellant, day=decided.decided_on, decision=M_(decided.decision or "")),
                      {"appellant": M_("appeal already decided")})
    own = cf.objection_of(appellant)
    if own is not None and own.decision == "proved":  # at most one claim stands proved (rules.py)
        # an objector's appeal is against the decision on their own claim (RULE130.md "Decision and appeal")
        raise Refused(M_("the claim of %(name)s was proved on %(day)s; an objector appeals against the decision on "
                         "their own claim, and this one is in their favour", name=own.objector, day=own.decided_on),
                      {"appellant": M_("claim proved")})
    against = "order_auction_stand" if cf.order_auction_stand_on else "ownership"
    cf.appeals.append(Appeal(appellant=appellant, filed_at=now, filed_on=legal_time.local_day(now, cf.timezone),
                             against=against))
    if runtime.is_waiting_for_message(run.wf, "appeal_filed"):
        runtime.deliver_message(run.wf, "appeal_filed", {"appellant": appellant})
    run.event("task", "Appeal filed", element_id="ice_appeal_filed", actor_role=user.role,
              detail={"appellant": appellant})
    run.run()
    run.notify(["appellate_authority"], "appeal_filed", appellant=appellant)
    run.save()
    return run.case


def _calf_day(value: date | str | None, cf: CaseFile, today: date) -> date:
    """The birth day given (a date, ``YYYY-MM-DD`` or None for today), checked against the custody.

    Raises:
        Refused: not a date, after today, or before the cattle were (back) in the pound.
    """
    if value is None or value == "":
        return today
    if isinstance(value, datetime) or not isinstance(value, (date, str)):
        raise Refused(M_("the day of birth must be a date such as 2026-01-07"), {"born_on": M_("not a date")})
    try:
        day = value if isinstance(value, date) else date.fromisoformat(value.strip()) if len(value.strip()) == 10 else None
    except ValueError:
        day = None
    if day is None:
        raise Refused(M_("the day of birth must be a date such as 2026-01-07"), {"born_on": M_("not a date")})
    if day > today:
        raise Refused(M_("the day of birth %(day)s is after today", day=day), {"born_on": M_("in the future")})
    since = cf.interim.returned_on if cf.interim and cf.interim.returned_on else cf.impounded_on
    if day < since:
        raise Refused(M_("the cattle have been in the pound since %(since)s; a calf born on %(day)s was not born in "
                         "the pound", since=since, day=day), {"born_on": M_("before the cattle were in the pound")})
    return day


def record_animal_event(session: Session, user: User, case_id: int | str, kind: str, *,
                        tag: str | None = None, position: int | None = None, born_on: date | str | None = None,
                        calf_description: str | None = None, calf_tag: str | None = None) -> Case:
    """Record that an animal died or escaped in the pound today (its feeding stops), or that a
    calf was born in the pound (RULE130.md 0).

    Death and escape: ``tag`` or ``position`` names the animal; if no animal is left before the
    notice is published, the case closes (closed_no_animals).

    Birth (RULE130.md 0, reading: "a calf born in the pound joins the lot — no fine, feeding from
    its birth day, and it goes with its mother"): ``tag`` or ``position`` names the mother, a living
    animal of the lot (not a bullock); ``born_on`` is the local calendar day of birth (default
    today; not after today, not before the cattle came into the pound). The calf is added to the
    case's animals with the mother's species, a fine of 0 and the mother's feeding rate per day
    (the tariff of the case's impoundment day), fed from its birth day (that day counted, as the
    impound day is); ``calf_description`` (default "calf of <mother>") and ``calf_tag`` (optional,
    unique in the case) describe it. It is released, sold, returned or delivered with the lot, and
    its own death or escape is recorded like any animal's.
    Raises:
        NotPermitted: not the pound keeper. NotFound: outside the user's scope.
        Refused: unknown kind or animal, an animal already gone, cattle no longer in the pound, a
            bad day of birth, a bullock or a calf born in the pound as mother, or a calf tag already used.
    """
    get_case(session, user, case_id)  # scope first: another Panchayat's case is "not found", not "forbidden"
    _require_role(user, "pound_keeper")
    if kind not in ("death", "escape", "birth"):
        raise Refused(M_("unknown animal event %(kind)s; use death, escape or birth", kind=repr(kind)))
    run = _open_run(session, user, case_id)
    cf = run.cf
    today = legal_time.local_day(clock.now(), cf.timezone)
    animal = next((a for a in cf.animals if (tag and a.tag == tag) or (position and a.position == position)), None)
    if animal is None and tag:  # the tag as written on the ear, in the other letter case
        animal = next((a for a in cf.animals if a.tag and a.tag.casefold() == str(tag).casefold()), None)
    if animal is None:
        which = tag or position
        raise Refused(M_("no animal %(which)s in case %(case)s", which=which, case=cf.case_number) if which
                      else M_("say which animal (its tag or number)"),
                      {"animal": M_("unknown animal")})
    if animal.gone_on() is not None:
        raise Refused(M_("%(animal)s is already recorded as gone on %(day)s", animal=animal.label, day=animal.gone_on()))
    # Out of the Panchayat's custody: with a buyer (until the buyer returns them), with a receiving
    # officer, released, delivered, or with an objector on interim delivery (until returned). Back
    # in custody after a return, what happens to them is recorded again (RULE130.md, "Cattle back
    # in custody").
    if ((cf.sale and cf.sale.returned_on is None) or cf.dispatch or cf.release or cf.delivered_on is not None
            or (cf.interim and not cf.interim.returned_on)):
        raise Refused(M_("%(animal)s is no longer in the pound", animal=animal.label))
    if kind == "birth":
        _record_birth(run, user, animal, _calf_day(born_on, cf, today), calf_description, calf_tag)
        run.run()
        run.save()
        return run.case
    if kind == "death":
        animal.died_on = today
    else:
        animal.escaped_on = today
    run.event("task", "Death recorded" if kind == "death" else "Escape recorded", actor_role=user.role,
              detail={"animal": animal.label})
    run.run()
    if not cf.living_animals() and runtime.is_waiting_for_message(run.wf, "lot_gone"):
        runtime.deliver_message(run.wf, "lot_gone", {})
        run.run()
    run.save()
    return run.case


def _record_birth(run: CaseRun, user: User, mother: Animal, day: date, description: str | None,
                  tag: str | None) -> Animal:
    cf = run.cf
    if mother.species == "bullock":
        raise Refused(M_("%(animal)s is a bullock; choose the calf's mother", animal=mother.label),
                      {"animal": M_("not a mother")})
    if mother.born_on is not None:  # a calf born in the pound is not yet a mother while it is there
        raise Refused(M_("%(animal)s is a calf born in the pound on %(day)s; choose the calf's mother",
                         animal=mother.label, day=mother.born_on), {"animal": M_("not a mother")})
    if (tag is not None and not isinstance(tag, str)) or (description is not None and not isinstance(description, str)):
        raise Refused(M_("the calf's description and tag must be text"), {"calf": M_("not text")})
    textguard.check({"calf_tag": tag or "", "calf_description": description or ""}, "")
    textguard.check_one_line(tag, "calf_tag", M_("the calf's tag"))
    textguard.check_one_line(description, "calf_description", M_("the calf's description"))
    tag = None if tag is None or textguard.is_blank(tag) else tag.strip()
    if tag and len(tag) > 200:
        raise Refused(M_("the calf's tag is longer than 200 characters"), {"calf_tag": M_("too long")})
    if tag and any(a.tag and a.tag.casefold() == tag.casefold() for a in cf.animals):
        raise Refused(M_("the tag %(tag)s is already on an animal of this case", tag=tag), {"calf_tag": M_("tag in use")})
    # stored in English, shown in each reader's language (i18n.MEMOS)
    text = f"calf of {mother.label}" if description is None or textguard.is_blank(description) else description.strip()
    if len(text) > 200:
        raise Refused(M_("the calf's description is longer than 200 characters"), {"calf_description": M_("too long")})
    calf = Animal(position=len(cf.animals) + 1, species=mother.species, description=text, tag=tag, fine=ZERO,
                  feeding_per_day=mother.feeding_per_day, born_on=day, mother=mother.position)
    cf.animals.append(calf)
    run.event("task", "Birth recorded", actor_role=user.role,
              detail={"calf": calf.label, "mother": mother.label, "born_on": day.isoformat()})
    return calf


# -- the summary the pages, the API and the simulator show -----------------------------------------

def _money(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:.2f}"


def summary(session: Session, case: Case) -> dict[str, Any]:
    """The case as the simulator's result shape (RULE130 scenarios FORMAT.md): outcome, deadlines,
    sale, fees, ledger balances and payments; dates as local dates, amounts as Decimal."""
    cf = casefile.load(case.file_json)
    as_of = legal_time.local_day(case.closed_at or clock.now(), cf.timezone)
    rows = ledger.entries(session, case.id)
    totals = ledger.net(rows)
    dl = deadlines(cf)
    sale = None
    if cf.sale is not None:
        sale = {"buyer": cf.sale.buyer, "amount": cf.sale.amount, "day": cf.sale.day,
                "transfer_lock_until": dl["transfer_lock_until"]}
    return {
        "case_number": case.case_number,
        "outcome": cf.outcome,
        "deadlines": {k: v for k, v in dl.items() if k != "transfer_lock_until"},
        "sale": sale,
        "fees": {"fine": fees.fine(cf), "pound_feeding": fees.pound_feeding(cf, as_of),
                 "buyer_feeding": fees.buyer_feeding(cf), "shortfall": cf.shortfall},
        "ledger": {account: totals.get(account, ZERO) for account in ledger.PANCHAYAT_ACCOUNTS},
        "paid": {"buyer": ledger.total_to(rows, "buyer"),
                 "pound_keeper": ledger.total_to(rows, "pound_keeper"),
                 "objector_security_refund": ledger.total_to(rows, "objector", ("security_refund",)),
                 "objector": ledger.total_to(rows, "objector", ("remittance_balance",))},
    }


def history(session: Session, case: Case) -> list[CaseEvent]:
    """The case's history rows (:class:`CaseEvent`) in the order of :func:`in_order`."""
    return in_order(session.scalars(select(CaseEvent).where(CaseEvent.case_id == case.id)))


def in_order(rows: Iterable[CaseEvent]) -> list[CaseEvent]:
    """History rows in time order by the whole second (UTC), and within one second in the order
    they were written (their ids).

    Rows are written as things happen, so within a second the order of writing is the true order:
    a timer before what its firing caused (:meth:`CaseRun.run`), and a timer fired just past its
    due instant before an act at that very instant (the simulator fires a timer due at a step's
    ``at`` with its clock a microsecond past the due instant, then sets the clock back to ``at``
    for the step, scenarios/FORMAT.md)."""
    return sorted(rows, key=lambda row: (row.at.replace(microsecond=0), row.id))
