"""A clerical mistake corrected in a real browser at 360 px, in English and Hindi: the pound keeper
records the death of the only cow, the case closes; the correction goes through its check page
(what it undoes, in words), Confirm puts the case back open, and the history shows the correction."""

from __future__ import annotations

import pytest

from webapp.store.models import Case

from .conftest import SCREENSHOTS
from .test_check_in_browser import case_file, impound_one_cow
from .test_officers_in_browser import PHONE, at, shoot, sign_in

WORDS = {
    "en": {"check": "Check: ", "undone": "the act “Death recorded” is undone", "open": "the case is open again",
           "done": "The act “Death recorded” was corrected", "history": "Act corrected"},
    "hi": {"check": "जाँचें: ", "undone": "पलटा जाता है", "open": "प्रकरण फिर से खुलता है",
           "done": "सुधारा गया", "history": "कार्य सुधारा गया"},
}


@pytest.mark.parametrize("language", ["en", "hi"])
def test_a_wrong_death_is_corrected_through_the_check_page_on_a_phone(language, browser, live_server, sessions,
                                                                      virtual_clock):
    words, base = WORDS[language], live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", PHONE, language)
    case_id = impound_one_cow(keeper, base)
    keeper.goto(f"{base}/cases/{case_id}")
    keeper.select_option("#animal", "1")
    keeper.check("input[name=kind][value=death]")
    keeper.click("form[action$='/animal-events'] [type=submit]")
    keeper.click("#check-confirm")
    keeper.wait_for_load_state()
    with sessions() as session:
        assert session.get(Case, case_id).status == "completed"

    virtual_clock.set(at("2026-01-05T12:00:00+05:30"))
    keeper.goto(f"{base}/cases/{case_id}#correct")
    keeper.fill("#correct-reason", "the cow that died was in another case")
    keeper.click("#correct [type=submit]")
    keeper.wait_for_load_state()
    assert keeper.locator("h1").inner_text().startswith(words["check"])
    follows = keeper.locator("#check-follows").inner_text()
    assert words["undone"] in follows and words["open"] in follows
    with sessions() as session:  # nothing changed by checking
        assert session.get(Case, case_id).status == "completed"
    shoot(keeper, "correction-check" + ("" if language == "en" else f"-{language}"))
    keeper.click("#check-confirm")
    keeper.wait_for_load_state()
    assert keeper.url.endswith(f"/cases/{case_id}")
    assert words["done"] in keeper.locator("p.flash").first.inner_text()
    with sessions() as session:
        case = session.get(Case, case_id)
        assert (case.status, case.outcome) == ("running", "pending")
    assert case_file(sessions, case_id).animals[0].died_on is None
    history = keeper.locator("#history")
    assert words["history"] in history.inner_text()
    history.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)  # the history section alone, at 360 px
    history.screenshot(path=str(SCREENSHOTS / ("correction-history" + ("" if language == "en" else f"-{language}")
                                               + "-360.png")))
