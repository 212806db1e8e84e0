"""The administrator changes the Rule 130 diagram in the modeler, in Debian's chromium: opens the current
version, renames a task in the properties panel, deploys with a note and sees version 2. A case started
before the deploy keeps version 1; a case started after it runs on version 2 (issue: administrators edit,
validate, version and deploy process diagrams in the browser)."""

from __future__ import annotations

from datetime import datetime

from playwright.sync_api import expect

from webapp.services import cases
from webapp.store.models import Case, ProcessVersion, User

from .test_officers_in_browser import DESK, sign_in

NEW_NAME = "Publish the notice and open the conditional auction"


def start_a_case(sessions, instant: str) -> int:
    with sessions() as session:
        keeper = session.query(User).filter_by(username="pk").one()
        case = cases.start_case(session, keeper, impounded_at=datetime.fromisoformat(instant),
                                place_seized="Bhimpura", place_impounded="Kanji House, Rampura",
                                nearest_village="Bhimpura",
                                animals=[{"species": "cow", "description": "brown cow", "tag": "RJ-1"}])
        session.commit()
        return case.id


def version_of(sessions, case_id: int) -> int:
    with sessions() as session:
        return session.get(ProcessVersion, session.get(Case, case_id).process_version_id).version


def test_administrator_renames_a_task_deploys_and_new_cases_get_version_2(browser, live_server, sessions,
                                                                          virtual_clock):
    before = start_a_case(sessions, "2026-01-05T10:00:00+05:30")
    assert version_of(sessions, before) == 1

    page = sign_in(browser, live_server, "admin", DESK)
    page.goto(f"{live_server}/admin/processes/rule130_case")
    page.wait_for_selector('#modeler-canvas g.djs-element[data-element-id="ut_publish_notice"]')
    page.click('#modeler-canvas g.djs-element[data-element-id="ut_publish_notice"]')
    name = page.locator("#modeler-properties #bio-properties-panel-name")
    if not name.is_visible():  # the properties panel's "General" group opens on a click
        page.click('#modeler-properties [data-group-id="group-general"] .bio-properties-panel-group-header')
    name.fill(NEW_NAME)
    name.press("Tab")
    page.fill("#modeler-note", "clearer name for the notice task")
    page.click("#modeler-deploy")
    expect(page.locator("#modeler-status")).to_contain_text("Deployed as version", timeout=60_000)
    assert "Deployed as version 2" in page.locator("#modeler-status").inner_text()

    with sessions() as session:
        current = session.query(ProcessVersion).filter_by(process_id="rule130_case").order_by(
            ProcessVersion.version.desc()).first()
        assert current.version == 2 and current.note == "clearer name for the notice task"
        assert f'name="{NEW_NAME}"' in current.bpmn_xml
    after = start_a_case(sessions, "2026-01-05T10:00:00+05:30")
    assert version_of(sessions, before) == 1
    assert version_of(sessions, after) == 2
    page.context.close()


def test_the_modeler_speaks_the_pages_language_with_local_times(browser, live_server):
    page = sign_in(browser, live_server, "admin", DESK, language="hi")
    page.goto(f"{live_server}/admin/processes/rule130_case")
    page.wait_for_selector('#modeler-canvas g.djs-element[data-element-id="ut_publish_notice"]')
    status = page.locator("#modeler-status")
    expect(status).to_contain_text("संस्करण 1", timeout=30_000)
    text = status.inner_text()
    # "Version 1, deployed <local day and time> by tests. No draft yet…", in Hindi, not UTC
    assert "अभी कोई मसौदा नहीं" in text and "UTC" not in text and "deployed" not in text, text
    assert page.locator("#modeler-problems").inner_text().strip() == "अभी जाँच नहीं हुई।"
    page.click("#modeler-validate")
    expect(status).to_contain_text("मान्य", timeout=60_000)
    page.context.close()
