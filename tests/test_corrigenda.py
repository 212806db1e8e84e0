"""The corrigendum (RULE130.md "The corrigendum"; webapp.services.cases.corrigenda): facts an act
recorded wrongly are amended where the rule, replaying the act with them, takes the same course;
money differences are owed or adjusted, affected documents reissued "in place of" the old number,
a notice issued in English and Hindi. Another course is refused: the act stands. Cows: fine
500.00, feeding 60.00 a day; impounded 2026-01-05 10:00 IST."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import select

from webapp.errors import NotPermitted, Refused
from webapp.services.cases import corrigenda
from webapp.services.running import acts, uow
from webapp.store.models import CaseDocument

from .driver import ONE_COW, TWO_COWS, publish, sell

D = Decimal


def latest_act(drive):
    with drive.sessions() as s:
        return acts.latest(s, drive.case_id).id


def issue(drive, act_id, values, reason="typed wrongly", role="secretary"):
    user = drive.officers[role]
    return uow.perform(drive.sessions, "corrigendum", corrigenda.issue, user, drive.case_id, act_id, values, reason,
                       case_id=drive.case_id, user=user)


def plan(drive, act_id, values, role="secretary"):
    user = drive.officers[role]
    with drive.sessions() as s:
        return corrigenda.plan(s, user, drive.case_id, act_id, values).as_json()


def docs(drive):
    with drive.sessions() as s:
        return [(d.number, d.kind, d.cancel_reason) for d in s.scalars(select(CaseDocument).where(
            CaseDocument.case_id == drive.case_id, CaseDocument.language == "en").order_by(CaseDocument.id))]


def test_a_full_price_bid_typed_16000_for_15500_is_amended_with_a_refund_owed_to_the_buyer(drive):
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")
    sell(drive, bidder="Bidder B", amount="16000.00")
    act_id = latest_act(drive)
    before = (drive.all_ready(), drive.case().next_timer_due, drive.file().timers)
    drive.move("2026-01-10T10:00:00+05:30")
    dry = plan(drive, act_id, {"amount": "15500.00"})
    assert dry["fields"] == [{"field": "amount", "old": "16000.00", "new": "15500.00"}]
    assert dry["owed"] == [{"party": "buyer", "account": "suspense", "amount": "500.00", "direction": "refund"}]
    assert dry["documents_reissued"] == [f"{drive.case().case_number}/R1"]
    done = issue(drive, act_id, {"amount": "15500.00"}, reason="the bid was 15,500, typed as 16,000")
    number = drive.case().case_number
    assert done["number"] == f"{number}/C1"
    assert done["documents_reissued"] == [{"old": f"{number}/R1", "new": f"{number}/R2"}]
    cf = drive.file()
    assert cf.sale.amount == D("15500.00") and cf.auction.bids[-1].amount == D("15500.00")
    assert cf.sale.buyer == "Bidder B" and cf.auction.status == "sold"
    assert [(o.party, o.amount, o.direction, o.corrigendum, o.settled_on) for o in cf.owed] == [
        ("buyer", D("500.00"), "refund", f"{number}/C1", None)]
    assert (drive.all_ready(), drive.case().next_timer_due, drive.file().timers) == before  # the same course
    listed = docs(drive)
    assert (f"{number}/R1", "sale_receipt",
            f"superseded by corrigendum {number}/C1: the bid was 15,500, typed as 16,000") in listed
    assert (f"{number}/R2", "sale_receipt", None) in listed
    assert (f"{number}/C1", "corrigendum_notice", None) in listed
    with drive.sessions() as s:
        r2 = {d.language: d.html for d in s.scalars(select(CaseDocument).where(
            CaseDocument.case_id == drive.case_id, CaseDocument.number == f"{number}/R2"))}
        c1 = {d.language: d.html for d in s.scalars(select(CaseDocument).where(
            CaseDocument.case_id == drive.case_id, CaseDocument.number == f"{number}/C1"))}
    assert f"in place of {number}/R1" in r2["en"] and "15,500.00" in r2["en"]
    assert "16,000.00" in c1["en"] and "15,500.00" in c1["en"] and "500.00" in c1["en"]
    assert set(c1) == {"en", "hi"} and c1["hi"] != c1["en"]
    row = [e for e in drive.history() if e.kind == "corrigendum"][-1]
    detail = json.loads(row.detail_json)
    assert detail["fields"] == [{"field": "amount", "old": "16000.00", "new": "15500.00"}]
    # the secretary pays the refund: the suspense account then holds the amended amount
    sec = drive.officers["secretary"]
    uow.perform(drive.sessions, "settle", corrigenda.settle, sec, drive.case_id, 1, case_id=drive.case_id, user=sec)
    assert drive.summary()["ledger"]["suspense"] == D("15500.00")
    assert drive.summary()["paid"]["buyer"] == D("500.00")
    assert drive.file().owed[0].settled_on is not None
