"""A field shown only where it applies, in a real browser (issue 20, item 3): on "Decide ownership
claim" the security is hidden, and its input disabled, until the sarpanch chooses the interim
delivery; it follows each change of the decision; a hidden security is not sent. Without
JavaScript it stays visible with its hint. The script is static/conditional.js, allowed by the
page's Content-Security-Policy (no inline script)."""

from __future__ import annotations

from webapp.services.tasks import tasks
from webapp.store.models import Case

from ..conftest import PASSWORD
from ..test_web_pages import at, case_file, login, publish_notice, start_case_on_page


def objection_filed(client, sessions, virtual_clock) -> int:
    """A case with the notice published and Ram Lal's objection filed on 2026-01-12 (through the
    pages, in the test client, on the live server's database)."""
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"}).status_code == 302
    login(client, "sar")
    return case_id


def sarpanch_page(browser, base: str, sessions, case_id: int, *, javascript: bool = True):
    context = browser.new_context(java_script_enabled=javascript, locale="en-IN")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/login")
    page.fill("[name=username]", "sar")
    page.fill("[name=password]", PASSWORD)
    page.click("form [type=submit]")
    page.wait_for_load_state()
    with sessions() as session:
        task_id = tasks.find_ready(session, session.get(Case, case_id), "ut_decide_objection")
    page.goto(f"{base}/cases/{case_id}/tasks/{task_id}")
    assert page.locator("h1").inner_text() == "Decide ownership claim"
    return page, errors


def test_the_security_shows_only_for_an_interim_delivery(browser, live_server, client, sessions, virtual_clock):
    case_id = objection_filed(client, sessions, virtual_clock)
    page, errors = sarpanch_page(browser, live_server, sessions, case_id)
    wrapper, security = page.locator("#f-security-field"), page.locator("#f-security")
    assert wrapper.is_hidden() and security.is_disabled()  # no decision chosen yet
    page.check("input[name=decision][value=interim_delivery]")
    assert wrapper.is_visible() and security.is_enabled()
    assert page.locator("#f-security-when").inner_text() == "Only for an interim delivery"
    security.fill("1500")
    page.check("input[name=decision][value=not_proved]")
    assert wrapper.is_hidden() and security.is_disabled()
    page.check("input[name=decision][value=interim_delivery]")
    assert wrapper.is_visible() and security.input_value() == "1500"
    page.check("input[name=decision][value=not_proved]")
    # the hidden, disabled security is not sent: the decision passes to its check page and is recorded
    page.click("main form.card [type=submit]")
    page.wait_for_load_state()
    assert page.locator("#check-confirm").count() == 1, page.content()[:2000]
    assert "Security for interim delivery" not in page.locator("main").inner_text()
    page.click("#check-confirm")
    page.wait_for_load_state()
    claim = case_file(sessions, case_id).objections[0]
    assert claim.decision == "not_proved" and case_file(sessions, case_id).interim is None
    assert not [e for e in errors if "Content Security Policy" in e or "Refused" in e], errors


def test_without_javascript_the_security_stays_visible_with_its_hint(browser, live_server, client, sessions,
                                                                     virtual_clock):
    case_id = objection_filed(client, sessions, virtual_clock)
    page, _errors = sarpanch_page(browser, live_server, sessions, case_id, javascript=False)
    assert page.locator("#f-security-field").is_visible() and page.locator("#f-security").is_enabled()
    assert page.locator("#f-security-when").inner_text() == "Only for an interim delivery"
