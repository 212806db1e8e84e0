"""The ledger module (webapp.services.money.ledger): postings, the invariants, and corrections by reversal.

Rupee figures are worked by hand from RULE130.md "Money" with the default tariff (cow: fine
500.00, feeding 60.00 a day).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from webapp.errors import EngineFailure, NotFound, NotPermitted
from webapp.services.money import ledger
from webapp.services.running import uow
from webapp.store.models import AuditEntry, Case, CaseEvent, LedgerEntry

from .driver import ONE_COW, TWO_COWS, ist_midnight, order_stand_to_final, publish, refused, sell

D = Decimal


def entry(id_, source, target, amount, kind="x", reversal_of=None) -> LedgerEntry:
    return LedgerEntry(id=id_, case_id=1, panchayat_id=1, at=datetime(2026, 1, 5, tzinfo=UTC),
                       from_account=source, to_account=target, amount=D(amount), kind=kind, clause="Rule 130(e)",
                       element_id=None, officer_id=None, memo="", reversal_of=reversal_of, reason="")


# -- the invariants on hand-built entries ----------------------------------------------------------

SOLD = [entry(1, "buyer", "suspense", "9000.00", "auction_money"),
        entry(2, "suspense", "pound_account", "1960.00", "fine_and_feeding"),
        entry(3, "suspense", "panchayat_fund", "7040.00", "balance")]


def kinds(found):
    return [p.invariant for p in found]


def test_a_settled_sale_breaks_no_invariant():
    assert ledger.problems(SOLD, closed=True, outcome="auction_final", shortfall=D("0.00"),
                           expected=ledger.Expected(due=D("1960.00"), feeding=D("960.00"))) == []
    assert ledger.net(SOLD) == {"buyer": D("-9000.00"), "suspense": D("0.00"), "pound_account": D("1960.00"),
                                "panchayat_fund": D("7040.00")}


def test_money_left_in_suspense_at_the_end_is_named():
    found = ledger.problems(SOLD[:2], closed=True, outcome="auction_final", shortfall=D("0.00"))
    assert kinds(found) == ["suspense_at_end"]
    assert "₹7,040.00 in the suspense account" in found[0].message
    assert ledger.problems(SOLD[:2], closed=False, outcome="pending", shortfall=D("0.00")) == []


def test_an_account_of_the_panchayat_below_zero_is_named():
    found = ledger.problems([entry(1, "suspense", "buyer", "100.00")], closed=False, outcome="pending",
                            shortfall=D("0.00"))
    assert kinds(found) == ["below_zero"]
    assert "suspense would go below zero (-₹100.00)" in found[0].message


def test_a_shortfall_only_where_the_rule_leaves_fine_and_feeding_unpaid():
    short = [entry(1, "buyer", "suspense", "1000.00", "auction_money"),
             entry(2, "suspense", "pound_account", "1000.00", "fine_and_feeding")]
    due = ledger.Expected(due=D("1960.00"), feeding=D("960.00"))
    assert ledger.problems(short, closed=True, outcome="auction_final", shortfall=D("960.00"), expected=due) == []
    assert kinds(ledger.problems(short, closed=True, outcome="returned_to_objector", shortfall=D("960.00"),
                                 expected=due)) == ["shortfall", "feeding_charges"]
    assert kinds(ledger.problems(short, closed=False, outcome="pending", shortfall=D("-1.00"))) == ["shortfall"]
    # the shortfall recorded must be exactly what the pound account did not receive
    wrong = ledger.problems(short, closed=True, outcome="auction_final", shortfall=D("900.00"), expected=due)
    assert kinds(wrong) == ["fine_and_feeding"]
    assert "(₹1,000.00) plus the shortfall (₹900.00) do not equal F + C (₹1,960.00)" in wrong[0].message


def test_a_reversed_entry_and_its_reversal_leave_the_sums_of_the_case():
    rows = [*SOLD, entry(4, "pound_account", "suspense", "1960.00", "reversal", reversal_of=2)]
    assert [e.id for e in ledger.effective(rows)] == [1, 3]
    assert [e.id for e in ledger.reversible(rows)] == [1, 3]
    assert ledger.reversed_by(rows)[2].id == 4
    assert ledger.total_to(rows, "pound_account") == D("0.00")
    found = ledger.problems(rows, closed=True, outcome="auction_final", shortfall=D("0.00"),
                            expected=ledger.Expected(due=D("1960.00"), feeding=D("960.00")))
    assert kinds(found) == ["suspense_at_end", "fine_and_feeding"]


def test_a_running_case_must_hold_in_suspense_what_its_file_says():
    held = ledger.Expected(suspense_held=D("9000.00"))
    assert ledger.problems(SOLD[:1], closed=False, outcome="pending", shortfall=D("0.00"), expected=held) == []
    short = ledger.problems([*SOLD[:1], entry(4, "suspense", "buyer", "172.30", "reversal", reversal_of=1)],
                            closed=False, outcome="pending", shortfall=D("0.00"), expected=held)
    assert kinds(short) == ["suspense_held"]
    assert "must hold ₹9,000.00" in short[0].message and "not ₹8,827.70" in short[0].message
    delivered = [entry(1, "objector", "pound_account", "1960.00", "fine_and_feeding")]
    owed = ledger.Expected(suspense_held=D("0.00"), pound_held=D("1960.00"))
    assert ledger.problems(delivered, closed=False, outcome="pending", shortfall=D("0.00"), expected=owed) == []
    assert kinds(ledger.problems(delivered[:0], closed=False, outcome="pending", shortfall=D("0.00"),
                                 expected=owed)) == ["pound_held"]


def test_what_the_file_says_suspense_holds():
    from webapp.values.casefile import Dispatch, InterimDelivery, Sale

    from .test_fees import animal, case_file
    cf = case_file(animal(1))
    assert ledger.held_in_suspense(cf) == D("0.00")
    cf.sale = Sale(buyer="B", amount=D("9000.00"), day=datetime(2026, 1, 10).date(), kind="full_price")
    cf.interim = InterimDelivery(objector="K", security=D("1000.00"), day=datetime(2026, 1, 9).date())
    assert ledger.held_in_suspense(cf) == D("10000.00")
    cf.interim.refunded = True
    cf.sale.returned_on = datetime(2026, 3, 5).date()
    assert ledger.held_in_suspense(cf) == D("0.00")
    cf.dispatch = Dispatch(send_to="cattle_fair", receiver="F", receiver_user_id=None, day=datetime(2026, 1, 13).date(),
                           proceeds=D("8000.00"), expenses=D("750.00"))
    assert ledger.held_in_suspense(cf) == D("7250.00")
    cf.delivered_on = datetime(2026, 3, 6).date()
    assert ledger.held_in_suspense(cf) == D("0.00")


# -- posting ------------------------------------------------------------------------------------


def sold_at_full_price(drive):
    """Two cows impounded 2026-01-05; notice 01-09; Bidder B's 12500.00 at full price on 01-10."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder B", "12500.00", "2026-01-10T15:00:00+05:30")


