"""axe-core on every page of the product, in English and in Hindi, at 360 px and 1280 px, in Debian's
chromium: no violation of impact serious or critical (issue 20, item 3).

axe-core comes from npm (package.json pins it; ``node_modules/axe-core/axe.min.js``), never a CDN. It is
added to every page and frame as an init script of the browser context: the DevTools protocol runs it
before the page's own scripts, outside the page's Content-Security-Policy, so the product's policy
stays exactly as it is served (a ``<script>`` tag added to the page would be refused by it).

The pages are the GET routes of ``app.url_map``: each is visited by whoever may open it (an officer of
each role, an administrator, a trainee of the training Panchayat, the public), or is listed in
:data:`NOT_PAGES` with the reason it is not an HTML page (JSON, PDF, CSV, a download, a redirect). A
new route that is neither fails the test, by name. Beside them come the pages a form's POST answers
with: a task's check page, a task form sent with errors (the error summary), a correction's check page
and the training clock's check page.

One server, one set of cases built through the test client on its database, one sign-in per role;
each officer switches language with the switch every page has. Every run (with its time) and every
violation of any impact are written to build/axe.json; the violations by rule are printed."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Page
from werkzeug.exceptions import MethodNotAllowed, NotFound

from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, CaseDocument, Incident

from .. import test_incidents
from ..conftest import PASSWORD
from ..test_training import make_training, start_training_case
from ..test_web_pages import complete, login, start_case_on_page
from .test_officers_in_browser import DESK, PHONE, at

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
REPORT = ROOT / "build" / "axe.json"  # every run and every violation (all impacts), for reading afterwards
LANGUAGES = ("en", "hi")
BLOCKING = ("serious", "critical")
WIDTHS = {"360": PHONE, "1280": DESK}

# GET routes that answer with something other than an HTML page for a person, and why.
NOT_PAGES = {
    "static": "style sheets, scripts and the modeler bundle",
    "diagrams.bpmn_js": "the bpmn-js viewer's files from npm",
    "diagrams.process_xml": "a version's BPMN XML, read by the diagram's script",
    "diagrams.process_svg": "a version's diagram drawn as SVG, the picture on the case page",
    "documents.pdf": "a document's PDF",
    "registers.register_csv": "a register as CSV",
    "oversight.page_csv": "a Samiti's or District's Panchayats as CSV",
    "oversight.past_csv": "the cases past a legal deadline as CSV",
    "modeler.source": "the modeler's JSON (diagram, forms, versions)",
    "admin_versions.download": "a version's files as a zip",
    "ops.health": "JSON for the load balancer",
    "monitor.metrics": "Prometheus text",
    "openapi.openapi_json": "the API's OpenAPI document (JSON)",
    "officer.index": "a redirect to My tasks (or the sign-in page)",
    "admin_officers.export_csv": "the officers as CSV",
}
NOT_PAGE_PREFIXES = ("api.", "api_versions.", "api_tariffs.", "api_officers.")  # the JSON API under /api/v1


@dataclass
class Findings:
    """Every axe run: what was checked, and the violations found (all impacts)."""
    runs: list[str] = field(default_factory=list)
    violations: list[dict] = field(default_factory=list)
    endpoints: set[str] = field(default_factory=set)

    def blocking(self) -> list[dict]:
        return [v for v in self.violations if v["impact"] in BLOCKING]

    def report(self, violations: list[dict]) -> str:
        lines = []
        for v in violations:
            lines.append(f"{v['where']}: {v['id']} ({v['impact']}) {v['help']}")
            lines.extend(f"    {target}" for target in v["targets"][:8])
            if len(v["targets"]) > 8:
                lines.append(f"    … and {len(v['targets']) - 8} more")
        return "\n".join(lines)

    def counts(self) -> str:
        """Violations by rule and impact: in how many runs each occurs."""
        counter = Counter((v["id"], v["impact"]) for v in self.violations)
        return "\n".join(f"{n:4} runs  {rule} ({impact})" for (rule, impact), n in counter.most_common())


AXE_RUN = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations'], iframes: false});
    return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                        targets: v.nodes.map(n => n.target.join(' '))}));
}"""


