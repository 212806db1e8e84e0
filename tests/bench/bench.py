"""The benchmark of issue 4 (not part of the unit suite): prints, in one run on this machine,

1. whole Rule 130 cases per second through the service layer on SQLite and on PostgreSQL, next to
   the same cases on bare SpiffWorkflow in memory (the ratio is the cost of persistence), the two
   interleaved case by case so that both see the same minutes of the machine;
2. timers fired per second with 1, 2 and 4 worker processes on PostgreSQL;
3. p50 and p95 of the "My tasks" query and page and of the case page (Flask test client) with
   ``--cases`` cases (default 100,000) in the database, on SQLite and on PostgreSQL;
4. stored bytes per finished case: as the files grew (PostgreSQL's dead rows included), and after
   a VACUUM (SQLite; PostgreSQL: VACUUM FULL) at close and once every window of its acts has
   passed and the snapshots' housekeeping ran (webapp.services.jobs.snapshots), by table.

Run from the repository (PostgreSQL at ``--postgres``, default 127.0.0.1:5432 database test; each
part works in a schema of its own, dropped at the end)::

    .venv/bin/python tests/bench/bench.py                 # the whole run, about 10 minutes
    .venv/bin/python tests/bench/bench.py --cases 20000   # a quicker run

"A whole case" is scenario s1 (two cows, notice, a low bid and a full-price bid, the auction
ordered to stand, the appeal window passing): 4 officer acts and 4 timers. The 100,000 cases are
bulk-inserted copies (INSERT ... SELECT in the database) of real cases driven through the
services to 7 stages, with their task rows, history and ledger entries; each copy gets its own
case number and Panchayat (``--panchayats``, default 100, so 1,000 cases per Panchayat).
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sqlalchemy import event, func, select, text

import handlers
from handlers.context import HandlerContext
from webapp.engine.execution import runtime
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import snapshots, timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import rules, tasks
from webapp.store import db
from webapp.store.models import Case, CaseAct, CaseTask, Panchayat, User
from webapp.values import clock, legal_time
from webapp.values.casefile import Animal, CaseFile
from webapp.values.tariff import DEFAULT_TARIFF

PASSWORD = "benchmark password"
FAST_HASH = "pbkdf2:sha256:1000"
IST = "+05:30"
ANIMALS = [{"species": "cow", "description": "brown cow, white patch on forehead", "tag": "RJ-1001"},
           {"species": "cow", "description": "black cow, left horn broken", "tag": "RJ-1002"}]


def at(text_: str) -> datetime:
    return datetime.fromisoformat(text_)


# -- databases -------------------------------------------------------------------------------------------

@dataclass
class Store:
    """One benchmark database: its URL, sessions, and how to drop it."""

    name: str
    url: str
    sessions: Any
    drop: Callable[[], None]


def quiet() -> None:
    """Only warnings from the product and Alembic: the figures are the output."""
    for name in ("rule130", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def sqlite_store(folder: Path, name: str) -> Store:
    url = f"sqlite:///{folder / (name + '.db')}"
    db.upgrade(url)
    quiet()
    engine = db.make_engine(url)
    return Store("SQLite", url, db.session_factory(engine), engine.dispose)


def postgres_store(base: str, name: str) -> Store:
    schema = f"bench_{name}_{uuid.uuid4().hex[:8]}"
    admin = db.make_engine(base)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = f"{base}?options=-csearch_path%3D{schema}"
    db.upgrade(url)
    quiet()
    engine = db.make_engine(url)

    def drop() -> None:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    return Store("PostgreSQL", url, db.session_factory(engine), drop)


def setup_people(sessions: Any) -> dict[str, User]:
    """Panchayat RMP with its officers and a Samiti-level appellate authority."""
    with sessions() as session:
        repository.deploy_bundled(session, "bench")  # the same version when already deployed
        users.create_panchayat(session, "RMP", "Rampura", "SAM1", district="Jaipur")
        made = {role: users.create_user(session, name, PASSWORD, role, panchayat_code="RMP",
                                        password_method=FAST_HASH, display_name=name)
                for name, role in (("pk", "pound_keeper"), ("sec", "secretary"), ("sar", "sarpanch"))}
        made["appellate_authority"] = users.create_user(session, "app", PASSWORD, "appellate_authority",
                                                        samiti_code="SAM1", password_method=FAST_HASH)
        session.commit()
    return made


# -- 1. whole cases ------------------------------------------------------------------------------------------

S1_STEPS = [  # (instant, role, element, form) after the start; None role = fire timers
    ("2026-01-09T00:00:01", None, None, None),
    ("2026-01-09T11:00:00", "secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000.00"}),
    ("2026-01-10T12:00:00", "secretary", "ut_record_bid", {"bidder": "Bidder A", "amount": "9000.00"}),
    ("2026-01-10T15:00:00", "secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "12500.00"}),
    ("2026-02-09T00:00:01", None, None, None),
    ("2026-02-09T11:00:00", "sarpanch", "ut_order_stand", {}),
    ("2026-03-12T00:00:01", None, None, None),
]
IMPOUNDED = "2026-01-05T10:00:00" + IST


def service_case(sessions: Any, people: dict[str, User], vc: clock.VirtualClock, stop_after: int | None = None) -> int:
    """Scenario s1 through the services (one transaction per act or timer pass); the case id."""
    vc.set(at(IMPOUNDED))
    pk = people["pound_keeper"]
    case = uow.perform(sessions, "start_case", cases.start_case, pk, impounded_at=IMPOUNDED, place_seized="Bhimpura",
                       place_impounded="Kanji House, Rampura", nearest_village="Bhimpura", animals=ANIMALS)
    for n, (instant, role, element, form) in enumerate(S1_STEPS):
        if stop_after is not None and n >= stop_after:
            break
        vc.set(at(instant + IST))
        if role is None:
            timers.fire_case(sessions, case.id)
        else:
            uow.perform(sessions, element, tasks.act, people[role], case.id, element, dict(form), case_id=case.id)
    return case.id


class MemoryLedger:
    """Balances in memory: what the handlers post, with no database (for the bare engine run)."""

    def __init__(self) -> None:
        self.accounts: dict[str, Decimal] = {}

    def post(self, from_account: str, to_account: str, amount: Decimal, *, kind: str, clause: str,
             memo: str = "") -> None:
        self.accounts[from_account] = self.accounts.get(from_account, Decimal("0")) - amount
        self.accounts[to_account] = self.accounts.get(to_account, Decimal("0")) + amount

    def balance(self, account: str) -> Decimal:
        return self.accounts.get(account, Decimal("0"))


def bare_case(parsed: Any, vc: clock.VirtualClock, n: int) -> str:
    """Scenario s1 on SpiffWorkflow in memory: the same diagram, handlers, forms and rule checks,
    with no database and no serialization. Returns the outcome."""
    vc.set(at(IMPOUNDED))
    when = at(IMPOUNDED)
    tz = "Asia/Kolkata"
    animals = [Animal(position=i, species=a["species"], description=a["description"], tag=a["tag"],
                      fine=DEFAULT_TARIFF["cow"]["fine"], feeding_per_day=DEFAULT_TARIFF["cow"]["feeding_per_day"])
               for i, a in enumerate(ANIMALS, start=1)]
    number = f"BARE/2026/{n:05d}"
    cf = CaseFile(case_number=number, timezone=tz, impounded_at=when, impounded_on=legal_time.local_day(when, tz),
                  place_seized="Bhimpura", place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                  animals=animals)
    ledger = MemoryLedger()

    def call_handler(task: Any, name: str, params: dict[str, Any]) -> Any:
        ctx = HandlerContext(case_file=cf, now=clock.now(), ledger=ledger, notify=lambda *a, **k: None,
                             task_data=task.data, task_name=task.task_spec.bpmn_id)
        return handlers.get(name)(ctx, **params)

    wf = runtime.new_instance(parsed.parsed, {"case_number": number, "impounded_at": when.isoformat(), "timezone": tz,
                                              "appeal_period_days": 30, "return_period_days": 7}, call_handler)
    runtime.run(wf)
    for instant, role, element, form in S1_STEPS:
        vc.set(at(instant + IST))
        runtime.run(wf)
        if role is None:
            continue
        task = next(t for t in runtime.ready_user_tasks(wf) if t.task_spec.bpmn_id == element)
        name = runtime.form_name(task)
        cleaned = rules.clean(None, name.split(".")[0], parsed.parsed.forms[name], cf, dict(form), clock.now())
        runtime.complete_user_task(wf, task, cleaned)
        runtime.run(wf)
    assert wf.is_completed(), "the bare s1 case did not finish"
    return cf.outcome


def table_bytes(store: Store) -> int:
    """Bytes the database holds for its tables (PostgreSQL: tables, indexes, TOAST; SQLite: the file)."""
    with store.sessions() as session:
        if store.name == "PostgreSQL":
            return int(session.scalar(text(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind = 'r'")))
        session.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        return int(session.scalar(text("PRAGMA page_count")) * session.scalar(text("PRAGMA page_size")))


AFTER_WINDOWS = "2026-05-12T00:00:00" + IST
"""Past every window of an s1 case's acts: its last act (the order, 2026-02-09) could be amended until
2026-05-10, and its snapshot is let go from 2026-05-11 00:00 IST (webapp.services.jobs.snapshots)."""
BIG_TABLES = ("case_act", "case_instance", "case_document", "audit_entry", "case_event", "notification")


def vacuumed(store: Store, full: bool = True) -> tuple[int, dict[str, int]]:
    """The database's bytes after a VACUUM (:func:`table_bytes`) and each table's (its indexes and
    TOAST included). SQLite's VACUUM rebuilds the file, so the figure is the live data's pages;
    PostgreSQL's VACUUM FULL rewrites every table (live rows only), while a plain VACUUM
    (``full=False``) only marks dead rows' space free for new rows to reuse, and the files keep
    their size."""
    if store.name == "SQLite":
        with store.sessions() as session:
            session.connection().exec_driver_sql("VACUUM")
            tables = dict(session.execute(text(
                "SELECT m.tbl_name, sum(d.pgsize) FROM dbstat d JOIN sqlite_master m ON m.name = d.name "
                "GROUP BY m.tbl_name")).all())
    else:
        engine = store.sessions.kw["bind"]
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            names = list(connection.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")))
            connection.exec_driver_sql(("VACUUM FULL " if full else "VACUUM ") + ", ".join(names))
            tables = dict(connection.execute(text(
                "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'")).all())
    return table_bytes(store), {name: int(size or 0) for name, size in tables.items()}


def snapshot_encodings(store: Store, ids: list[int]) -> dict[str, float]:
    """Bytes per case of the acts' snapshots of cases ``ids`` as stored (zlib level 1), and as
    they would be: zlib level 9; level 9 with the case's previous snapshot as zlib dictionary
    (``zlib.compressobj(zdict=...)``, the first one plain); and the raw JSON."""
    found = {"stored (zlib 1)": 0, "zlib 9": 0, "zlib 9, previous snapshot as dictionary": 0, "JSON": 0}
    with store.sessions() as session:
        for case_id in ids:
            previous = b""
            for before in session.scalars(select(CaseAct.before).where(CaseAct.case_id == case_id)
                                          .order_by(CaseAct.id)):
                raw = zlib.decompress(before or b"")
                packer = zlib.compressobj(9, zdict=previous) if previous else zlib.compressobj(9)
                found["stored (zlib 1)"] += len(before or b"")
                found["zlib 9"] += len(zlib.compress(raw, 9))
                found["zlib 9, previous snapshot as dictionary"] += len(packer.compress(raw) + packer.flush())
                found["JSON"] += len(raw)
                previous = raw
    return {name: total / len(ids) for name, total in found.items()}


def bench_whole_cases(store: Store, count: int, vc: clock.VirtualClock) -> dict[str, Any]:
    """``count`` whole s1 cases through the services on ``store`` and ``count`` on bare SpiffWorkflow,
    interleaved case by case (the order alternating), so that both columns are measured over the
    same minutes of a machine whose speed drifts (other tenants of shared cores). Returns, per
    column (``bare``, ``service``): cases per second and mean ms per case over the whole run, and
    the median ms of one case; for ``service`` also the stored bytes per case."""
    people = setup_people(store.sessions)
    with store.sessions() as session:
        parsed = repository.load(repository.current(session))
    service_case(store.sessions, people, vc)  # warm the caches (parsed diagram, statements)
    bare_case(parsed, vc, 0)
    statements = count_statements(store, lambda: service_case(store.sessions, people, vc))
    vc.set(at(AFTER_WINDOWS))  # the warm cases' snapshots go now, so only the measured cases' go later
    snapshots.let_go_due(store.sessions)
    base, base_tables = vacuumed(store)
    before = table_bytes(store)
    ids: list[int] = []
    seconds: dict[str, list[float]] = {"bare": [], "service": []}

    def timed(column: str, run: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        result = run()
        seconds[column].append(time.perf_counter() - started)
        return result

    for n in range(1, count + 1):
        if n % 2:
            assert timed("bare", lambda n=n: bare_case(parsed, vc, n)) == "auction_final"
            ids.append(timed("service", lambda: service_case(store.sessions, people, vc)))
        else:
            ids.append(timed("service", lambda: service_case(store.sessions, people, vc)))
            assert timed("bare", lambda n=n: bare_case(parsed, vc, n)) == "auction_final"
    after = table_bytes(store)
    with store.sessions() as session:
        done = session.scalar(select(func.count(Case.id)).where(Case.id.in_(ids), Case.status == "completed",
                                                                 Case.outcome == "auction_final"))
        json_bytes = session.scalar(select(func.sum(func.length(Case.state_json) + func.length(Case.file_json)))
                                    .where(Case.id.in_(ids)))
    assert done == count, f"only {done} of {count} cases finished as auction_final"
    out: dict[str, Any] = {column: {"rate": count / sum(times), "ms": 1000 * sum(times) / count,
                    "median_ms": 1000 * statistics.median(times)} for column, times in seconds.items()}
    out["service"].update(bytes=(after - before) / count, json_bytes=json_bytes / count,
                          statements_per_step=statements / STEPS)
    # at close, and once every window of the cases' acts has passed and the housekeeping ran
    closed, closed_tables = vacuumed(store)
    out["encodings"] = snapshot_encodings(store, ids)
    vc.set(at(AFTER_WINDOWS))
    swept = snapshots.let_go_due(store.sessions)
    assert len(swept.acts) == 4 * count and len(swept.packed) == count, (len(swept.acts), len(swept.packed))
    reusable = vacuumed(store, full=False)[0] if store.name == "PostgreSQL" else None
    rested, rested_tables = vacuumed(store)
    out["storage"] = {"closed": (closed - base) / count, "rested": (rested - base) / count}
    if reusable is not None:
        out["storage"]["rested_plain_vacuum"] = (reusable - base) / count
    out["tables"] = {name: ((closed_tables.get(name, 0) - base_tables.get(name, 0)) / count,
                            (rested_tables.get(name, 0) - base_tables.get(name, 0)) / count) for name in BIG_TABLES}
    return out


STEPS = 1 + len(S1_STEPS)  # units of work of an s1 case: the start, 4 acts, 3 timer passes


def count_statements(store: Store, run: Callable[[], Any]) -> int:
    """The SQL statements ``run`` sends to the driver (``before_cursor_execute``: an executemany or
    a multi-row INSERT counts once), as tests/test_statements_per_step.py counts them."""
    seen = [0]
    bind = store.sessions.kw["bind"]

    def count(*_args: Any) -> None:
        seen[0] += 1

    event.listen(bind, "before_cursor_execute", count)
    try:
        run()
    finally:
        event.remove(bind, "before_cursor_execute", count)
    return seen[0]


# -- 2. timers per second with 1, 2, 4 workers -------------------------------------------------------------

def _worker(url: str, ready: Any, go: Any, out: Any) -> None:
    quiet()
    engine = db.make_engine(url)
    sessions = db.session_factory(engine)
    with sessions() as session:  # connect and load the diagram before the start signal
        repository.load(repository.current(session))
    ready.set()
    go.wait()
    fired = 0
    while True:
        done = timers.fire_due_cases(sessions, limit=50)
        if not done:
            break
        fired += sum(len(f.timers) for f in done)
    out.put((fired, time.perf_counter()))
    engine.dispose()


def copy_cases(session: Any, template_id: int, count: int, prefix: str, panchayat_ids: list[int] | None = None) -> tuple[int, int]:
    """Insert ``count`` copies of case ``template_id`` (with its task rows, history and ledger
    entries) in the database itself; returns the (first, last) new case ids."""
    lo = session.scalar(select(func.coalesce(func.max(Case.id), 0)))
    pids = panchayat_ids or [session.get(Case, template_id).panchayat_id]
    seq = ("WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :count) ")
    assert pids == list(range(pids[0], pids[0] + len(pids))), "the Panchayat ids must be consecutive"
    pick = f"({pids[0]} + seq.n % {len(pids)})"
    session.execute(text(
        seq + "INSERT INTO case_instance (case_number, panchayat_id, process_version_id, status, outcome, file_json, "
        "state_json, next_timer_due, receiving_officer_id, notice_last_day, lock_version, created_at, updated_at, closed_at) "
        f"SELECT :prefix || '/' || seq.n, {pick}, t.process_version_id, t.status, t.outcome, t.file_json, t.state_json, "
        "t.next_timer_due, t.receiving_officer_id, t.notice_last_day, t.lock_version, t.created_at, t.updated_at, t.closed_at "
        "FROM case_instance t, seq WHERE t.id = :template ORDER BY seq.n"),
        {"count": count, "prefix": prefix, "template": template_id})
    hi = session.scalar(select(func.max(Case.id)))
    params = {"template": template_id, "lo": lo, "hi": hi}
    session.execute(text(
        "INSERT INTO case_task (case_id, case_number, panchayat_id, receiver_id, process_version_id, task_id, element_id, "
        "title, lane, subject, state, ready_since, due_on, deadline_label, deadline_on, act_by, claimed_by, claimed_at, "
        "assigned_to, assigned_by, assigned_at, ended_at, completed_by) "
        "SELECT c.id, c.case_number, c.panchayat_id, t.receiver_id, t.process_version_id, t.task_id, t.element_id, "
        "t.title, t.lane, t.subject, t.state, t.ready_since, t.due_on, t.deadline_label, t.deadline_on, t.act_by, NULL, NULL, "
        "NULL, NULL, NULL, t.ended_at, NULL FROM case_instance c JOIN case_task t ON t.case_id = :template "
        "WHERE c.id > :lo AND c.id <= :hi"), params)
    session.execute(text(
        "INSERT INTO case_event (case_id, at, kind, name, element_id, actor_role, actor_user_id, detail_json) "
        "SELECT c.id, e.at, e.kind, e.name, e.element_id, e.actor_role, e.actor_user_id, e.detail_json "
        "FROM case_instance c JOIN case_event e ON e.case_id = :template WHERE c.id > :lo AND c.id <= :hi"), params)
    session.execute(text(
        "INSERT INTO ledger_entry (case_id, panchayat_id, at, from_account, to_account, amount, kind, clause, element_id, "
        "officer_id, memo) SELECT c.id, c.panchayat_id, l.at, l.from_account, l.to_account, l.amount, l.kind, l.clause, "
        "l.element_id, l.officer_id, l.memo FROM case_instance c JOIN ledger_entry l ON l.case_id = :template "
        "WHERE c.id > :lo AND c.id <= :hi"), params)
    return lo + 1, hi


def bench_timers(base_url: str, count: int, worker_counts: tuple[int, ...]) -> dict[int, dict[str, float]]:
    """``count`` cases whose 3-day release timer is overdue, fired by k worker processes; per k."""
    results: dict[int, dict[str, float]] = {}
    ctx = multiprocessing.get_context("spawn")
    for k in worker_counts:
        store = postgres_store(base_url, f"timers{k}")
        try:
            people = setup_people(store.sessions)
            real_now = datetime.now(UTC)
            # four days ago: the release windows ended at 00:00 local today, the overdue reminders they
            # arm (the notice is due tomorrow) are not due yet, so each case fires exactly one timer
            impounded = (real_now - timedelta(days=4)).replace(microsecond=0)
            with clock.installed(clock.VirtualClock(impounded)):
                template = uow.perform(store.sessions, "start_case", cases.start_case, people["pound_keeper"],
                                       impounded_at=impounded.isoformat(), place_seized="Bhimpura",
                                       place_impounded="Kanji House", nearest_village="Bhimpura", animals=ANIMALS)
            with store.sessions() as session:
                copy_cases(session, template.id, count - 1, "TIMER")
                session.commit()
            go, out = ctx.Event(), ctx.Queue()
            procs = []
            for _ in range(k):
                event = ctx.Event()
                proc = ctx.Process(target=_worker, args=(store.url, event, go, out))
                proc.start()
                procs.append((proc, event))
            for _, event in procs:
                event.wait(120)
            started = time.perf_counter()
            go.set()
            ends = [out.get(timeout=900) for _ in procs]
            for proc, _ in procs:
                proc.join(60)
            elapsed = max(end for _, end in ends) - started
            with store.sessions() as session:
                firings = session.scalar(text("SELECT count(*) FROM timer_firing"))
                moved = session.scalar(select(func.count(CaseTask.id)).where(CaseTask.element_id == "ut_publish_notice",
                                                                              CaseTask.state == "ready"))
            assert firings == count and moved == count, (firings, moved, count)
            results[k] = {"rate": count / elapsed, "seconds": elapsed, "fired": sum(f for f, _ in ends)}
        finally:
            store.drop()
    return results


# -- 3. My tasks and the case page with many cases -------------------------------------------------------------

STAGES = [  # (steps of S1_STEPS done, share of the cases)
    (0, 0.15),   # release window open: the pound keeper's task
    (1, 0.10),   # notice to publish: the secretary's task
    (2, 0.10),   # auction open: record bids
    (4, 0.20),   # sold, waiting for the notice period
    (5, 0.15),   # order that the auction stand
    (6, 0.10),   # waiting for the appeal window
    (7, 0.20),   # finished
]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def bench_many_cases(store: Store, total: int, panchayats: int, samples: int, vc: clock.VirtualClock) -> dict[str, Any]:
    people = setup_people(store.sessions)
    templates = [(service_case(store.sessions, people, vc, stop_after=steps), share) for steps, share in STAGES]
    started = time.perf_counter()
    with store.sessions() as session:
        for n in range(panchayats):
            session.add(Panchayat(code=f"P{n:04d}", name=f"Panchayat {n}", samiti_code=f"S{n // 25:03d}", district="",
                                  timezone="Asia/Kolkata", appeal_period_days=30, return_period_days=7))
        session.flush()
        pids = list(session.scalars(select(Panchayat.id).where(Panchayat.code.like("P%")).order_by(Panchayat.id)))
        target = pids[0]
        officers = {role: users.create_user(session, f"{role}-p0", PASSWORD, role, panchayat_code="P0000",
                                            password_method=FAST_HASH) for role in users.PANCHAYAT_ROLES}
        officers["appellate_authority"] = users.create_user(session, "app-s0", PASSWORD, "appellate_authority",
                                                            samiti_code="S000", password_method=FAST_HASH)
        made = 0
        for n, (template, share) in enumerate(templates):
            count = total - made if n == len(templates) - 1 else int(total * share)
            copy_cases(session, template, count, f"STAGE{n}", pids)
            made += count
        session.commit()
        # fresh statistics for the planner, for this schema's tables only (a bare ANALYZE would
        # visit every schema of the database)
        session.execute(text("ANALYZE case_instance, case_task, case_event, ledger_entry, panchayat, app_user"
                             if store.name == "PostgreSQL" else "ANALYZE"))
        session.commit()
        loaded = time.perf_counter() - started
        case_count = session.scalar(select(func.count(Case.id)))
        task_rows = session.scalar(select(func.count(CaseTask.id)))
        ready_rows = session.scalar(select(func.count(CaseTask.id)).where(CaseTask.state == "ready"))
        mine = {role: session.scalar(select(func.count(CaseTask.id)).where(
            CaseTask.panchayat_id == target, CaseTask.lane == role, CaseTask.state == "ready")) for role in officers}
        case_ids = list(session.scalars(select(Case.id).where(Case.panchayat_id == target)))
    vc.set(at("2026-01-20T12:00:00" + IST))
    query_ms: dict[str, list[float]] = {}
    for role, user in officers.items():
        times = []
        for _ in range(samples):
            with store.sessions() as session:
                t0 = time.perf_counter()
                listing = tasks.my_tasks(session, user)
                times.append(1000 * (time.perf_counter() - t0))
        query_ms[role] = times
        if role != "appellate_authority":  # the Samiti's appeals: none at these stages
            assert len(listing.rows) == min(mine[role], 100), (role, len(listing.rows), mine[role])
    plan = explain_my_tasks(store, officers["secretary"])
    from webapp import create_app
    app = create_app({"TESTING": True, "DATABASE_URL": store.url, "SECRET_KEY": "bench", "WTF_CSRF_ENABLED": False})
    client = app.test_client()
    assert client.post("/login", data={"username": "secretary-p0", "password": PASSWORD}).status_code == 302
    page_ms, list_ms = [], []
    rng = random.Random(130)
    for _ in range(samples):
        case_id = rng.choice(case_ids)
        t0 = time.perf_counter()
        response = client.get(f"/cases/{case_id}")
        page_ms.append(1000 * (time.perf_counter() - t0))
        assert response.status_code == 200
        t0 = time.perf_counter()
        response = client.get("/tasks")
        list_ms.append(1000 * (time.perf_counter() - t0))
        assert response.status_code == 200
    app.extensions["rule130.engine"].dispose()
    return {"load_seconds": loaded, "cases": case_count, "task_rows": task_rows, "ready_rows": ready_rows,
            "mine": mine, "query_ms": query_ms, "page_ms": page_ms, "list_ms": list_ms, "plan": plan}


def explain_my_tasks(store: Store, user: User) -> str:
    """How the database runs the list's main query (the one reading case_task with ORDER BY):
    PostgreSQL's EXPLAIN ANALYZE execution time and top plan node, or SQLite's query plan."""
    seen: list[tuple[str, Any]] = []
    bind = store.sessions.kw["bind"]

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        seen.append((statement, parameters))

    event.listen(bind, "before_cursor_execute", capture)
    try:
        with store.sessions() as session:
            tasks.my_tasks(session, user)
    finally:
        event.remove(bind, "before_cursor_execute", capture)
    statement, parameters = next((s, p) for s, p in seen if "FROM case_task" in s and "ORDER BY" in s)
    with bind.connect() as connection:
        if store.name == "PostgreSQL":
            [[doc]] = connection.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters).all()
            top = doc[0]["Plan"]
            nodes, node = [], top
            while node is not None:
                nodes.append(node["Node Type"] + (f" using {node['Index Name']}" if "Index Name" in node else ""))
                node = (node.get("Plans") or [None])[0]
            return f"{doc[0]['Execution Time']:.2f} ms in the database: " + " <- ".join(nodes)
        rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
        return "; ".join(str(r[-1]) for r in rows)


# -- the run ------------------------------------------------------------------------------------------------------

def fmt(ms: list[float]) -> str:
    return f"p50 {percentile(ms, 50):6.1f} ms  p95 {percentile(ms, 95):6.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases in the database for part 3 (default 100000)")
    parser.add_argument("--panchayats", type=int, default=100, help="Panchayats the cases are spread over (default 100)")
    parser.add_argument("--whole", type=int, default=30, help="whole cases per store in part 1 (default 30)")
    parser.add_argument("--timer-cases", type=int, default=400, help="due timers per worker count in part 2 (default 400)")
    parser.add_argument("--samples", type=int, default=200, help="timed requests per measure in part 3 (default 200)")
    parser.add_argument("--postgres", default=os.environ.get("RULE130_TEST_POSTGRES",
                                                             "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--skip", action="append", default=[], choices=["whole", "timers", "many", "sqlite", "postgres"],
                        help="leave a part or a store out (repeatable; timers run on PostgreSQL only)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"rule130 benchmark — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
    print("   " + " ".join(sys.argv))
    vc = clock.VirtualClock(at(IMPOUNDED))
    with tempfile.TemporaryDirectory(prefix="rule130-bench-") as folder, clock.installed(vc):
        kinds = [("sqlite", lambda name: sqlite_store(Path(folder), name)),
                 ("postgres", lambda name: postgres_store(args.postgres, name))]
        kinds = [k for k in kinds if k[0] not in args.skip]
        if "whole" not in args.skip:
            print(f"\n1. Whole Rule 130 cases (scenario s1: 4 acts, 4 timers), {args.whole} per store, each store's"
                  f" cases interleaved case by case with as many on bare SpiffWorkflow in memory")
            for _kind, make in kinds:
                store = make("whole")
                try:
                    res = bench_whole_cases(store, args.whole, vc)
                    bare, service = res["bare"], res["service"]
                    print(f"   {store.name}:")
                    print(f"      bare SpiffWorkflow in memory : {bare['rate']:7.1f} cases/s  ({bare['ms']:6.1f} ms per case,"
                          f" median {bare['median_ms']:6.1f} ms)")
                    print(f"      service layer on {store.name:<11}: {service['rate']:7.1f} cases/s  ({service['ms']:6.1f} ms per case,"
                          f" median {service['median_ms']:6.1f} ms)  persistence costs {service['ms'] / bare['ms']:4.2f}x bare"
                          f" (medians {service['median_ms'] / bare['median_ms']:4.2f}x)")
                    print(f"      SQL statements per step (start, 4 acts, 3 timer passes): "
                          f"{service['statements_per_step']:5.2f}")
                    print(f"      stored per finished case: {service['bytes'] / 1024:6.1f} KiB in the database "
                          f"(state + case file JSON {service['json_bytes'] / 1024:5.1f} KiB)")
                    kept = res["storage"]
                    vacuum = "VACUUM" if store.name == "SQLite" else "VACUUM FULL"
                    print(f"      per closed case after {vacuum}: {kept['closed'] / 1024:6.1f} KiB at close, "
                          f"{kept['rested'] / 1024:6.1f} KiB once its windows passed (clock at {AFTER_WINDOWS[:10]}, "
                          f"housekeeping run)")
                    if "rested_plain_vacuum" in kept:
                        print(f"      (after a plain VACUUM instead: {kept['rested_plain_vacuum'] / 1024:6.1f} KiB, the "
                              f"space let go free for new rows but the files unshrunk)")
                    print("      by table, KiB per case at close -> once its windows passed: " + ", ".join(
                        f"{name} {a / 1024:.1f} -> {b / 1024:.1f}" for name, (a, b) in res["tables"].items()))
                    print("      the acts' snapshots, KiB per case: " + ", ".join(
                        f"{name} {size / 1024:.1f}" for name, size in res["encodings"].items()))
                finally:
                    store.drop()
        if "timers" not in args.skip:
            print(f"\n2. Timers fired per second on PostgreSQL ({args.timer_cases} overdue release timers)")
            rates = bench_timers(args.postgres, args.timer_cases, (1, 2, 4))
            for k, res in rates.items():
                print(f"   {k} worker{'s' if k > 1 else ' '}: {res['rate']:7.1f} timers/s  ({res['seconds']:5.1f} s)"
                      f"  {res['rate'] / rates[1]['rate']:4.2f}x one worker")
        if "many" not in args.skip:
            for _kind, make in reversed(kinds):
                store = make("many")
                try:
                    res = bench_many_cases(store, args.cases, args.panchayats, args.samples, vc)
                    print(f"\n3. {store.name}: {res['cases']:,} cases ({res['task_rows']:,} task rows, {res['ready_rows']:,} "
                          f"ready) over {args.panchayats} Panchayats, loaded in {res['load_seconds']:.1f} s")
                    for role, ms in res["query_ms"].items():
                        print(f"   My tasks query, {role:<20}: {fmt(ms)}  ({res['mine'][role]:,} ready in P0000's lane)")
                    print(f"   main list query plan (secretary)    : {res['plan']}")
                    print(f"   My tasks page (secretary)           : {fmt(res['list_ms'])}")
                    print(f"   case page (secretary)               : {fmt(res['page_ms'])}")
                finally:
                    store.drop()
    print(f"\nwhole run: {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