def reverse(drive, entry_id, reason, role="secretary"):
    user = drive.officers[role]
    return uow.perform(drive.sessions, "reverse_entry", ledger.reverse, user, drive.case_id, entry_id, reason,
                       case_id=drive.case_id, user=user)


def test_a_posting_carries_case_clause_task_officer_and_instant(drive):
    sold_at_full_price(drive)
    with drive.sessions() as s:
        [e] = ledger.entries(s, drive.case_id)
        assert (e.from_account, e.to_account, e.amount, e.kind, e.clause) == (
            "buyer", "suspense", D("12500.00"), "auction_money", "Rule 130(b)")
        assert e.case_id == drive.case_id and e.element_id == "svc_conclude_sale"
        assert e.officer_id == drive.officers["secretary"].id
        assert e.at == datetime.fromisoformat("2026-01-10T15:00:00+05:30")


@pytest.mark.parametrize("amount", [D("0.00"), D("-5.00"), D("1.005"), 12, D("NaN")])
def test_a_posting_that_is_not_a_positive_amount_in_paise_is_refused(drive, amount):
    drive.start(ONE_COW)
    with drive.sessions() as s:
        book = ledger.CaseLedger(s, drive.case(), None)
        with pytest.raises(EngineFailure, match="not a positive amount in paise"):
            book.post("owner", "pound_account", amount, kind="x", clause="test")
        with pytest.raises(EngineFailure, match="no posting from owner to nowhere"):
            book.post("owner", "nowhere", D("1.00"), kind="x", clause="test")


