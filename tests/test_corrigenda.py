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

from .driver import ONE_COW, TWO_COWS, publish, sell, send_unsold_to_kishanpura

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


def test_a_notice_whose_full_price_was_mistyped_is_amended_though_it_sent_a_deadline_reminder(drive):
    """The notice of 2026-01-09 opens the 3-day auction, whose last day (2026-01-12) is within the
    "deadline near" window at once: the act sent that reminder. Its replay deletes the reminder in
    the savepoint and sends it again, so the act replays as recorded and is amended; the real
    amendment sends no second reminder."""
    drive.start(ONE_COW)
    publish(drive, full_price="12000.00")
    act_id = latest_act(drive)
    sent = sorted((e.kind, e.name) for e in drive.history() if e.kind == "notification")
    assert ("notification", "deadline_near") in sent
    dry = plan(drive, act_id, {"objection_period_days": "30", "full_price": "15000.00"})
    number = drive.case().case_number
    assert dry["fields"] == [{"field": "full_price", "old": "12000.00", "new": "15000.00"}]
    assert dry["documents_reissued"] == [f"{number}/N1"] and dry["owed"] == []
    done = issue(drive, act_id, {"full_price": "15000.00"}, reason="the full price is 15,000, typed as 12,000")
    assert done["documents_reissued"] == [{"old": f"{number}/N1", "new": f"{number}/N2"}]
    assert drive.file().notice.full_price == D("15000.00")
    assert sorted((e.kind, e.name) for e in drive.history() if e.kind == "notification") == sent  # none again
    with drive.sessions() as s:
        n2 = s.scalar(select(CaseDocument.html).where(CaseDocument.case_id == drive.case_id,
                                                      CaseDocument.number == f"{number}/N2",
                                                      CaseDocument.language == "en"))
    assert f"in place of {number}/N1" in n2 and "15,000.00" in n2


def test_a_bid_amended_below_the_full_price_is_refused_the_act_stands_and_nothing_changes(drive):
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")
    sell(drive, bidder="Bidder B", amount="16000.00")
    act_id = latest_act(drive)
    snapshot = drive.snapshot()
    documents_before = docs(drive)
    drive.move("2026-01-10T10:00:00+05:30")
    with pytest.raises(Refused) as info:
        issue(drive, act_id, {"amount": "14500.00"})
    message = info.value.message
    assert "another course" in message and "the tasks reached" in message and "stands" in message
    assert "appeal under Rule 130(e) proviso within 30 days" in message
    assert info.value.field_errors == {"amount": "changes what the rule does"}
    assert drive.snapshot() == snapshot and docs(drive) == documents_before


def test_a_release_receipts_owner_name_is_amended_and_the_receipt_reissued(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-08T20:00:00+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Ramesh Kumr", "amount_received": "1480.00"})
    act_id = latest_act(drive)
    number = drive.case().case_number
    receipts = [n for n, kind, _ in docs(drive) if kind == "release_receipt"]
    drive.move("2026-01-09T10:00:00+05:30")
    with pytest.raises(NotPermitted):  # the pound keeper made the act; the secretary keeps the record
        issue(drive, act_id, {"owner": "Ramesh Kumar"}, role="pound_keeper")
    done = issue(drive, act_id, {"owner": "Ramesh Kumar"}, reason="the owner's name was misspelt")
    assert done["owed"] == [] and done["adjusting_entries"] == []
    assert done["documents_reissued"] == [{"old": receipts[0], "new": f"{number}/{receipts[0].rsplit('/', 1)[1][0]}2"}]
    assert drive.file().release.owner == "Ramesh Kumar"
    assert (drive.case().status, drive.case().outcome) == ("completed", "released_by_owner")
    assert drive.entries() == [("owner", "pound_account", D("1480.00"), "fine_and_feeding", "reading: release")]
    with drive.sessions() as s:
        new = s.scalar(select(CaseDocument.html).where(CaseDocument.case_id == drive.case_id,
                                                       CaseDocument.number == done["documents_reissued"][0]["new"],
                                                       CaseDocument.language == "en"))
    assert "Ramesh Kumar" in new and "Ramesh Kumr" not in new and f"in place of {receipts[0]}" in new


def test_an_impoundment_tag_is_amended_after_the_notice_and_the_notice_reissued(drive):
    drive.start(TWO_COWS)
    publish(drive)
    drive.move("2026-01-09T12:00:00+05:30")
    ready = drive.all_ready()
    number = drive.case().case_number
    with pytest.raises(Refused) as info:  # the instant of impoundment sets every timer
        issue(drive, "opening", {"impounded_at": "2026-01-05T09:00:00+05:30"})
    assert "another course" in info.value.message
    done = issue(drive, "opening", {"animals.2.tag": "RJ-20"}, reason="the tag reads RJ-20")
    assert done["fields"] == [{"field": "animals.2.tag", "old": "RJ-2", "new": "RJ-20"}]
    assert done["documents_reissued"] == [{"old": f"{number}/N1", "new": f"{number}/N2"}]
    assert [a.tag for a in drive.file().animals] == ["RJ-1", "RJ-20"]
    assert drive.all_ready() == ready
    with drive.sessions() as s:
        n2 = s.scalar(select(CaseDocument.html).where(CaseDocument.case_id == drive.case_id,
                                                      CaseDocument.number == f"{number}/N2",
                                                      CaseDocument.language == "en"))
    assert "RJ-20" in n2 and f"in place of {number}/N1" in n2


def test_a_remittance_typed_10_short_is_amended_and_10_is_to_be_collected_from_the_receiving_officer(drive):
    send_unsold_to_kishanpura(drive)
    drive.move("2026-01-20T10:00:00+05:30")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "7990.00", "expenses": "750.00"})
    act_id = latest_act(drive)
    ready = drive.all_ready()
    drive.move("2026-01-21T10:00:00+05:30")
    done = issue(drive, act_id, {"proceeds": "8000.00"}, reason="the proceeds were 8,000.00")
    number = drive.case().case_number
    assert done["owed"] == [{"party": "receiving_officer", "account": "suspense", "amount": "10.00",
                             "direction": "collect"}]
    assert [(d["old"].rsplit("/", 1)[1], d["new"].rsplit("/", 1)[1]) for d in done["documents_reissued"]] == [("A1", "A2")]
    assert drive.file().dispatch.proceeds == D("8000.00") and drive.file().dispatch.net == D("7250.00")
    assert drive.all_ready() == ready
    assert drive.summary()["ledger"]["suspense"] == D("7240.00")
    sec = drive.officers["secretary"]
    uow.perform(drive.sessions, "settle", corrigenda.settle, sec, drive.case_id, 1, case_id=drive.case_id, user=sec)
    assert drive.summary()["ledger"]["suspense"] == D("7250.00")
    assert drive.entries()[-1] == ("receiving_officer", "suspense", D("10.00"), "corrigendum_collection",
                                   "reading: amending a clerical mistake")
    assert number in done["number"]