def run_axe(page: Page, where: str, findings: Findings) -> None:
    """axe-core's default rules on the page as it stands, each violation recorded under ``where``.

    A frame in the page (the modeler's previews) is checked as a page of its own: its HTML written
    into a page of the same origin at the frame's width. The previews are sandboxed without scripts,
    so axe in the page cannot reach into them, nor run inside them."""
    started = time.monotonic()
    assert page.evaluate("typeof axe") == "object", f"{where}: axe-core is not loaded"
    findings.violations.extend({**violation, "where": where} for violation in page.evaluate(AXE_RUN))
    for frame in page.main_frame.child_frames:
        html, width = frame.content(), frame.frame_element().bounding_box()["width"]
        alone = page.context.new_page()
        alone.set_viewport_size({"width": round(width), "height": PHONE["height"]})
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(page.url))
        alone.goto(f"{origin}/board")  # a light page of the same origin and policy, axe loaded
        alone.set_content(html)
        place = f"{where} · frame {frame.name}"
        findings.violations.extend({**violation, "where": place} for violation in alone.evaluate(AXE_RUN))
        alone.close()
    findings.runs.append(f"{where} ({time.monotonic() - started:.2f} s)")


def endpoint_of(app, url: str) -> str:
    """The endpoint of ``app`` that a GET of ``url`` reaches."""
    parts = urlsplit(url)
    try:
        return app.url_map.bind("localhost").match(parts.path, method="GET")[0]
    except (NotFound, MethodNotAllowed):
        return f"? {parts.path}"


# -- the cases the pages show ----------------------------------------------------------------------

@dataclass
class World:
    sold: int  # notice 2026-01-09, Bidder B's ₹12,500 closed the auction on 2026-01-10: documents, ledger
    notice_due: int  # the release window passed: the secretary's "Publish notice" is ready
    objection: int  # Ram Lal's objection of 2026-01-12: the sarpanch's decision (radios, a conditional field)
    release: int  # impounded 2026-01-12 09:00: the pound keeper's release form (total to collect)
    held: int  # held by an incident (a failing handler)
    incident: int
    training: int  # a case of training Panchayat TRN1
    notice: dict[str, int]  # the sold case's notice as issued, by language


def notice_documents(sessions, case_id: int) -> dict[str, int]:
    with sessions() as session:
        rows = session.query(CaseDocument).filter_by(case_id=case_id, key="notice")
        return {row.language: row.id for row in rows}


def ready_task(sessions, case_id: int, element: str) -> str:
    with sessions() as session:
        task_id = tasks.find_ready(session, session.get(Case, case_id), element)
    assert task_id is not None, f"case {case_id} has no ready task {element}"
    return f"/cases/{case_id}/tasks/{task_id}"


