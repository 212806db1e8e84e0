"""Officers administered in a real browser at 360 px, in English and Hindi (issue 31, item 1): a new
officer checked and confirmed, their first password changed at the first sign-in; a transfer refused
without a successor while the officer holds the Panchayat's only open tasks of the role, then done
naming one; officers imported from a CSV file, checked row by row, then confirmed. No page scrolls
sideways."""

from __future__ import annotations

import codecs

import pytest
from sqlalchemy import select

from webapp.services.people import users
from webapp.store.models import CaseTask, User

from ..conftest import FAST_HASH, PASSWORD
from ..driver import ONE_COW, Driver
from .test_officers_in_browser import PHONE, at, shoot, sign_in

WORDS = {
    "en": {"check": "Check: ", "becomes": "Naya Sachiv (sec-new) becomes a secretary of Gram Panchayat KHR.",
           "successor": "name a successor who takes them over", "created": "3 officers will be created",
           "imported": "3 officers imported", "moves": "pk moves from Gram Panchayat Rampura to Gram Panchayat Kheri"},
    "hi": {"check": "जाँचें: ", "becomes": "Naya Sachiv (sec-new) ग्राम पंचायत KHR के सचिव बनेंगे।",
           "successor": "कोई उत्तराधिकारी बताएँ जो उन्हें सँभाले", "created": "3 अधिकारी बनेंगे",
           "imported": "3 अधिकारी आयात हुए", "moves": "pk ग्राम पंचायत Rampura से ग्राम पंचायत Kheri जाएँगे"},
}
CSV = ("username,role,display_name,panchayat\n"
       "pk-khr,pound_keeper,=HYPERLINK(\"http://evil.example\"),KHR\n"
       "sar-khr,sarpanch,सरपंच खेड़ी,KHR\n"
       "sec-khr2,secretary,रामलाल शर्मा,KHR\n")


def no_sideways_scroll(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{page.url} scrolls sideways by {overflow} px at 360 px"


@pytest.mark.parametrize("language", ["en", "hi"])
def test_an_administrator_manages_officers_on_a_phone(language, browser, live_server, sessions, officers,
                                                      virtual_clock):
    words, base = WORDS[language], live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    Driver(sessions, officers, virtual_clock).start(ONE_COW)  # the pound keeper's release task is open
    with sessions() as session:
        users.create_user(session, "pk2", PASSWORD, "pound_keeper", display_name="Second Keeper",
                          panchayat_code="RMP", password_method=FAST_HASH)
        users.deactivate(session, "pk2")
        session.commit()
    admin = sign_in(browser, base, "admin", PHONE, language)

    # a new officer: checked, then confirmed; the first password shown once
    admin.goto(f"{base}/admin/officers")
    no_sideways_scroll(admin)
    admin.fill("#username", "sec-new")
    admin.fill("#display_name", "Naya Sachiv")
    admin.select_option("#role", "secretary")
    admin.select_option("#panchayat_code", "KHR")
    admin.click("#new-check")
    admin.wait_for_load_state()
    assert admin.locator("h1").inner_text().startswith(words["check"])
    assert words["becomes"] in admin.locator("#check-follows").inner_text()
    no_sideways_scroll(admin)
    shoot(admin, "officer-check" + ("" if language == "en" else f"-{language}"))
    with sessions() as session:
        assert session.scalar(select(User).where(User.username == "sec-new")) is None
    admin.click("#check-confirm")
    admin.wait_for_load_state()
    first = admin.locator("#first-password").inner_text()
    assert len(first) == 19
    no_sideways_scroll(admin)

    newcomer = browser.new_context(viewport=PHONE, locale="en-IN").new_page()
    newcomer.goto(f"{base}/login")
    newcomer.fill("[name=username]", "sec-new")
    newcomer.fill("[name=password]", first)
    newcomer.click("form [type=submit]")
    newcomer.wait_for_load_state()
    assert newcomer.url.endswith("/account/password") and newcomer.locator("#first-password").count() == 1
    newcomer.fill("#current", first)
    newcomer.fill("#password", "mango tractor violin lake")
    newcomer.fill("#again", "mango tractor violin lake")
    newcomer.click("main form [type=submit]")
    newcomer.wait_for_load_state()
    assert newcomer.url.endswith("/tasks")
    newcomer.context.close()

    # a transfer: refused while nobody else of the role could act on the open task; then with a successor
    admin.goto(f"{base}/admin/officers/pk")
    no_sideways_scroll(admin)
    admin.select_option("#transfer-panchayat", "KHR")
    admin.click("#transfer [type=submit]")
    admin.wait_for_load_state()  # the check step meets the refusal Confirm would meet
    assert words["successor"] in admin.locator("#act-error").inner_text()
    no_sideways_scroll(admin)
    with sessions() as session:
        assert session.scalar(select(User).where(User.username == "pk")).panchayat_id == officers[
            "pound_keeper"].panchayat_id
    admin.goto(f"{base}/admin/officers/pk2")  # the second keeper, inactive: reactivated first
    admin.click("#reactivate [type=submit]")
    admin.click("#check-confirm")
    admin.wait_for_load_state()
    admin.goto(f"{base}/admin/officers/pk")
    admin.select_option("#transfer-panchayat", "KHR")
    admin.select_option("#transfer-successor", "pk2")
    admin.click("#transfer [type=submit]")
    admin.wait_for_load_state()
    assert admin.locator("h1").inner_text().startswith(words["check"])
    assert words["moves"] in admin.locator("#check-follows").inner_text()
    admin.click("#check-confirm")
    admin.wait_for_load_state()
    assert admin.url.endswith("/admin/officers/pk")
    no_sideways_scroll(admin)
    with sessions() as session:
        pk2 = session.scalar(select(User).where(User.username == "pk2"))
        [task] = session.scalars(select(CaseTask).where(CaseTask.state == "ready", CaseTask.lane == "pound_keeper"))
        assert task.panchayat_id == pk2.panchayat_id  # the task stays in Rampura, where pk2 can act on it

    # a CSV import: every row checked, nothing created until confirmed
    admin.goto(f"{base}/admin/officers/import")
    no_sideways_scroll(admin)
    admin.set_input_files("#file", files=[{"name": "officers.csv", "mimeType": "text/csv",
                                           "buffer": codecs.BOM_UTF8 + CSV.encode("utf-8")}])
    admin.click("#import-check")
    admin.wait_for_load_state()
    assert words["created"] in admin.locator("#import-summary").inner_text()
    assert admin.locator("#import-rows tbody tr").count() == 3
    no_sideways_scroll(admin)
    shoot(admin, "officers-import" + ("" if language == "en" else f"-{language}"))
    admin.click("#import-confirm")
    admin.wait_for_load_state()
    assert words["imported"] in admin.locator("h1").inner_text()
    with sessions() as session:
        made = dict(session.execute(select(User.username, User.display_name)
                                    .where(User.username.in_(["pk-khr", "sar-khr", "sec-khr2"]))).all())
    assert made == {"pk-khr": '=HYPERLINK("http://evil.example")', "sar-khr": "सरपंच खेड़ी", "sec-khr2": "रामलाल शर्मा"}
    no_sideways_scroll(admin)
    admin.context.close()