def test_a_decision_on_the_merits_or_its_reasons_is_never_amended_and_the_last_day_is_enforced(drive):
    send_unsold_to_kishanpura(drive)
    act_id = latest_act(drive)
    drive.move("2026-01-13T10:00:00+05:30")
    with pytest.raises(NotPermitted):  # the sarpanch's own act
        plan(drive, act_id, {"receiver": "Gram Panchayat Kishanpur"})
    with pytest.raises(Refused, match="on the merits is never amended"):
        plan(drive, act_id, {"choice": "cattle_fair"}, role="sarpanch")
    drive.move("2026-04-13T10:00:00+05:30")  # 2026-01-12 + 90 days = 2026-04-12
    with pytest.raises(Refused, match="until 2026-04-12"):
        plan(drive, act_id, {"receiver": "Gram Panchayat Kishanpur"}, role="sarpanch")


def test_bad_input_names_the_field_and_changes_nothing(drive):
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")
    sell(drive, bidder="Bidder B", amount="16000.00")
    act_id = latest_act(drive)
    snapshot = drive.snapshot()
    with pytest.raises(Refused) as info:
        issue(drive, act_id, {"price": "15500.00"})
    assert info.value.field_errors == {"price": "unknown field"}
    with pytest.raises(Refused) as info:
        issue(drive, act_id, {"amount": "16000.00"})
    assert "nothing to amend" in info.value.message
    with pytest.raises(Refused) as info:
        issue(drive, act_id, {"amount": "15500.00"}, reason="  ")
    assert info.value.field_errors == {"reason": "this field is required"}
    with pytest.raises(Refused) as info:
        issue(drive, act_id, {"amount": "fifteen"})
    assert "amount" in info.value.field_errors
    assert drive.snapshot()[:6] == snapshot[:6]


def test_a_corrigendum_that_changes_the_reasons_of_an_order_is_refused_naming_the_appeal(drive):
    from .driver import ist_midnight
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")
    sell(drive, bidder="Bidder B", amount="15000.00")
    drive.fire_past(ist_midnight("2026-02-09"))
    drive.move("2026-02-09T11:00:00+05:30")
    drive.act("sarpanch", "ut_order_stand", {"remarks": "no objection was filed"})
    act_id = latest_act(drive)
    drive.move("2026-02-10T11:00:00+05:30")
    with pytest.raises(Refused) as info:
        plan(drive, act_id, {"remarks": "no objection was filed in time"}, role="sarpanch")
    assert "does not change a decision's reasons" in info.value.message
    # the Panchayat's decision was made on 2026-02-09: an appeal lies until 2026-03-11 (D + 30)
    assert "by 2026-03-11" in info.value.message
    assert info.value.field_errors == {"remarks": "the reasons"}
