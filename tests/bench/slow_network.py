"""Pages on a village connection (issue 32, item 4): the case page, cold and warm, and the task list,
in Chromium with the network throttled (Chrome DevTools' network emulation: 400 ms round trip,
400 kbit/s down and up).

Run from the repository root (not part of the unit suite; scripts/setup.sh must have run, for the
static files' hashed names and bpmn-js):

    .venv/bin/python tests/bench/slow_network.py                 # 5 rounds
    .venv/bin/python tests/bench/slow_network.py --rounds 9 --latency 400 --kbit 400

The demo data (``rule130 demo-data``) on a temporary SQLite database, served by werkzeug on
loopback; the demo secretary signed in at 360 px. Per page, the median and worst of ``--rounds``
rounds: the time to DOMContentLoaded, to the load event (every stylesheet, script and image), and
for the case page to the diagram drawn (the server's picture, ``#case-picture image``, by the load event); with the requests made
and the bytes they carried. Cold: a new browser context (an empty cache, the same cookies); warm:
the same page opened again in that context.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select
from werkzeug.serving import make_server

from webapp import create_app
from webapp.services.diagrams import repository
from webapp.services.panchayats.demo import ensure_demo
from webapp.store import db
from webapp.store.models import Case
from webapp.web import assets

PASSWORD = "kanji-house-demo"
CHROMIUM = "/usr/bin/chromium"


def serve(url: str) -> tuple[str, object]:
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench-slow-network"})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}", server


def measure(page, cdp, url: str, drawn: bool) -> dict[str, float]:
    """Open ``url`` on ``page`` (throttled through ``cdp``); seconds to each milestone, the requests
    and the bytes received (Chrome's encoded, on-the-wire sizes)."""
    sizes: dict[str, float] = {}
    counts = {"requests": 0}

    def finished(event: dict) -> None:
        sizes[event["requestId"]] = event.get("encodedDataLength", 0)

    def sent(event: dict) -> None:
        counts["requests"] += 1

    cdp.on("Network.loadingFinished", finished)
    cdp.on("Network.requestWillBeSent", sent)
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    dom = time.perf_counter() - start
    page.wait_for_load_state("load")
    load = time.perf_counter() - start
    figures = {"dom": dom, "load": load}
    if drawn:
        # the server's picture of the diagram (an <image> in the page's SVG): drawn by the load event
        page.wait_for_selector("#case-picture svg.case-svg image", state="attached", timeout=60_000)
        figures["drawn"] = max(load, time.perf_counter() - start)
    page.wait_for_load_state("networkidle")
    cdp.remove_listener("Network.loadingFinished", finished)
    cdp.remove_listener("Network.requestWillBeSent", sent)
    figures["requests"] = counts["requests"]
    figures["kb"] = sum(sizes.values()) / 1024
    return figures


def throttled(page, latency_ms: int, kbit: int):
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": latency_ms,
                                                   "downloadThroughput": kbit * 1000 / 8,
                                                   "uploadThroughput": kbit * 1000 / 8})
    return cdp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency", type=int, default=400, help="round trip, ms")
    parser.add_argument("--kbit", type=int, default=400, help="throughput, kbit/s, each way")
    args = parser.parse_args()
    if not assets.manifest_is_current():
        sys.exit("the static files have no current hashed names: run scripts/setup.sh (rule130 digest-static)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        db.upgrade(url)
        sessions = db.session_factory(db.make_engine(url))
        with sessions() as session:
            repository.deploy_bundled(session, "bench")
            session.commit()
        ensure_demo(sessions, PASSWORD)
        with sessions() as session:
            case_id = session.scalar(select(Case.id).order_by(Case.id))
        base, server = serve(url)
        results: dict[str, list[dict[str, float]]] = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            login = browser.new_context(viewport={"width": 360, "height": 780})
            page = login.new_page()
            page.goto(f"{base}/login")
            page.fill("[name=username]", "secretary")
            page.fill("[name=password]", PASSWORD)
            page.click("form [type=submit]")
            page.wait_for_load_state()
            state = login.storage_state()
            for _ in range(args.rounds):
                for name, path, drawn in (("case page", f"/cases/{case_id}", True), ("task list", "/tasks", False)):
                    context = browser.new_context(viewport={"width": 360, "height": 780}, storage_state=state)
                    tab = context.new_page()
                    cdp = throttled(tab, args.latency, args.kbit)
                    results.setdefault(f"{name}, cold", []).append(measure(tab, cdp, base + path, drawn))
                    results.setdefault(f"{name}, warm", []).append(measure(tab, cdp, base + path, drawn))
                    context.close()
            browser.close()
        server.shutdown()
    print(f"network: {args.latency} ms round trip, {args.kbit} kbit/s; {args.rounds} rounds; median (worst)")
    for name, rows in results.items():
        parts = []
        for key in ("dom", "load", "drawn"):
            if key in rows[0]:
                values = [row[key] for row in rows]
                parts.append(f"{key} {statistics.median(values):.2f} s ({max(values):.2f})")
        parts.append(f"{rows[0]['requests']:.0f} requests (from the cache included), {statistics.median(r['kb'] for r in rows):.1f} KB")
        print(f"{name:18} " + "; ".join(parts))


if __name__ == "__main__":
    main()
