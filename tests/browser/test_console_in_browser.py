"""No page writes an error to the browser's console or breaks the Content-Security-Policy, in English
and in Hindi, the modeler included (issue 29, item 7), in Debian's chromium.

The pages are those of the axe walker (test_axe_in_browser: every GET page of the product, each opened
by whoever may open it, the pages a form's POST answers with, the modeler with its previews drawn),
built on the same cases. On each, the test collects what the browser reports:

- every console message of type ``error`` (a failed subresource, a 404 included, is one: "Failed to
  load resource"), except the line about the page's own status where it is the one meant (the 404
  page, and a form sent back with its errors: 422);
- every uncaught exception in the page's scripts (``pageerror``);
- every ``securitypolicyviolation`` event (an init script listens from the first byte of each page
  and frame; the policy is as served);
- every request of the page that failed or answered 400 or more.

Any of these fails the test, listed by visitor, page and language."""

from __future__ import annotations

from playwright.sync_api import Page

from ..conftest import PASSWORD
from .test_axe_in_browser import LANGUAGES, build_world, switch_language, visits
from .test_officers_in_browser import DESK, PHONE

LISTEN = """window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(
    `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile || document.URL}:${e.lineNumber}`
    + (e.sample ? ` (${e.sample})` : '')));"""


class Reports:
    """What the browser reported on the page since :meth:`start`."""

    def __init__(self, page: Page) -> None:
        self.lines: list[str] = []
        self.page = page
        page.on("console", lambda m: self.lines.append(f"console {m.type}: {m.text} ({m.location.get('url')})")
                if m.type == "error" else None)
        page.on("pageerror", lambda error: self.lines.append(f"uncaught: {error}"))
        page.on("requestfailed", lambda r: self.lines.append(f"request failed: {r.url} ({r.failure})"))
        page.on("response", lambda r: self.lines.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    def start(self) -> None:
        self.lines.clear()

    def collect(self, status: int | None) -> list[str]:
        """The reports, less the page's own answer where its status is the one meant (``status``:
        404 for a page that is not found, 422 for a form sent back with its errors)."""
        url = self.page.url
        found = [line for line in self.lines if status is None or not (
            line == f"HTTP {status}: {url}" or (f"status of {status}" in line and line.endswith(f"({url})")))]
        for frame in self.page.frames:
            try:
                found.extend(f"CSP: {v}" for v in frame.evaluate("() => window.__violations || []"))
            except Exception as error:  # a frame that went away as it was read
                found.append(f"frame {frame.url} could not be read: {error}")
        return found


def open_as(browser, base: str, username: str) -> tuple[Page, Reports]:
    context = browser.new_context(viewport=PHONE, locale="en-IN")
    context.add_init_script(LISTEN)
    page = context.new_page()
    reports = Reports(page)
    page.goto(f"{base}/login")
    if username:
        page.fill("[name=username]", username)
        page.fill("[name=password]", PASSWORD)
        page.click("form [type=submit]")
        page.wait_for_load_state()
        assert "/login" not in page.url, f"{username} could not sign in"
    return page, reports


def test_no_page_logs_a_console_error_or_a_csp_violation_in_either_language(
        app, client, browser, live_server, sessions, officers, virtual_clock):
    world = build_world(client, sessions, officers, virtual_clock)
    plan = {language: visits(world, sessions, language) for language in LANGUAGES}
    problems: list[str] = []
    pages = 0
    for username in plan["en"]:
        page, reports = open_as(browser, live_server, username)
        for language in LANGUAGES:
            switch_language(page, language)
            for label, target, widths in plan[language][username]:
                where = f"{username or 'public'} · {label} · {language}"
                page.set_viewport_size(PHONE if "360" in widths else DESK)
                reports.start()
                if callable(target):
                    target(page, live_server)
                else:
                    page.goto(live_server + target)
                page.wait_for_load_state("networkidle")
                pages += 1
                status = 404 if label.startswith("not found") else 422 if label == "error summary" else None
                problems.extend(f"{where}: {line}" for line in reports.collect(status))
        page.context.close()
    print(f"\n{pages} pages visited, {len(problems)} problems")
    assert problems == [], "\n".join(problems)
