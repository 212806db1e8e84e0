"""Forms officers can use (issue 20, item 3), typed into a real browser at 360 px in Hindi: numbers in
Devanagari digits are kept by the fields and accepted (the objection period, the full price, the
amount received); the release form shows the total to collect and refuses less than is due, naming
both amounts at the field and in the error summary; a choice of up to five is a set of radios with
none chosen, each reachable by its label."""

from __future__ import annotations

from decimal import Decimal

from webapp.simulation.simulate import fire_until

from ..test_web_pages import start_case_on_page
from .test_check_in_browser import case_file
from .test_officers_in_browser import PHONE, at, open_task, sign_in


def test_devanagari_digits_the_release_total_and_radios_in_hindi(browser, live_server, client, sessions,
                                                                virtual_clock):
    base = live_server
    released, noticed = start_case_on_page(client, virtual_clock), start_case_on_page(client, virtual_clock)

    # 2026-01-06: two cows, F = 2 x ₹500.00, C = 2 x ₹60.00 x 2 days: ₹1,240.00 to collect
    virtual_clock.set(at("2026-01-06T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", PHONE, "hi")
    open_task(keeper, base, sessions, released, "ut_release")
    assert keeper.locator("#release-due").inner_text() == "₹1,240.00"
    keeper.fill("#f-owner", "Owner M")
    keeper.fill("#f-amount_received", "९००")
    assert keeper.locator("#f-amount_received").input_value() == "९००"  # a text field keeps the digits
    keeper.click("main form.card [type=submit]")
    keeper.wait_for_load_state()
    assert keeper.evaluate("document.activeElement.id") == "error-summary"
    named = keeper.locator("#f-amount_received-error").inner_text()
    assert "₹1,240.00" in named and "₹900.00" in named, named
    assert named in keeper.locator("#error-summary").inner_text()
    assert case_file(sessions, released).release is None
    keeper.fill("#f-amount_received", "१३००")
    keeper.click("main form.card [type=submit]")
    keeper.wait_for_load_state()
    assert "₹1,300.00" in keeper.locator("#check-values").inner_text()
    keeper.click("#check-confirm")
    keeper.wait_for_load_state()
    release = case_file(sessions, released).release
    assert (release.received, release.change) == (Decimal("1300.00"), Decimal("60.00"))

    # 2026-01-09: the secretary types the notice's numbers in Devanagari digits
    fire_until(sessions, noticed, virtual_clock, at("2026-01-09T11:00:00+05:30"))
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    secretary = sign_in(browser, base, "sec", PHONE, "hi")
    open_task(secretary, base, sessions, noticed, "ut_publish_notice")
    secretary.fill("[name=objection_period_days]", "३०")
    secretary.fill("[name=full_price]", "१२०००.००")
    secretary.click("main form.card [type=submit]")
    secretary.wait_for_load_state()
    assert "₹12,000.00" in secretary.locator("#check-values").inner_text()
    secretary.click("#check-confirm")
    secretary.wait_for_load_state()
    notice = case_file(sessions, noticed).notice
    assert (notice.objection_period_days, notice.last_day.isoformat()) == (30, "2026-02-08")

    # 2026-01-12: an objection; the sarpanch's decision is a set of radios, none chosen
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))
    secretary.goto(f"{base}/cases/{noticed}")
    secretary.fill("#objector", "Ram Lal")
    secretary.click("form[action$='/objections'] [type=submit]")
    secretary.wait_for_load_state()
    secretary.click("#check-confirm")
    secretary.wait_for_load_state()
    assert [o.objector for o in case_file(sessions, noticed).objections] == ["Ram Lal"]
    sarpanch = sign_in(browser, base, "sar", PHONE, "hi")
    open_task(sarpanch, base, sessions, noticed, "ut_decide_objection")
    radios = sarpanch.locator("fieldset#f-decision input[type=radio]")
    assert 2 <= radios.count() <= 5
    assert sarpanch.locator("fieldset#f-decision legend").count() == 1
    assert sarpanch.locator("fieldset#f-decision input:checked").count() == 0
    sarpanch.click("label[for=f-decision-2]")  # the whole label is the target
    assert radios.nth(1).is_checked()
    for page in (keeper, secretary, sarpanch):
        page.context.close()
