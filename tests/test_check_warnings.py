"""The check page warns before an act that no correction can undo, and on a bid that looks
mistyped (issue 30, item 3). What cannot be undone is judged, in the check step's rolled-back
transaction, by the rule corrections apply to the act just applied (money paid out, cattle handed
over; a decision on the merits only on its day): webapp.services.cases.corrections.cannot_be_undone.
One cow (fine 500.00, feeding 60.00 a day) impounded 2026-01-05 10:00 IST; notice 2026-01-09 with
the full price 12,000.00."""

from __future__ import annotations

from decimal import Decimal

import lxml.html
import pytest

from webapp.services.tasks import rules

from .driver import ONE_COW, ist_midnight, publish
from .test_web_pages import login, task_form, task_link, text_of

FULL = "once you confirm, this act has sold the cattle to Bidder B, who took them on"


def warnings_of(page) -> list[str]:
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    return [" ".join(li.text_content().split()) for li in doc.xpath("//section[@id='check-warnings']//li")]


def check_bid(client, amount, bidder="Bidder B"):
    link = task_link(client, "Record bid")
    page = client.post(link, data={**task_form(client, link), "bidder": bidder, "amount": amount, "step": "check"})
    assert page.status_code == 200, text_of(page)
    return page


@pytest.fixture
def bidding(drive, client):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-10T15:00:00+05:30")
    login(client, "sec")
    return drive


def test_a_full_price_bid_is_warned_of_before_confirm_a_lower_one_is_not(bidding, client):
    full = warnings_of(check_bid(client, "16000"))
    assert full == [FULL + " Saturday, 10 January 2026: no correction can undo that; a mistake can then only be "
                           "amended where it changes nothing the rule does"]
    assert warnings_of(check_bid(client, "11000")) == []  # a bid below the full price can be corrected
    assert bidding.file().auction.bids == []  # nothing recorded by either check


def test_a_bid_not_higher_than_an_earlier_one_is_warned_of(bidding, client):
    bidding.act("secretary", "ut_record_bid", {"bidder": "Bidder A", "amount": "9000.00"})
    assert warnings_of(check_bid(client, "9000")) == [
        "this bid of ₹9,000.00 is not higher than the earlier bid of ₹9,000.00 by Bidder A: check the amount"]
    assert warnings_of(check_bid(client, "8500.50")) == [
        "this bid of ₹8,500.50 is not higher than the earlier bid of ₹9,000.00 by Bidder A: check the amount"]
    assert warnings_of(check_bid(client, "9000.01")) == []


def test_a_bid_many_times_the_full_price_is_warned_of(bidding, client):
    said = warnings_of(check_bid(client, "120000"))
    assert said[0] == ("this bid of ₹1,20,000.00 is 10.0 times the full price of ₹12,000.00: check the amount "
                       "(a digit too many?)")
    assert said[1].startswith(FULL)
    assert rules.bid_warnings(bidding.file(), Decimal("35999.99")) == []  # under 3 times: no warning
    assert len(rules.bid_warnings(bidding.file(), Decimal("36000.00"))) == 1


def test_the_warning_reads_in_hindi(bidding, client):
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    link = task_link(client, "बोली दर्ज करें")
    page = client.post(link, data={**task_form(client, link), "bidder": "Bidder B", "amount": "36000", "step": "check"})
    said = warnings_of(page)
    assert len(said) == 2 and all("this bid" not in s and "once you confirm" not in s for s in said)
    assert "कोई सुधार" in said[1] and "₹36,000.00" in said[0]


def test_a_release_and_a_decision_on_the_merits_are_warned_of(drive, client):
    drive.start(ONE_COW)
    drive.move("2026-01-06T10:00:00+05:30")
    login(client, "pk")
    link = task_link(client, "Release cattle to owner")
    page = client.post(link, data={**task_form(client, link), "owner": "Owner O", "amount_received": "620",
                                   "step": "check"})
    assert page.status_code == 200, text_of(page)
    assert warnings_of(page) == [
        "once you confirm, this act has released the cattle to their owner Owner O on Tuesday, 6 January 2026: no "
        "correction can undo that; a mistake can then only be amended where it changes nothing the rule does"]


def test_an_order_that_the_auction_stand_warns_that_it_is_corrected_only_today(drive, client):
    from .driver import sell
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive)
    drive.fire_past(ist_midnight("2026-02-09"))
    drive.move("2026-02-09T11:00:00+05:30")
    login(client, "sar")
    link = task_link(client, "Order that the auction stand")
    page = client.post(link, data={**task_form(client, link), "step": "check"})
    assert page.status_code == 200, text_of(page)
    assert warnings_of(page) == [
        "a decision on the merits can be corrected only today, by the officer who made it; from tomorrow it stands "
        "and is changed by appeal (Rule 130(e) proviso)"]