def test_entries_are_never_edited_or_deleted_through_the_orm_or_sql(drive):
    sold_at_full_price(drive)
    with drive.sessions() as s:
        e = s.scalar(select(LedgerEntry))
        e.amount = D("1.00")
        with pytest.raises(EngineFailure, match="never edited or deleted"):
            s.flush()
        s.rollback()
        s.delete(s.scalar(select(LedgerEntry)))
        with pytest.raises(EngineFailure, match="cannot be deleted"):
            s.flush()
        s.rollback()
    for statement in ("UPDATE ledger_entry SET amount = 1", "DELETE FROM ledger_entry"):
        with drive.sessions() as s:
            with pytest.raises(DBAPIError, match="never edited or deleted"):
                s.execute(text(statement))
            s.rollback()
    assert drive.entries() == [("buyer", "suspense", D("12500.00"), "auction_money", "Rule 130(b)")]


# -- reversals --------------------------------------------------------------------------------------

def posted_twice(drive) -> int:
    """The auction money posted a second time, as a faulty earlier version could have done (written
    straight to the journal, not through a step of the case): the ledger disagrees with the file."""
    with drive.sessions() as s:
        book = ledger.CaseLedger(s, s.get(Case, drive.case_id), None)
        book.element_id = "svc_conclude_sale"
        entry = book.post("buyer", "suspense", D("12500.00"), kind="auction_money", clause="Rule 130(b)")
        s.commit()
        return entry.id


def test_the_secretary_reverses_an_entry_posted_in_error_with_a_reason_once(drive, officers):
    sold_at_full_price(drive)
    twice = posted_twice(drive)
    with drive.sessions() as s:
        sale = ledger.entries(s, drive.case_id)[0]
        assert ledger.balances(s, drive.case_id)["suspense"] == D("25000.00")
    drive.move("2026-01-11T10:00:00+05:30")
    made = reverse(drive, twice, "the auction money was posted twice")
    assert made.reversal_of == twice
    assert drive.entries() == [
        ("buyer", "suspense", D("12500.00"), "auction_money", "Rule 130(b)"),
        ("buyer", "suspense", D("12500.00"), "auction_money", "Rule 130(b)"),
        ("suspense", "buyer", D("12500.00"), "reversal", "Rule 130(b)")]
    s_ = drive.summary()
    assert s_["ledger"]["suspense"] == D("12500.00")  # again what the file says it holds: the sale price
    assert s_["paid"]["buyer"] == D("0.00")  # a reversal is not a payment
    with drive.sessions() as s:
        rows = ledger.entries(s, drive.case_id)
        assert (rows[2].reason, rows[2].officer_id, rows[2].element_id) == (
            "the auction money was posted twice", officers["secretary"].id, "svc_conclude_sale")
        assert rows[2].at == datetime.fromisoformat("2026-01-11T10:00:00+05:30")
        audit = [json.loads(a.detail_json) for a in s.scalars(select(AuditEntry).where(AuditEntry.kind == "ledger.entry"))]
        assert audit[-1]["reversal_of"] == twice and audit[-1]["reason"] == "the auction money was posted twice"
        [event] = s.scalars(select(CaseEvent).where(CaseEvent.name == "Ledger entry reversed")).all()
        assert json.loads(event.detail_json) == {"entry": twice, "reversal": rows[2].id, "amount": "12500.00",
                                                 "from": "buyer", "to": "suspense",
                                                 "reason": "the auction money was posted twice"}
    refused(drive, reverse, drive, twice, "again", match=f"already reversed by entry {rows[2].id}")
    refused(drive, reverse, drive, rows[2].id, "undo", match="itself the reversal")
    # the sale's own entry is what the file says: reversing it too would leave the buyer's repayment unfunded
    refused(drive, reverse, drive, sale.id, "wrong case",
            match="the suspense account must hold ₹12,500.00 for this case's later steps")


