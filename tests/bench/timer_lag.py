"""Timer lag benchmark: how late does a due timer fire with the default worker settings?

Run from the repository root (not part of the unit suite):

    .venv/bin/python tests/bench/timer_lag.py                       # SQLite, worker in-process
    .venv/bin/python tests/bench/timer_lag.py --worker other-engine # SQLite, worker as its own engine
    .venv/bin/python tests/bench/timer_lag.py --database postgresql://postgres@127.0.0.1:5432/test

Every sample is one real case on the bundled Rule 130 process: impounded on day D-4, so its release
window timer falls due at 00:00 local of day D. The worker and the saver read one OffsetClock —
the wall clock shifted to a random 10–500 ms before that midnight — so the wait and the firing take
real time; the clock moves on to the next day's midnight for the next sample (after the firing;
the fired case then waits for an officer and arms no timer). The worker runs with its defaults
(no --max-sleep): woken by the save (in-process Event for ``same-engine``, PostgreSQL NOTIFY or
SQLite's bounded sleep for ``other-engine``), it sleeps until the due instant and fires.

Printed: p50/p95/p99/max of the lateness each firing records (``timer_firing.lateness_seconds``,
the firing instant minus the due instant) over the samples; with ``--burst K`` also the lateness
of K timers due at the same midnight (a Panchayat's midnight crunch) for one worker.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import func, select, text

from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.store import db
from webapp.store.models import Case, TimerFiring
from webapp.values import clock, legal_time

TZ = "Asia/Kolkata"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def fresh_database(url: str | None) -> tuple[str, object]:
    """A migrated database: a temporary SQLite file, or a throw-away schema in PostgreSQL."""
    if url is None:
        folder = tempfile.mkdtemp(prefix="rule130-lag-")
        url = f"sqlite:///{folder}/bench.db"
        db.upgrade(url)
        return url, lambda: None
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = db.make_engine(url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    scoped = f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    db.upgrade(scoped)

    def drop() -> None:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
    return scoped, drop


def impound(sessions, officer, day: date):
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat(f"{day.isoformat()}T10:00:00+05:30"),
                       place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


def fired_count(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count(TimerFiring.id)))


def wait_fired(sessions, count: int, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while fired_count(sessions) < count:
        if time.monotonic() > deadline:
            with sessions() as session:
                due = session.scalar(select(func.min(Case.next_timer_due)))
            raise SystemExit(f"timed out waiting for {count} firings (earliest due {due}, now {clock.now()}, "
                             f"worker alive: {any(t.name == 'bench-worker' for t in threading.enumerate())})")
        time.sleep(0.005)


def report(label: str, lags: list[float]) -> None:
    ms = [lag * 1000 for lag in lags]
    print(f"{label}: n={len(ms)}  p50={percentile(ms, 50):.1f} ms  p95={percentile(ms, 95):.1f} ms  "
          f"p99={percentile(ms, 99):.1f} ms  max={max(ms):.1f} ms  mean={statistics.fmean(ms):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default=None, help="PostgreSQL URL (default: a temporary SQLite file)")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--burst", type=int, default=0, help="also K timers due at one midnight")
    parser.add_argument("--worker", choices=["same-engine", "other-engine"], default=None,
                        help="same-engine: the worker shares the saver's engine (rule130 serve); other-engine: "
                             "as a separate rule130 worker (default: same on SQLite, other on PostgreSQL)")
    args = parser.parse_args()
    url, drop = fresh_database(args.database)
    engine = db.make_engine(url)
    sessions = db.session_factory(engine)
    dialect = engine.dialect.name
    mode = args.worker or ("other-engine" if dialect == "postgresql" else "same-engine")
    worker_engine = engine if mode == "same-engine" else db.make_engine(url)
    worker_sessions = sessions if mode == "same-engine" else db.session_factory(worker_engine)
    with sessions() as session:
        repository.deploy_bundled(session, "bench")
        users.create_panchayat(session, "LAG", "Lag Panchayat", "SAM1", timezone=TZ)
        officer = users.create_user(session, "pk", "bench password", "pound_keeper", panchayat_code="LAG",
                                    password_method="pbkdf2:sha256:1000")
        session.commit()

    first_day = date(2026, 1, 9)
    real = clock.OffsetClock(legal_time.day_start(first_day, TZ) - timedelta(seconds=5))
    clock.install(real)
    stop = threading.Event()

    def work() -> None:
        clock.install(real)
        timers.run_worker(worker_sessions, stop)

    worker = threading.Thread(target=work, name="bench-worker")
    worker.start()
    print(f"timer lag on {dialect} ({mode}; worker default max sleep "
          f"{timers.default_max_sleep(dialect)} s), {args.samples} samples")
    rng = random.Random(130)
    started = time.monotonic()
    try:
        for index in range(args.samples):
            day = first_day + timedelta(days=index)
            real.set(legal_time.day_start(day, TZ) - timedelta(seconds=rng.uniform(0.01, 0.5)))
            impound(sessions, officer, day - timedelta(days=4))
            wait_fired(sessions, index + 1)
        with sessions() as session:
            lags = list(session.scalars(select(TimerFiring.lateness_seconds)))
        report("lag (fired - due)", lags)
        if args.burst:
            day = first_day + timedelta(days=args.samples + 1)
            real.set(legal_time.day_start(day, TZ) - timedelta(seconds=2 + 0.1 * args.burst))
            for _ in range(args.burst):
                impound(sessions, officer, day - timedelta(days=4))
            wait_fired(sessions, args.samples + args.burst, 600)
            with sessions() as session:
                burst = list(session.scalars(select(TimerFiring.lateness_seconds).order_by(TimerFiring.id)
                                             .offset(args.samples)))
            report(f"burst of {args.burst} due at one instant, one worker", burst)
    finally:
        stop.set()
        worker.join(30)
        print(f"elapsed {time.monotonic() - started:.1f} s")
        engine.dispose()
        if worker_engine is not engine:
            worker_engine.dispose()
        drop()


if __name__ == "__main__":
    main()
