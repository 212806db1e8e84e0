"""Scenario s1 (tests/scenarios/s1-no-objection-full-price.yaml) carried by clicking in a real browser.

Three officers — pound keeper (on a phone-sized screen), secretary and sarpanch (desk) — each in a
browser context of their own, sign in and do their part from impoundment to the final order, while the
test moves the virtual clock and the timer worker fires what falls due. The case must end exactly as the
scenario expects (deadlines, sale, fees, ledger), and the pages must show it. Screenshots of the task
list, a task form and the case page at 360 px and 1280 px are written to build/screenshots (or
$RULE130_SCREENSHOTS; `scripts/screenshots.sh` refreshes the ones the README shows)."""

from __future__ import annotations

from datetime import datetime

import pytest
from playwright.sync_api import expect

from webapp.services.cases import cases
from webapp.services.tasks import tasks
from webapp.simulation.simulate import _compare, _result, fire_until, load_scenario
from webapp.store.models import Case

from ..conftest import PASSWORD, SCENARIOS
from .conftest import SCREENSHOTS

S1 = SCENARIOS / "s1-no-objection-full-price.yaml"
PHONE = {"width": 360, "height": 740}
DESK = {"width": 1280, "height": 800}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def sign_in(browser, base: str, username: str, viewport: dict, language: str = "en"):
    context = browser.new_context(viewport=viewport, locale="en-IN")
    page = context.new_page()
    page.goto(f"{base}/login")
    page.fill("[name=username]", username)
    page.fill("[name=password]", PASSWORD)
    page.click("form [type=submit]")
    page.wait_for_load_state()
    assert "/login" not in page.url, f"{username} could not sign in"
    if language != "en":  # the officer chooses the language with the switch every page has
        page.click(f"#language button[name=lang][value={language}]")
        page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == language
    return page


def shoot(page, name: str) -> None:
    """Full-page screenshots of the current page at 360 px and 1280 px wide."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    original = page.viewport_size
    for label, size in (("360", PHONE), ("1280", DESK)):
        page.set_viewport_size(size)
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
    page.set_viewport_size(original)


def open_task(page, base: str, sessions, case_id: int, element: str) -> None:
    """From My tasks, click the row's link of the ready task ``element`` of the case."""
    with sessions() as session:
        task_id = tasks.find_ready(session, session.get(Case, case_id), element)
    assert task_id is not None, f"no ready task {element}"
    page.goto(f"{base}/tasks")
    link = page.locator(f'a[href$="/cases/{case_id}/tasks/{task_id}"]').first
    link.click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/cases/{case_id}/tasks/{task_id}")


def submit(page) -> None:
    """Send the task's form, then confirm on its check page (every act passes a check step)."""
    page.click("main form.card [type=submit]")
    page.wait_for_load_state()
    assert page.locator(".error-box").count() == 0, page.locator(".error-box").first.inner_text()
    assert page.locator("#check-confirm").count() == 1, "no check page after the form"
    page.click("#check-confirm")
    page.wait_for_load_state()
    assert page.locator(".error-box").count() == 0, page.locator(".error-box").first.inner_text()


# What each language's pages must say (from webapp/translations; English is the source text).
WORDS = {
    "en": {"objection_label": "Objection period (days)", "case_heading": "Case ",
           "release_until": "the owner may release the whole lot until the end of Thursday, 8 January 2026"},
    "hi": {"objection_label": "आपत्ति अवधि (दिन)", "case_heading": "प्रकरण ",
           "release_until": "स्वामी गुरुवार, 8 जनवरी 2026 की समाप्ति तक पूरा लॉट छुड़ा सकता है"},
}