def build_world(client, sessions, officers, virtual_clock) -> World:
    """The cases, built through the test client on the live server's database (fast), ending at
    2026-01-12 10:00 IST."""
    make_training(sessions)
    training_case = start_training_case(client, virtual_clock)
    sold, notice_due, objection = (start_case_on_page(client, virtual_clock) for _ in range(3))
    # version 2: the report handler fails (tests/test_incidents.py), so the case started on it is held
    test_incidents.FLAKY["broken"] = True
    bpmn, forms = repository.read_bundled()
    bpmn = bpmn.replace(b'serviceTaskOperator id="case.raise_report"', b'serviceTaskOperator id="test.flaky_report"')
    with sessions() as session:
        repository.deploy(session, bpmn, forms, "tests", note="flaky report handler")
        session.commit()
    held = test_incidents.impound(sessions, officers["pound_keeper"]).id
    virtual_clock.set(at("2026-01-09T00:00:01+05:30"))
    timers.fire_due(sessions)
    with sessions() as session:
        incident = session.query(Incident).filter_by(case_id=held).one().id
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    login(client, "sec")
    for case_id in (sold, objection):
        link = ready_task(sessions, case_id, "ut_publish_notice")
        assert complete(client, link, objection_period_days="30", full_price="12000.00").status_code == 302
    for instant, bidder, amount in (("2026-01-10T12:00:00+05:30", "Bidder A", "9000.00"),
                                    ("2026-01-10T15:00:00+05:30", "Bidder B", "12500.00")):
        virtual_clock.set(at(instant))
        link = ready_task(sessions, sold, "ut_record_bid")
        assert complete(client, link, bidder=bidder, amount=amount).status_code == 302
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))
    assert client.post(f"/cases/{objection}/objections", data={"objector": "Ram Lal"}).status_code == 302
    release = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                          impounded_at=at("2026-01-12T09:00:00+05:30"), place_seized="Bhimpura",
                          place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                          animals=[{"species": "buffalo", "description": "black buffalo", "tag": "RJ-7"}]).id
    with sessions() as session:
        users.create_token(session, "pk", "field phone")
        session.commit()
    return World(sold, notice_due, objection, release, held, incident, training_case,
                 notice_documents(sessions, sold))


# -- what each visitor opens -----------------------------------------------------------------------

Action = Callable[[Page, str], None]


def form_with_errors(link: str) -> Action:
    def act(page: Page, base: str) -> None:
        page.goto(base + link)
        page.fill("[name=objection_period_days]", "")
        page.fill("[name=full_price]", "12.345")
        page.click("main form.card [type=submit]")
        page.wait_for_load_state()
        assert page.locator("#error-summary").count() == 1, "no error summary"
    return act


def check_page(link: str) -> Action:
    def act(page: Page, base: str) -> None:
        page.goto(base + link)
        page.fill("[name=objection_period_days]", "30")
        page.fill("[name=full_price]", "12000.00")
        page.click("main form.card [type=submit]")
        page.wait_for_load_state()
        assert page.locator("#check-confirm").count() == 1, "no check page"
    return act


def correction_check(case_id: int) -> Action:
    def act(page: Page, base: str) -> None:
        page.goto(f"{base}/cases/{case_id}")
        page.fill("#correct-reason", "the amount was mistyped")
        page.click("#correct [type=submit]")
        page.wait_for_load_state()
        assert page.locator("#check-confirm").count() == 1, "no check page for the correction"
    return act


def training_check(page: Page, base: str) -> None:
    page.goto(f"{base}/training/clock")
    page.fill("#days", "३")  # Devanagari digits are digits
    page.click("#move-days")
    page.wait_for_load_state()
    assert page.locator("#check-confirm").count() == 1, "no check page for the training clock"


def interim_chosen(link: str) -> Action:
    """The sarpanch's decision with the interim delivery chosen: the security field shown."""
    def act(page: Page, base: str) -> None:
        page.goto(base + link)
        page.check("input[name=decision][value=interim_delivery]")
        assert page.locator("#f-security").is_visible()
    return act


def modeler(page: Page, base: str) -> None:
    """The modeler with the diagram drawn, the server's verdict in its badge, and the release form
    open in the forms editor with its two previews drawn."""
    page.goto(f"{base}/admin/processes/rule130_case")
    page.wait_for_selector('#modeler-canvas g.djs-element[data-element-id="ut_publish_notice"]')
    page.wait_for_function("() => document.getElementById('modeler-badge').textContent.trim() !== ''")
    page.select_option("#modeler-form-list", "release_by_owner.schema.json")
    page.frame_locator("#modeler-preview-hi").locator('label[for="f-owner"]').wait_for()


