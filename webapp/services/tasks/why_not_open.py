"""Why an officer's task is not open: from the case file, a message naming what must happen first
and, where a period is still running, its last day (RULE130.md asks this of every refusal).

:func:`why_not_open` answers for a task by its element id; :func:`unsold_withdrawn` says why the
sale of the cattle an auction left unsold was withdrawn (the rule checks of
:mod:`webapp.services.tasks.rules` refuse with the same words).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from webapp.i18n import M_, message_list
from webapp.values import legal_time
from webapp.values.casefile import CaseFile
from webapp.values.deadlines import appeal_last_day


def unsold_withdrawn(cf: CaseFile) -> Any | None:
    """Why the sale of the cattle an auction left unsold was withdrawn (RULE130.md (b) proviso and (c)
    Explanation, readings): delivered on security, or an objector's ownership proved while they are
    in the pound; None when neither holds (the caller names the day it was withdrawn)."""
    if cf.interim is not None and cf.interim.returned_on is None:
        return M_("the cattle were delivered to %(name)s on security on %(day)s; they cannot be sold or sent for sale",
                  name=cf.interim.objector, day=cf.interim.day)
    proved = next((o for o in cf.objections if o.decision == "proved"), None)
    if proved is not None and cf.sale is None and cf.dispatch is None:
        return M_("the ownership of %(name)s was proved on %(day)s; the unsold cattle go to the owner and are not "
                  "sold or sent for sale", name=proved.objector, day=proved.decided_on)
    return None


def why_not_open(element_id: str, cf: CaseFile, at: datetime, objector: str | None = None) -> Any | None:
    """Why the officer's task ``element_id`` (e.g. ``ut_order_stand``) is not open in the case at
    instant ``at`` — for "Decide ownership claim", the one of ``objector``'s claim — from the case
    file: a message naming what must happen first and, where a period is still running, its last
    day (a local date), as RULE130.md asks of every refusal. None when the case file gives no
    reason (the caller says only that the task is not open).
    """
    today = legal_time.local_day(at, cf.timezone)
    notice, auction = cf.notice, (cf.auctions[-1] if cf.auctions else None)
    if element_id == "ut_publish_notice":
        if notice is not None:
            return M_("the notice was already published on %(day)s", day=notice.published_on)
        release = cf.timers.get("bt_release_window")
        if release and at < legal_time.parse_instant(release):
            return M_("the notice is published after the release window, whose last day is %(day)s",
                      day=legal_time.day_before_instant(release, cf.timezone))
    elif element_id == "ut_record_bid":
        if notice is None:
            return M_("no notice has been published yet; bids are taken in the conditional auction opened with it")
    elif element_id == "ut_order_stand":
        if notice is None:
            return M_("no notice has been published yet")
        if cf.order_auction_stand_on is not None:
            return M_("the order was already made on %(day)s", day=cf.order_auction_stand_on)
        if cf.objections:
            return M_("an objection was filed; the Panchayat decides the ownership claim instead (Rule 130(c))")
        if today <= notice.last_day:
            return M_("the order is made after the objection period, whose last day is %(day)s",
                      day=notice.last_day)
        if auction is not None and auction.status == "open":
            return M_("the conditional auction is still open; its last day is %(day)s", day=auction.last_day)
        if auction is not None and auction.status == "unsold" and cf.dispatch is None and cf.sale is None:
            return M_("the auction closed without a sale; the sarpanch first decides on the unsold cattle "
                      "(accept the highest bid or send them for sale)")
    elif element_id == "ut_decide_objection" and objector is not None:
        claim = cf.objection_of(objector)
        if claim is None:
            return M_("no objection by %(name)s is on the file", name=objector)
        if claim.decision is not None:
            return M_("the claim of %(name)s was already decided on %(day)s (%(decision)s)", name=claim.objector,
                      day=claim.decided_on, decision=M_(claim.decision.replace("_", " ")))
    elif element_id == "ut_decide_unsold":
        if auction is None:
            return M_("no conditional auction has been held yet")
        if auction.status == "open":
            return M_("the conditional auction is still open; its last day is %(day)s", day=auction.last_day)
        if cf.sale is not None:
            return M_("the cattle were sold on %(day)s", day=cf.sale.day)
        if auction.status == "withdrawn":
            return unsold_withdrawn(cf) or M_("the sale of the unsold cattle was withdrawn on %(day)s",
                                              day=auction.closed_on)
    elif element_id == "ut_decide_appeal":
        if cf.pending_appeal() is None:
            return M_("no appeal is pending")
        if notice is not None and today <= notice.last_day:
            return M_("an appeal is decided once the objection period has ended (a later objection may still change "
                      "the Panchayat's decision); its last day is %(day)s", day=notice.last_day)
        undecided = [claim.objector for claim in cf.objections if claim.decision is None]
        if undecided:
            return M_("an appeal is decided once the Panchayat has decided every objection filed (its decision "
                      "is complete only then); still to be decided: the claim of %(names)s",
                      names=message_list(undecided))
    elif element_id == "ut_pay_feeding_charges":
        if cf.delivered_on is None:
            return M_("the feeding charges are paid after the cattle are delivered to the owner")
    elif element_id in ("ut_return_by_buyer", "ut_deliver_to_objector", "ut_return_by_objector"):
        if cf.final_on is None:
            return _not_final_yet(cf, today)
        if element_id == "ut_deliver_to_objector" and not cf.owner_proved:
            return M_("no objector's ownership stands proved; the cattle are delivered only to a proved owner")
        if element_id == "ut_deliver_to_objector" and cf.dispatch is not None and cf.dispatch.remitted_on is None:
            return M_("the cattle were sent to %(receiver)s for sale; the owner is paid the remittance less fine and "
                      "feeding once %(receiver)s records the sale and remittance", receiver=cf.dispatch.receiver)
        if element_id == "ut_deliver_to_objector" and cf.sale is not None and cf.sale.returned_on is None \
                and cf.owner_proved:
            return M_("the buyer %(buyer)s has not yet returned the cattle; taking them back from the buyer comes "
                      "first", buyer=cf.sale.buyer)
        if element_id == "ut_return_by_objector" and cf.interim is not None and cf.owner_proved \
                and cf.winning_objector == cf.interim.objector:
            return M_("the claim of %(name)s is proved; the cattle stay with %(name)s", name=cf.interim.objector)
        held = cf.held_by_another_objector()
        if element_id == "ut_deliver_to_objector" and held is not None and held.returned_on is None \
                and not held.forfeited:
            return M_("the cattle are with %(holder)s on interim delivery and come back first; the period to "
                      "return them ends on %(day)s", holder=held.objector,
                      day=cf.final_on + timedelta(days=cf.return_period_days))
    return None


def _not_final_yet(cf: CaseFile, today: date) -> Any | None:
    """Why the Panchayat's decision is not final on ``today``: an appeal to decide, or the later of
    the appeal window and the objection period still running (RULE130.md (d), (e) and the appeal
    proviso), named with its last day."""
    if cf.appeals and cf.appeals[-1].decision is None:
        return M_("an appeal against the decision is pending")

    running = []
    appeal_last = appeal_last_day(cf)
    if appeal_last is not None:
        running.append((appeal_last, M_("the decision becomes final after the appeal period, whose last day is %(day)s",
                                        day=appeal_last)))
    if cf.notice is not None:
        running.append((cf.notice.last_day,
                        M_("the decision becomes final after the objection period, whose last day is %(day)s",
                           day=cf.notice.last_day)))
    running = [(day, why) for day, why in running if today <= day]
    if running:
        return max(running, key=lambda item: item[0])[1]
    if cf.decision_on is None:
        return M_("the Panchayat has not decided the case yet")
    return None