def test_a_reversal_of_money_a_later_step_needs_is_refused(drive):
    """Found by the property test: the reversed auction money left the buyer's later repayment
    short (suspense -172.30 at "Take cattle back from buyer"); now the reversal itself is refused."""
    sold_at_full_price(drive)
    with drive.sessions() as s:
        [sale] = ledger.entries(s, drive.case_id)
    refused(drive, reverse, drive, sale.id, "the bid was recorded in the wrong case",
            match="must hold ₹12,500.00 for this case's later steps (the auction money, remittance or security "
                  "on its file), not ₹0.00")


def test_a_reversal_is_refused_without_a_reason_or_for_another_role_or_panchayat(drive, officers):
    sold_at_full_price(drive)
    with drive.sessions() as s:
        [sale] = ledger.entries(s, drive.case_id)
    refused(drive, reverse, drive, sale.id, "   ", match="give the reason")
    refused(drive, reverse, drive, sale.id, "x" * 501, match="longer than 500")
    refused(drive, reverse, drive, sale.id, "typo", role="sarpanch", error=NotPermitted, match="only the secretary")
    with pytest.raises(NotFound, match="no ledger entry 999999"):  # a "not found" leaves no trace
        reverse(drive, 999_999, "typo")
    with pytest.raises(NotFound):
        reverse(drive, sale.id, "typo", role="other_secretary")
    assert len(drive.entries()) == 1


