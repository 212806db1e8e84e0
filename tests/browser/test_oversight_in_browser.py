"""Oversight in a real browser at 360 px, in English and in Hindi (issue 31, item 3): the Jaipur
district officer opens Oversight from the menu, reads the District's figures (tests/test_oversight.py's
world: two running cases, one cow held, ₹12,000.00 in suspense, the case 12 days past its objection
period), sorts the Panchayats with the sort form (the table's heads are hidden at phone width),
opens Rampura's page with its case past the deadline and whose act it is, and downloads the CSV.
Nothing on the page is wider than the phone. Screenshots go to build/screenshots."""

from __future__ import annotations

import csv
import io

import pytest

from ..test_oversight import world  # noqa: F401  (the fixture: cases in three Panchayats of two Districts)
from .test_officers_in_browser import PHONE, shoot, sign_in

WORDS = {
    "en": {"title": "Oversight", "district": "District Jaipur", "days": "12 days", "sarpanch": "sarpanch",
           "task": "Decide ownership claim", "sort": "Cattle held"},
    "hi": {"title": "निगरानी", "district": "ज़िला Jaipur", "days": "12 दिन", "sarpanch": "सरपंच",
           "task": "स्वामित्व", "sort": "रोके गए पशु"},
}


def no_wider_than_the_phone(page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} is {width} px wide at 360 px"


@pytest.mark.parametrize("language", ["en", "hi"])
def test_a_district_officer_reads_sorts_and_downloads_the_districts_figures_at_360_px(
        browser, live_server, world, language):  # noqa: F811
    words = WORDS[language]
    page = sign_in(browser, live_server, "do-jaipur", PHONE, language)
    page.locator("header nav a", has_text=words["title"]).first.click()
    page.wait_for_load_state()
    assert page.url.endswith("/oversight")
    assert page.locator("h1").inner_text() == words["title"]
    assert page.locator("#scope-of").inner_text() == words["district"]
    assert page.locator("#total-running").inner_text() == "2"
    assert page.locator("#total-cattle").inner_text() == "1"
    assert page.locator("#total-suspense").inner_text() == "₹12,000.00"
    assert page.locator("#total-past").inner_text().startswith("1")
    assert words["days"] in page.locator("#past").inner_text()
    no_wider_than_the_phone(page)
    shoot(page, f"oversight-{language}")
    # the sort form (at 360 px the table's heads are not shown): cattle held, largest first
    page.select_option("#sort", "cattle_held")
    page.select_option("#dir", "desc")
    page.click(".sort-form button[type=submit]")
    page.wait_for_load_state()
    codes = page.locator("#panchayats tbody tr").evaluate_all("rows => rows.map(r => r.dataset.code)")
    assert codes[0] == "RMP" and sorted(codes) == ["KHR", "NRS", "RMP"]
    assert "sort=cattle_held" in page.url
    # one Panchayat: its case past the deadline, how many days, and whose act
    page.locator('#panchayats tr[data-code="RMP"] a').click()
    page.wait_for_load_state()
    row = page.locator("#past tbody tr").first
    assert words["days"] in row.inner_text() and words["sarpanch"] in row.inner_text()
    assert words["task"] in row.inner_text()
    no_wider_than_the_phone(page)
    # the CSV of the District, as the link downloads it
    page.go_back()
    page.wait_for_load_state()
    with page.expect_download() as download:
        page.click("#csv-panchayats")
    with open(download.value.path(), encoding="utf-8") as downloaded:
        rows = list(csv.DictReader(io.StringIO(downloaded.read())))
    assert (rows[0]["panchayat_code"], rows[0]["cattle_held"], rows[0]["suspense"]) == ("RMP", "1", "12000.00")
    page.context.close()
