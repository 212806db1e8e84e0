"""Correcting a clerical mistake: an act put back exactly as if it had not been recorded.

The reading (docs/RULE130.md, "Correcting a clerical mistake"): an officer who recorded the wrong
animal, amount, name or act may have it corrected. A correction names the act and gives a reason;
it is made by the roles :data:`CORRECTORS` allows for the role that made the act, while the case
stands as the act left it (no later act, timer or correction on it) and by the last day of
:data:`CORRECTION_DAYS` after the act's day — a decision on the merits (an order on an objection,
the order that the auction stand, the decision on unsold cattle, the appellate authority's
decision) only by the same authority and on the day it was made: a change of mind on the merits
is for the appeal of Rule 130(e) proviso, not a correction.

A correction (:func:`correct`), in one transaction at one instant:

1. puts the case row back as the act found it (:mod:`webapp.services.running.acts`): the engine state
   with its tasks and timers, the case file, status and outcome; the task rows the act closed are
   open again with their holders, and those it opened are gone (their tasks are not reached yet);
2. reverses every ledger entry the act posted with a reversing entry (nothing is deleted;
   :mod:`webapp.services.money.ledger`), and checks the ledger's invariants;
3. marks every document the act issued cancelled (kept as issued, shown and printed with the
   word CANCELLED, the reason and the day; :mod:`webapp.services.papers.documents`);
4. tells the roles that were told of the act, and the secretary;
5. issues a notice of correction (English and Hindi: the act, the reason, the documents cancelled,
   the entries reversed) and writes a ``correction`` row into the case history (and so into the
   hash-chained audit trail).

An act whose effects left the Panchayat cannot be corrected (:func:`check`): money paid out to a
person by it, or cattle handed over by it (sold, released, delivered, sent to a receiving officer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from webapp.errors import CORRIGENDUM, INCIDENT_FIRST, NotFound, NotPermitted, Refused
from webapp.i18n import M_, N_, OR, Message, message_json, message_list
from webapp.i18n.formats import format_rupees
from webapp.services.cases import cases
from webapp.services.money import ledger
from webapp.services.notify import notifications
from webapp.services.papers import documents
from webapp.services.running import acts, live
from webapp.services.tasks import tasklist
from webapp.store.models import Case, CaseAct, CaseDocument, CaseEvent, CaseTask, LedgerEntry, Notification, User
from webapp.values import casefile, clock, legal_time
from webapp.values.casefile import CaseFile
from webapp.values.deadlines import appeal_last_day

CORRECTION_DAYS = 7  # calendar days after the act's day (local) within which it may be corrected
# the role that made the act -> the roles that may correct it
CORRECTORS: dict[str, tuple[str, ...]] = {
    "pound_keeper": ("pound_keeper", "secretary"),
    "secretary": ("secretary",),
    "receiving_officer": ("receiving_officer", "secretary"),
    "sarpanch": ("sarpanch",),
    "appellate_authority": ("appellate_authority",),
}
# decisions on the merits: corrected only by the same authority, on the day they were made
DECISIONS = ("ut_decide_objection", "ut_order_stand", "ut_decide_unsold", "ut_decide_appeal")
QUIET = ("notification", "refusal", "document")  # history rows that do not move a case on
REASON_LIMIT = 500
VERSION_MOVED = N_("the case was moved to another version of the process")
ACT_CORRECTED = "act_corrected"  # the notification template (webapp.services.notify.notifications)
LET_GO = N_("the case as the act “%(act)s” found it is no longer kept: it is let go once the act can no longer be "
            "corrected or amended")
STANDS = M_("The act stands as recorded: it is changed by appeal under Rule 130(e) against the Panchayat's "
            "decision, or by review by the authority that made the order.")
"""The next step when an act can be neither corrected nor amended: it stands, and how it is changed instead."""


@dataclass
class Plan:
    """What a correction of ``act`` does: the entries it reverses, the documents it cancels (each
    language version), the task rows it opens again, the roles it tells, and the case file it puts
    back (``before``)."""

    act: CaseAct
    entries: list[LedgerEntry]
    documents: list[CaseDocument]
    reopened: list[CaseTask]
    roles: list[str]
    before: CaseFile

    @property
    def numbers(self) -> list[str]:
        """The numbers of the documents it cancels, in the order issued."""
        return list(dict.fromkeys(row.number for row in self.documents))


def get_act(session: Session, case: Case, act_id: int | str) -> CaseAct:
    """The act ``act_id`` of ``case`` (the caller has checked the case's scope).

    Raises:
        NotFound: no such act in this case.
    """
    text = str(act_id)
    act = session.get(CaseAct, int(text)) if text.isascii() and text.isdigit() and 0 < int(text) < 2**31 else None
    if act is None or act.case_id != case.id:
        raise NotFound(M_("no act %(act)s in case %(number)s", act=act_id, number=case.case_number))
    return act


def kept(act: CaseAct) -> bytes:
    """The case as ``act`` found it (``case_act.before``), which a correction puts back and a
    corrigendum replays the act on.

    Raises:
        Refused: it was let go (:data:`LET_GO`, then :data:`STANDS`): the housekeeping drops it once
            the act's last day for a corrigendum has passed (webapp.services.jobs.snapshots), so the
            windows refuse such an act first; this names the reason should a clock ever disagree.
    """
    if act.before is None:
        raise Refused(M_(LET_GO, act=M_(act.name)), then=STANDS)
    return act.before


def is_decision(act: CaseAct) -> bool:
    """Whether ``act`` is a decision on the merits (:data:`DECISIONS`). The order of interim delivery
    on security is made at the decision on an objection but decides no claim (Rule 130(c)
    Explanation): it is not one (:data:`webapp.services.running.acts.INTERIM_DELIVERY`)."""
    return act.element_id in DECISIONS and act.name != acts.INTERIM_DELIVERY


def _by_appeal(cf: CaseFile) -> Message:
    """The next step of a decision that can no longer be corrected: the order stands, and it is changed
    by appeal within the appeal period M (Rule 130(e) proviso), naming its days and last day while it
    runs; once it has ended, a lawful dead end that says so."""
    last = appeal_last_day(cf)
    if last is not None and legal_time.local_day(clock.now(), cf.timezone) <= last:
        return M_("The order stands; it is changed by appeal to the Samiti within %(days)s days (until %(day)s): "
                  "the secretary records the appeal.", days=cf.appeal_period_days, day=last)
    return M_("The order stands: the appeal period has ended, and the rule allows no other change to it.")


def last_day(act: CaseAct, tz: str) -> date:
    """The last day (local calendar date) on which ``act`` may be corrected."""
    day = legal_time.local_day(act.at, tz)
    return day if is_decision(act) else day + timedelta(days=CORRECTION_DAYS)


def check(session: Session, user: User, case: Case, act: CaseAct) -> Plan:
    """Whether ``user`` may correct ``act`` of ``case`` now, and what the correction would do.

    Raises:
        NotPermitted: the user's role may not correct an act of the role that made it.
        Refused: the act was corrected already; the case moved on after it (a later act, timer,
            correction or version move); the last day for correcting it has passed; the case is
            held by an incident; or the act's effects left the Panchayat (money paid out to a
            person, cattle handed over) — each message says what to do instead.
    """
    cf_now = casefile.load(case.file_json)
    allowed = CORRECTORS.get(act.actor_role or "", ())
    if user.role not in allowed:
        raise NotPermitted(M_("an act of the %(made_by)s is corrected by the %(who)s; you are signed in as %(role)s",
                              made_by=M_((act.actor_role or "").replace("_", " ")),
                              who=message_list([M_(r.replace("_", " ")) for r in allowed], M_(OR)),
                              role=M_(user.role.replace("_", " "))))
    if is_decision(act) and act.actor_user_id != user.id:
        raise NotPermitted(M_("a decision is corrected only by the officer who made it; a decision on the merits "
                              "is changed by appeal (Rule 130(e) proviso)"), then=_by_appeal(cf_now))
    if act.corrected_at is not None:
        raise Refused(M_("the act “%(act)s” was already corrected", act=M_(act.name)), then=CORRIGENDUM)
    if case.held_incident_id is not None:
        raise Refused(M_("case %(number)s is held by an incident; an administrator must handle it first",
                         number=case.case_number), then=INCIDENT_FIRST)
    later = session.scalar(select(CaseEvent.name).where(
        CaseEvent.case_id == case.id, CaseEvent.id > (act.last_event_id or 0), CaseEvent.kind.not_in(QUIET))
        .order_by(CaseEvent.id).limit(1))
    if later is not None or case.process_version_id != act.process_version_id:
        raise Refused(M_("the case moved on after the act “%(act)s” (next: “%(next)s”); only the latest act of a "
                         "case can be corrected", act=M_(act.name), next=M_(later or VERSION_MOVED)), then=CORRIGENDUM)
    today = legal_time.local_day(clock.now(), cf_now.timezone)
    last = last_day(act, cf_now.timezone)
    if today > last:
        if is_decision(act):
            raise Refused(M_("a decision can be corrected only on the day it was made (%(day)s); a decision on the "
                             "merits is changed by appeal (Rule 130(e) proviso)", day=last), then=_by_appeal(cf_now))
        raise Refused(M_("the act “%(act)s” could be corrected until %(day)s", act=M_(act.name), day=last),
                      then=CORRIGENDUM)
    marks = acts.marks(act)
    entries = list(session.scalars(select(LedgerEntry).where(
        LedgerEntry.case_id == case.id, LedgerEntry.id > marks["ledger"]).order_by(LedgerEntry.id)))
    before = casefile.load(acts.before_values(kept(act))["file_json"])
    paid, handed = _left(entries, before, cf_now)
    if paid is not None:
        raise Refused(M_("the act “%(act)s” %(what)s; money that has left the Panchayat "
                         "is not taken back by a correction: record its recovery (the secretary reverses the entry "
                         "once the money is back) or, against a decision, appeal", act=M_(act.name), what=paid),
                      then=M_("The secretary can post a reversing entry once the money is back; a corrigendum can "
                              "amend the names and amounts; a decision is changed by appeal."))
    if handed is not None:
        raise Refused(M_("the act “%(act)s” %(what)s; cattle that have left the pound are not brought back by a "
                         "correction: record what happens next in the case, or, against a decision, appeal",
                         act=M_(act.name), what=handed),
                      then=M_("Record what happens next to the cattle in the case; a corrigendum can amend the names "
                              "and amounts; a decision is changed by appeal."))
    documents = list(session.scalars(select(CaseDocument).where(
        CaseDocument.case_id == case.id, CaseDocument.id > marks["document"], CaseDocument.cancelled_at.is_(None))
        .order_by(CaseDocument.id)))
    reopened = list(session.scalars(select(CaseTask).where(
        CaseTask.case_id == case.id, CaseTask.id <= marks["task"], CaseTask.ended_at == act.at,
        CaseTask.state != tasklist.READY)))
    told = session.scalars(select(User.role).join(Notification, Notification.user_id == User.id).where(
        Notification.case_id == case.id, Notification.id > marks["notification"]).distinct())
    roles = sorted({*told, act.actor_role or "", "secretary"} - {""})
    return Plan(act, [e for e in entries if e.reversal_of is None], documents, reopened, roles, before)


def _left(entries: list[LedgerEntry], before: CaseFile, after: CaseFile) -> tuple[Message | None, Message | None]:
    """What of an act's effects left the Panchayat, in words: (the money it paid out to a person,
    the cattle it handed over), each None when it did not; ``entries`` are the ledger entries it
    posted, ``before`` and ``after`` the case file as it found and left it."""
    paid = [entry for entry in entries if entry.to_account in ledger.PARTIES and entry.reversal_of is None]
    money = None
    if paid:
        total = sum((entry.amount for entry in paid), Decimal("0.00"))
        money = M_("paid %(amount)s to the %(party)s", amount=format_rupees(total),
                   party=M_(paid[0].to_account.replace("_", " ")))
    return money, _handed_over(before, after)


def cannot_be_undone(session: Session, case_id: int) -> list[Message]:
    """For the check step of an act (webapp.web.pages.check), called inside the transaction that
    applied the act and is then rolled back (webapp.services.running.uow.preview): what no
    correction could undo once the act is confirmed, judged by the same rule :func:`check` applies
    to the act just applied — money it paid out, cattle it handed over (the rule, not a list of
    acts, decides) — and, for a decision on the merits, that it can be corrected only today. Empty
    when a correction could undo it all (or the call recorded no act: a correction itself)."""
    act = acts.latest(session, case_id)
    case = session.get(Case, case_id)
    if act is None or case is None or act.at != clock.now():
        return []
    entries = list(session.scalars(select(LedgerEntry).where(
        LedgerEntry.case_id == case_id, LedgerEntry.id > acts.marks(act)["ledger"]).order_by(LedgerEntry.id)))
    before = casefile.load(acts.before_values(kept(act))["file_json"])
    found = [M_("once you confirm, this act has %(what)s: no correction can undo that; a mistake can then only be "
                "amended where it changes nothing the rule does", what=what)
             for what in _left(entries, before, casefile.load(case.file_json)) if what is not None]
    if not found and is_decision(act):
        found.append(M_("a decision on the merits can be corrected only today, by the officer who made it; from "
                        "tomorrow it stands and is changed by appeal (Rule 130(e) proviso)"))
    return found


def _handed_over(before: CaseFile, after: CaseFile) -> Message | None:
    """What the act did with the cattle that cannot be undone, in words, or None."""
    if after.sale is not None and before.sale is None:
        return M_("sold the cattle to %(buyer)s, who took them on %(day)s", buyer=after.sale.buyer, day=after.sale.day)
    if after.interim is not None and before.interim is None:
        return M_("delivered the cattle to %(objector)s on %(day)s", objector=after.interim.objector,
                  day=after.interim.day)
    if after.release is not None and before.release is None:
        return M_("released the cattle to their owner %(owner)s on %(day)s", owner=after.release.owner,
                  day=after.release.day)
    if after.delivered_on is not None and before.delivered_on is None and not _stood_in(before):
        return M_("delivered the cattle to their owner on %(day)s", day=after.delivered_on)
    if after.dispatch is not None and before.dispatch is None:
        return M_("sent the cattle to %(receiver)s on %(day)s", receiver=after.dispatch.receiver,
                  day=after.dispatch.day)
    return None


def _stood_in(before: CaseFile) -> bool:
    """Whether the delivery to the owner under (d) that followed ``before`` delivered no cattle:
    a receiving officer had sold them (their remittance stands in for them) or the objector who held
    them on security kept them (the forfeited security stands in): money was settled, nothing was
    handed over (handlers/settlement.py, ``settlement.deliver_to_objector``; RULE130.md (d), reading).
    Money paid out by it is refused as such (:func:`check`)."""
    sold = before.dispatch is not None and before.dispatch.net is not None
    kept = before.interim is not None and before.interim.forfeited and not before.interim.refunded
    return sold or kept


def _reason(reason: Any) -> str:
    if reason is not None and not isinstance(reason, str):
        raise Refused(M_("the reason must be text"), {"reason": M_("not text")})
    text = " ".join((reason or "").split())
    if not text:
        raise Refused(M_("give the reason for the correction (what was recorded wrongly)"),
                      {"reason": M_("this field is required")})
    if len(text) > REASON_LIMIT:
        raise Refused(M_("the reason is longer than %(limit)s characters", limit=REASON_LIMIT),
                      {"reason": M_("too long")})
    return text


def correct(session: Session, user: User, case_ref: int | str, act_id: int | str, reason: Any) -> Case:
    """Correct act ``act_id`` of case ``case_ref``: put the case back as the act found it, reverse
    its ledger entries, cancel its documents, tell who was told, and record it (module docstring).

    Args:
        reason: why (1 to 500 characters), e.g. "the death was recorded for the wrong case".
    Returns:
        the case, as it was before the act.
    Raises:
        NotFound: no such case in the user's scope, or no such act in it.
        NotPermitted, Refused: see :func:`check`; Refused also for a missing or too long reason,
            or a reversal that would break a ledger invariant.
    """
    case = cases.get_case(session, user, case_ref)
    act = get_act(session, case, act_id)
    text = _reason(reason)
    cases.fire_due_first(session, case)  # a timer due at this instant fired first: the case may have moved on
    plan = check(session, user, case, act)
    now = clock.now()
    tz = plan.before.timezone
    # The task rows the act closed are open again, with their holders, and those it added go: the
    # engine state put back holds their tasks as not yet reached, under the same task ids, and the
    # task table is the engine's projection, not a record (the history is). Written before the
    # case row, so the task table's re-sync at the next flush finds them so (webapp.services.running.uow).
    for row in plan.reopened:
        row.state, row.ended_at, row.completed_by = tasklist.READY, None, None
    session.execute(delete(CaseTask).where(CaseTask.case_id == case.id, CaseTask.id > acts.marks(act)["task"]))
    session.flush()
    live.take(session, case)  # the instance this process kept is of the state being replaced
    restored = acts.restore_columns(case, kept(act))
    case.updated_at = now
    book = ledger.CaseLedger(session, case, user.id)
    reversals = []
    for entry in plan.entries:
        book.element_id = entry.element_id
        reversals.append(book.post(entry.to_account, entry.from_account, entry.amount, kind="reversal",
                                   clause=entry.clause, memo=f"reversal of entry {entry.id} ({entry.kind})",
                                   reversal_of=entry.id, reason=text))
    for document in plan.documents:
        document.cancelled_at, document.cancelled_by, document.cancel_reason = now, user.id, text
    session.flush()
    try:
        ledger.check_invariants(session, case, restored["status"] == "completed", cases.expectations(case))
    except ledger.InvariantBroken as broken:
        raise Refused(M_("the act “%(act)s” cannot be corrected: %(why)s", act=M_(act.name), why=broken.message),
                      then=CORRIGENDUM) from None
    day = legal_time.local_day(act.at, tz)
    event = CaseEvent(case_id=case.id, at=now, kind="correction", name="Act corrected", element_id=act.element_id,
                      actor_role=user.role, actor_user_id=user.id,
                      detail_json=json.dumps({"act": act.id, "act_name": act.name, "act_at": act.at.isoformat(),
                                              "reason": text, "entries_reversed": [e.id for e in plan.entries],
                                              "reversing_entries": [r.id for r in reversals],
                                              "documents_cancelled": plan.numbers, "told": plan.roles,
                                              "message_i18n": message_json(M_(
                                                  "the act “%(act)s” of %(day)s was corrected: %(reason)s",
                                                  act=M_(act.name), day=day, reason=text))}))
    session.add(event)
    notice = documents.issue_correction_notice(
        session, case, plan.before, user, now,
        {"act_id": act.id, "act": act.name, "act_at": act.at, "reason": text, "by": user.display_name or user.username,
         "cancelled": plan.numbers, "reversed": [(e.amount, e.from_account, e.to_account) for e in plan.entries]})
    if notice:
        session.add(CaseEvent(case_id=case.id, at=now, kind="document", name=documents.KINDS["correction_notice"][0],
                              element_id=act.element_id, actor_role=user.role, actor_user_id=user.id,
                              detail_json=json.dumps(documents.history_detail(notice))))
    notifications.notify(session, case, plan.roles, ACT_CORRECTED, exclude_user_id=user.id, task=act.name,
                         day=day.isoformat(), officer=user.display_name or user.username, reason=text)
    session.flush()
    act.corrected_at, act.corrected_by, act.correction_reason, act.correction_event_id = now, user.id, text, event.id
    session.flush()
    return case


def correctable(session: Session, user: User, case: Case) -> tuple[CaseAct | None, Any]:
    """The case's latest act and whether ``user`` may correct it now: ``(act, None)`` when they
    may, ``(act, refusal)`` when not (the refusal's message says why), ``(None, None)`` when the
    case has no act to correct."""
    act = acts.latest(session, case.id)
    if act is None:
        return None, None
    try:
        check(session, user, case, act)
    except (NotPermitted, Refused) as refused:
        return act, refused
    return act, None
