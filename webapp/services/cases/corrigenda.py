"""The corrigendum: facts of an act recorded wrongly are amended where the rule takes the same course.

The reading (docs/RULE130.md, "The corrigendum"). A correction (:mod:`.corrections`) undoes the
latest act while nothing has left the Panchayat; a corrigendum undoes nothing. It amends the facts
an act recorded — names, descriptions, tags, places, amounts — of any act, the opening record and
acts that paid money out or handed cattle over included, and only where the amended facts lead
the rule down the same course.

**The rule decides** (:func:`plan`). The act is replayed on the case as it found it (its
snapshot, :mod:`webapp.services.running.acts`), at its own instant, through the same service
(:func:`webapp.services.tasks.tasks.act`), once with the facts as recorded and once amended, each in
a savepoint that is rolled back. The two are compared: the history rows the act wrote (tasks
completed, timers fired, notifications), the tasks left ready, the timers armed and their due
instants, status and outcome, the auction's state, the documents due, the ledger postings (the
same accounts and kinds; their amounts may differ), the charges (fine and feeding) and the
disposition of every animal. The replay with the facts as recorded must also write what the act
wrote then. The opening record has no snapshot: what the rule takes from it — the instant of
impoundment (every timer) and each animal's species with its fine and feeding — is compared.

**Same course** (:func:`issue`, one transaction): the case file takes the amended facts (the old
ones stay in the history row, the notice and the superseded documents); a money difference in the
act's postings between the Panchayat's accounts is posted as an adjusting entry, and one with a
party is recorded as owed (:class:`webapp.values.casefile.Owed`: to be refunded to, or collected
from, the party; the secretary records it with :func:`settle`); every document in force whose text
the amendment changes is superseded and reissued with the next number, "in place of" the old
one; a corrigendum notice (English and Hindi) is issued; a ``corrigendum`` history row (and so
the hash-chained audit trail) holds the old and the new facts.

**Another course: refused**, saying that the act stands and how it is changed instead: by appeal
under Rule 130(e) proviso (with its last day where the Panchayat's decision is made) or by review
by the authority that made the order.

Who and until when (:data:`ISSUERS`, :data:`AMEND_DAYS`): the secretary, who keeps the record and
the accounts, for the acts of the pound keeper, the secretary and the receiving officer and for the
opening record; the sarpanch and the appellate authority for their own acts; until the last day of
:data:`AMEND_DAYS` calendar days after the act's local day. A decision on the merits (the decision
or choice of a decision task) is never amended by corrigendum, nor a decision's reasons.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from webapp.errors import NotFound, NotPermitted, Refused, Rule130Error
from webapp.i18n import M_, N_, OR, Message, message_json, message_list
from webapp.i18n.formats import format_rupees
from webapp.services.cases import cases, corrections
from webapp.services.cases.case_start import _animal_records
from webapp.services.money import ledger, tariffs
from webapp.services.papers import documents
from webapp.services.running import acts, alerts, live
from webapp.services.tasks import tasklist, tasks
from webapp.store import append_only
from webapp.store.models import (
    Case,
    CaseAct,
    CaseDocument,
    CaseEvent,
    CaseTask,
    DeadlineReminder,
    LedgerEntry,
    Panchayat,
    User,
    get_row,
)
from webapp.values import casefile, clock, deadlines, fees, legal_time, textguard
from webapp.values.casefile import CaseFile, Owed

AMEND_DAYS = 90  # calendar days after the act's local day on which a corrigendum may still be issued
OPENING = "opening"  # the act reference of the opening record (the impoundment)
# the role that made the act -> the roles that may issue a corrigendum of it
ISSUERS: dict[str, tuple[str, ...]] = {
    "pound_keeper": ("secretary",),
    "secretary": ("secretary",),
    "receiving_officer": ("secretary",),
    "sarpanch": ("sarpanch",),
    "appellate_authority": ("appellate_authority",),
}
MERITS = ("decision", "choice")  # the decision itself, in a decision task's form
REASONS = ("reason", "remarks")  # a decision's reasons
OPENING_FIELDS = ("impounded_at", "place_seized", "place_impounded", "nearest_village")
ANIMAL_FIELDS = ("species", "description", "tag")
REASON_LIMIT = 500
SETTLERS = ("secretary",)  # who records a refund paid or an amount collected
ZERO = Decimal("0.00")
AUTHORITY = {"pound_keeper": N_("pound keeper"), "secretary": N_("secretary"), "sarpanch": N_("sarpanch"),
             "receiving_officer": N_("receiving officer"), "appellate_authority": N_("appellate authority")}


@dataclass
class Amended:
    """One fact amended: the form field (or ``animals.<n>.<field>`` of the opening record), the
    value as recorded and the amended value, as text."""

    field: str
    old: str
    new: str


@dataclass
class Plan:
    """What a corrigendum of one act does (:func:`plan`): the facts amended, the case-file paths
    changed (``(path, old, new)``, JSON values), the adjusting entries between Panchayat accounts
    (``(from, to, rupees)``), the money owed with a party, and the documents it reissues (their
    numbers)."""

    case: Case
    act: CaseAct | None
    act_name: str
    act_at: datetime
    element_id: str
    fields: list[Amended]
    changes: list[tuple[str, Any, Any]]
    adjustments: list[tuple[str, str, Decimal]] = field(default_factory=list)
    owed: list[Owed] = field(default_factory=list)
    reissue: list[str] = field(default_factory=list)
    amended_file: str = ""

    def as_json(self) -> dict[str, Any]:
        """The plan as the API shows it (rupees as text, instants ISO UTC)."""
        return {"act": self.act.id if self.act is not None else OPENING, "act_name": self.act_name,
                "act_at": self.act_at.isoformat(),
                "fields": [{"field": f.field, "old": f.old, "new": f.new} for f in self.fields],
                "adjusting_entries": [{"from": a, "to": b, "amount": f"{amount:.2f}"} for a, b, amount in self.adjustments],
                "owed": [{"party": o.party, "account": o.account, "amount": f"{o.amount:.2f}",
                          "direction": o.direction} for o in self.owed],
                "documents_reissued": list(self.reissue)}


# -- the act and its facts ------------------------------------------------------------------------

def _act(session: Session, case: Case, act_ref: int | str) -> CaseAct | None:
    """The act ``act_ref`` of ``case`` (None for :data:`OPENING`). Raises NotFound."""
    if str(act_ref) == OPENING:
        return None
    return corrections.get_act(session, case, act_ref)


def _task_event(session: Session, act: CaseAct) -> CaseEvent:
    """The history row of the task the act completed (its detail holds the form as recorded)."""
    row = session.scalar(select(CaseEvent).where(
        CaseEvent.case_id == act.case_id, CaseEvent.id > acts.marks(act)["event"],
        CaseEvent.id <= (act.last_event_id or 0), CaseEvent.kind == "task",
        CaseEvent.element_id == act.element_id).order_by(CaseEvent.id).limit(1))
    if row is None or not (act.element_id or "").startswith("ut_"):
        raise Refused(M_("the act “%(act)s” is not a task with a form; a corrigendum amends the facts of a task's "
                         "form or of the opening record", act=M_(act.name)),
                      then=M_("Choose the act whose form recorded the fact, or the opening record."))
    return row


def act_of(session: Session, case: Case, act_ref: int | str) -> CaseAct | None:
    """The act ``act_ref`` of ``case`` (the caller checked scope), None for :data:`OPENING`. Raises NotFound."""
    return _act(session, case, act_ref)


def recorded_facts(session: Session, user: User, case_ref: int | str, act_ref: int | str) -> dict[str, str]:
    """The facts the act recorded, as text, by field (what the amending form starts from):
    a task's form fields, or for the opening record the places, the instant of impoundment and
    ``animals.<n>.species|description|tag`` (n from 1).

    Raises:
        NotFound: no such case or act. NotPermitted: the user may not issue a corrigendum of it
            (:data:`ISSUERS`). Refused: an act without a form.
    """
    case = cases.get_case(session, user, case_ref)
    act = _act(session, case, act_ref)
    _check_issuer(user, act, casefile.load(case.file_json), dated=False)
    if act is None:
        return _opening_facts(casefile.load(case.file_json))
    detail = json.loads(_task_event(session, act).detail_json or "{}")
    return {k: str(v) for k, v in detail.items()}


def _opening_facts(cf: CaseFile) -> dict[str, str]:
    facts = {"impounded_at": cf.impounded_at.isoformat(), "place_seized": cf.place_seized,
             "place_impounded": cf.place_impounded, "nearest_village": cf.nearest_village}
    for animal in cf.animals:
        if animal.born_on is None:
            facts[f"animals.{animal.position}.species"] = animal.species
            facts[f"animals.{animal.position}.description"] = animal.description
            facts[f"animals.{animal.position}.tag"] = animal.tag or ""
    return facts


# -- who, until when ------------------------------------------------------------------------------

def last_day(act: CaseAct | None, cf: CaseFile) -> date:
    """The last local day on which a corrigendum of ``act`` (None: the opening record) may be issued."""
    at = act.at if act is not None else cf.impounded_at
    return legal_time.local_day(at, cf.timezone) + timedelta(days=AMEND_DAYS)


def _check_issuer(user: User, act: CaseAct | None, cf: CaseFile, *, dated: bool = True) -> None:
    made_by = act.actor_role if act is not None else "pound_keeper"
    allowed = ISSUERS.get(made_by or "", ())
    if user.role not in allowed:
        raise NotPermitted(M_("a corrigendum of an act of the %(made_by)s is issued by the %(who)s; you are signed in "
                              "as %(role)s", made_by=M_(AUTHORITY.get(made_by or "", made_by or "")),
                              who=message_list([M_(AUTHORITY[r]) for r in allowed], M_(OR)),
                              role=M_(AUTHORITY.get(user.role, user.role))))
    last = last_day(act, cf)
    if dated and legal_time.local_day(clock.now(), cf.timezone) > last:
        raise Refused(M_("a corrigendum of this act could be issued until %(day)s; the record stands as it is",
                         day=last), then=STANDS)


STANDS = corrections.STANDS
"""The next step of a corrigendum refused: the act stands, and how it is changed instead."""


def _ways(act: CaseAct | None, cf: CaseFile) -> Message:
    """How an act that stands is changed instead: appeal, or review by the authority that made it."""
    authority = M_(AUTHORITY.get((act.actor_role if act is not None else "pound_keeper") or "", "secretary"))
    appeal_by = deadlines.appeal_last_day(cf)
    if appeal_by is not None:
        return M_("it is changed by appeal under Rule 130(e) proviso against the Panchayat's decision, by %(day)s, or "
                  "by review by the %(authority)s who made it", day=appeal_by, authority=authority)
    return M_("it is changed by appeal under Rule 130(e) proviso within %(days)s days of the Panchayat's decision, "
              "or by review by the %(authority)s who made it", days=cf.appeal_period_days, authority=authority)


def _reason(reason: Any) -> str:
    if reason is not None and not isinstance(reason, str):
        raise Refused(M_("the reason must be text"), {"reason": M_("not text")})
    text = " ".join((reason or "").split())
    if not text:
        raise Refused(M_("give the reason for the corrigendum (what was recorded wrongly)"),
                      {"reason": M_("this field is required")})
    if len(text) > REASON_LIMIT:
        raise Refused(M_("the reason is longer than %(limit)s characters", limit=REASON_LIMIT),
                      {"reason": M_("too long")})
    return text


def clean_reason(reason: Any) -> str:
    """The reason of a corrigendum, its spaces collapsed. Raises Refused: none, not text, or over
    :data:`REASON_LIMIT` characters (naming the field ``reason``)."""
    return _reason(reason)


def _amended_values(recorded: dict[str, str], values: Any) -> list[Amended]:
    if not isinstance(values, dict) or not values:
        raise Refused(M_("give the facts to amend, by field"), {"values": M_("this field is required")})
    found = []
    for name, value in values.items():
        if name not in recorded:
            raise Refused(M_("the act recorded no fact %(field)s; it recorded: %(known)s", field=str(name),
                             known=", ".join(recorded)), {str(name): M_("unknown field")})
        if not isinstance(value, (str, int, float, Decimal)) or isinstance(value, bool):
            raise Refused(M_("%(field)s: give the amended value as text", field=name), {name: M_("not text")})
        text = str(value).strip()
        textguard.check_one_line(text, name, M_("the amended value"))
        if text != recorded[name]:
            found.append(Amended(name, recorded[name], text))
    if not found:
        raise Refused(M_("nothing to amend: the values given are the ones recorded"),
                      {"values": M_("no fact differs from the record")})
    return found


# -- replaying an act -------------------------------------------------------------------------------

@dataclass
class Replayed:
    """What an act did, replayed: the course (compared as a whole) and the facts (compared by path)."""

    course: dict[str, Any]
    postings: list[tuple[str, str, str, Decimal]]
    file: dict[str, Any]
    refused: Rule130Error | None = None


def _disposition(cf: CaseFile) -> list[tuple[int, str]]:
    """Where each animal is, in kind only (names are facts a corrigendum may amend)."""
    if cf.release is not None:
        where = "released"
    elif cf.delivered_on is not None:
        where = "delivered"
    elif cf.interim is not None and cf.interim.returned_on is None:
        where = "interim_delivery"
    elif cf.sale is not None and cf.sale.returned_on is None:
        where = f"sold:{cf.sale.kind}:{cf.sale.day}"
    elif cf.dispatch is not None:
        where = f"dispatched:{cf.dispatch.send_to}:{cf.dispatch.day}"
    else:
        where = "pound"
    result = []
    for animal in cf.animals:
        gone = "died" if animal.died_on else "escaped" if animal.escaped_on else where
        result.append((animal.position, f"{gone}:{animal.gone_on() or ''}"))
    return result


def _observe(session: Session, case: Case, marks: dict[str, int], refused: Rule130Error | None = None) -> Replayed:
    session.flush()
    cf = casefile.load(case.file_json)
    events = [(row.kind, row.name, row.element_id) for row in session.scalars(
        select(CaseEvent).where(CaseEvent.case_id == case.id, CaseEvent.id > marks["event"],
                                CaseEvent.kind.not_in(("refusal",))).order_by(CaseEvent.id))]
    ready = sorted(session.scalars(select(CaseTask.element_id).where(
        CaseTask.case_id == case.id, CaseTask.state == tasklist.READY)))
    postings = [(e.from_account, e.to_account, e.kind, e.amount) for e in session.scalars(
        select(LedgerEntry).where(LedgerEntry.case_id == case.id, LedgerEntry.id > marks["ledger"])
        .order_by(LedgerEntry.id))]
    course = {"history": events, "ready": ready, "timers": dict(cf.timers),
              "next_timer_due": case.next_timer_due.isoformat() if case.next_timer_due else None,
              "status": case.status, "outcome": cf.outcome,
              "auctions": [(a.round, a.status, str(a.closed_on)) for a in cf.auctions],
              "documents": sorted(documents.due_keys(cf)),
              "postings": [(a, b, kind) for a, b, kind, _ in postings],
              "charges": (str(fees.fine(cf)), str(sum((a.feeding_per_day for a in cf.animals), ZERO))),
              "disposition": _disposition(cf)}
    return Replayed(course, postings, json.loads(casefile.dump(cf)), refused)


def _replay(session: Session, case: Case, act: CaseAct, data: dict[str, Any], subject: str | None) -> Replayed:
    """Do ``act`` again with the form ``data`` on the case as the act found it, at the act's
    instant, in a savepoint that is rolled back; what it did (or the refusal it met)."""
    marks = acts.marks(act)
    actor = session.get(User, act.actor_user_id) if act.actor_user_id is not None else None
    if actor is None:
        raise Refused(M_("the officer who recorded the act “%(act)s” is no longer known; it cannot be replayed",
                         act=M_(act.name)), then=STANDS)
    session.flush()
    savepoint = session.begin_nested()
    try:
        with clock.installed(clock.FixedClock(act.at)), append_only.replaying(session, case.id):
            # the rows the act and every later step wrote go (rolled back with the savepoint)
            session.execute(delete(CaseTask).where(CaseTask.case_id == case.id, CaseTask.id > marks["task"]))
            # ledger entries are never deleted: the act's and later ones are netted out by opposite entries
            book = ledger.CaseLedger(session, case, actor.id)
            later = list(session.scalars(select(LedgerEntry).where(
                LedgerEntry.case_id == case.id, LedgerEntry.id > marks["ledger"]).order_by(LedgerEntry.id)))
            reversed_ids = {e.reversal_of for e in ledger.entries(session, case.id) if e.reversal_of is not None}
            for entry in later:  # a reversal and its entry already net out
                if entry.reversal_of is None and entry.id not in reversed_ids:
                    book.post(entry.to_account, entry.from_account, entry.amount, kind="reversal",
                              clause=entry.clause, reversal_of=entry.id)
                elif entry.reversal_of is not None and entry.reversal_of <= marks["ledger"]:
                    book.post(entry.to_account, entry.from_account, entry.amount, kind="replay", clause=entry.clause)
            session.flush()
            marks = {**marks, "ledger": session.scalar(select(func.max(LedgerEntry.id)).where(
                LedgerEntry.case_id == case.id)) or 0}
            session.execute(delete(CaseDocument).where(CaseDocument.case_id == case.id,
                                                       CaseDocument.id > marks["document"]))
            session.execute(delete(CaseEvent).where(CaseEvent.case_id == case.id, CaseEvent.id > marks["event"]))
            # the "deadline near" reminders the act and later steps sent go too, so that the act
            # sends its own again (a notice whose auction's last day is near tells of it at once)
            session.execute(delete(DeadlineReminder).where(DeadlineReminder.case_id == case.id,
                                                           DeadlineReminder.sent_at >= act.at))
            alerts.forget_reminders(session, case.id)
            for row in session.scalars(select(CaseTask).where(CaseTask.case_id == case.id,
                                                              CaseTask.id <= marks["task"],
                                                              CaseTask.ended_at >= act.at)):
                row.state, row.ended_at, row.completed_by = tasklist.READY, None, None
            session.flush()
            live.take(session, case)
            acts.restore_columns(case, corrections.kept(act))
            case.held_incident_id = None
            session.flush()
            match: dict[str, Any] = {"objector": subject} if subject and act.element_id == "ut_decide_objection" else {}
            try:
                tasks.act(session, actor, case.id, act.element_id or "", data, **match)
            except Rule130Error as refused:
                return Replayed({}, [], {}, refused)
            return _observe(session, case, marks)
    finally:
        savepoint.rollback()
        session.info.get(live._PENDING, {}).pop(live._key(session, case.id), None)
        live.take(session, case)


def _differences(before: dict[str, Any], after: dict[str, Any]) -> list[Message]:
    words = {"history": M_("the steps that follow"), "ready": M_("the tasks reached"),
             "timers": M_("the timers and their instants"), "next_timer_due": M_("the timers and their instants"),
             "status": M_("the outcome"), "outcome": M_("the outcome"), "auctions": M_("the auction's course"),
             "documents": M_("the documents issued"), "postings": M_("the accounts moved"),
             "charges": M_("the fine and feeding"), "disposition": M_("what became of the cattle")}
    found: dict[str, Message] = {}
    for key, word in words.items():
        if before.get(key) != after.get(key):
            found.setdefault(str(word), word)
    return list(found.values())


def _flatten(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list):
        out = {}
        for index, item in enumerate(value):
            out.update(_flatten(item, f"{path}[{index}]"))
        return out
    return {path: value}


def _set(root: Any, path: str, old: Any, new: Any) -> bool:
    """Set ``path`` (``a.b[2].c``) of the JSON ``root`` to ``new`` where it holds ``old``."""
    parts: list[str | int] = []
    for piece in path.split("."):
        name, _, rest = piece.partition("[")
        if name:
            parts.append(name)
        for index in filter(None, rest.replace("]", "").split("[")) if rest else []:
            parts.append(int(index))
    node = root
    try:
        for part in parts[:-1]:
            node = node[part]
        if node[parts[-1]] != old:
            return False
        node[parts[-1]] = new
    except (KeyError, IndexError, TypeError):
        return False
    return True


# -- the plan ---------------------------------------------------------------------------------------

def plan(session: Session, user: User, case_ref: int | str, act_ref: int | str, values: Any) -> Plan:
    """Whether a corrigendum may amend ``values`` (``{field: amended text}``) of act ``act_ref`` of
    case ``case_ref`` (an act id, or :data:`OPENING`), and what it would do; changes nothing.

    Raises:
        NotFound: no such case in the user's scope, or no such act.
        NotPermitted: the user may not issue a corrigendum of this act (:data:`ISSUERS`).
        Refused: past :func:`last_day`; a field the act did not record, or none that differs; a
            decision's merits or reasons; an amended value the act's own checks refuse; or the rule
            would take another course with the amended facts (the refusal says the act stands and
            how it is changed instead).
    """
    case = cases.get_case(session, user, case_ref)
    cf = casefile.load(case.file_json)
    act = _act(session, case, act_ref)
    _check_issuer(user, act, cf)
    if case.held_incident_id is not None:
        raise Refused(M_("case %(number)s is held by an incident; an administrator must handle it first",
                         number=case.case_number),
                      then=M_("An administrator handles the incident; then the corrigendum can be issued."))
    if act is None:
        return _plan_opening(session, case, cf, values)
    if act.corrected_at is not None:
        raise Refused(M_("the act “%(act)s” was corrected (undone); there is nothing to amend", act=M_(act.name)),
                      then=M_("Amend the act recorded in its place, if that one is wrong."))
    if case.process_version_id != act.process_version_id:
        raise Refused(M_("the act “%(act)s” was recorded on another version of the process; it cannot be replayed",
                         act=M_(act.name)), then=STANDS)
    corrections.kept(act)  # refused, naming it, should its snapshot be let go (webapp.services.jobs.snapshots)
    event = _task_event(session, act)
    recorded = {k: str(v) for k, v in json.loads(event.detail_json or "{}").items()}
    amended = _amended_values(recorded, values)
    if act.element_id in corrections.DECISIONS:
        for item in amended:
            if item.field in MERITS:
                raise Refused(M_("a decision on the merits is never amended by corrigendum: the decision “%(act)s” "
                                 "stands; %(ways)s", act=M_(act.name), ways=_ways(act, cf)), {item.field: M_("the merits")})
            if item.field in REASONS:
                raise Refused(M_("a corrigendum does not change a decision's reasons: the decision “%(act)s” "
                                 "stands; %(ways)s", act=M_(act.name), ways=_ways(act, cf)), {item.field: M_("the reasons")})
    subject = session.scalar(select(CaseTask.subject).where(
        CaseTask.case_id == case.id, CaseTask.id <= acts.marks(act)["task"], CaseTask.element_id == act.element_id,
        CaseTask.ended_at == act.at).limit(1))
    data = {**recorded, **{item.field: item.new for item in amended}}
    as_recorded = _replay(session, case, act, dict(recorded), subject)
    if as_recorded.refused is not None:
        raise Refused(M_("the act “%(act)s” cannot be replayed as recorded (%(why)s); a corrigendum cannot be issued",
                         act=M_(act.name), why=as_recorded.refused.message), then=STANDS)
    wrote = [(row.kind, row.name, row.element_id) for row in session.scalars(
        select(CaseEvent).where(CaseEvent.case_id == case.id, CaseEvent.id > acts.marks(act)["event"],
                                CaseEvent.id <= (act.last_event_id or 0), CaseEvent.kind.not_in(("refusal",)))
        .order_by(CaseEvent.id))]
    if [w for w in wrote if w[0] != "document"] != [h for h in as_recorded.course["history"] if h[0] != "document"]:
        raise Refused(M_("the act “%(act)s” replayed as recorded does not do what it did then; a corrigendum cannot "
                         "be issued", act=M_(act.name)), then=STANDS)
    with_amendment = _replay(session, case, act, data, subject)
    if with_amendment.refused is not None:
        refused = with_amendment.refused
        raise Refused(M_("the amended facts are refused by the act's own checks: %(why)s", why=refused.message),
                      getattr(refused, "field_errors", None) or {})
    differ = _differences(as_recorded.course, with_amendment.course)
    if differ:
        raise Refused(M_("with the amended facts the rule would have taken another course (%(what)s): the act "
                         "“%(act)s” stands as recorded and a corrigendum cannot change it; %(ways)s",
                         what=message_list(differ), act=M_(act.name), ways=_ways(act, cf)),
                      {item.field: M_("changes what the rule does") for item in amended})
    old_file, new_file = _flatten(as_recorded.file), _flatten(with_amendment.file)
    changes = [(path, old_file[path], new_file.get(path)) for path in old_file
               if new_file.get(path) != old_file[path] and not path.startswith("timers")]
    changes += [(path, None, new_file[path]) for path in new_file if path not in old_file]
    result = Plan(case, act, act.name, act.at, act.element_id or "", amended, changes)
    _money(session, case, result, as_recorded.postings, with_amendment.postings, act)
    _finish(session, case, cf, result)
    return result


def _plan_opening(session: Session, case: Case, cf: CaseFile, values: Any) -> Plan:
    recorded = _opening_facts(cf)
    amended = _amended_values(recorded, values)
    facts = {**recorded, **{item.field: item.new for item in amended}}
    if facts["impounded_at"] != recorded["impounded_at"]:
        raise Refused(M_("the instant of impoundment sets every period and timer of the case: with another instant "
                         "the rule would take another course; the opening record stands; %(ways)s",
                         ways=_ways(None, cf)), {"impounded_at": M_("changes what the rule does")})
    for name in ("place_seized", "place_impounded", "nearest_village"):
        textguard.required_line(facts[name], M_(name.replace("_", " ")), name)
    tariff = {a.species: {"fine": a.fine, "feeding_per_day": a.feeding_per_day} for a in cf.animals}
    tariff = {**tariffs.for_case(session, get_row(session, Panchayat, case.panchayat_id), cf.impounded_at), **tariff}
    impounded = [a for a in cf.animals if a.born_on is None]
    records = _animal_records([{f: facts[f"animals.{a.position}.{f}"] for f in ANIMAL_FIELDS} for a in impounded],
                              tariff)
    for old, new in zip(impounded, records, strict=True):
        if (old.fine, old.feeding_per_day) != (new.fine, new.feeding_per_day):
            raise Refused(M_("animal %(position)s: as a %(species)s its fine and feeding would differ, and so "
                             "what the rule charges: the opening record stands; %(ways)s", position=old.position,
                             species=M_(new.species), ways=_ways(None, cf)),
                          {f"animals.{old.position}.species": M_("changes what the rule does")})
    changes: list[tuple[str, Any, Any]] = []
    for name in ("place_seized", "place_impounded", "nearest_village"):
        if facts[name] != recorded[name]:
            changes.append((name, recorded[name], facts[name]))
    for old, new in zip(impounded, records, strict=True):
        index = cf.animals.index(old)
        for name in ANIMAL_FIELDS:
            if getattr(old, name) != getattr(new, name):
                changes.append((f"animals[{index}].{name}", getattr(old, name), getattr(new, name)))
    result = Plan(case, None, "Cattle impounded", cf.impounded_at, "start_impounded", amended, changes)
    _finish(session, case, cf, result)
    return result


def _money(session: Session, case: Case, result: Plan, old: list[tuple[str, str, str, Decimal]],
           new: list[tuple[str, str, str, Decimal]], act: CaseAct) -> None:
    for (source, target, _kind, was), (_s, _t, _k, now) in zip(old, new, strict=True):
        delta = now - was
        if delta == 0:
            continue
        came_in = source in ledger.PARTIES
        if source not in ledger.PARTIES and target not in ledger.PARTIES:
            result.adjustments.append((source, target, delta) if delta > 0 else (target, source, -delta))
            continue
        party, account = (source, target) if came_in else (target, source)
        # more came in, or less was paid out, than was owed: the party is owed the difference; else it owes it
        refund = (delta < 0) if came_in else (delta > 0)
        result.owed.append(Owed(party=party, account=account, amount=abs(delta),
                                direction="refund" if refund else "collect", corrigendum=""))
    if result.adjustments or result.owed:
        later = session.scalar(select(LedgerEntry.id).where(
            LedgerEntry.case_id == case.id, LedgerEntry.id > acts.marks(act)["ledger"])
            .order_by(LedgerEntry.id).offset(len(old)).limit(1))
        if later is not None:
            raise Refused(M_("the amount was used by later steps of the case (ledger entry %(entry)s); a corrigendum "
                             "amends an amount only while no later step moved money: the act “%(act)s” stands; "
                             "%(ways)s", entry=later, act=M_(act.name), ways=_ways(act, casefile.load(case.file_json))),
                          then=STANDS)


def _finish(session: Session, case: Case, cf: CaseFile, result: Plan) -> None:
    """The amended case file, the documents it affects, and the ledger's invariants with it."""
    current = json.loads(case.file_json)
    for path, old, new in result.changes:
        _set(current, path, old, new)
    amended = casefile.load(json.dumps(current))
    amended.owed.extend(result.owed)
    result.amended_file = casefile.dump(amended)
    for row in session.scalars(select(CaseDocument).where(
            CaseDocument.case_id == case.id, CaseDocument.cancelled_at.is_(None), CaseDocument.language == "en",
            CaseDocument.kind.not_in(("correction_notice", "corrigendum_notice"))).order_by(CaseDocument.id)):
        if documents.rendered_now(session, case, cf, row) != documents.rendered_now(session, case, amended, row):
            result.reissue.append(row.number)
    rows = ledger.entries(session, case.id)
    extra = [LedgerEntry(from_account=a, to_account=b, amount=amount, kind="corrigendum_adjustment")
             for a, b, amount in result.adjustments]
    found = ledger.problems(rows + extra, closed=case.status == "completed", outcome=amended.outcome,
                            shortfall=amended.shortfall, expected=ledger.expectations(case, amended))
    if found:
        raise Refused(M_("the amended facts would leave the accounts wrong (%(why)s); the act stands; %(ways)s",
                         why=found[0].message, ways=_ways(result.act, cf)), then=STANDS)


