"""Browser fixtures: the real application served over HTTP on loopback (werkzeug's server in a
thread, CSRF on) and Debian's chromium driven by Playwright, headless (MACHINE.md's recipe).

Time: the test's virtual clock is installed for every request the server handles, so the pages,
the legal deadlines and SpiffWorkflow's timers all see the instant the test has moved to."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from webapp.values import clock

CHROMIUM = os.environ.get("RULE130_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(os.environ.get("RULE130_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build" / "screenshots"))


def pytest_collection_modifyitems(config, items):
    """Browser tests need chromium. Where it is missing they are skipped with the reason, except
    when RULE130_REQUIRE_BROWSER=1 (scripts/test.sh sets it; CI must not skip them silently)."""
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("RULE130_REQUIRE_BROWSER") == "1":
        raise pytest.UsageError(f"browser tests need chromium at {CHROMIUM}: run scripts/setup-browser.sh")
    skip = pytest.mark.skip(reason=f"chromium not found at {CHROMIUM} (scripts/setup-browser.sh installs it)")
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


@pytest.fixture
def served():
    """What the live server answered, in order: one ``(path, status, content-encoding, bytes sent)``
    per request (the bytes as sent, compressed where the response was). A test clears it to count
    the round trips of one page view."""
    return []


@pytest.fixture
def live_server(database_url, sessions, officers, virtual_clock, served):
    """The application on http://127.0.0.1:<free port>, on the test's database and clock; every
    request it answers is listed in :func:`served`."""
    from webapp import create_app
    # the tests move the virtual clock by days while officers stay signed in (as tests/conftest.py's app)
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": "browser-test", "WTF_CSRF_ENABLED": True,
                      "SESSION_IDLE_MINUTES": 3660 * 24 * 60, "SESSION_LIFETIME_HOURS": 3660 * 24})

    def with_clock(environ, start_response):
        answered = {}

        def noted(status, headers, *rest):
            answered["status"], answered["headers"] = int(status.split()[0]), dict(headers)
            return start_response(status, headers, *rest)

        with clock.installed(virtual_clock):
            # Flask builds the whole body inside the call for these pages; join it while the clock holds.
            body = b"".join(app(environ, noted))
        served.append((environ.get("PATH_INFO", ""), answered.get("status"),
                       answered.get("headers", {}).get("Content-Encoding"), len(body)))
        return [body]

    server = make_server("127.0.0.1", 0, with_clock, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)
    app.extensions["rule130.engine"].dispose()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()
