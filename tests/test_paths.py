"""Every path of the Rule 130 diagram and every refusal, through the service layer (not the simulator).

Each test drives one case with the real services (``uow.perform`` + ``cases`` / ``tasks`` /
``timers``) on a fresh database, moves the virtual clock strictly past each due instant to fire
timers, and checks the values by hand from RULE130.md: deadline dates, rupees, which task is ready
for which role, ledger entries with their clauses, and the case summary.
"""

from __future__ import annotations

import json
from datetime import UTC, date, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import select

from webapp.errors import CaseHeld, Conflict, DeadlinePassed, NotFound, NotPermitted, TaskFailed
from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.money import ledger
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasklist, tasks
from webapp.store.models import Case, Incident

from .conftest import POSTGRES
from .driver import ONE_COW, TWO_COWS, US, ist_midnight, order_stand_to_final, publish, refused, sell

D = Decimal

# -- release window and the report ----------------------------------------------------------------

def test_release_window_timer_opens_the_file_for_the_secretary(drive):
    drive.start(TWO_COWS)
    case = drive.case()
    assert case.case_number == "RMP/2026/0001"
    assert drive.ready("pound_keeper") == [("ut_release", date(2026, 1, 8))]
    assert drive.ready("secretary") == []
    due = ist_midnight("2026-01-09")  # E = 01-05, window 01-06..01-08, ends 00:00 of 01-09
    assert case.next_timer_due == due

    drive.move(due)  # at exactly the due instant the timer has not fired (strict <)
    assert timers.fire_due(drive.sessions) == 0
    assert drive.ready("pound_keeper") == [("ut_release", date(2026, 1, 8))]

    assert drive.fire_past(due) == 1
    assert drive.ready("pound_keeper") == []
    assert drive.ready("secretary") == [("ut_publish_notice", date(2026, 1, 10))]  # report day + 1
    assert drive.file().report_raised_at == due + US
    [firing] = drive.firings()
    assert (firing.element_id, firing.due_at) == ("bt_release_window", due)
    assert firing.lateness_seconds == pytest.approx(1e-6)
    assert drive.summary()["deadlines"]["release_last_day"] == date(2026, 1, 8)