@pytest.mark.parametrize("language", ["en", "hi"])
def test_three_officers_carry_s1_to_the_final_order(language, browser, live_server, sessions, virtual_clock):
    words = WORDS[language]
    suffix = "" if language == "en" else f"-{language}"
    scenario = load_scenario(S1)
    base = live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))

    # The pound keeper records the impounded cattle on a phone.
    keeper = sign_in(browser, base, "pk", PHONE, language)
    keeper.goto(f"{base}/cases/new")
    keeper.fill("#impounded_at", "2026-01-05T10:00")
    keeper.fill("#place_seized", "Bhimpura")
    keeper.fill("#place_impounded", "Kanji House, Rampura")
    keeper.fill("#nearest_village", "Bhimpura")
    for n, animal in enumerate(scenario.case["animals"], start=1):
        keeper.select_option(f"[name=species-{n}]", animal["species"])
        keeper.fill(f"[name=description-{n}]", animal["description"])
        keeper.fill(f"[name=tag-{n}]", animal["tag"])
    keeper.click("main form [type=submit]")
    # the check page: the impoundment as it will be recorded and the release window's last day
    expect(keeper.locator("#check-follows")).to_contain_text(words["release_until"])
    keeper.click("#check-confirm")
    keeper.wait_for_load_state()
    case_id = int(keeper.url.rstrip("/").split("/")[-1])
    assert keeper.locator("h1").inner_text().startswith(words["case_heading"])

    # Day 4: the release window has closed; the secretary publishes the notice.
    fire_until(sessions, case_id, virtual_clock, at("2026-01-09T11:00:00+05:30"))
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    secretary = sign_in(browser, base, "sec", DESK, language)
    secretary.goto(f"{base}/tasks")
    shoot(secretary, "task-list" + suffix)
    open_task(secretary, base, sessions, case_id, "ut_publish_notice")
    assert words["objection_label"] in secretary.locator("label[for=f-objection_period_days]").inner_text()
    shoot(secretary, "task-form" + suffix)
    secretary.fill("[name=objection_period_days]", "30")
    secretary.fill("[name=full_price]", "12000.00")
    submit(secretary)

    # The conditional auction: two bids on 10-01-2026.
    for instant, bidder, amount in (("2026-01-10T12:00:00+05:30", "Bidder A", "9000.00"),
                                    ("2026-01-10T15:00:00+05:30", "Bidder B", "12500.00")):
        fire_until(sessions, case_id, virtual_clock, at(instant))
        virtual_clock.set(at(instant))
        open_task(secretary, base, sessions, case_id, "ut_record_bid")
        secretary.fill("[name=bidder]", bidder)
        secretary.fill("[name=amount]", amount)
        submit(secretary)

    # The notice period ends on 08-02-2026 with no objection; the sarpanch orders that the auction stand.
    fire_until(sessions, case_id, virtual_clock, at("2026-02-09T11:00:00+05:30"))
    virtual_clock.set(at("2026-02-09T11:00:00+05:30"))
    sarpanch = sign_in(browser, base, "sar", DESK, language)
    open_task(sarpanch, base, sessions, case_id, "ut_order_stand")
    submit(sarpanch)

    fire_until(sessions, case_id, virtual_clock, None)
    with sessions() as session:
        result = _result(cases.summary(session, session.get(Case, case_id)))
    assert _compare(scenario.expect, result) == []
    assert result["outcome"] == "auction_final"

    sarpanch.goto(f"{base}/cases/{case_id}")
    text = sarpanch.locator("main").inner_text()
    for amount in ("₹12,500.00", "₹1,720.00", "₹10,780.00"):  # sale; pound account (F + C); Panchayat fund
        assert amount in text, f"the case page does not show {amount}"
    shoot(sarpanch, "case-page" + suffix)
    for page in (keeper, secretary, sarpanch):
        page.context.close()


@pytest.mark.parametrize("width", [360])
def test_pages_fit_a_phone_without_sideways_scrolling(browser, live_server, width):
    """At 360 px the sign-in page and My tasks need no horizontal scrolling."""
    page = sign_in(browser, live_server, "pk", {"width": width, "height": 740})
    for path in ("/tasks", "/cases", "/cases/new"):
        page.goto(f"{live_server}{path}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow} px at {width} px"
    # the species list shows whole names ("buffalo", "bullock"), not cut to "buff", "bullo"
    fits = page.evaluate("""() => { const s = document.getElementById('species-1');
        const probe = document.createElement('span'); probe.style.font = getComputedStyle(s).font;
        probe.textContent = 'buffalo'; document.body.appendChild(probe);
        const needed = probe.getBoundingClientRect().width; probe.remove();
        return s.clientWidth - needed; }""")
    # beside the name, the list's own arrow and padding take about 24 px
    assert fits >= 24, f"the species list leaves {fits} px beside 'buffalo' at {width} px: the name is cut"
    page.context.close()


def test_admin_pages_fit_a_phone_without_sideways_scrolling(browser, live_server):
    """At 360 px the administrator's processes, tariffs and timer pages need no horizontal scrolling
    (the modeler itself is a desktop tool)."""
    page = sign_in(browser, live_server, "admin", {"width": 360, "height": 740})
    for path in ("/admin/processes", "/admin/tariffs", "/monitor/timers", "/incidents"):
        page.goto(f"{live_server}{path}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow} px at 360 px"
    page.context.close()

