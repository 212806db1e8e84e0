"""The legal last days and the officers' due days of a case: pure functions of its case file.

The last days are the rule's (Rule 130(a), (b), (b)(i), (e) proviso; RULE130.md "Time"); the due
days are RULE130.md's service levels ("Service levels for officers' tasks"). Every date is a local
calendar date of the case's Panchayat. Nothing here reads the database or the clock: the services,
the handlers and the pages all ask here, so a deadline is computed in one place.
"""

from __future__ import annotations

from datetime import date, timedelta

from webapp.values import legal_time
from webapp.values.casefile import CaseFile


def appeal_last_day(cf: CaseFile) -> date | None:
    """D + M: the last day to appeal against the Panchayat's decision of day D."""
    if cf.decision_on is None:
        return None
    return cf.decision_on + timedelta(days=cf.appeal_period_days)


def transfer_lock_until(cf: CaseFile) -> date | None:
    """Condition (b)(i): sale day + 30; where an objection or appeal was filed, the later of that
    and the day the outcome became final (None while that day is not known)."""
    if cf.sale is None:
        return None
    base = cf.sale.day + timedelta(days=30)
    if cf.objections or cf.appeals:
        return max(base, cf.final_on) if cf.final_on else None
    return base


def deadlines(cf: CaseFile) -> dict[str, date | None]:
    """The legal last days (local dates; None while not yet known): release window (the day before
    its timer's instant, else impoundment + 3), objections (Rule 130(a)), the first auction (b),
    appeal (e) proviso, and the transfer lock of (b)(i)."""
    release = cf.timers.get("bt_release_window")
    return {
        "release_last_day": (legal_time.day_before_instant(release, cf.timezone) if release
                             else cf.impounded_on + timedelta(days=3)),
        "objection_last_day": cf.notice.last_day if cf.notice else None,
        "auction_last_day": cf.auctions[0].last_day if cf.auctions else None,
        "appeal_last_day": appeal_last_day(cf),
        "transfer_lock_until": transfer_lock_until(cf),
    }


def service_level(cf: CaseFile, element_id: str) -> tuple[date | None, str | None, date | None]:
    """(due date, the legal deadline it serves, that deadline's last day) for a user task.

    Args:
        cf: the case file. element_id: the user task's BPMN id (``ut_decide_objection``...).
    Returns:
        local calendar dates of the case's Panchayat, or None while not known. Due dates are
        RULE130.md's default service levels; the deadlines are the rule's (Rule 130(a), (b), (e)
        proviso, (b)(i)).
    """
    dl = deadlines(cf)
    def plus(day: date | None, days: int) -> date | None:
        return day + timedelta(days=days) if day else None

    report_day = legal_time.local_day(cf.report_raised_at, cf.timezone) if cf.report_raised_at else None
    final = cf.final_on
    # the day the cattle can be delivered: final, or (if later) back from another objector, back
    # from the buyer, or the receiving officer's remittance in (reading)
    deliver_from = final
    held = cf.held_by_another_objector()
    if final and held is not None:
        deliver_from = held.returned_on or plus(final, cf.return_period_days + 1)
    if final and deliver_from and cf.sale is not None and cf.sale.returned_on is not None:
        deliver_from = max(deliver_from, cf.sale.returned_on)
    if final and deliver_from and cf.dispatch is not None and cf.dispatch.remitted_on is not None:
        deliver_from = max(deliver_from, cf.dispatch.remitted_on)
    levels: dict[str, tuple[date | None, str | None, date | None]] = {
        "ut_release": (dl["release_last_day"], "release window", dl["release_last_day"]),
        "ut_publish_notice": (plus(report_day, 1), None, None),
        "ut_record_bid": (cf.auction.last_day if cf.auction else None, "auction", cf.auction.last_day if cf.auction else None),
        "ut_decide_objection": (dl["objection_last_day"], "objection period", dl["objection_last_day"]),
        "ut_order_stand": (plus(dl["objection_last_day"], 3), None, None),
        "ut_decide_unsold": (plus(cf.auction.closed_on if cf.auction else None, 2), None, None),
        "ut_record_remittance": (plus(cf.dispatch.day if cf.dispatch else None, 15), None, None),
        # 30 days from the filing or, for an appeal that waited for the Panchayat's decision (an
        # objection still to be decided), from that decision: the task opens only then
        "ut_decide_appeal": (plus(_latest(cf.appeals[-1].filed_on, cf.decision_on) if cf.appeals else None, 30),
                             "appeal period", dl["appeal_last_day"]),
        "ut_return_by_buyer": (plus(final, 7), "transfer lock", dl["transfer_lock_until"]),
        "ut_deliver_to_objector": (plus(deliver_from, 7), None, None),
        "ut_return_by_objector": (plus(final, cf.return_period_days), "return period", plus(final, cf.return_period_days)),
        "ut_pay_feeding_charges": (plus(cf.delivered_on, 7), None, None),
    }
    return levels.get(element_id, (None, None, None))


def _latest(*days: date | None) -> date | None:
    known = [d for d in days if d is not None]
    return max(known) if known else None
