"""The PDF renderer (webapp.services.papers.pdf): one long-lived headless Chromium per process, started again when it
dies or after it idled, printing without fetching anything, the same bytes for the same page; and
a server without Chromium answers 503 with a message in the officer's language.

These tests start their own browsers (a :class:`webapp.services.papers.pdf.Renderer` each, Debian's chromium) and
find them among this process's descendants to kill them or to see them gone."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pypdf import PdfReader

from webapp.services.papers import pdf

from .test_documents import docs, login, pdf_text, run_scenario, squeezed

ISSUED = datetime(2026, 1, 9, 5, 30, tzinfo=UTC)


def page(body: str, title: str = "A page") -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="description" content="what it is"><meta name="keywords" content="k1, k2">'
            f"<style>@page {{ size: A4; margin: 20mm }} table {{ border-collapse: collapse }}</style></head>"
            f"<body>{body}</body></html>")


TABLE = ("<h1>Receipt</h1><table><thead><tr><th>#</th><th>Species</th></tr></thead>"
         "<tbody><tr><td>1</td><td>cow</td></tr><tr><td>2</td><td>goat</td></tr></tbody></table>")


def browsers() -> set[int]:
    """The process ids of the Chromium browsers (not their helper processes) under this process."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = set(), [os.getpid()]
    while pending:
        for child in children.get(pending.pop(), []):
            pending.append(child)
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            # helpers (zygote, renderer, gpu...) rewrite their command line into one "... --type=..." string
            if argv[0].endswith(b"/chromium") and b"--type=" not in b" ".join(argv):
                found.add(child)
    return found


