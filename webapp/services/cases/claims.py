"""The claims against a case's outcome that are not officer tasks: an objection (a claim of
ownership) filed during the notice period (Rule 130(a), (c)) and an appeal against the Panchayat's
decision (Rule 130(e) proviso).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from webapp.engine.execution import runtime
from webapp.errors import DeadlinePassed, Refused
from webapp.i18n import M_
from webapp.services.papers.appeal_words import objector_appealed
from webapp.services.people.scope import get_case
from webapp.services.running.case_run import open_run, require_role
from webapp.store.models import Case, User
from webapp.values import casefile, clock, legal_time, textguard
from webapp.values.casefile import Appeal, CaseFile, Objection, name_key
from webapp.values.deadlines import appeal_last_day


def file_objection(session: Session, user: User, case_id: int | str, objector: str) -> Case:
    """Record an objection (a claim of ownership) filed during the notice period (Rule 130(a), (c)).

    Raises:
        DeadlinePassed: after the end of the last day of the period (the message names it).
        Refused: no notice yet, no name, or the same person's claim already pending.
    """
    get_case(session, user, case_id)  # scope first: another Panchayat's case is "not found", not "forbidden"
    require_role(user, "secretary")
    objector = " ".join(textguard.required_line(objector, M_("the objector's name"), "objector").split())
    run = open_run(session, user, case_id)
    cf, now = run.cf, clock.now()
    if cf.notice is None:
        raise Refused(M_("no notice has been published yet; objections are received during the notice period"),
                      then=M_("The secretary publishes the notice first; objections are then received until its last "
                              "day."))
    if not legal_time.is_within(now, cf.notice.last_day, cf.timezone):
        raise DeadlinePassed(M_("the objection period ended on %(day)s; no objection is entertained after it "
                                "(Rule 130(a))", day=cf.notice.last_day), last_day=cf.notice.last_day.isoformat(),
                             then=M_("Nothing more can be done for a late objection: Rule 130(a) entertains none "
                                     "after the notice period. Any person may appeal against the Panchayat's "
                                     "decision once it is made."))
    filed = cf.objection_of(objector)  # the same name but for letter case and spaces is the same person
    if filed is not None:
        raise Refused(M_("%(name)s has already filed an objection in this case", name=filed.objector),
                      then=M_("Nothing more is needed: the claim is before the sarpanch. Another claimant files an "
                              "objection in their own name."))
    run.run()
    if not runtime.is_waiting_for_message(run.wf, "objection_filed"):
        raise Refused(M_("this case is not receiving objections now"),
                      then=M_("The case page shows what is due now; against the Panchayat's decision, any person may "
                              "appeal within the appeal period."))
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
        raise DeadlinePassed(M_("the appeal period ended on %(day)s", day=last), last_day=last.isoformat(),
                             then=M_("Nothing more can be done: the order stands, and Rule 130(e) allows no appeal "
                                     "after the appeal period."))


def file_appeal(session: Session, user: User, case_id: int | str, appellant: str) -> Case:
    """Record an appeal against the Panchayat's decision (Rule 130(e) proviso); any person may appeal.
    The appeal keeps which decision it is against: the order that the auction stand, or the
    Panchayat's order on the objection of whom (:mod:`webapp.services.papers.appeal_words`).

    Raises:
        DeadlinePassed: after the last day of the appeal period (named).
        Refused: no decision yet, an appeal already pending or decided, or an objector whose own claim
            stands proved (an objector appeals only against the decision on their own claim).
    """
    get_case(session, user, case_id)  # scope first: another Panchayat's case is "not found", not "forbidden"
    require_role(user, "secretary")
    appellant = textguard.required_line(appellant, M_("the appellant's name"), "appellant")
    case = get_case(session, user, case_id)
    if case.status != "running":  # a case closed by the appeal timer: a late appeal still names the last day
        _check_appeal_deadline(casefile.load(case.file_json), clock.now())
    run = open_run(session, user, case_id)
    cf, now = run.cf, clock.now()
    run.run()
    if cf.decision_on is None:
        raise Refused(M_("the Panchayat has made no decision in this case yet; an appeal lies against its decision"),
                      then=M_("The sarpanch decides first; the secretary can record an appeal once the decision is "
                              "recorded."))
    _check_appeal_deadline(cf, now)
    pending = cf.pending_appeal()
    if pending is not None:
        raise Refused(M_("the appeal of %(name)s is pending; one appeal at a time", name=pending.appellant),
                      then=M_("The appellate authority decides the pending appeal first; nothing more can be filed "
                              "until then."))
    if cf.final_on is not None:
        raise Refused(M_("the appeal has been decided and the outcome is final") if any(a.decision for a in cf.appeals)
                      else M_("the outcome became final on %(day)s", day=cf.final_on),
                      then=M_("Nothing more can be done: the outcome is final (Rule 130(e) proviso)."))
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
                             against=against,
                             objector=objector_appealed(cf, appellant) if against == "ownership" else None))
    if runtime.is_waiting_for_message(run.wf, "appeal_filed"):
        runtime.deliver_message(run.wf, "appeal_filed", {"appellant": appellant})
    run.event("task", "Appeal filed", element_id="ice_appeal_filed", actor_role=user.role,
              detail={"appellant": appellant})
    run.run()
    run.notify(["appellate_authority"], "appeal_filed", appellant=appellant)
    run.save()
    return run.case
