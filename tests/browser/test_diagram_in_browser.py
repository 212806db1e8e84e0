"""A case's diagram can be read, in a real browser at 1280 and 360 px: it opens on the active step at
a legible scale (the step's label at least 12 px high, inside the visible area), the zoom buttons
change the scale, the lanes carry the roles' names in the page's language, and the steps are listed
beside it."""

from __future__ import annotations

import pytest

from .conftest import SCREENSHOTS
from .test_check_in_browser import impound_one_cow
from .test_officers_in_browser import DESK, PHONE, at, sign_in


def label_box(page, element_id: str) -> dict:
    """The bounding box on screen of the label drawn inside the element ``element_id``."""
    return page.evaluate("""(id) => {
        const gfx = document.querySelector(`#diagram [data-element-id="${id}"] text`);
        const r = gfx.getBoundingClientRect();
        const box = document.getElementById('diagram').getBoundingClientRect();
        return {top: r.top - box.top, left: r.left - box.left, bottom: r.bottom - box.top,
                right: r.right - box.left, height: r.height, boxWidth: box.width, boxHeight: box.height};
    }""", element_id)


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["1280", "360"])
def test_the_diagram_opens_on_the_active_step_legibly_and_zooms(size, browser, live_server, sessions, virtual_clock):
    base = live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", size, "en")
    case_id = impound_one_cow(keeper, base)
    keeper.goto(f"{base}/cases/{case_id}/diagram")
    keeper.wait_for_selector("#diagram[data-rendered=true]")
    label = label_box(keeper, "ut_release")  # "Release cattle to owner", the active step
    assert label["height"] >= 12, label
    assert label["left"] >= 0 and label["right"] <= label["boxWidth"], label
    assert label["top"] >= 0 and label["bottom"] <= label["boxHeight"], label
    scale = float(keeper.get_attribute("#diagram", "data-scale"))
    keeper.click("#diagram-tools [data-zoom=in]")
    assert float(keeper.get_attribute("#diagram", "data-scale")) == pytest.approx(scale * 1.25)
    keeper.click("#diagram-tools [data-zoom=fit]")
    assert float(keeper.get_attribute("#diagram", "data-scale")) < scale
    drawn = keeper.evaluate("() => Array.from(document.querySelectorAll('#diagram text')).map(t => t.textContent)")
    assert any("pound keeper" in text for text in drawn) and not any("pound_keeper" in text for text in drawn)
    assert "Release cattle to owner" in keeper.locator("#steps-active").inner_text()
    assert "Cattle impounded" in keeper.locator("#steps-done").inner_text()
    keeper.click("#diagram-tools [data-zoom=active]")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    keeper.screenshot(path=str(SCREENSHOTS / f"diagram-{size['width']}.png"))


def test_the_case_page_draws_its_diagram_without_javascript_and_zoom_loads_the_viewer(browser, live_server, served,
                                                                                      virtual_clock):
    """At 360 px: the case page's diagram is the server's SVG fitted to the screen, the active step
    outlined, and no request for bpmn-js; "Zoom: the interactive diagram" opens the viewer."""
    base = live_server
    virtual_clock.set(at("2026-01-05T10:00:00+05:30"))
    keeper = sign_in(browser, base, "pk", PHONE, "en")
    served.clear()
    case_id = impound_one_cow(keeper, base)  # ends on the case page
    keeper.goto(f"{base}/cases/{case_id}", wait_until="load")
    keeper.wait_for_load_state("networkidle")
    assert [row[0] for row in served if row[0].startswith("/vendor/") or row[0].endswith(".js")] == []
    # the picture arrived once (the version's, from the server), then from the browser's cache
    assert [row[1] for row in served if row[0] == "/processes/1/picture-en.svg"] == [200]
    box = keeper.evaluate("""() => {
        const svg = document.querySelector('#case-picture svg.case-svg');
        const mark = svg.querySelector('.mark.active');
        const r = svg.getBoundingClientRect(), m = mark.getBoundingClientRect();
        return {width: r.width, left: r.left, right: r.right, vw: document.documentElement.clientWidth,
                mark: mark.getAttribute('data-marks'), markWidth: m.width, markLeft: m.left, markRight: m.right,
                stroke: getComputedStyle(mark).stroke};
    }""")
    assert box["mark"] == "ut_release"
    assert box["left"] >= 0 and box["right"] <= box["vw"], box  # fits the phone's screen
    assert box["left"] <= box["markLeft"] and box["markRight"] <= box["right"] and box["markWidth"] > 40, box
    assert box["stroke"] == "rgb(217, 72, 15)", box  # the active step's colour (style.css)
    served.clear()
    keeper.click("#diagram-zoom")
    keeper.wait_for_selector("#diagram[data-rendered=true]")
    assert any(row[0].endswith("bpmn-navigated-viewer.production.min.js") for row in served), served
    assert keeper.locator('#diagram [data-element-id="ut_release"].marker-active').count() == 1