def wait_until(condition, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.fixture
def renderer():
    made = pdf.Renderer()
    yield made
    made.close()


def test_a_page_gives_the_same_bytes_whatever_was_printed_before_and_after_a_restart(renderer):
    first = pdf.finish(renderer.pdf(page(TABLE)), page(TABLE), ISSUED)
    pdf.finish(renderer.pdf(page(TABLE + TABLE, "Other")), page(TABLE + TABLE, "Other"), ISSUED)
    assert pdf.finish(renderer.pdf(page(TABLE)), page(TABLE), ISSUED) == first
    renderer.close()
    assert pdf.finish(renderer.pdf(page(TABLE)), page(TABLE), ISSUED) == first
    assert renderer.launches == 2
    # the metadata come from the page and the instants given, not from the moment of printing
    reader = PdfReader(io.BytesIO(first))
    meta = reader.metadata
    assert (meta.title, meta.subject, meta.keywords, meta.creator) == ("A page", "what it is", "k1, k2", "rule130")
    assert meta.creation_date == meta.modification_date == ISSUED
    assert "/StructTreeRoot" in reader.trailer["/Root"] and reader.trailer["/Root"]["/Lang"] == "en"
    # the table's header cells keep their IDs, numbered from 1, and the cells name them
    assert b"(node00000001)" in first and b"/Headers [ (node00000001) ]" in first
    assert squeezed(pdf_text(first)) == "Receipt#Species1cow2goat"


def test_a_browser_that_dies_is_started_again_for_the_next_pdf(renderer):
    before = browsers()
    assert "Receipt" in pdf_text(renderer.pdf(page(TABLE)))
    [started] = browsers() - before
    os.kill(started, signal.SIGKILL)
    assert wait_until(lambda: started not in browsers())
    assert "Receipt" in pdf_text(renderer.pdf(page(TABLE)))
    assert renderer.launches == 2 and len(browsers() - before) == 1


def test_an_idle_browser_is_closed_and_the_next_pdf_starts_one(renderer):
    renderer.idle_seconds = 0.5
    before = browsers()
    renderer.pdf(page("<p>one</p>"))
    assert len(browsers() - before) == 1
    assert wait_until(lambda: not browsers() - before)  # closed after half a second without a PDF
    assert pdf_text(renderer.pdf(page("<p>two</p>"))) == "two"
    assert renderer.launches == 2


def test_a_browser_started_in_advance_prints_the_first_pdf_and_stays_up_by_default(renderer, monkeypatch):
    before = browsers()
    renderer.start()  # returns at once; the browser comes up in the background
    assert wait_until(lambda: len(browsers() - before) == 1)
    assert pdf_text(renderer.pdf(page("<p>first</p>"))) == "first"
    assert renderer.launches == 1 and renderer.idle_seconds is None
    monkeypatch.setattr(pdf, "_shared", None)
    monkeypatch.setenv("RULE130_PDF_IDLE_SECONDS", "300")
    assert pdf.shared().idle_seconds == 300.0
    for wrong in ("0", "-5", "ten", "nan"):
        monkeypatch.setattr(pdf, "_shared", None)
        monkeypatch.setenv("RULE130_PDF_IDLE_SECONDS", wrong)
        with pytest.raises(ValueError, match="RULE130_PDF_IDLE_SECONDS must be a positive number of seconds"):
            pdf.shared()


def test_a_browser_that_does_not_answer_in_time_is_closed_and_the_next_pdf_starts_a_new_one(renderer):
    before = browsers()
    assert pdf_text(renderer.pdf(page("<p>up</p>"))) == "up"
    renderer.render_timeout = 0.001  # far too short to print
    with pytest.raises(pdf.PdfUnavailable, match="could not be made just now"):
        renderer.pdf(page("<p>late</p>"))
    assert wait_until(lambda: not browsers() - before)  # that browser is closed
    renderer.render_timeout = pdf.RENDER_TIMEOUT
    assert pdf_text(renderer.pdf(page("<p>in time</p>"))) == "in time"
    assert renderer.launches == 2


def test_nothing_is_fetched_while_printing(renderer):
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        body = renderer.pdf(page(f'<link rel="stylesheet" href="{base}/a.css"><img src="{base}/b.png" alt="b">'
                                 f'<iframe src="{base}/c.html"></iframe><p>text</p>'))
    finally:
        server.shutdown()
    assert body.startswith(b"%PDF-") and asked == []


def test_a_missing_or_broken_chromium_is_refused_as_unavailable():
    started = time.monotonic()
    with pytest.raises(pdf.PdfUnavailable, match="needs the Chromium browser"):
        pdf.Renderer("/nonexistent/chromium").pdf(page("<p>x</p>"))
    broken = pdf.Renderer("/bin/true")  # runs, but is no browser: the launch fails
    with pytest.raises(pdf.PdfUnavailable, match="needs the Chromium browser"):
        broken.pdf(page("<p>x</p>"))
    with pytest.raises(pdf.PdfUnavailable):  # refused at once for a while, without trying again
        broken.pdf(page("<p>x</p>"))
    assert broken.launches == 0 and time.monotonic() - started < pdf.RENDER_TIMEOUT
    broken.close()


def test_a_pdf_date_needs_an_aware_instant():
    with pytest.raises(ValueError, match="aware"):
        pdf._pdf_date(datetime(2026, 1, 9, 11, 0))
    assert pdf._pdf_date(datetime.fromisoformat("2026-01-09T11:00:00+05:30")) == "D:20260109053000+00'00'"


def test_without_chromium_the_pdf_answers_503_in_the_officers_language_and_the_page_still_works(
        app, sessions, officers, virtual_clock, monkeypatch):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=1)
    notice = docs(sessions, case_id)["notice", "en"]
    monkeypatch.setattr(pdf, "_shared", pdf.Renderer("/nonexistent/chromium"))
    client = app.test_client()
    login(client, "sec")
    response = client.get(f"/cases/{case_id}/documents/{notice.id}.pdf")
    text = response.get_data(as_text=True)
    assert response.status_code == 503 and response.mimetype == "text/html"
    assert "PDF files cannot be made on this server: it needs the Chromium browser" in text
    assert "Traceback" not in text and "/nonexistent" not in text
    assert client.get(f"/cases/{case_id}/documents/{notice.id}").status_code == 200  # the printable page
    client.post("/language", data={"lang": "hi", "next": f"/cases/{case_id}"})
    hindi = client.get(f"/cases/{case_id}/documents/{notice.id}.pdf").get_data(as_text=True)
    assert "Chromium" in hindi and "PDF files cannot be made" not in hindi