def diagram(path: str) -> Action:
    """A page with the interactive diagram (a case's zoom page, the process), once bpmn-js has drawn it."""
    def act(page: Page, base: str) -> None:
        page.goto(base + path)
        page.wait_for_selector("#diagram[data-rendered=true]", timeout=20_000)
    return act


def case_page(path: str) -> Action:
    """A case page, its diagram drawn on the server: loaded with the version's picture (no script)."""
    def act(page: Page, base: str) -> None:
        page.goto(base + path, wait_until="load")
        page.wait_for_selector("#case-picture svg.case-svg image")
    return act


def visits(world: World, sessions, language: str) -> dict[str, list[tuple[str, str | Action, tuple[str, ...]]]]:
    """For each visitor (a username, or "" for the public), the pages in ``language``: (label, path or
    action, widths). A label starting "not found" is a 404 page; every other path answers 200."""
    # every page at both widths, except the desktop tools (diagram of the process, modeler) and pages
    # that are another's template with other data (at the officers' phone width)
    both, desk, phone = ("360", "1280"), ("1280",), ("360",)
    registers = [(f"register {name}", f"/registers/RMP/{name}", both)
                 for name in ("pound", "receipts", "charges", "suspense", "statement")]
    return {
        "": [("sign-in", "/login", both), ("notice board", "/board", both),
             ("a board notice", f"/board/{world.sold}", both), ("not found", "/board/999999", phone)],
        "pk": [("My tasks", "/tasks", both), ("new case", "/cases/new", both),
               ("case page (pound keeper)", case_page(f"/cases/{world.release}"), both),
               ("release form", ready_task(sessions, world.release, "ut_release"), both),
               ("registers", "/registers", both)],
        "sec": [("My tasks", "/tasks", both), ("case search", "/cases", both),
                ("case search results", "/cases?q=RJ-1001", phone),
                ("case page", case_page(f"/cases/{world.sold}"), both),
                ("case diagram", diagram(f"/cases/{world.sold}/diagram"), both),
                ("process diagram", diagram("/processes/current"), desk),
                ("printable notice", f"/cases/{world.sold}/notice", both),
                ("document", f"/cases/{world.sold}/documents/{world.notice[language]}", both),
                ("task form", ready_task(sessions, world.notice_due, "ut_publish_notice"), both),
                ("error summary", form_with_errors(ready_task(sessions, world.notice_due, "ut_publish_notice")),
                 both),
                ("check page", check_page(ready_task(sessions, world.notice_due, "ut_publish_notice")), both),
                ("correction check page", correction_check(world.objection), both),
                ("inbox", "/inbox", both), ("preferences", "/preferences", both),
                ("password", "/account/password", both), ("registers", "/registers", both),
                ("registers of RMP", "/registers/RMP", both), *registers,
                ("a paper case brought in", "/paper-cases/new", both),
                ("paper cases from a CSV file", "/paper-cases/upload", both),
                ("a corrigendum of the opening record", f"/cases/{world.sold}/corrigenda/opening", both),
                ("a held case", case_page(f"/cases/{world.held}"), phone), ("not found", "/cases/999999", phone)],
        "sar": [("My tasks", "/tasks", phone),
                ("decision with radios", ready_task(sessions, world.objection, "ut_decide_objection"), both),
                ("decision, interim delivery chosen",
                 interim_chosen(ready_task(sessions, world.objection, "ut_decide_objection")), phone)],
        "app": [("My tasks", "/tasks", phone), ("inbox", "/inbox", phone), ("oversight of the Samiti", "/oversight", both),
                ("oversight of a Panchayat", "/oversight/panchayat/RMP", both)],
        "recv": [("My tasks", "/tasks", phone)],
        "admin": [("tokens", "/admin/tokens", both), ("tariffs", "/admin/tariffs", both),
                  ("deliveries", "/admin/deliveries", both), ("timers", "/admin/timers", both),
                  ("officers", "/admin/officers", both), ("an officer", "/admin/officers/sec", both),
                  ("officers from a CSV file", "/admin/officers/import", both),
                  ("incidents", "/admin/incidents", both),
                  ("an incident", f"/admin/incidents/{world.incident}", both),
                  ("processes", "/admin/processes", both), ("registers of every Panchayat", "/registers", both),
                  ("oversight: choose a District", "/oversight", both), ("modeler", modeler, desk),
                  ("versions", "/admin/processes/rule130_case/versions", both),
                  ("versions compared", "/admin/processes/rule130_case/versions/diff?a=1&b=2", both),
                  ("moving cases to version 1", "/admin/processes/rule130_case/versions/1/migrate", both)],
        "trn1-secretary": [("training clock", "/training/clock", both),
                           ("training clock check page", training_check, both),
                           ("a training case", case_page(f"/cases/{world.training}"), phone)],
    }


