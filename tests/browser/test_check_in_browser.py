"""Check before it counts, in a real browser at 360 px, in English and Hindi: a bid goes through its
check page (the values as recorded, what follows, the deadline it meets), Change brings the form back
with every value kept, Confirm records it and the page says what followed, with the receipt's link;
the death of the last animal shows that the case will close before anything is recorded."""

from __future__ import annotations

import pytest

from webapp.simulation.simulate import fire_until
from webapp.store.models import Case
from webapp.values import casefile

from .test_officers_in_browser import PHONE, at, open_task, shoot, sign_in

WORDS = {
    "en": {"check": "Check: ", "follows": "What follows", "sale": "the auction closes: Bidder B buys the cattle",
           "closes": "the case closes", "deadline": "This act is in time for the"},
    "hi": {"check": "जाँचें: ", "follows": "इसके परिणाम", "sale": "नीलामी बंद होती है: Bidder B पशुओं को",
           "closes": "प्रकरण बंद होता है", "deadline": "यह कार्य"},
}


def impound_one_cow(keeper, base: str) -> int:
    keeper.goto(f"{base}/cases/new")
    keeper.fill("#impounded_at", "2026-01-05T10:00")
    keeper.fill("#place_seized", "Bhimpura")
    keeper.fill("#place_impounded", "Kanji House, Rampura")
    keeper.fill("#nearest_village", "Bhimpura")
    keeper.select_option("[name=species-1]", "cow")
    keeper.fill("[name=description-1]", "grey cow, bell on neck")
    keeper.fill("[name=tag-1]", "RJ-9")
    keeper.click("main form [type=submit]")
    keeper.click("#check-confirm")  # the new case's check page
    keeper.wait_for_load_state()
    return int(keeper.url.rstrip("/").split("/")[-1])


def case_file(sessions, case_id: int) -> casefile.CaseFile:
    with sessions() as session:
        return casefile.load(session.get(Case, case_id).file_json)


@pytest.mark.parametrize("language", ["en", "hi"])
def test_a_bid_is_checked_changed_and_confirmed_on_a_phone(language, browser, live_server, sessions, virtual_clock):
    words, base = WORDS[language], live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", PHONE, language)
    case_id = impound_one_cow(keeper, base)

    # the death form has nothing chosen: one tap records nothing
    keeper.goto(f"{base}/cases/{case_id}")
    assert keeper.locator("#animal").input_value() == ""
    assert keeper.locator("input[name=kind]:checked").count() == 0
    keeper.select_option("#animal", "1")
    keeper.check("input[name=kind][value=death]")
    keeper.click("form[action$='/animal-events'] [type=submit]")
    keeper.wait_for_load_state()
    assert keeper.locator("h1").inner_text().startswith(words["check"])
    assert words["closes"] in keeper.locator("#check-follows").inner_text()
    keeper.click("#check-change")  # back to the case page: nothing recorded, the choices kept
    keeper.wait_for_load_state()
    assert keeper.locator("#animal").input_value() == "1"
    assert keeper.locator("input[name=kind][value=death]").is_checked()
    assert case_file(sessions, case_id).animals[0].died_on is None

    fire_until(sessions, case_id, virtual_clock, at("2026-01-09T11:00:00+05:30"))
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    secretary = sign_in(browser, base, "sec", PHONE, language)
    open_task(secretary, base, sessions, case_id, "ut_publish_notice")
    secretary.fill("[name=objection_period_days]", "30")
    secretary.fill("[name=full_price]", "12000.00")
    secretary.click("main form.card [type=submit]")
    secretary.click("#check-confirm")
    secretary.wait_for_load_state()

    virtual_clock.set(at("2026-01-10T15:00:00+05:30"))
    open_task(secretary, base, sessions, case_id, "ut_record_bid")
    secretary.fill("[name=bidder]", "Bidder B")
    secretary.fill("[name=amount]", "1200.00")  # a mistyped amount
    secretary.click("main form.card [type=submit]")
    secretary.wait_for_load_state()
    assert secretary.locator("h1").inner_text().startswith(words["check"])
    assert "₹1,200.00" in secretary.locator("#check-values").inner_text()  # as the receipt would print it
    assert words["deadline"] in secretary.locator("#check-deadline").inner_text()
    shoot(secretary, "check-page" + ("" if language == "en" else f"-{language}"))
    secretary.click("#check-change")
    secretary.wait_for_load_state()
    assert secretary.locator("[name=bidder]").input_value() == "Bidder B"  # every value kept
    assert secretary.locator("[name=amount]").input_value() == "1200.00"
    assert case_file(sessions, case_id).auctions[0].bids == []  # nothing recorded by checking
    secretary.fill("[name=amount]", "12000.00")
    secretary.click("main form.card [type=submit]")
    secretary.wait_for_load_state()
    assert words["sale"] in secretary.locator("#check-follows").inner_text()
    secretary.click("#check-confirm")
    secretary.wait_for_load_state()
    assert secretary.url.endswith(f"/cases/{case_id}")
    receipt = secretary.locator("p.flash.follow a")
    assert receipt.count() == 1 and "R1" in receipt.inner_text()
    cf = case_file(sessions, case_id)
    assert (cf.sale.buyer, str(cf.sale.amount)) == ("Bidder B", "12000.00")
    receipt.click()
    secretary.wait_for_load_state()
    assert "/documents/" in secretary.url
