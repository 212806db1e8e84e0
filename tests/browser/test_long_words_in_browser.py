"""Long unbroken words on a phone: a 60-character village name, owner's name and animal tag with no
space wrap inside the page at 360 px instead of widening it (no sideways scrolling), on the case
page and on a document's printable page (the release receipt, with the owner and the tag)."""

from __future__ import annotations

import pytest

from .test_officers_in_browser import PHONE, at, open_task, sign_in

VILLAGE = "Bhimpura" + "x" * 52
OWNER = "Ramprasad" + "y" * 51
TAG = "RJ-" + "9" * 57


def overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("language", ["en", "hi"])
def test_sixty_character_words_wrap_on_the_case_page_and_the_receipt(language, browser, live_server, sessions,
                                                                     virtual_clock):
    assert len(VILLAGE) == len(OWNER) == len(TAG) == 60
    base = live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", PHONE, language)
    keeper.goto(f"{base}/cases/new")
    keeper.fill("#impounded_at", "2026-01-05T10:00")
    keeper.fill("#place_seized", VILLAGE)
    keeper.fill("#place_impounded", "Kanji House, Rampura")
    keeper.fill("#nearest_village", VILLAGE)
    keeper.select_option("[name=species-1]", "cow")
    keeper.fill("[name=description-1]", "grey cow, bell on neck")
    keeper.fill("[name=tag-1]", TAG)
    keeper.click("main form [type=submit]")
    keeper.wait_for_selector("#check-confirm")  # the new case's check page shows the long values too
    assert TAG in keeper.locator("#check-values").inner_text()
    assert overflow(keeper) <= 360, f"the check page is {overflow(keeper)} px wide at 360 px"
    keeper.click("#check-confirm")
    keeper.wait_for_load_state()
    case_id = int(keeper.url.rstrip("/").split("/")[-1])
    assert VILLAGE in keeper.locator("main").inner_text() and TAG in keeper.locator("main").inner_text()
    assert overflow(keeper) <= 360, f"the case page is {overflow(keeper)} px wide at 360 px"

    virtual_clock.set(at("2026-01-06T10:00:00+05:30"))
    open_task(keeper, base, sessions, case_id, "ut_release")
    keeper.fill("[name=owner]", OWNER)
    keeper.fill("[name=amount_received]", "5000.00")
    keeper.click("main form.card [type=submit]")
    keeper.wait_for_load_state()
    keeper.click("#check-confirm")
    keeper.wait_for_load_state()
    assert keeper.url.endswith(f"/cases/{case_id}")
    assert OWNER in keeper.locator("main").inner_text()
    assert overflow(keeper) <= 360, f"the case page is {overflow(keeper)} px wide at 360 px"

    receipt = keeper.locator("p.flash.follow a")
    assert receipt.count() == 1
    receipt.click()
    keeper.wait_for_load_state()
    assert "/documents/" in keeper.url
    text = keeper.locator("body").inner_text()
    assert OWNER in text and TAG in text
    assert overflow(keeper) <= 360, f"the receipt's page is {overflow(keeper)} px wide at 360 px"
    keeper.context.close()
