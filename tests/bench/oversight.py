"""The benchmark of issue 31, item 3 (not part of the unit suite): the oversight pages at State scale.

Builds, in a PostgreSQL schema of its own (dropped at the end), a State: 11,000 Gram Panchayats in
352 Panchayat Samitis in 33 Districts, and 1,000,000 cases bulk-inserted with SQL (each Panchayat's
91 cases, one every four days over a year; the nine most recent of each running, each with one
open task of a stage of the diagram and its legal deadline, about a fifth of them past it; every
case's task rows, and its ledger entries: the buyer's money into suspense, then for a closed case
the fine and feeding to the cattle pound account and the balance to the Panchayat fund; one receipt
in about a hundred of the running cases reversed; each Panchayat's balance row). Then it times, with the Flask test client as the district officer of
each District in turn (and the appellate authority of a Samiti):

- the District's page ``/oversight`` (the target: p95 under 200 ms), sorted by a money column too;
- the service alone (``oversight.overview``) for a District;
- a Samiti's page, a Panchayat's page and the District's CSV;

and prints the plan of each query the District's page runs (EXPLAIN ANALYZE), so a regression to a
table scan shows. Run from the repository::

    .venv/bin/python tests/bench/oversight.py                       # the State: about 10 minutes here
    .venv/bin/python tests/bench/oversight.py --cases 100000        # a quicker run

The case rows carry an empty case file and engine state (the oversight pages read neither: every
figure comes from the columns and the task and ledger tables), so the State fits this machine's disk.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sqlalchemy import event, func, select, text

from tests.bench.bench import FAST_HASH, PASSWORD, fmt, percentile, postgres_store
from webapp.services.diagrams import repository
from webapp.services.people import users
from webapp.services.reports import oversight
from webapp.store.models import Case, CaseTask, Panchayat, ProcessVersion

# the open task of a running case by (n % 12): element, lane, and the legal deadline it serves (None: a
# service level only), as webapp.values.deadlines.service_level gives them
OPEN_TASKS = [("ut_publish_notice", "secretary", None), ("ut_record_bid", "secretary", "auction"),
              ("ut_decide_objection", "sarpanch", "objection period"), ("ut_order_stand", "sarpanch", None),
              ("ut_decide_unsold", "sarpanch", None), ("ut_record_remittance", "receiving_officer", None),
              ("ut_decide_appeal", "appellate_authority", "appeal period"),
              ("ut_return_by_buyer", "secretary", "transfer lock"),
              ("ut_return_by_objector", "secretary", "return period"), ("ut_deliver_to_objector", "secretary", None),
              ("ut_pay_feeding_charges", "secretary", None), ("ut_release", "pound_keeper", "release window")]


def load_state(session: Any, panchayats: int, samitis: int, districts: int, cases: int) -> dict[str, Any]:
    """The State's Panchayats and cases, inserted by SQL in the database itself (PostgreSQL)."""
    version = session.scalar(select(ProcessVersion.id).order_by(ProcessVersion.id.desc()).limit(1))
    session.execute(text(
        "INSERT INTO panchayat (code, name, samiti_code, district, timezone, appeal_period_days, return_period_days, "
        "appellate_forum, training, clock_offset_seconds) "
        "SELECT 'P' || lpad(n::text, 5, '0'), 'Gram Panchayat ' || n, 'S' || lpad((n % :samitis)::text, 3, '0'), "
        "'D' || lpad(((n % :samitis) % :districts)::text, 2, '0'), 'Asia/Kolkata', 30, 7, "
        "'Vikas Adhikari, Panchayat Samiti', false, 0 FROM generate_series(0, :panchayats - 1) n"),
        {"samitis": samitis, "districts": districts, "panchayats": panchayats})
    first = session.scalar(select(func.min(Panchayat.id)).where(Panchayat.code.like("P%")))
    per = max(1, cases // panchayats)  # each Panchayat's cases: k = 0 (newest) .. per - 1
    running_below = max(1, per // 10)
    params = {"first": first, "panchayats": panchayats, "cases": cases, "version": version, "running": running_below}
    # n = 0 .. cases - 1; the Panchayat n % P, its k-th newest case k = n / P, impounded 4k (+ n % 4) days ago
    session.execute(text(
        "INSERT INTO case_instance (case_number, panchayat_id, process_version_id, status, outcome, file_json, "
        "state_json, lock_version, created_at, updated_at, closed_at, shortfall, cattle_held) "
        "SELECT 'P' || lpad((n % :panchayats)::text, 5, '0') || '/' || (n / :panchayats), :first + n % :panchayats, "
        ":version, CASE WHEN n / :panchayats < :running THEN 'running' ELSE 'completed' END, "
        "CASE WHEN n / :panchayats < :running THEN 'pending' ELSE 'auction_final' END, '{}', '{}', 1, "
        "now() - ((n / :panchayats) * 4 + n % 4) * interval '1 day', now(), "
        "CASE WHEN n / :panchayats < :running THEN NULL ELSE now() - ((n / :panchayats) * 4 - 35) * interval '1 day' END, "
        "0, CASE WHEN n / :panchayats < :running THEN 1 + n % 3 ELSE 0 END "
        "FROM generate_series(0, :cases - 1) n"), params)
    # two completed task rows for every case; one open task for each running case
    session.execute(text(
        "INSERT INTO case_task (case_id, case_number, panchayat_id, process_version_id, task_id, element_id, title, lane, "
        "state, ready_since, ended_at) "
        "SELECT c.id, c.case_number, c.panchayat_id, c.process_version_id, md5(c.id || '-' || j), "
        "CASE j WHEN 1 THEN 'ut_publish_notice' ELSE 'ut_record_bid' END, "
        "CASE j WHEN 1 THEN 'Publish notice and open conditional auction' ELSE 'Record bid' END, 'secretary', "
        "'completed', c.created_at, c.created_at + interval '4 days' "
        "FROM case_instance c CROSS JOIN generate_series(1, 2) j WHERE c.case_number LIKE 'P%'"))
    for index, (element, lane, label) in enumerate(OPEN_TASKS):
        session.execute(text(
            "INSERT INTO case_task (case_id, case_number, panchayat_id, process_version_id, task_id, element_id, title, "
            "lane, state, ready_since, due_on, deadline_label, deadline_on, act_by) "
            "SELECT c.id, c.case_number, c.panchayat_id, c.process_version_id, md5(c.id || '-open'), :element, "
            ":element, :lane, 'ready', c.created_at, current_date + 30 - ((c.id * 7) % 40), "
            "CAST(:label AS varchar), CASE WHEN CAST(:label AS varchar) IS NULL THEN NULL "
            "ELSE current_date + 30 - ((c.id * 7) % 40) END, current_date + 30 - ((c.id * 7) % 40) "
            "FROM case_instance c WHERE c.status = 'running' AND c.case_number LIKE 'P%' AND c.id % 12 = :index"),
            {"element": element, "lane": lane, "label": label, "index": index})
    # the ledger: the buyer's money into suspense 4 days after the impoundment; for a closed case, on
    # closing, the fine and feeding to the pound account and the balance to the Panchayat fund. The
    # balance trigger is off while the millions of rows go in, and the balances are then added up
    # once, as migration 0022 fills them (tests/test_oversight.py checks the trigger row by row)
    session.execute(text("ALTER TABLE ledger_entry DISABLE TRIGGER ledger_entry_balance"))
    session.execute(text(
        "INSERT INTO ledger_entry (case_id, panchayat_id, at, from_account, to_account, amount, kind, clause, memo, reason) "
        "SELECT c.id, c.panchayat_id, c.created_at + interval '4 days', 'buyer', 'suspense', 12000.00, 'auction_money', "
        "'130(b)', '', '' FROM case_instance c WHERE c.case_number LIKE 'P%'"))
    session.execute(text(
        "INSERT INTO ledger_entry (case_id, panchayat_id, at, from_account, to_account, amount, kind, clause, memo, reason) "
        "SELECT c.id, c.panchayat_id, c.closed_at, 'suspense', x.account, x.amount, x.kind, '130(e)', '', '' "
        "FROM case_instance c CROSS JOIN (VALUES ('pound_account', 620.00, 'fine_and_feeding'), "
        "('panchayat_fund', 11380.00, 'balance')) AS x(account, amount, kind) "
        "WHERE c.status = 'completed' AND c.case_number LIKE 'P%'"))
    session.execute(text(
        "INSERT INTO ledger_entry (case_id, panchayat_id, at, from_account, to_account, amount, kind, clause, memo, "
        "reversal_of, reason) SELECT l.case_id, l.panchayat_id, l.at + interval '1 hour', l.to_account, l.from_account, "
        "l.amount, 'reversal', l.clause, '', l.id, 'entered twice' FROM ledger_entry l "
        "WHERE l.kind = 'auction_money' AND l.case_id % 97 = 0 AND l.case_id IN "
        "(SELECT id FROM case_instance WHERE status = 'running')"))
    sums = ", ".join(f"SUM(CASE WHEN to_account = '{a}' THEN amount ELSE 0 END) "
                     f"- SUM(CASE WHEN from_account = '{a}' THEN amount ELSE 0 END)" for a in oversight.ACCOUNTS)
    session.execute(text("DELETE FROM panchayat_balance"))
    session.execute(text(f"INSERT INTO panchayat_balance (panchayat_id, {', '.join(oversight.ACCOUNTS)}) "
                         f"SELECT panchayat_id, {sums} FROM ledger_entry GROUP BY panchayat_id"))
    session.execute(text("ALTER TABLE ledger_entry ENABLE TRIGGER ledger_entry_balance"))
    session.commit()
    counts = {name: session.scalar(text(f"SELECT count(*) FROM {table}")) for name, table in (
        ("cases", "case_instance"), ("task rows", "case_task"), ("ledger entries", "ledger_entry"))}
    counts["running"] = session.scalar(select(func.count()).select_from(Case).where(Case.status == "running"))
    counts["open tasks"] = session.scalar(select(func.count()).select_from(CaseTask).where(CaseTask.state == "ready"))
    return counts


def vacuum(url: str) -> None:
    """VACUUM ANALYZE the tables the pages read (as autovacuum would in a running installation): fresh
    statistics for the planner, and the visibility map that lets an index-only scan skip the heap."""
    import psycopg
    base, _, options = url.partition("?")
    schema = options.split("%3D", 1)[1].split("&", 1)[0]
    with psycopg.connect(base, autocommit=True) as connection:
        for table in ("panchayat", "case_instance", "case_task", "ledger_entry", "panchayat_balance", "app_user"):
            connection.execute(f'VACUUM (ANALYZE) "{schema}".{table}')


def plans(store: Any, scope: oversight.Scope) -> list[str]:
    """Each SELECT of one ``overview`` of ``scope``, as EXPLAIN ANALYZE gives it: its top line and
    the indexes it uses."""
    statements: list[tuple[str, Any]] = []
    with store.sessions() as session:
        engine = session.get_bind()

        def keep(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
            if statement.lstrip().upper().startswith("SELECT"):
                statements.append((statement, parameters))
        event.listen(engine, "before_cursor_execute", keep)
        try:
            oversight.overview(session, scope)
        finally:
            event.remove(engine, "before_cursor_execute", keep)
        out = []
        raw = session.connection().connection.driver_connection
        for statement, parameters in statements:
            rows = raw.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement, parameters).fetchall()
            lines = [r[0] for r in rows]
            indexes = sorted({word for line in lines for word in line.split() if word.startswith("ix_")
                              or word.endswith("_pkey")})
            scans = sorted({line.strip().split(" on ")[0].split("  ")[0].lstrip("-> ") for line in lines
                            if " on " in line and "Scan" in line})
            total = next((line for line in lines if line.startswith("Execution Time")), "")
            out.append(f"{statement.split('FROM', 1)[1].split()[0]:<14} {total:<28} {', '.join(scans)} "
                       f"[{', '.join(indexes)}]")
        session.rollback()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--panchayats", type=int, default=11_000)
    parser.add_argument("--samitis", type=int, default=352)
    parser.add_argument("--districts", type=int, default=33)
    parser.add_argument("--samples", type=int, default=200, help="timed requests per measure (default 200)")
    parser.add_argument("--postgres", default=os.environ.get("RULE130_TEST_POSTGRES",
                                                             "postgresql://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"rule130 oversight benchmark — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
    print("   " + " ".join(sys.argv))
    store = postgres_store(args.postgres, "oversight")
    try:
        with store.sessions() as session:
            repository.deploy_bundled(session, "bench")
            session.commit()
            t0 = time.perf_counter()
            counts = load_state(session, args.panchayats, args.samitis, args.districts, args.cases)
            loaded = time.perf_counter() - t0
            districts = sorted(session.scalars(select(Panchayat.district).where(Panchayat.code.like("P%")).distinct()))
            for d in districts:
                users.create_user(session, f"do-{d}", PASSWORD, "district_officer", district=d, password_method=FAST_HASH)
            users.create_user(session, "app-s000", PASSWORD, "appellate_authority", samiti_code="S000",
                              password_method=FAST_HASH)
            session.commit()
            sizes = [n for _d, n in session.execute(select(Panchayat.district, func.count()).where(
                Panchayat.code.like("P%")).group_by(Panchayat.district))]
        t0 = time.perf_counter()
        vacuum(store.url)
        print(f"\nState: {args.panchayats:,} Panchayats in {args.samitis} Samitis in {len(districts)} Districts "
              f"({min(sizes)}–{max(sizes)} Panchayats a District); {counts['cases']:,} cases ({counts['running']:,} "
              f"running), {counts['task rows']:,} task rows ({counts['open tasks']:,} open), "
              f"{counts['ledger entries']:,} ledger entries; loaded in {loaded:.0f} s, VACUUM ANALYZE "
              f"{time.perf_counter() - t0:.0f} s")
        from webapp import create_app
        app = create_app({"TESTING": True, "DATABASE_URL": store.url, "SECRET_KEY": "bench", "WTF_CSRF_ENABLED": False})
        clients = {}
        for d in districts:
            clients[d] = app.test_client()
            assert clients[d].post("/login", data={"username": f"do-{d}", "password": PASSWORD}).status_code == 302
        samiti = app.test_client()
        assert samiti.post("/login", data={"username": "app-s000", "password": PASSWORD}).status_code == 302
        rng = random.Random(31)

        cpu: dict[str, list[float]] = {}

        def timed(call: Any, name: str = "") -> list[float]:
            """Wall-clock milliseconds of each call (and, into ``cpu``, the CPU milliseconds this
            process spent on it: the machine's other jobs do not count there)."""
            for _ in range(3):  # warm: the first requests compile templates and fill the pools
                call()
            out, spent = [], []
            for _ in range(args.samples):
                t, c = time.perf_counter(), time.process_time()
                call()
                out.append(1000 * (time.perf_counter() - t))
                spent.append(1000 * (time.process_time() - c))
            cpu[name] = spent
            return out

        def page(path: str, client_of: Any) -> Any:
            def call() -> None:
                response = client_of().get(path)
                assert response.status_code == 200, (path, response.status_code)
            return call

        def any_district() -> Any:
            return clients[rng.choice(districts)]

        def service() -> None:
            with store.sessions() as session:
                data = oversight.overview(session, oversight.Scope("district", rng.choice(districts)))
                assert len(data.rows) >= min(sizes)
        names = {
            "District page /oversight": page("/oversight", any_district),
            "District page sorted by pound account": page("/oversight?sort=pound_account&dir=desc", any_district),
            "District figures, service only": service,
            "District CSV /oversight.csv (all rows)": page("/oversight.csv", any_district),
            "Samiti page (appellate authority)": page("/oversight", lambda: samiti),
            "Panchayat page": page("/oversight/panchayat/P00000", lambda: samiti),
            "baseline: the password page (no figures)": page("/account/password", any_district),
        }
        measures = {name: timed(call, name) for name, call in names.items()}
        app.extensions["rule130.engine"].dispose()
        print(f"\nTimes over {args.samples} requests each (Flask test client, a random District each time):")
        for name, ms in measures.items():
            print(f"   {name:<42}: {fmt(ms)}  max {max(ms):6.1f} ms;  CPU {fmt(cpu[name])}")
        p95 = percentile(measures["District page /oversight"], 95)
        print(f"   target p95 under 200 ms for a District's page: {'met' if p95 < 200 else 'NOT met'} ({p95:.1f} ms wall, "
              f"{percentile(cpu['District page /oversight'], 95):.1f} ms CPU); load average {os.getloadavg()[0]:.1f}")
        print("\nQueries of one District's figures (EXPLAIN ANALYZE: table, time, scans [indexes]):")
        for line in plans(store, oversight.Scope("district", districts[0])):
            print("   " + line)
    finally:
        store.drop()
    print(f"\nwhole run: {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
