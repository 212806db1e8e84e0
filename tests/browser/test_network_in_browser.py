"""Pages on a village connection (issue 32, item 4), counted, not timed: the case page and the task
list, cold (an empty cache) and warm (the same page again), as the live server answers them
(``served``). Compressed where it pays, and a warm page asks for nothing but itself: the static files
have content-hashed names with a year's immutable cache (webapp/web/assets.py; `rule130
digest-static`, run by scripts/setup.sh). The times on a throttled connection are measured by
tests/bench/slow_network.py, with the figures in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from webapp.web import assets

from .test_check_in_browser import impound_one_cow
from .test_officers_in_browser import PHONE, at, sign_in

TEXT_BUDGET = 1024  # bytes: a text response larger than this is compressed


def view(browser, base, signed_in, served, path: str, cold: bool):
    """Open ``path`` as the officer of the page ``signed_in``: in a new browser context with the same
    cookies and an empty cache (``cold``), or again in the same one (warm). The requests it made."""
    page = signed_in
    if cold:
        context = browser.new_context(viewport=PHONE, locale="en-IN", storage_state=signed_in.context.storage_state())
        page = context.new_page()
    served.clear()
    page.goto(base + path)
    page.wait_for_load_state("networkidle")
    return page, list(served)


@pytest.fixture
def case_page(browser, live_server, virtual_clock):
    if not assets.manifest_is_current():
        pytest.fail("the static files have no content-hashed names: run `rule130 digest-static` (scripts/setup.sh does)")
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, live_server, "pk", PHONE, "en")
    case_id = impound_one_cow(keeper, live_server)
    return live_server, keeper, f"/cases/{case_id}"


@pytest.mark.parametrize("path", ["case", "/tasks"])
def test_a_page_is_compressed_cold_and_asks_for_nothing_but_itself_warm(path, browser, served, case_page):
    base, keeper, case_path = case_page
    path = case_path if path == "case" else path
    page, cold = view(browser, base, keeper, served, path, cold=True)
    statics = [row for row in cold if row[0].startswith("/static/")]
    assert statics, cold  # the stylesheet at least
    big_plain = [row for row in cold if row[3] > TEXT_BUDGET and row[2] not in ("gzip", "br", "zstd")
                 and not row[0].endswith((".png", ".woff2"))]
    assert big_plain == [], big_plain
    assert all("-" in row[0].rsplit("/", 1)[-1] for row in statics), statics  # every one under its hashed name
    if path == case_path:  # the diagram is the version's picture drawn on the server: no bpmn-js, no XML
        assert [row for row in cold if row[0].startswith("/vendor/") or row[0].endswith("/bpmn")] == [], cold
        pictures = [row for row in cold if row[0].startswith("/processes/")]
        assert [(row[0], row[1]) for row in pictures] == [("/processes/1/picture-en.svg", 200)], cold
        assert pictures[0][2] in ("gzip", "br", "zstd"), pictures
        assert len(cold) == 4, cold  # the page, style.css, the picture, the icon
    _page, warm = view(browser, base, page, served, path, cold=False)
    # no revalidation round trip: the static files, the viewer and the deployed diagram come from the cache
    assert [row[0] for row in warm if row[0].startswith(("/static/", "/vendor/", "/processes/"))] == []
    assert [row[0] for row in warm] == [path]  # the page itself, and nothing else
    print(f"{path}: cold {len(cold)} requests, {sum(r[3] for r in cold)} bytes; warm {len(warm)} requests, "
          f"{sum(r[3] for r in warm)} bytes")
