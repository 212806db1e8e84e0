"""Replacing a wrong receiving officer (issue 30, item 2; docs/RULE130.md "A wrong receiving officer").

The sarpanch sends the unsold cattle to a receiving officer (Rule 130(b) proviso). When the officer
named is the wrong one, the secretary names the right one, until the officer named has acted: the
remittance (the sale price and the expenses of sale) is that officer's act, and once it is recorded
the officer stays the one who sold the cattle. In one transaction, at one instant (:func:`replace`):

1. the case file's dispatch names the new officer, the case and its task "Record remittance" go to
   them (the task is released if the old officer held it), and the old officer no longer sees it;
2. the letter sending the cattle for sale is cancelled (kept, marked CANCELLED with the reason)
   and issued again, under a new number, to the new officer;
3. the old officer is told that the case was taken from them and the new one that it was sent to
   them, both with the reason;
4. a ``receiver_replaced`` row in the case history (and so in the hash-chained audit trail) names
   both officers, by name and user name, and the reason.

Nothing about the money, the deadlines or the dispatch day changes: the cattle were sent on the
day the sarpanch decided, and the service level of the remittance counts from it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from webapp.errors import Refused
from webapp.i18n import M_, message_json
from webapp.services.people import users
from webapp.services.people.scope import get_case
from webapp.services.running.case_run import CaseRun, check_after_impoundment, require_role
from webapp.store.models import Case, CaseDocument, CaseTask, User
from webapp.values import clock, legal_time, textguard

REASON_LIMIT = 500
REPLACED = "receiver_replaced"  # the history row's kind
TOLD_OLD = "receiver_replaced_old"  # the notification templates (webapp.services.notify.notifications)
TOLD_NEW = "receiver_replaced_new"


def _reason(reason: Any) -> str:
    if reason is not None and not isinstance(reason, str):
        raise Refused(M_("the reason must be text"), {"reason": M_("not text")})
    text = " ".join((reason or "").split())
    if not text:
        raise Refused(M_("give the reason for naming another receiving officer (what was wrong)"),
                      {"reason": M_("this field is required")})
    if len(text) > REASON_LIMIT:
        raise Refused(M_("the reason is longer than %(limit)s characters", limit=REASON_LIMIT),
                      {"reason": M_("too long")})
    textguard.check_one_line(text, "reason", M_("the reason"))
    return text


def replaceable(cf: Any) -> Any:
    """The refusal (a :class:`Message`) that stands against replacing the receiving officer of the
    case file ``cf`` now, or None when the secretary may: the cattle must have been sent to a
    receiving officer who has not yet recorded the remittance."""
    dispatch = cf.dispatch
    if dispatch is None:
        return M_("the cattle were not sent to a receiving officer; the sarpanch names one when deciding the unsold "
                  "cattle (Rule 130(b) proviso)")
    if dispatch.remitted_on is not None or dispatch.proceeds is not None:
        return M_("%(receiver)s recorded the remittance on %(day)s: the officer who sold the cattle stays named; a "
                  "wrong amount is put right by a correction of the remittance", receiver=dispatch.receiver,
                  day=dispatch.remitted_on)
    return None


def replace(session: Session, user: User, case_ref: int | str, receiver: Any, reason: Any) -> Case:
    """Name ``receiver`` (a user name, as the page's list sends it) as the receiving officer of case
    ``case_ref`` in place of the one named (module docstring).

    Args:
        receiver: the user name of one of :func:`webapp.services.people.users.receiving_officers`.
        reason: why (1 to 500 characters, one line), e.g. "Kishanpura's officer is on leave".
    Returns:
        the case.
    Raises:
        NotFound: no such case in the user's scope. NotPermitted: not the secretary.
        Refused: the case is closed or held; the cattle were not sent to a receiving officer, or the
            officer named has recorded the remittance; no receiver given, one who may not take the
            case, the one already named; a missing or too long reason.
    """
    case = get_case(session, user, case_ref)  # scope first: another Panchayat's case is "not found"
    require_role(user, "secretary")
    text = _reason(reason)
    if case.status != "running":
        raise Refused(M_("case %(number)s is closed (%(outcome)s)", number=case.case_number,
                         outcome=M_(case.outcome.replace("_", " "))),
                      then=M_("Nothing more can be done: a closed case keeps the officers it had."))
    run = CaseRun(session, case, user)  # not an act to correct: naming the officer again is the remedy
    check_after_impoundment(run.cf, clock.now())
    run.run()  # timers due first (raises CaseHeld for a held case)
    cf = run.cf
    why_not = replaceable(cf)
    if why_not is not None:
        raise Refused(why_not, then=M_("The secretary can name another receiving officer only while the one named "
                                       "has not recorded the remittance; after that, a corrigendum can amend the "
                                       "names and amounts."))
    dispatch = cf.dispatch
    assert dispatch is not None  # replaceable() said so
    wanted = receiver.strip().lower() if isinstance(receiver, str) else ""
    if not wanted:
        raise Refused(M_("choose the receiving officer from the list"), {"receiver": M_("this field is required")})
    choices = users.receiving_officers(session, cf.case_number)
    new = next((u for u in choices if u.username.lower() == wanted), None)
    if new is None:
        raise Refused(M_("%(receiver)s is not one of the receiving officers who may take this case; choose one "
                         "from the list: %(choices)s", receiver=receiver,
                         choices=", ".join(f"{u.display_name} ({u.username})" for u in choices) or "—"),
                      {"receiver": M_("not a receiving officer who may take this case")})
    if new.id == dispatch.receiver_user_id:
        raise Refused(M_("%(receiver)s is already the receiving officer of this case", receiver=new.display_name),
                      {"receiver": M_("already named")})
    old_name, old_id = dispatch.receiver, dispatch.receiver_user_id
    old = session.get(User, old_id) if old_id is not None else None
    old_label = f"{old_name} ({old.username})" if old is not None else old_name
    new_label = f"{new.display_name} ({new.username})"
    day = legal_time.local_day(clock.now(), cf.timezone).isoformat()
    # the officer named hears it while still named (the notification goes to the case's receiving officer)
    run.notify(["receiving_officer"], TOLD_OLD, new=new_label, reason=text, officer=user.display_name or user.username)
    dispatch.receiver, dispatch.receiver_user_id = new.display_name, new.id
    run.notify(["receiving_officer"], TOLD_NEW, old=old_label, reason=text, officer=user.display_name or user.username)
    for row in session.scalars(select(CaseTask).where(CaseTask.case_id == case.id, CaseTask.lane == "receiving_officer",
                                                      CaseTask.ended_at.is_(None))):
        row.claimed_by = row.claimed_at = row.assigned_to = row.assigned_by = row.assigned_at = None
    in_force = (CaseDocument.case_id == case.id, CaseDocument.kind == "dispatch_letter",
                CaseDocument.cancelled_at.is_(None))
    with session.no_autoflush:  # written now (the documents are numbered from the stored rows); the
        # case row is written once, by save()
        letters = sorted(set(session.scalars(select(CaseDocument.number).where(*in_force))))
        session.execute(update(CaseDocument).where(*in_force).values(
            cancelled_at=clock.now(), cancelled_by=user.id,
            cancel_reason=f"receiving officer replaced by {new_label}: {text}"), execution_options={
            "synchronize_session": False})
    run.event(REPLACED, "Receiving officer replaced", actor_role=user.role,
              detail={"from": old_label, "to": new_label, "reason": text, "day": day,
                      "documents_cancelled": letters,
                      "message_i18n": message_json(M_(
                          "the receiving officer %(old)s was replaced by %(new)s: %(reason)s",
                          old=old_label, new=new_label, reason=text))})
    run.forget_documents({"dispatch_letter"})  # issued again, to the new officer, by save()
    run.save()
    return run.case
