"""A running paper case brought in from a phone, at 360 px, in English and Hindi (issue 31, item 2):
the secretary finds the form from the case list, gives the impoundment, the notice and a full-price
bid with its paper receipt, sees on the check page the period already run out and the overdue act,
confirms, and the case page says it was brought in from the paper file; a refused fact comes back
beside its field. Nothing on these pages is wider than the phone."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import select

from webapp.store.models import Case, PaperReceipt

from .test_officers_in_browser import PHONE, shoot, sign_in

WORDS = {
    "en": {"link": "Bring in a running paper case", "ran_out": "The legal period has already run out",
           "overdue": "Overdue:", "receipt": "Paper receipt R-4512", "done": "brought in from the paper file",
           "history": "Brought in from the paper file", "future": "in the future"},
    "hi": {"link": "चालू कागज़ी प्रकरण दर्ज करें", "ran_out": "विधिक अवधि पहले ही बीत चुकी है",
           "overdue": "समय से पीछे:", "receipt": "कागज़ी रसीद R-4512", "done": "कागज़ी पत्रावली से दर्ज किया गया",
           "history": "कागज़ी पत्रावली से दर्ज किया गया", "future": "भविष्य में है"},
}


def narrow(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0


def fill_case(page, bid_at: str) -> None:
    page.fill("#impounded_at", "2026-02-01T10:00")
    page.fill("#place_seized", "Bhimpura")
    page.fill("#place_impounded", "Kanji House, Rampura")
    page.fill("#nearest_village", "Bhimpura")
    page.select_option("#species-1", "cow")
    page.fill("#description-1", "brown cow")
    page.select_option("#do-1", "publish_notice")
    page.fill("#at-1", "2026-02-05T11:00")
    page.fill("#amount-1", "5000.00")
    page.fill("#days-1", "30")
    page.fill("#paper_number-1", "N-17")
    page.select_option("#do-2", "bid")
    page.fill("#at-2", bid_at)
    page.fill("#name-2", "Mohan")
    page.fill("#amount-2", "5200.00")
    page.fill("#receipt_number-2", "R-4512")
    page.fill("#amount_received-2", "5200.00")


@pytest.mark.parametrize("language", ["en", "hi"])
def test_a_paper_case_is_brought_in_from_a_phone(language, browser, live_server, sessions, virtual_clock):
    words = WORDS[language]
    virtual_clock.set(datetime.fromisoformat("2026-03-10T12:00:00+05:30"))
    page = sign_in(browser, live_server, "sec", PHONE, language)
    page.goto(f"{live_server}/cases")
    page.click("#paper-case-link")
    page.wait_for_load_state()
    assert page.inner_text("h1") == words["link"]
    narrow(page)
    # a bid dated after the bring-in is refused beside its field, and nothing is recorded
    fill_case(page, "2026-03-11T09:00")
    page.click("main form [type=submit]")
    page.wait_for_load_state()
    assert words["future"] in page.inner_text("#paper-error")
    assert page.get_attribute("#at-2", "aria-invalid") == "true"
    narrow(page)
    page.fill("#at-2", "2026-02-06T12:00")  # every other value was kept
    page.click("main form [type=submit]")
    page.wait_for_load_state()
    follows = page.inner_text("#check-follows")
    assert words["ran_out"] in follows and words["receipt"] in follows and "N-17" in follows
    narrow(page)
    shoot(page, "paper-case-check" + ("" if language == "en" else f"-{language}"))
    with sessions() as session:
        assert session.scalar(select(Case)) is None
    page.click("#check-confirm")
    page.wait_for_load_state()
    assert words["done"] in page.inner_text("main")
    assert words["history"] in page.inner_text("main")
    narrow(page)
    with sessions() as session:
        receipt = session.scalars(select(PaperReceipt)).one()
        assert (receipt.number, str(receipt.amount)) == ("R-4512", "5200.00")
    page.context.close()
