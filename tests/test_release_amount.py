"""The release form: the total to collect (F + C on the act's day) on the form and the check page,
the amount received (Devanagari digits accepted), refused when less than is due (naming both
amounts, at the field and in the error summary, nothing changed), and the change given back on the
receipt and in the ledger memo while the ledger takes exactly F + C (docs/RULE130.md)."""

from __future__ import annotations

from decimal import Decimal

import lxml.html

from webapp.services.money import ledger
from webapp.store.models import Case, CaseDocument

from .test_web_pages import at, case_file, complete, confirm_check, element_text, start_case_on_page, task_link, text_of


def test_release_form_shows_the_total_refuses_less_and_records_the_change(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)  # two cows impounded 2026-01-05
    virtual_clock.set(at("2026-01-06T10:00:00+05:30"))
    link = task_link(client, "Release cattle to owner")
    # F = 2 x 500.00; C = 2 x 60.00 x 2 days (01-05, 01-06) = 240.00
    assert element_text(client.get(link), "release-due") == "₹1,240.00"

    short = complete(client, link, owner="Owner M", amount_received="९००")
    assert short.status_code == 422
    doc = lxml.html.fromstring(short.get_data(as_text=True))
    assert element_text(short, "f-amount_received-error") == "₹1,240.00 is due; ₹900.00 was entered"
    assert [" ".join(a.text_content().split()) for a in doc.xpath("//ul[@class='error-summary-list']//a")] == [
        "Amount received from the owner (₹): ₹1,240.00 is due; ₹900.00 was entered"]
    assert case_file(sessions, case_id).release is None

    check = complete(client, link, confirm=False, owner="Owner M", amount_received="१३००")
    assert check.status_code == 200
    checked = element_text(check, "check-values")
    assert "Total to collect (fine + feeding)₹1,240.00Amount received from the owner (₹)₹1,300.00" in checked
    assert "Change to give back₹60.00" in checked
    assert confirm_check(client, check).status_code == 302

    release = case_file(sessions, case_id).release
    assert (release.received, release.change) == (Decimal("1300.00"), Decimal("60.00"))
    with sessions() as session:
        [entry] = ledger.entries(session, case_id)
        assert (entry.to_account, entry.amount) == ("pound_account", Decimal("1240.00"))
        assert entry.memo == "fine and feeding paid by Owner M; received 1300.00, change returned 60.00"
        receipt = session.query(CaseDocument).filter_by(case_id=case_id, kind="release_receipt", language="en").one()
        receipt_id = receipt.id
        assert session.get(Case, case_id).outcome == "released_by_owner"
    text = text_of(client.get(f"/cases/{case_id}/documents/{receipt_id}"))
    assert "Amount received from the owner ₹1,300.00" in text
    assert "Change given back to the owner ₹60.00" in text