def test_release_by_owner_in_the_window_pays_fine_and_feeding(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-08T23:59:59+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Owner M", "amount_received": "1480.00"})
    case = drive.case()
    assert (case.status, case.outcome, case.next_timer_due) == ("completed", "released_by_owner", None)
    # F = 2 x 500; C = 2 x 60 x (01-05..01-08 = 4 days) = 480
    assert drive.entries() == [("owner", "pound_account", D("1480.00"), "fine_and_feeding", "reading: release")]
    assert drive.all_ready() == {}


def test_release_one_second_late_is_refused_naming_the_last_day_and_the_case_goes_on(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T00:00:01+05:30")
    error = refused(drive, drive.act, "pound_keeper", "ut_release", {"owner": "Owner M", "amount_received": "1480.00"}, error=DeadlinePassed,
                    match="2026-01-08")
    assert error.details["last_day"] == "2026-01-08"
    publish(drive)
    assert drive.ready("secretary") == [("ut_record_bid", date(2026, 1, 11))]


def test_every_animal_dying_in_the_window_closes_the_case_with_a_shortfall(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-1")
    assert drive.case().status == "running"
    refused(drive, drive.animal_event, "death", tag="RJ-1", match="already recorded as gone on 2026-01-06")
    drive.move("2026-01-07T09:00:00+05:30")
    drive.animal_event("escape", position=2)
    case = drive.case()
    assert (case.status, case.outcome, case.next_timer_due) == ("completed", "closed_no_animals", None)
    s = drive.summary()
    # F = 1000 (both count); C = 60 x 2 days (01-05..01-06) + 60 x 3 days (01-05..01-07) = 300
    assert s["fees"] == {"fine": D("1000.00"), "pound_feeding": D("300.00"), "buyer_feeding": D("0.00"),
                         "shortfall": D("1300.00")}
    assert drive.entries() == []
    assert drive.all_ready() == {}


# -- (e): no objection, unsold, highest bid accepted ------------------------------------------------

def test_of_two_equal_highest_bids_the_earlier_is_accepted(drive):
    """RULE130.md "Edge cases": a later bid of the same amount does not outbid the earlier one."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    for instant, bidder, amount in (("2026-01-10T12:00:00+05:30", "Bidder A", "9000"),
                                    ("2026-01-10T15:00:00+05:30", "Bidder B", "9000.00"),
                                    ("2026-01-11T10:00:00+05:30", "Bidder C", "8999.99")):
        drive.move(instant)
        drive.act("secretary", "ut_record_bid", {"bidder": bidder, "amount": amount})
    drive.fire_past(ist_midnight("2026-01-12"))
    drive.move("2026-01-12T10:00:00+05:30")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "accept_highest_bid"})
    sale = drive.file().sale
    assert (sale.buyer, sale.amount, sale.day, sale.kind) == ("Bidder A", D("9000.00"), date(2026, 1, 12),
                                                             "accepted_highest_bid")
    assert drive.entries() == [("buyer", "suspense", D("9000.00"), "auction_money", "Rule 130(b)")]


def test_no_objection_unsold_highest_bid_accepted_then_auction_final(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    f = drive.file()
    assert (f.notice.last_day, f.auction.last_day) == (date(2026, 2, 8), date(2026, 1, 11))
    sell(drive, "Bidder A", "9000", "2026-01-10T12:00:00+05:30")
    sell(drive, "Bidder B", "8000.50", "2026-01-11T12:00:00+05:30")
    assert drive.ready("secretary") == [("ut_record_bid", date(2026, 1, 11))]
    assert drive.case().next_timer_due == ist_midnight("2026-01-12")  # A+3 00:00 (auction closes)

    assert drive.fire_past(ist_midnight("2026-01-12")) == 1
    assert drive.ready("secretary") == []
    assert drive.ready("sarpanch") == [("ut_decide_unsold", date(2026, 1, 13))]  # closed 01-11 + 2
    assert drive.file().auction.status == "unsold"

    drive.move("2026-01-12T10:00:00+05:30")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "accept_highest_bid"})
    assert drive.entries() == [("buyer", "suspense", D("9000.00"), "auction_money", "Rule 130(b)")]
    assert drive.all_ready() == {}
    assert drive.case().next_timer_due == ist_midnight("2026-02-09")

    drive.fire_past(ist_midnight("2026-02-09"))
    assert drive.ready("sarpanch") == [("ut_order_stand", date(2026, 2, 11))]  # last day 02-08 + 3
    drive.move("2026-02-09T11:00:00+05:30")
    drive.act("sarpanch", "ut_order_stand")
    assert drive.all_ready() == {}
    assert drive.case().next_timer_due == ist_midnight("2026-03-12")  # D = 02-09, last day 03-11

    drive.fire_past(ist_midnight("2026-03-12"))
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "auction_final")
    # F = 1000; C = 2 x 60 x (01-05..01-12 = 8 days) = 960; balance 9000 - 1960 = 7040
    assert drive.entries()[1:] == [
        ("suspense", "pound_account", D("1960.00"), "fine_and_feeding", "Rule 130(e)"),
        ("suspense", "panchayat_fund", D("7040.00"), "balance", "Rule 130(e)")]
    s = drive.summary()
    assert s["outcome"] == "auction_final"
    assert s["deadlines"] == {"release_last_day": date(2026, 1, 8), "objection_last_day": date(2026, 2, 8),
                              "auction_last_day": date(2026, 1, 11), "appeal_last_day": date(2026, 3, 11)}
    assert s["sale"] == {"buyer": "Bidder A", "amount": D("9000.00"), "day": date(2026, 1, 12),
                         "transfer_lock_until": date(2026, 2, 11)}
    assert s["ledger"] == {"suspense": D("0.00"), "pound_account": D("1960.00"), "panchayat_fund": D("7040.00")}
    assert [f.element_id for f in drive.firings()] == ["bt_release_window", "bt_auction_closes",
                                                        "n_ice_period_ends", "ice_appeal_window_ends"]


def test_unsold_dispatched_to_a_receiving_officer_who_records_the_remittance(drive, officers):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.fire_past(ist_midnight("2026-01-12"))
    drive.move("2026-01-12T10:00:00+05:30")
    refused(drive, drive.act, "sarpanch", "ut_decide_unsold", {"choice": "accept_highest_bid"}, match="no bid")
    refused(drive, drive.act, "sarpanch", "ut_decide_unsold", {"choice": "cattle_fair", "receiver": "Nobody"},
            match="no receiving officer is called Nobody")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "neighbouring_panchayat",
                                               "receiver": " RECV "})  # the user name as typed on a phone
    dispatch = drive.file().dispatch
    assert (dispatch.receiver, dispatch.receiver_user_id) == ("Gram Panchayat Kishanpura", officers["receiving_officer"].id)
    assert drive.ready("receiving_officer") == [("ut_record_remittance", date(2026, 1, 27))]  # dispatch + 15
    drive.move("2026-01-20T10:00:00+05:30")
    refused(drive, drive.act, "receiving_officer", "ut_record_remittance",
            {"proceeds": "1000.00", "expenses": "1000.01"}, match="cannot exceed")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "750.00"})
    assert drive.entries() == [("receiving_officer", "suspense", D("7250.00"), "remittance",
                                "Rule 130(b) proviso")]
    order_stand_to_final(drive)
    s = drive.summary()
    # F = 500; C = 60 x (01-05..01-12 = 8 days) = 480; fund 7250 - 980 = 6270
    assert s["sale"] is None
    assert s["ledger"] == {"suspense": D("0.00"), "pound_account": D("980.00"), "panchayat_fund": D("6270.00")}


# -- (d): appeal reversed against an order that the auction stand ------------------------------------

def test_appeal_reverses_order_auction_stand_buyer_returns_and_objector_pays(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder B", "12500.00", "2026-01-10T15:00:00+05:30")
    assert drive.ready("secretary") == []  # full price closed the auction at once
    assert drive.file().sale.day == date(2026, 1, 10)
    drive.fire_past(ist_midnight("2026-02-09"))
    drive.move("2026-02-09T11:00:00+05:30")
    drive.act("sarpanch", "ut_order_stand")

    drive.move("2026-02-20T10:00:00+05:30")
    drive.appeal("Owner X")
    assert drive.ready("appellate_authority") == [("ut_decide_appeal", date(2026, 3, 22))]  # filed + 30
    # the appeal replaced the window timer; what waits now is the decision's overdue reminder (due 03-22)
    assert drive.case().next_timer_due == ist_midnight("2026-03-23")
    refused(drive, drive.appeal, "Someone", match="one appeal at a time")
    refused(drive, drive.act, "sarpanch", "ut_decide_appeal", {"decision": "reversed"}, error=NotPermitted)

    drive.move("2026-03-01T11:00:00+05:30")
    drive.act("appellate_authority", "ut_decide_appeal", {"decision": "reversed"})
    f = drive.file()
    assert (f.final_on, f.owner_proved, f.winning_objector) == (date(2026, 3, 1), True, "Owner X")
    assert drive.ready("secretary") == [("ut_return_by_buyer", date(2026, 3, 8))]  # final + 7

    drive.move("2026-03-05T10:00:00+05:30")
    drive.act("secretary", "ut_return_by_buyer")
    # the delivery is due 7 days after the cattle are back from the buyer (RULE130.md service levels)
    assert drive.ready("secretary") == [("ut_deliver_to_objector", date(2026, 3, 12))]
    drive.move("2026-03-05T12:00:00+05:30")
    drive.act("secretary", "ut_deliver_to_objector")
    assert drive.ready("sarpanch") == [("ut_pay_feeding_charges", date(2026, 3, 12))]  # delivered + 7
    drive.move("2026-03-06T11:00:00+05:30")
    refused(drive, drive.act, "sarpanch", "ut_pay_feeding_charges", {"amount": "720.01"},
            match="C = ₹720.00")
    refused(drive, drive.act, "sarpanch", "ut_pay_feeding_charges", {"amount": "-1"}, match="negative")
    drive.act("sarpanch", "ut_pay_feeding_charges", {"amount": "600.00"})

    # F = 1000; C = 2 x 60 x 6 days (01-05..01-10) = 720; Cb = 2 x 60 x 54 days (01-11..03-05) = 6480
    assert drive.entries() == [
        ("buyer", "suspense", D("12500.00"), "auction_money", "Rule 130(b)"),
        ("suspense", "buyer", D("12500.00"), "auction_money_repaid", "Rule 130(b)(ii)"),
        ("objector", "pound_account", D("1720.00"), "fine_and_feeding", "Rule 130(d)"),
        ("objector", "suspense", D("6480.00"), "buyer_feeding", "Rule 130(b)(ii), (d)"),
        ("suspense", "buyer", D("6480.00"), "buyer_feeding", "Rule 130(b)(ii)"),
        ("pound_account", "pound_keeper", D("600.00"), "feeding_charges", "Rule 130(d)"),
        ("pound_account", "panchayat_fund", D("120.00"), "feeding_balance", "Rule 130(d)"),
    ]
    s = drive.summary()
    assert s["outcome"] == "returned_to_objector"
    assert s["sale"]["transfer_lock_until"] == date(2026, 3, 1)
    assert s["fees"]["buyer_feeding"] == D("6480.00")
    assert s["paid"] == {"buyer": D("18980.00"), "pound_keeper": D("600.00"),
                         "objector_security_refund": D("0.00"), "objector": D("0.00")}
    assert drive.case().status == "completed"


# -- objections: two objectors, proved after a sale, not proved ---------------------------------------

def test_two_objectors_each_decided_second_proved_refused(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder B", "12000", "2026-01-10T15:00:00+05:30")
    drive.move("2026-01-12T11:00:00+05:30")
    drive.object("Objector A")
    drive.move("2026-01-13T11:00:00+05:30")
    drive.object("Objector B")
    refused(drive, drive.object, "Objector A", match="already filed")
    assert [e for e, _ in drive.ready("sarpanch")] == ["ut_decide_objection", "ut_decide_objection"]
    assert {d for _, d in drive.ready("sarpanch")} == {date(2026, 2, 8)}  # by the last day of the period
    drive.move("2026-01-20T11:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "proved"}, objector="Objector A")
    refused(drive, drive.act, "sarpanch", "ut_decide_objection", {"decision": "proved"}, objector="Objector B",
            match="already proved")
    drive.move("2026-01-22T11:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "not_proved"}, objector="Objector B")
    assert drive.all_ready() == {}
    # the last decision is D = 01-22: appeal window to 02-21, timer at 00:00 of 02-22 (after the period)
    drive.fire_past(ist_midnight("2026-02-09"))
    assert drive.case().next_timer_due == ist_midnight("2026-02-22")
    assert drive.summary()["deadlines"]["appeal_last_day"] == date(2026, 2, 21)
    drive.fire_past(ist_midnight("2026-02-22"))
    f = drive.file()
    assert (f.final_on, f.winning_objector) == (date(2026, 2, 22), "Objector A")
    assert drive.ready("secretary") == [("ut_return_by_buyer", date(2026, 3, 1))]


def test_objection_not_proved_goes_to_e(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder B", "13000", "2026-01-09T15:00:00+05:30")
    drive.move("2026-01-15T11:00:00+05:30")
    drive.object("Objector P")
    drive.fire_past(ist_midnight("2026-02-09"))
    assert drive.ready("sarpanch") == [("ut_decide_objection", date(2026, 2, 8))]  # still open after the period
    drive.move("2026-02-10T11:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "not_proved"}, objector="Objector P")
    assert drive.case().next_timer_due == ist_midnight("2026-03-13")  # D = 02-10, last day 03-12
    drive.fire_past(ist_midnight("2026-03-13"))
    # F = 500; C = 60 x 5 days (01-05..01-09) = 300; fund 13000 - 800
    assert drive.summary()["ledger"] == {"suspense": D("0.00"), "pound_account": D("800.00"),
                                         "panchayat_fund": D("12200.00")}
    assert drive.summary()["sale"]["transfer_lock_until"] == date(2026, 3, 13)  # final day, later than 02-08
    drive.move("2026-03-13T00:00:00+05:30")
    error = refused(drive, drive.appeal, "Objector P", error=DeadlinePassed, match="2026-03-12")
    assert error.details["last_day"] == "2026-03-12"


def test_objection_on_the_last_minute_accepted_next_midnight_refused(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T10:00:00+05:30")
    refused(drive, drive.object, "Early Claimant", match="no notice has been published")
    publish(drive)
    drive.move("2026-02-08T23:59:00+05:30")
    drive.object("Objector V")
    assert [o.objector for o in drive.file().objections] == ["Objector V"]
    drive.move("2026-02-09T00:00:00+05:30")  # timer due now, not fired yet: the deadline is checked in Python
    error = refused(drive, drive.object, "Objector W", error=DeadlinePassed, match="2026-02-08")
    assert error.details == {"last_day": "2026-02-08"}
    drive.fire_past(ist_midnight("2026-02-09"))
    drive.move("2026-02-09T00:01:00+05:30")
    refused(drive, drive.object, "Objector X", error=DeadlinePassed, match="2026-02-08")


# -- interim delivery -------------------------------------------------------------------------------

def _interim_case(drive, security="20000.00"):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-09T15:00:00+05:30")
    drive.object("Objector K")
    drive.move("2026-01-10T10:00:00+05:30")
    refused(drive, drive.act, "sarpanch", "ut_decide_objection",
            {"decision": "interim_delivery", "security": "100.001"}, objector="Objector K", match="two decimals")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "interim_delivery", "security": security,
                                                  "reason": "marks match"}, objector="Objector K")
    assert drive.entries() == [("objector", "suspense", D(security), "security", "Rule 130(c) Explanation")]
    assert drive.file().auction.status == "withdrawn"
    assert drive.ready("secretary") == []  # no bid task any more
    assert drive.ready("sarpanch") == [("ut_decide_objection", date(2026, 2, 8))]
    drive.move("2026-01-10T12:00:00+05:30")
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "Bidder E", "amount": "15000"},
            match="withdrawn")
    drive.move("2026-01-20T11:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "not_proved"}, objector="Objector K")
    drive.fire_past(ist_midnight("2026-02-09"))
    assert drive.case().next_timer_due == ist_midnight("2026-02-20")  # D = 01-20, last day 02-19
    drive.fire_past(ist_midnight("2026-02-20"))
    assert drive.file().final_on == date(2026, 2, 20)
    # return within 7 days after final: last day 02-27; timer at 00:00 of 02-28
    assert drive.ready("secretary") == [("ut_return_by_objector", date(2026, 2, 27))]
    assert drive.case().next_timer_due == ist_midnight("2026-02-28")


def test_interim_delivery_not_proved_cattle_returned_new_auction_then_e(drive):
    _interim_case(drive)
    drive.move("2026-02-25T10:00:00+05:30")
    drive.act("secretary", "ut_return_by_objector")
    f = drive.file()
    assert (f.interim.returned_on, f.interim.refunded) == (date(2026, 2, 25), True)
    assert (len(f.auctions), f.auction.round, f.auction.last_day) == (2, 2, date(2026, 2, 27))
    assert drive.ready("secretary") == [("ut_record_bid", date(2026, 2, 27))]
    assert drive.case().next_timer_due == ist_midnight("2026-02-28")  # the new auction closes A+3
    sell(drive, "Bidder J", "18000", "2026-02-26T12:00:00+05:30")
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "auction_final")
    # F = 500; C = 60 x (01-05..01-10 = 6 days + 02-25..02-26 = 2 days) = 480; fund 18000 - 980
    assert drive.entries()[1:] == [
        ("suspense", "objector", D("20000.00"), "security_refund", "Rule 130(c) Explanation (reading)"),
        ("buyer", "suspense", D("18000.00"), "auction_money", "Rule 130(b)"),
        ("suspense", "pound_account", D("980.00"), "fine_and_feeding", "Rule 130(e)"),
        ("suspense", "panchayat_fund", D("17020.00"), "balance", "Rule 130(e)")]
    s = drive.summary()
    assert s["sale"] == {"buyer": "Bidder J", "amount": D("18000.00"), "day": date(2026, 2, 26),
                         "transfer_lock_until": date(2026, 3, 28)}
    assert s["paid"]["objector_security_refund"] == D("20000.00")


def test_interim_delivery_not_returned_forfeits_the_security(drive):
    _interim_case(drive, security="3000.00")
    drive.move("2026-02-27T23:59:59+05:30")
    assert drive.ready("secretary") == [("ut_return_by_objector", date(2026, 2, 27))]
    assert drive.fire_past(ist_midnight("2026-02-28")) == 1
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "security_forfeited")
    assert drive.firings()[-1].element_id == "bt_return_deadline"
    # the security 3000 is the auction money of (e): F + C = 500 + 60 x 6 days = 860; fund 2140
    assert drive.entries()[1:] == [
        ("suspense", "pound_account", D("860.00"), "fine_and_feeding", "Rule 130(c) Explanation, (e)"),
        ("suspense", "panchayat_fund", D("2140.00"), "balance", "Rule 130(c) Explanation, (e)")]
    drive.move("2026-02-28T00:00:00+05:30")
    error = refused(drive, drive.act, "secretary", "ut_return_by_objector", error=DeadlinePassed,
                    match="2026-02-27")
    assert error.details["last_day"] == "2026-02-27"
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "X", "amount": "1"}, match="closed")


# -- deaths, amounts and notice period ---------------------------------------------------------------

def test_death_before_the_sale_stops_feeding_but_fine_counts(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive, full_price="6000.00")
    drive.move("2026-01-09T18:00:00+05:30")
    drive.animal_event("death", tag="RJ-2")
    assert drive.file().animals[1].died_on == date(2026, 1, 9)
    sell(drive, "Bidder S", "6000", "2026-01-10T10:00:00+05:30")
    refused(drive, drive.animal_event, "death", tag="RJ-1", match="no longer in the pound")
    s = drive.summary()
    # F = 2 x 500; C = 60 x 6 days (RJ-1: 01-05..01-10) + 60 x 5 days (RJ-2: 01-05..01-09) = 660
    assert (s["fees"]["fine"], s["fees"]["pound_feeding"]) == (D("1000.00"), D("660.00"))


@pytest.mark.parametrize("form, message", [
    ({"objection_period_days": 29, "full_price": "12000"}, "at least 30 days"),
    ({"objection_period_days": 30, "full_price": "-1"}, "negative"),
    ({"objection_period_days": 30, "full_price": "12000.001"}, "two decimals"),
    ({"objection_period_days": 30, "full_price": "0"}, "more than zero"),
    ({"objection_period_days": 30, "full_price": 12000.5}, "as text"),
    ({"objection_period_days": "thirty", "full_price": "12000"}, "whole number"),
    ({"objection_period_days": 30}, "Full price"),
])
def test_publish_notice_refusals_change_nothing(drive, form, message):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    refused(drive, drive.act, "secretary", "ut_publish_notice", form, match=message)
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000"})
    assert drive.file().notice.last_day == date(2026, 2, 8)


def test_bids_refused_after_close_and_with_bad_amounts(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-10T10:00:00+05:30")
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "A", "amount": "-5"}, match="negative")
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "A", "amount": "5.555"},
            match="two decimals")
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "", "amount": "5"}, match="bidder")
    drive.move("2026-01-12T00:00:00+05:30")  # end of 01-11 passed; the timer has not fired yet
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "A", "amount": "500"},
            error=DeadlinePassed, match="2026-01-11")
    drive.fire_past(ist_midnight("2026-01-12"))
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "A", "amount": "500"},
            error=DeadlinePassed, match="2026-01-11")


def test_order_auction_stand_is_not_open_during_the_notice_period(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "B", "12000", "2026-01-09T12:00:00+05:30")
    drive.move("2026-02-01T10:00:00+05:30")
    refused(drive, drive.act, "sarpanch", "ut_order_stand", match="not open")
    refused(drive, drive.appeal, "Anyone", match="no decision")


def test_scope_other_panchayat_and_wrong_role(drive, officers):
    drive.start(ONE_COW)
    with pytest.raises(NotFound):
        drive.act("secretary", "ut_release", {"owner": "X", "amount_received": "1480.00"}, user=officers["other_secretary"])
    with pytest.raises(NotFound):
        uow.perform(drive.sessions, "file_objection", cases.file_objection, officers["other_secretary"],
                    drive.case_id, "X")
    refused(drive, drive.act, "secretary", "ut_release", {"owner": "X", "amount_received": "1480.00"}, error=NotPermitted,
            match="pound keeper")
    assert drive.ready("appellate_authority") == []
    with drive.sessions() as s:
        assert tasks.my_tasks(s, officers["far_appellate"]).rows == []


# -- appeal filed during the notice period after an early decision -----------------------------------

def test_appeal_filed_in_the_notice_period_waits_for_its_end(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive, days=40)  # last day 02-18
    sell(drive, "Bidder AA", "12000", "2026-01-09T12:00:00+05:30")
    drive.move("2026-01-10T11:00:00+05:30")
    drive.object("Objector BB")
    drive.move("2026-01-12T11:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "proved"}, objector="Objector BB")
    drive.move("2026-01-20T10:00:00+05:30")
    drive.appeal("Bidder AA")
    assert drive.ready("appellate_authority") == []  # decided once the notice period is over
    assert drive.summary()["deadlines"]["appeal_last_day"] == date(2026, 2, 11)
    drive.fire_past(ist_midnight("2026-02-19"))
    assert drive.ready("appellate_authority") == [("ut_decide_appeal", date(2026, 2, 19))]  # filed 01-20 + 30
    drive.move("2026-02-20T11:00:00+05:30")
    drive.act("appellate_authority", "ut_decide_appeal", {"decision": "upheld"})
    f = drive.file()
    assert (f.final_on, f.winning_objector) == (date(2026, 2, 20), "Objector BB")
    assert drive.ready("secretary") == [("ut_return_by_buyer", date(2026, 2, 27))]


# -- conflicts: two officers, officer and worker --------------------------------------------------------

def _second_secretary(drive):
    with drive.sessions() as s:
        user = users.create_user(s, "sec2", "correct horse battery", "secretary", display_name="Secretary Two",
                                 panchayat_code="RMP", password_method="pbkdf2:sha256:1000")
        s.commit()
    return user


# These races are staged in one thread: the other officer's (or the worker's) whole unit of work runs
# inside this one's. On PostgreSQL every writer of a case locks its row first (webapp.store.db.lock_case),
# so the inner unit would wait for the outer for ever: there the same races run in two threads, and the
# loser waits and then meets the case as the winner left it (tests/test_act_instant.py, deadline_races).
staged_in_one_thread = pytest.mark.skipif(bool(POSTGRES), reason="a race staged in one thread deadlocks on "
                                          "PostgreSQL's row lock; raced across threads in test_act_instant.py")


@staged_in_one_thread
def test_two_officers_completing_the_same_task_one_wins_one_gets_conflict(drive):
    other = _second_secretary(drive)
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    mine = {"objection_period_days": 30, "full_price": "12000"}
    theirs = {"objection_period_days": 45, "full_price": "9000"}

    def open_then_submit(session, user, case_id):
        opened = cases.get_case(session, user, case_id)  # this officer opened the case ...
        drive.act("secretary", "ut_publish_notice", mine)  # ... the other one submitted meanwhile
        assert cases.get_case(session, user, case_id) is opened
        return tasks.act(session, user, case_id, "ut_publish_notice", theirs)

    with pytest.raises(Conflict) as info:
        uow.perform(drive.sessions, "publish_notice", open_then_submit, other, drive.case_id,
                    case_id=drive.case_id, user=other)
    assert "someone else changed this case" in info.value.message
    f = drive.file()
    assert (f.notice.objection_period_days, f.notice.full_price, len(f.auctions)) == (30, D("12000.00"), 1)
    assert [e.name for e in drive.history() if e.kind == "task"].count(
        "Publish notice and open conditional auction") == 1
    assert drive.case().lock_version == 4  # insert, start run, timer, one publication
    assert drive.history()[-1].kind == "refusal"


@pytest.mark.both_databases
def test_stale_lock_version_is_a_conflict(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    with drive.sessions() as s:
        [row] = tasks.my_tasks(s, drive.officers["secretary"]).rows
        view = tasks.get_task(s, drive.officers["secretary"], drive.case_id, row.task_id)
    seen = view.lock_version
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000"})
    with pytest.raises(Conflict, match="changed since you opened the task"):
        uow.perform(drive.sessions, "publish_notice", tasks.complete_task, drive.officers["secretary"],
                    drive.case_id, view.task_id, {"objection_period_days": 30, "full_price": "12000"},
                    expected_lock_version=seen)


def sold_with_objection_and_notice_timer_due(drive):
    """One cow sold at full price on 01-09, Objector Q's claim open, the notice timer just due (02-09)."""
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "B", "12000", "2026-01-09T12:00:00+05:30")
    drive.move("2026-01-20T11:00:00+05:30")
    drive.object("Objector Q")
    drive.move(ist_midnight("2026-02-09") + timedelta(seconds=5))


@pytest.mark.both_databases
def test_worker_loses_race_to_an_officer_and_the_timer_fires_once(drive):
    sold_with_objection_and_notice_timer_due(drive)

    def worker_pass(session, case_id):
        loaded = session.get(Case, case_id)  # the worker loaded the case ...
        drive.act("sarpanch", "ut_decide_objection", {"decision": "not_proved"}, objector="Objector Q")
        assert session.get(Case, case_id) is loaded
        return timers._fire(session, case_id)  # ... and fires on its stale copy

    with pytest.raises(Conflict):
        uow.perform(drive.sessions, "fire_timers", worker_pass, drive.case_id)
    # the officer's act fired the due notice timer itself, exactly once
    assert [f.element_id for f in drive.firings()].count("n_ice_period_ends") == 1
    assert timers.fire_due(drive.sessions) == 0
    assert drive.case().next_timer_due == ist_midnight("2026-03-12")  # D = 02-09, last day 03-11


@pytest.mark.both_databases
@staged_in_one_thread
def test_officer_loses_race_to_the_worker_and_can_retry(drive):
    sold_with_objection_and_notice_timer_due(drive)
    sarpanch = drive.officers["sarpanch"]

    def officer_submits(session, user, case_id):
        opened = cases.get_case(session, user, case_id)
        # the worker fires meanwhile: the notice period's end and, due at the same instant, the
        # open claim's overdue reminder (its due day is the period's last day, 02-08)
        assert timers.fire_due(drive.sessions) == 2
        assert cases.get_case(session, user, case_id) is opened
        return tasks.act(session, user, case_id, "ut_decide_objection", {"decision": "not_proved"},
                         objector="Objector Q")

    with pytest.raises(Conflict):
        uow.perform(drive.sessions, "decide_objection", officer_submits, sarpanch, drive.case_id,
                    case_id=drive.case_id, user=sarpanch)
    assert drive.file().objections[0].decision is None
    drive.act("sarpanch", "ut_decide_objection", {"decision": "not_proved"}, objector="Objector Q")
    assert drive.file().objections[0].decision == "not_proved"
    assert [f.element_id for f in drive.firings()].count("n_ice_period_ends") == 1


def _incidents(drive):
    with drive.sessions() as session:
        return session.scalars(select(Incident).where(Incident.case_id == drive.case_id)).all()


@pytest.mark.both_databases
@staged_in_one_thread
def test_the_same_bid_sent_twice_at_the_same_moment_is_recorded_once_and_the_other_is_a_conflict(drive, monkeypatch):
    """A double click (or two officers) on "Record bid": the second submission read the case before
    the first committed. It must lose as a conflict, never complete the task a second time nor
    post the bid twice (which broke the suspense balance and held the case as an incident)."""
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive, full_price="3000.00")
    drive.move("2026-01-10T12:00:00+05:30")
    bid = {"bidder": "Dbl", "amount": "3500"}
    real_check = tasklist.check_holder
    first_click: list[bool] = []

    def check_holder(session, case, task_id, user):
        if not first_click:  # the second submission has read the case; the first one commits now
            first_click.append(True)
            drive.act("secretary", "ut_record_bid", dict(bid))
        return real_check(session, case, task_id, user)

    monkeypatch.setattr(tasklist, "check_holder", check_holder)
    with pytest.raises(Conflict) as lost:
        drive.act("secretary", "ut_record_bid", dict(bid))
    assert lost.value.message == uow.CONFLICT_MESSAGE
    assert [(b.bidder, b.amount) for b in drive.file().auction.bids] == [("Dbl", Decimal("3500.00"))]
    with drive.sessions() as session:
        balances = ledger.balances(session, drive.case_id)
    assert balances["suspense"] == Decimal("3500.00")
    assert drive.case().held_incident_id is None and _incidents(drive) == []
    assert (drive.file().sale.buyer, drive.file().sale.amount) == ("Dbl", Decimal("3500.00"))


@staged_in_one_thread
def test_a_step_that_fails_on_a_case_changed_meanwhile_is_a_conflict_not_an_incident(drive):
    """Any act whose checks fail only because another transaction changed the case after it was
    read (its ledger no longer adds up, say) is a lost race: 409, nothing saved, no incident."""
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    secretary = drive.officers["secretary"]

    def stale_step(session, user, case_id):
        run = cases.CaseRun(session, cases.get_case(session, user, case_id), user)
        publish(drive)  # another transaction changes the case meanwhile
        raise TaskFailed("the suspense account must hold 0.00", case_id=run.case.id, element_id="st_check")

    before = drive.case().lock_version
    with pytest.raises(Conflict):
        uow.perform(drive.sessions, "stale_step", stale_step, secretary, drive.case_id, case_id=drive.case_id,
                    user=secretary)
    assert drive.case().lock_version > before and drive.case().held_incident_id is None and _incidents(drive) == []

    def failing_step(session, user, case_id):  # the same failure on a case nobody changed: an incident
        run = cases.CaseRun(session, cases.get_case(session, user, case_id), user)
        raise TaskFailed("the suspense account must hold 0.00", case_id=run.case.id, element_id="st_check")

    with pytest.raises(CaseHeld):
        uow.perform(drive.sessions, "failing_step", failing_step, secretary, drive.case_id, case_id=drive.case_id,
                    user=secretary)
    assert [i.message for i in _incidents(drive)] == ["the suspense account must hold 0.00"]


# -- the timer worker ----------------------------------------------------------------------------------

def test_a_late_timer_fires_once_and_records_its_lateness(drive):
    drive.start(ONE_COW)
    due = ist_midnight("2026-01-09")
    assert drive.fire_past(due, timedelta(hours=2)) == 1
    assert timers.fire_due(drive.sessions) == 0
    [firing] = drive.firings()
    assert firing.element_id == "bt_release_window"
    assert firing.due_at == due.astimezone(UTC)
    assert firing.fired_at == due + timedelta(hours=2)
    assert firing.lateness_seconds == 7200
    [event] = [e for e in drive.history() if e.kind == "timer"]
    assert json.loads(event.detail_json)["lateness_seconds"] == 7200
    assert drive.ready("secretary") == [("ut_publish_notice", date(2026, 1, 10))]


def test_worker_lease_is_held_by_one_worker(sessions, virtual_clock):
    timers.acquire_lease(sessions, "worker-a")
    timers.acquire_lease(sessions, "worker-a")  # renewing is fine
    with pytest.raises(timers.LeaseHeld, match="worker-a"):
        timers.acquire_lease(sessions, "worker-b")
    virtual_clock.advance(timedelta(seconds=timers.LEASE_SECONDS + 1))
    timers.acquire_lease(sessions, "worker-b")  # the first lease expired
    with pytest.raises(timers.LeaseHeld):
        timers.acquire_lease(sessions, "worker-a")
    timers.release_lease(sessions, "worker-b")
    timers.acquire_lease(sessions, "worker-a")
