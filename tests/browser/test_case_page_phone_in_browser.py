"""The case page in an officer's hand (issue 29, item 2), on the demo cases
(:func:`webapp.services.panchayats.demo.demo_cases`) at 360 × 780 px in Debian's chromium, in English
and in Hindi: the first control on the page that acts is the button of the act due from the officer
who opened it, and it lies within the first screen; what is due comes first, then the summary; every
section after them folds (``details``/``summary``) and the contents line reaches each, and the
correction of the latest act, which the history offers beside that act too.

Screenshots of the first screen are written to build/screenshots (case-page-phone-<language>.png)."""

from __future__ import annotations

import pytest

from webapp.services.panchayats.demo import demo_cases
from webapp.store.models import Case

from .conftest import SCREENSHOTS
from .test_officers_in_browser import at, sign_in

SCREEN = {"width": 360, "height": 780}
SECTIONS = ["#diagram-section", "#parties", "#money", "#documents", "#history"]

# the first control in the page's main part that does something (a link is not, unless a button)
FIRST_CONTROL = """() => {
  const controls = document.querySelectorAll(
    'main a.button, main button, main input:not([type=hidden]), main select, main textarea');
  for (const el of controls) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden')
      return {text: el.textContent.trim(), cls: el.className, href: el.getAttribute('href'),
              top: r.top + window.scrollY, bottom: r.bottom + window.scrollY};
  }
  return null;
}"""


@pytest.fixture
def demo(sessions, officers, virtual_clock) -> dict[str, int]:
    """The demo cases at 2026-01-12 10:00 IST, by what is due: "notice" (the secretary publishes
    the notice) and "decision" (the sarpanch decides the unsold auction)."""
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))
    demo_cases(sessions, officers["pound_keeper"], officers["secretary"])
    with sessions() as session:
        notice, decision = (c.id for c in session.query(Case).order_by(Case.id))
    return {"notice": notice, "decision": decision}


@pytest.mark.parametrize("language", ["en", "hi"])
def test_the_act_due_is_on_the_first_screen_and_the_sections_fold(language, demo, browser, live_server):
    base = live_server
    for username, case, task in (("sec", "notice", "Publish notice"), ("sar", "decision", "Decide")):
        page = sign_in(browser, base, username, SCREEN, language)
        assert page.goto(f"{base}/cases/{demo[case]}").status == 200
        first = page.evaluate(FIRST_CONTROL)
        where = f"{username} on the {case} case ({language})"
        assert first is not None, f"{where}: no control"
        assert "due-open" in first["cls"] and f"/cases/{demo[case]}/tasks/" in first["href"], f"{where}: {first}"
        assert first["bottom"] <= SCREEN["height"], f"{where}: the button to act ends at {first['bottom']:.0f} px"
        if language == "en":
            assert task in page.locator("#step .due-item.mine").first.inner_text()
        # what is due, then the summary, then the sections, each folding
        order = page.evaluate("""() => [...document.querySelectorAll('main > section')].map(s => s.id)""")
        assert order[:2] == ["step", "summary"], f"{where}: {order}"
        assert [f"#{s}" for s in order if f"#{s}" in SECTIONS] == SECTIONS, f"{where}: {order}"
        for section in SECTIONS:
            details = page.locator(f"{section} > details.fold")
            assert details.count() == 1 and details.get_attribute("open") is not None, f"{where}: {section}"
            assert page.locator(f"nav.case-nav a[href='{section}']").count() == 1, f"{where}: no link to {section}"
        # folding the money section hides its tables without a script
        page.click("#money > details > summary")
        assert not page.locator("#bal-suspense").is_visible()
        page.click("#money > details > summary")
        assert page.locator("#bal-suspense").is_visible()
        if username == "sec":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(SCREENSHOTS / f"case-page-phone-{language}.png"))
        page.context.close()


def test_the_correction_is_offered_beside_the_act_in_the_history_and_in_the_contents(demo, browser, live_server):
    """The secretary publishes the notice of the first demo case from its page: that act is then the
    latest, and its correction is linked from the contents line, from what is due and from its row in
    the history, each reaching the correction's form."""
    base = live_server
    page = sign_in(browser, base, "sec", SCREEN, "en")
    page.goto(f"{base}/cases/{demo['notice']}")
    assert page.locator("#nav-correct").count() == 0  # nothing recorded yet by an officer that may be corrected
    page.click("#step a.due-open")
    page.fill("[name=objection_period_days]", "30")
    page.fill("[name=full_price]", "12000.00")
    page.click("main form.card [type=submit]")
    page.wait_for_load_state()
    page.click("#check-confirm")
    page.wait_for_load_state()
    assert page.url.endswith(f"/cases/{demo['notice']}")
    assert page.locator("nav.case-nav a#nav-correct[href='#correct']").inner_text() == "Correct a clerical mistake"
    assert "“Publish notice and open conditional auction”" in page.locator("#latest-act").inner_text()
    row = page.locator("#history tr", has=page.locator("a.correct-this"))
    assert row.count() == 1 and "Publish notice" in row.inner_text()
    row.locator("a.correct-this").click()
    assert page.url.endswith("#correct")
    assert page.locator("#correct-reason").is_visible()
    page.context.close()