# -- issuing ----------------------------------------------------------------------------------------

def issue(session: Session, user: User, case_ref: int | str, act_ref: int | str, values: Any,
          reason: Any) -> dict[str, Any]:
    """Issue a corrigendum of act ``act_ref`` of case ``case_ref`` amending ``values`` (module
    docstring), in the caller's transaction.

    Args:
        values: ``{field: amended value as text}``, e.g. ``{"amount": "15500.00"}``.
        reason: why (1 to 500 characters), e.g. "the bid was ₹15,500, typed as ₹16,000".
    Returns:
        :meth:`Plan.as_json` with ``number`` (the corrigendum's, e.g. ``RMP/2026/0001/C1``) and
        ``documents_reissued`` as ``[{"old", "new"}]``.
    Raises:
        NotFound, NotPermitted, Refused: see :func:`plan`; Refused also for a missing or too long reason.
    """
    text = _reason(reason)
    found = plan(session, user, case_ref, act_ref, values)
    case, now = found.case, clock.now()
    number = documents.next_number(session, case, "corrigendum_notice")
    cf_before = casefile.load(case.file_json)
    amended = casefile.load(found.amended_file)
    for owed in amended.owed:
        if owed.corrigendum == "":
            owed.corrigendum = number
    case.file_json = casefile.dump(amended)
    case.updated_at = now
    book = ledger.CaseLedger(session, case, user.id)
    book.element_id = found.element_id
    for source, target, amount in found.adjustments:
        book.post(source, target, amount, kind="corrigendum_adjustment", clause="reading: amending a clerical mistake",
                  memo=f"adjustment by corrigendum {number}", reason=text)
    reissued: list[dict[str, str]] = []
    for old_number in found.reissue:
        rows = list(session.scalars(select(CaseDocument).where(CaseDocument.case_id == case.id,
                                                               CaseDocument.number == old_number)))
        new_rows = documents.reissue(session, case, amended, rows, user, now, number, text)
        if new_rows:
            reissued.append({"old": old_number, "new": new_rows[0].number})
            session.add(CaseEvent(case_id=case.id, at=now, kind="document", name=documents.KINDS[new_rows[0].kind][0],
                                  element_id=found.element_id, actor_role=user.role, actor_user_id=user.id,
                                  detail_json=json.dumps(documents.history_detail(new_rows))))
    serial = sum(1 for row in cases.history(session, case) if row.kind == "corrigendum") + 1
    notice = documents.issue_corrigendum_notice(session, case, amended, user, now, {
        "serial": serial, "act": found.act_name, "act_at": found.act_at, "reason": text,
        "by": user.display_name or user.username,
        "fields": [_shown(f) for f in found.fields],
        "reissued": [(r["old"], r["new"]) for r in reissued],
        "owed": [{"party": o.party, "amount": o.amount, "direction": o.direction} for o in found.owed]})
    if notice:
        number = notice[0].number
        session.add(CaseEvent(case_id=case.id, at=now, kind="document", name=documents.KINDS["corrigendum_notice"][0],
                              element_id=found.element_id, actor_role=user.role, actor_user_id=user.id,
                              detail_json=json.dumps(documents.history_detail(notice))))
    day = legal_time.local_day(found.act_at, cf_before.timezone)
    result = {**found.as_json(), "number": number, "documents_reissued": reissued, "reason": text}
    session.add(CaseEvent(case_id=case.id, at=now, kind="corrigendum", name="Corrigendum issued",
                          element_id=found.element_id, actor_role=user.role, actor_user_id=user.id,
                          detail_json=json.dumps({**result, "amended": "; ".join(
                                                      f"{f.field}: {f.old} → {f.new}" for f in found.fields),
                                                  "changes": [list(c) for c in found.changes],
                                                  "message_i18n": message_json(M_(
                                                      "corrigendum %(number)s amended the act “%(act)s” of %(day)s: "
                                                      "%(reason)s", number=number, act=M_(found.act_name), day=day,
                                                      reason=text))}, default=str)))
    session.flush()
    ledger.check_invariants(session, case, case.status == "completed", cases.expectations(case))
    return result


