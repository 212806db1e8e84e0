"""SQL statements per step of scenario s1 through the services (issue 32, item 1).

A *step* is a unit of work of the case: the pound keeper starting it, each officer's act (the
notice, two bids, the order that the auction stand) and each pass of the timer worker over it (the
release window; the auction's close with the objection period's end; the appeal window): 8 steps.
A *statement* is one statement sent to the database driver (SQLAlchemy's ``before_cursor_execute``:
a multi-row INSERT or an ``executemany`` counts once; BEGIN and COMMIT are not statements there).
This is how ``tests/bench/bench.py`` counts them, over the same case (``service_case``: scenario s1,
``tests/scenarios/s1-no-objection-full-price.yaml``), after one case that warms the process's
caches; and how the issue's figures (16.1 on SQLite, 17.3 on PostgreSQL before this change) were
counted.

The issue's target is 12 per step on both databases. Reached so far: 99 statements (12.4 per step)
on SQLite, 108 (13.5) on PostgreSQL, whose case lock and audit-chain lock are statements of their
own; the test fails above those figures, so the write path cannot grow back unseen.

Real database (SQLite, or PostgreSQL with RULE130_TEST_POSTGRES), real services.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from sqlalchemy import event, select

from webapp.store.models import Case

from .bench import bench

pytestmark = pytest.mark.usefixtures("virtual_clock")

STEPS = 8  # start, 4 acts, 3 timer passes (bench.S1_STEPS after the start)
MOST = {"sqlite": 99, "postgresql": 108}  # statements for the whole case (issue 32 target: 96)


def _table(statement: str) -> str:
    found = re.match(r"\s*(?:INSERT INTO|UPDATE|DELETE FROM|SELECT\s.*?\sFROM)\s+\"?(\w+)", statement, re.S)
    return found.group(1) if found else statement.split("(")[0].strip()[:40]


def test_scenario_s1_takes_at_most_its_statements_per_step(sessions, officers, virtual_clock):
    bench.service_case(sessions, officers, virtual_clock)  # warm the caches, as the benchmark does
    engine = sessions.kw["bind"]
    seen: list[str] = []

    def count(_conn, _cursor, statement, _parameters, _context, _many) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        case_id = bench.service_case(sessions, officers, virtual_clock)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    with sessions() as session:
        outcome = session.scalar(select(Case.outcome).where(Case.id == case_id))
    assert outcome == "auction_final"
    dialect = engine.dialect.name
    tables = Counter(_table(s) for s in seen)
    assert len(seen) <= MOST[dialect], (len(seen) / STEPS, tables.most_common())
    # what this change folded into statements a step already makes:
    assert tables["panchayat"] == 1  # the Panchayat: read with the case row (the new case: once)
    assert not [s for s in seen if s.lstrip().startswith("SELECT process_version.content_hash")]
    assert not [s for s in seen if s.lstrip().startswith("SELECT max(case_event.id)")]  # in the act's INSERT
    assert not [s for s in seen if s.lstrip().startswith("SELECT (SELECT max(case_event.id)")]  # marks: with the case
    assert tables["case_act"] == 4  # one INSERT per act, nothing else