def test_a_reversal_that_would_break_an_invariant_is_refused_naming_it(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-08T23:59:59+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Owner M"})
    with drive.sessions() as s:
        [paid] = ledger.entries(s, drive.case_id)
    # F = 2 x 500 + C = 2 x 60 x 4 days: 1480.00 paid; the closed case must keep it
    refusal = refused(drive, reverse, drive, paid.id, "owner paid twice",
                      match="fine and feeding received (₹0.00) plus the shortfall (₹0.00) do not equal F + C (₹1,480.00)")
    # a Hindi page says it all in Hindi: the invariant is a catalogue message too
    from webapp.i18n import localize
    assert localize(refusal.message, language="hi") == (
        f"प्रविष्टि {paid.id} उलटी नहीं जा सकती: खाता-बही: प्राप्त जुर्माना और खुराक व्यय (₹0.00) तथा कमी (₹0.00) "
        "मिलकर F + C (₹1,480.00) के बराबर नहीं हैं")


def test_a_reversal_that_would_leave_suspense_below_zero_is_refused(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder B", "12500.00", "2026-01-10T15:00:00+05:30")
    order_stand_to_final(drive)
    assert drive.case().outcome == "auction_final"
    with drive.sessions() as s:
        sale, to_pound, to_fund = ledger.entries(s, drive.case_id)
    # F = 1000; C = 2 x 60 x (01-05..01-10 = 6 days) = 720; the balance 10780 went to the fund
    assert (to_pound.amount, to_fund.amount) == (D("1720.00"), D("10780.00"))
    refused(drive, reverse, drive, sale.id, "wrong buyer", match="suspense would go below zero (-₹12,500.00)")
    refused(drive, reverse, drive, to_fund.id, "wrong account",
            match="the case would end with ₹10,780.00 in the suspense account")


# -- the page and the API ------------------------------------------------------------------------------

def sign_in(client, username):
    from .conftest import PASSWORD
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302


def test_the_case_page_offers_the_secretary_a_reversal_and_shows_it(client, drive):
    sold_at_full_price(drive)
    twice = posted_twice(drive)
    sign_in(client, "sec")
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert f'action="/cases/{drive.case_id}/ledger/reversals"' in page
    assert f'<option value="{twice}">{twice}: auction money, ₹12,500.00 (buyer → suspense)' in page
    response = client.post(f"/cases/{drive.case_id}/ledger/reversals", data={"entry": str(twice), "reason": ""})
    assert response.status_code == 422
    assert "give the reason for the reversal" in response.get_data(as_text=True)
    response = client.post(f"/cases/{drive.case_id}/ledger/reversals",
                           data={"entry": str(twice), "reason": "entered twice"})
    assert response.status_code == 302
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert f"reversal of entry {twice}: entered twice" in page
    assert f"reversed by entry {twice + 1}" in page
    response = client.post(f"/cases/{drive.case_id}/ledger/reversals", data={"entry": str(twice - 1), "reason": "x"})
    assert response.status_code == 422
    assert "must hold ₹12,500.00" in response.get_data(as_text=True)


def test_the_api_lists_entries_and_reverses_one(client, drive, sessions):
    from webapp.services.people import users
    sold_at_full_price(drive)
    posted_twice(drive)
    with sessions() as s:
        token = users.create_token(s, "sec")
        keeper = users.create_token(s, "pk")
        s.commit()
    url = f"/api/v1/cases/{drive.case_id}"
    _, sale = client.get(url, headers={"Authorization": f"Bearer {token}"}).get_json()["ledger_entries"]
    assert (sale["from"], sale["to"], sale["amount"], sale["reversal_of"]) == ("buyer", "suspense", "12500.00", None)
    response = client.post(f"{url}/ledger/reversals", json={"entry": sale["id"], "reason": "wrong case"},
                           headers={"Authorization": f"Bearer {keeper}"})
    assert response.status_code == 403
    response = client.post(f"{url}/ledger/reversals", json={"entry": sale["id"], "reason": "wrong case"},
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201
    reversal = response.get_json()["ledger_entries"][2]
    assert (reversal["from"], reversal["to"], reversal["amount"], reversal["reversal_of"], reversal["reason"]) == (
        "suspense", "buyer", "12500.00", sale["id"], "wrong case")
    response = client.post(f"{url}/ledger/reversals", json={"entry": sale["id"], "reason": "again"},
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 422
    assert "already reversed" in response.get_json()["error"]["message"]


def test_the_migration_goes_down_and_up_with_entries_kept_and_the_guard_back(drive, sessions, database_url):
    from alembic import command
    from alembic.config import Config

    from webapp.store.db import ROOT

    sold_at_full_price(drive)
    config = Config()
    config.set_main_option("script_location", str(ROOT / "webapp" / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    sessions.kw["bind"].dispose()
    command.downgrade(config, "0012_documents")
    with sessions() as s:
        assert s.execute(text("SELECT amount FROM ledger_entry")).scalars().all() == [D("12500.00")]
        s.execute(text("UPDATE ledger_entry SET memo = memo"))  # no guard before 0011_ledger
        s.rollback()
    command.upgrade(config, "head")
    assert drive.entries() == [("buyer", "suspense", D("12500.00"), "auction_money", "Rule 130(b)")]
    with drive.sessions() as s:
        with pytest.raises(DBAPIError, match="never edited or deleted"):
            s.execute(text("DELETE FROM ledger_entry"))
        s.rollback()
