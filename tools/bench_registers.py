"""Time the Panchayat statement and the receipts register with many ledger entries.

Usage (a throw-away SQLite database; the six shared scenarios give the cases, then every one of
their ledger entries is copied COPIES times, a minute apart):

    .venv/bin/rule130 simulate tests/scenarios/s*.yaml --database sqlite:////tmp/bench.db
    .venv/bin/python tools/bench_registers.py sqlite:////tmp/bench.db 1000

Prints, for a year and for a month, the seconds taken, the lines listed, whether the statement
reconciles and the Panchayat fund's closing balance (rupees).
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta

from sqlalchemy import func, insert, select

from webapp.services.reports import registers
from webapp.store import db
from webapp.store.models import LedgerEntry, Panchayat


def main(url: str, copies: int) -> None:
    sessions = db.session_factory(db.make_engine(url))
    with sessions() as session:
        base = session.scalars(select(LedgerEntry)).all()
        rows = [dict(case_id=e.case_id, panchayat_id=e.panchayat_id, at=e.at + timedelta(minutes=k),
                     from_account=e.from_account, to_account=e.to_account, amount=e.amount, kind=e.kind,
                     clause=e.clause, element_id=e.element_id, officer_id=e.officer_id, memo=e.memo)
                for k in range(copies) for e in base]
        if rows:
            session.execute(insert(LedgerEntry), rows)
            session.commit()
        count = session.scalar(select(func.count(LedgerEntry.id)))
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        for first, last in (("2026-01-01", "2026-12-31"), ("2026-10-01", "2026-10-31")):
            period = registers.period(panchayat, first, last)
            started = time.perf_counter()
            statement = registers.statement(session, panchayat, period)
            took = time.perf_counter() - started
            started = time.perf_counter()
            receipts = registers.receipts(session, panchayat, period)
            took_receipts = time.perf_counter() - started
            print(f"{count} entries; {first}..{last}: statement {took:.2f} s "
                  f"({sum(len(a.lines) for a in statement.accounts)} lines, reconciles={statement.reconciles}, "
                  f"Panchayat fund closes at {statement.accounts[2].closing}); receipts {took_receipts:.2f} s "
                  f"({len(receipts)})")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
