"""PDF benchmark: how long does a document's PDF take (webapp.services.papers.pdf: headless Chromium, then pypdf)?

Run from the repository root (not part of the unit suite):

    .venv/bin/python tests/bench/pdf_render.py                # every kind of document, both languages
    .venv/bin/python tests/bench/pdf_render.py --repeat 10 --threads 4

Scenarios s1, s2, s3, s5 and s6 run on temporary SQLite databases (``rule130 simulate``'s code) and
issue every kind of document (webapp.services.papers.documents.KINDS) in English and Hindi. Printed:

- the first PDF of the process, which starts the browser (Playwright's driver and Chromium);
- per document and language, the warm time (median of ``--repeat`` prints), the part of it that
  is pypdf's rewrite (webapp.services.papers.pdf.finish), the PDF's size, and whether the reprints were byte-identical;
- with ``--threads N``: N threads asking for PDFs at once (a busy server): each request's time
  (in line behind the others included), p50 and max;
- the first PDF after the browser was closed (as after an idle period or a crash).
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

from webapp.services.papers import documents, pdf
from webapp.simulation import simulate
from webapp.store import db
from webapp.store.models import CaseDocument

SCENARIOS = ("s1", "s2", "s3", "s5", "s6")


def stored_documents() -> list[CaseDocument]:
    """One stored document per kind and language (the first issued), detached from its session."""
    found: dict[tuple[str, str], CaseDocument] = {}
    for name in SCENARIOS:
        scenario = simulate.load_scenario(next((ROOT / "tests" / "scenarios").glob(f"{name}-*.yaml")))
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'bench.db'}"
            db.upgrade(url)
            result = simulate.run_scenario(scenario, url)
            assert not result.mismatches, result.mismatches
            engine = db.make_engine(url)
            with db.session_factory(engine)() as session:
                for row in session.scalars(select(CaseDocument).order_by(CaseDocument.id)):
                    found.setdefault((row.kind, row.language), row)
                session.expunge_all()
            engine.dispose()
    assert {kind for kind, _ in found} == set(documents.KINDS), sorted(found)
    return [found[key] for key in sorted(found)]


def timed(row: CaseDocument) -> tuple[float, float, bytes]:
    """(total seconds, seconds in pypdf's rewrite, the PDF) of one print of ``row``."""
    page = documents.pdf_page(row)
    started = time.perf_counter()
    raw = pdf.shared().pdf(page)
    printed = time.perf_counter()
    body = pdf.finish(raw, page, row.issued_at, row.cancelled_at)
    done = time.perf_counter()
    return done - started, done - printed, body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm prints per document (median shown)")
    parser.add_argument("--threads", type=int, default=4, help="threads asking at once (0: skip that part)")
    args = parser.parse_args()
    rows = stored_documents()

    started = time.perf_counter()
    documents.pdf_bytes(rows[0])
    print(f"first PDF of the process (starts Chromium): {time.perf_counter() - started:.2f} s")

    print(f"{'document':24} {'lang':4}  {'warm (s)':>8}  {'pypdf (s)':>9}  {'PDF bytes':>9}  same bytes")
    warm = []
    for row in rows:
        runs = [timed(row) for _ in range(args.repeat)]
        total = statistics.median(r[0] for r in runs)
        warm.append(total)
        same = len({r[2] for r in runs}) == 1 and runs[0][2] == documents.pdf_bytes(row)
        print(f"{row.kind:24} {row.language:4}  {total:8.3f}  {statistics.median(r[1] for r in runs):9.3f}  "
              f"{len(runs[0][2]):9}  {same}")
    print(f"warm PDF: median {statistics.median(warm):.3f} s, max {max(warm):.3f} s over {len(warm)} documents")

    if args.threads:
        times: list[float] = []
        lock = threading.Lock()

        def ask(offset: int) -> None:
            for row in rows[offset::args.threads]:
                began = time.perf_counter()
                documents.pdf_bytes(row)
                with lock:
                    times.append(time.perf_counter() - began)

        started = time.perf_counter()
        workers = [threading.Thread(target=ask, args=(n,)) for n in range(args.threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - started
        print(f"{args.threads} threads at once, {len(times)} PDFs in {elapsed:.2f} s: per request p50 "
              f"{statistics.median(times):.3f} s, max {max(times):.3f} s (waiting in line included)")

    pdf.shared().close()
    started = time.perf_counter()
    documents.pdf_bytes(rows[0])
    print(f"first PDF after the browser was closed (idle or crashed): {time.perf_counter() - started:.2f} s")
    pdf.shared().close()


if __name__ == "__main__":
    main()
