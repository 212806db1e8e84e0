"""Benchmark: what documents cost — issuing them inside an act, storing them, printing them as PDF.

Runs scenarios s1, s2, s3 and s5 with ``rule130 simulate``'s code on fresh SQLite databases (best
of three runs each, after a warm-up), then prints per scenario the wall time of the whole run, the
same with no document issued (``documents.due`` answering nothing: the cost of issuing), and the
documents issued with their stored bytes (HTML, both languages); then, for
each stored document, the time its PDF takes (webapp.services.papers.pdf: headless Chromium; the first PDF of the
process apart: it starts the browser) and the PDF's size (tests/bench/pdf_render.py measures the
PDFs alone, warm and under concurrent requests):

    .venv/bin/python tools/bench_documents.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select

from webapp.services.papers import documents
from webapp.simulation import simulate
from webapp.store import db
from webapp.store.models import CaseDocument

SCENARIOS = ("s1", "s2", "s3", "s5")


def run(name: str) -> tuple[float, list[CaseDocument]]:
    scenario = simulate.load_scenario(next((ROOT / "tests" / "scenarios").glob(f"{name}-*.yaml")))
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        db.upgrade(url)
        started = time.perf_counter()
        result = simulate.run_scenario(scenario, url)
        elapsed = time.perf_counter() - started
        assert not result.mismatches, result.mismatches
        engine = db.make_engine(url)
        with db.session_factory(engine)() as session:
            rows = list(session.scalars(select(CaseDocument).order_by(CaseDocument.id)))
            session.expunge_all()
        engine.dispose()
    return elapsed, rows


def main() -> None:
    stored: list[CaseDocument] = []
    print("scenario  run (s)  without documents (s)  documents  stored HTML bytes (en + hi)")
    real_due = documents.due
    for name in SCENARIOS:
        run(name)  # warm-up
        runs = [run(name) for _ in range(3)]
        elapsed, rows = min(runs, key=lambda r: r[0])
        documents.due = lambda cf: []
        try:
            bare = min(run(name)[0] for _ in range(3))
        finally:
            documents.due = real_due
        stored.extend(rows)
        print(f"{name:8}  {elapsed:7.2f}  {bare:21.2f}  {len(rows) // 2:9}  "
              f"{sum(len(r.html.encode()) for r in rows):10}")
    started = time.perf_counter()
    documents.pdf_bytes(stored[0])
    print(f"first PDF of the process (starts the browser): {time.perf_counter() - started:.2f} s")
    print("document                     language  PDF (s)  PDF bytes  same bytes on reprint")
    times = []
    for row in stored:
        started = time.perf_counter()
        body = documents.pdf_bytes(row)
        times.append(time.perf_counter() - started)
        again = documents.pdf_bytes(row)
        print(f"{row.kind:28} {row.language:8}  {times[-1]:7.2f}  {len(body):9}  {body == again}")
    print(f"PDF time: median {statistics.median(times):.2f} s, max {max(times):.2f} s over {len(times)} documents")


if __name__ == "__main__":
    main()