MONEY_FIELDS = ("amount", "proceeds", "expenses", "amount_received", "security", "full_price")


def _shown(item: Amended) -> dict[str, Any]:
    """A fact amended as the notice shows it: the field (``fact``, and ``animal``, its position,
    for an animal of the opening record), amounts as Decimal rupees (printed as rupees)."""
    parts = item.field.split(".")
    animal, fact = (int(parts[1]), parts[2]) if len(parts) == 3 and parts[1].isdigit() else (None, item.field)
    shown: dict[str, Any] = {"label": item.field, "fact": fact, "animal": animal, "old": item.old, "new": item.new,
                             "money": False}
    if item.field in MONEY_FIELDS:
        with contextlib.suppress(ArithmeticError):
            shown.update(old=Decimal(item.old), new=Decimal(item.new), money=True)
    return shown


def settle(session: Session, user: User, case_ref: int | str, index: int | str) -> Case:
    """Record that the money owed by item ``index`` (from 1) of the case's :attr:`CaseFile.owed`
    was paid (a refund to the party) or received (collected from the party): the ledger entry is
    posted now between the party and the account named, and the item is settled today.

    Raises:
        NotFound: no such case in scope, or no such item. NotPermitted: not the secretary.
        Refused: the item was settled already.
    """
    case = cases.get_case(session, user, case_ref)
    if user.role not in SETTLERS:
        raise NotPermitted(M_("only the secretary, who keeps the accounts, records money paid or received under a "
                              "corrigendum; you are signed in as %(role)s", role=M_(AUTHORITY.get(user.role, user.role))))
    cf = casefile.load(case.file_json)
    text = str(index)
    number = int(text) if text.isascii() and text.isdigit() and len(text) < 6 else 0
    if not 0 < number <= len(cf.owed):
        raise NotFound(M_("no money owed %(index)s in case %(number)s", index=index, number=case.case_number))
    owed = cf.owed[number - 1]
    if owed.settled_on is not None:
        raise Refused(M_("this was recorded as settled on %(day)s", day=owed.settled_on),
                      then=M_("Nothing more is to be done: it is settled; a wrong ledger entry is undone by the "
                              "secretary's reversing entry."))
    now = clock.now()
    owed.settled_on = legal_time.local_day(now, cf.timezone)
    case.file_json = casefile.dump(cf)
    book = ledger.CaseLedger(session, case, user.id)
    kind = "corrigendum_refund" if owed.direction == "refund" else "corrigendum_collection"
    source, target = (owed.account, owed.party) if owed.direction == "refund" else (owed.party, owed.account)
    book.post(source, target, owed.amount, kind=kind, clause="reading: amending a clerical mistake",
              memo=f"{owed.direction} under corrigendum {owed.corrigendum}")
    session.add(CaseEvent(case_id=case.id, at=now, kind="act", name=("Refund paid under corrigendum"
                                                                     if owed.direction == "refund"
                                                                     else "Amount received under corrigendum"),
                          actor_role=user.role, actor_user_id=user.id,
                          detail_json=json.dumps({"corrigendum": owed.corrigendum, "party": owed.party,
                                                  "amount": f"{owed.amount:.2f}", "direction": owed.direction})))
    session.flush()
    ledger.check_invariants(session, case, case.status == "completed", cases.expectations(case))
    return case


def owed_words(owed: Owed) -> Message:
    """One item owed, in words: "₹500.00 to be refunded to the buyer (corrigendum …/C1)"."""
    if owed.direction == "refund":
        return M_("%(amount)s to be refunded to the %(party)s (corrigendum %(number)s)", amount=format_rupees(owed.amount),
                  party=M_(owed.party.replace("_", " ")), number=owed.corrigendum)
    return M_("%(amount)s to be collected from the %(party)s (corrigendum %(number)s)", amount=format_rupees(owed.amount),
              party=M_(owed.party.replace("_", " ")), number=owed.corrigendum)


__all__ = ["AMEND_DAYS", "ISSUERS", "OPENING", "Amended", "Plan", "issue", "last_day", "owed_words", "plan",
           "recorded_facts", "settle"]
