"""A task form sent with two errors, in a real browser at 360 px, in English and Hindi: the error
summary at the top has the focus, the page's title starts with "Error:" / "त्रुटि:", it links to
each field in error (a click puts the focus in that field), and each message is beside its field."""

from __future__ import annotations

import pytest

from webapp.simulation.simulate import fire_until

from .test_check_in_browser import impound_one_cow
from .test_officers_in_browser import PHONE, at, open_task, sign_in

TITLE = {"en": "Error: ", "hi": "त्रुटि: "}


@pytest.mark.parametrize("language", ["en", "hi"])
def test_two_errors_are_summarised_focused_and_linked_to_their_fields(language, browser, live_server, sessions,
                                                                      virtual_clock):
    base = live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", PHONE, language)
    case_id = impound_one_cow(keeper, base)
    fire_until(sessions, case_id, virtual_clock, at("2026-01-09T11:00:00+05:30"))
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    secretary = sign_in(browser, base, "sec", PHONE, language)
    open_task(secretary, base, sessions, case_id, "ut_publish_notice")
    secretary.fill("[name=objection_period_days]", "")
    secretary.fill("[name=full_price]", "12.345")
    secretary.click("main form.card [type=submit]")
    secretary.wait_for_load_state()
    assert secretary.title().startswith(TITLE[language])
    assert secretary.evaluate("document.activeElement.id") == "error-summary"
    links = secretary.locator("#error-summary a")
    assert links.count() == 2
    assert [links.nth(n).get_attribute("href") for n in range(2)] == ["#f-objection_period_days", "#f-full_price"]
    links.nth(1).click()
    assert secretary.evaluate("document.activeElement.id") == "f-full_price"
    assert secretary.locator("#f-full_price-error").is_visible()
    assert secretary.locator("#f-objection_period_days-error").is_visible()