# -- the test --------------------------------------------------------------------------------------

def open_as(browser, base: str, username: str) -> Page:
    """A browser context with axe-core loaded in every page, signed in as ``username`` ("" stays public)."""
    assert AXE.exists(), f"{AXE} is missing: scripts/setup.sh installs it (npm ci, package-lock.json)"
    context = browser.new_context(viewport=PHONE, locale="en-IN")
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    page.goto(f"{base}/login")
    if username:
        page.fill("[name=username]", username)
        page.fill("[name=password]", PASSWORD)
        page.click("form [type=submit]")
        page.wait_for_load_state()
        assert "/login" not in page.url, f"{username} could not sign in"
    return page


def switch_language(page: Page, language: str) -> None:
    page.click(f"#language button[name=lang][value={language}]")
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == language


def test_no_page_has_a_serious_or_critical_axe_violation_in_either_language(
        app, client, browser, live_server, sessions, officers, virtual_clock):
    started = time.monotonic()
    world = build_world(client, sessions, officers, virtual_clock)
    built = time.monotonic()
    plan = {language: visits(world, sessions, language) for language in LANGUAGES}
    findings = Findings()
    for username in plan["en"]:
        page = open_as(browser, live_server, username)
        for language in LANGUAGES:
            switch_language(page, language)
            for label, target, widths in plan[language][username]:
                where = f"{username or 'public'} · {label} · {language}"
                page.set_viewport_size(PHONE if "360" in widths else DESK)
                if callable(target):
                    target(page, live_server)
                else:
                    status = page.goto(live_server + target).status
                    assert status == (404 if label.startswith("not found") else 200), f"{where}: {status}"
                if not label.startswith("not found"):
                    findings.endpoints.add(endpoint_of(app, page.url))
                assert page.locator("html").get_attribute("lang") == language, f"{where}: not in {language}"
                for width in widths:
                    page.set_viewport_size(WIDTHS[width])
                    run_axe(page, f"{where} · {width}", findings)
        page.context.close()
    elapsed = time.monotonic() - started
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps({"runs": findings.runs, "violations": findings.violations,
                                  "build_seconds": round(built - started, 1), "seconds": round(elapsed, 1)},
                                 ensure_ascii=False, indent=1))
    print(f"\naxe-core: {len(findings.runs)} runs in {elapsed:.0f} s (cases built in {built - started:.0f} s)")
    print(findings.counts())

    get_routes = {rule.endpoint for rule in app.url_map.iter_rules() if "GET" in (rule.methods or ())}
    not_pages = {e for e in get_routes if e in NOT_PAGES or e.startswith(NOT_PAGE_PREFIXES)}
    missed = sorted(get_routes - not_pages - findings.endpoints)
    assert missed == [], f"GET routes neither checked by axe here nor listed in NOT_PAGES: {missed}"
    assert sorted(set(NOT_PAGES) - get_routes) == [], "NOT_PAGES names routes that no longer exist"
    blocking = findings.blocking()
    assert blocking == [], f"{len(blocking)} serious or critical violations:\n{findings.report(blocking)}"
