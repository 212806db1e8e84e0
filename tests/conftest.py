"""Shared fixtures: a real SQLite database per test (Alembic-upgraded, bundled process deployed),
a Panchayat with one officer per role, a virtual clock, and a Flask app and client on that database."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import uuid
from contextlib import closing
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import text

from webapp.services.diagrams import repository
from webapp.services.people import users
from webapp.store import db
from webapp.values import clock

SCENARIOS = Path(__file__).parent / "scenarios"
PASSWORD = "correct horse battery"
FAST_HASH = "pbkdf2:sha256:1000"  # test users: scrypt's cost per user would dominate the suite


# every dump_state of the suite is compared with the whole conversion (webapp.engine.execution.runtime.dump_state)
os.environ["RULE130_CHECK_DUMP"] = "1"

POSTGRES = os.environ.get("RULE130_TEST_POSTGRES")  # e.g. postgresql://postgres@127.0.0.1:5432/test

# What can differ between SQLite and PostgreSQL: SQL (types, aggregates, text matching, triggers),
# locking and concurrency, transactions, migrations. These modules (and the tests marked
# ``@pytest.mark.both_databases`` elsewhere) run on both; scripts/test.sh runs the rest on SQLite
# only (``-m both_databases`` for the PostgreSQL run). docs/operations.md, "The test suite's time".
BOTH_DATABASES = {
    "test_act_instant": "an act raced against its timer: row locks and the worker's settle time",
    "test_append_rows": "bulk INSERTs per table and flush, as each driver sends them",
    "test_audit": "the hash chain under concurrent writers",
    "test_append_only": "the append-only triggers, written in each dialect",
    "test_audit_records": "the ledger's append-only trigger, the records against the trail",
    "test_backup_restore": "pg_dump / pg_restore, SQLite's online backup",
    "test_case_numbers": "case numbers taken at the same moment",
    "test_case_page": "the case search (text matching differs by database)",
    "test_corrections": "an act put back: rows deleted and restored in many tables",
    "test_corrigenda": "an act replayed in savepoints rolled back, under the ledger's append-only trigger",
    "test_compression": "PostgreSQL's lz4 column compression",
    "test_crash": "a process killed before its commit: the transaction's atomicity",
    "test_hardening": "numbers beyond what a column holds",
    "test_ledger": "NUMERIC amounts and the ledger's invariants in SQL",
    "test_live_instances": "optimistic locking of the kept engine instances",
    "test_monitoring": "the timer lag's queries",
    "test_statements_per_step": "the statements of a case's steps: each dialect locks and reads otherwise",
    "test_oversight": "the oversight's grouped queries and the ledger's balance trigger",
    "test_paths_refused": "ids beyond what an id column holds",
    "test_registers": "the registers' aggregates over the ledger",
    "test_schema_matches_models": "the migrations against the models",
    "test_serve_restart": "the timer worker's lease",
    "test_snapshots": "the snapshots let go by a bulk UPDATE, the partial index, the packed state",
    "test_simulator_isolation": "the timer worker's lease and the real clock's cap",
    "test_tasklist": "the task table's queries, claims and their consistency",
    "test_timer_wakeup": "LISTEN/NOTIFY on PostgreSQL",
    "test_versions": "running cases moved between versions",
    "test_worker": "the single worker's lease",
    "test_worker_processes": "worker processes sharing due timers",
    "test_workers_scale": "row locks and SKIP LOCKED",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`BOTH_DATABASES`'s modules ``both_databases``."""
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in BOTH_DATABASES:
            item.add_marker(pytest.mark.both_databases)


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory):
    """The schema at Alembic's head, made once per test run by the migrations themselves
    (:func:`webapp.store.db.upgrade`), for :func:`database_url` to copy: a SQLite file, or on
    PostgreSQL the SQL text of a template schema (``pg_dump --inserts``) with its name as a token to
    replace. Running every migration for each test cost about 0.8 s a test (some 17 minutes a run)."""
    if not POSTGRES:
        path = tmp_path_factory.mktemp("template") / "migrated.db"
        db.upgrade(f"sqlite:///{path}")
        yield path
        return
    token = f"t_template_{uuid.uuid4().hex[:16]}"
    admin = db.make_engine(POSTGRES)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{token}"'))
    try:
        db.upgrade(f"{POSTGRES}?options=-csearch_path%3D{token}")
        dumped = subprocess.run(["pg_dump", "--schema", token, "--inserts", "--no-owner", "--no-privileges",
                                 "--dbname", POSTGRES], capture_output=True, text=True, check=True).stdout
        # psql's meta-commands (\\restrict, from pg_dump 15.14 on) are not SQL: the server gets the rest
        yield token, "\n".join(line for line in dumped.splitlines() if not line.startswith("\\"))
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{token}" CASCADE'))
        admin.dispose()


def _copy_sqlite(source: Path, target: Path) -> None:
    """Copy a SQLite database with SQLite's online backup (whatever its journal holds)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


@pytest.fixture
def database_url(tmp_path: Path, migrated_template):
    """A fresh, migrated database per test: SQLite in tmp_path, or with RULE130_TEST_POSTGRES set, a
    schema of its own in that PostgreSQL database (dropped afterwards); both a copy of
    :func:`migrated_template`."""
    if not POSTGRES:
        path = tmp_path / "test.db"
        _copy_sqlite(migrated_template, path)
        yield f"sqlite:///{path}"
        return
    schema = f"t_{uuid.uuid4().hex[:16]}"
    token, dumped = migrated_template
    admin = db.make_engine(POSTGRES)
    with closing(psycopg.connect(POSTGRES, autocommit=True)) as connection:
        connection.execute(dumped.replace(token, schema))  # CREATE SCHEMA, its tables and rows
    # application_name tags this test's connections, so any a test left open can be found below.
    url = f"{POSTGRES}?options=-csearch_path%3D{schema}&application_name={schema}"
    yield url
    with admin.begin() as connection:
        # A connection the test left "idle in transaction" would hold locks and block the drop for
        # ever; end it, and fail the test that leaked it.
        leaked = connection.execute(text(
            "SELECT pg_terminate_backend(pid), state, query FROM pg_stat_activity "
            "WHERE application_name = :name AND state LIKE 'idle in transaction%'"), {"name": schema}).all()
        connection.execute(text("SET LOCAL lock_timeout = '30s'"))
        connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()
    assert not leaked, f"the test left a transaction open on PostgreSQL: {[row.query for row in leaked]}"


@pytest.fixture
def sessions(database_url: str):
    engine = db.make_engine(database_url)
    factory = db.session_factory(engine)
    with factory() as session:
        repository.deploy_bundled(session, "tests")
        session.commit()
    yield factory
    engine.dispose()


@pytest.fixture
def virtual_clock():
    """A virtual clock at 2026-01-05 10:00 IST, installed for the test."""
    vc = clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))
    with clock.installed(vc):
        yield vc


@pytest.fixture
def officers(sessions):
    """Panchayat RMP (Samiti SAM1) with one user per role, plus a receiving officer and a
    second Panchayat KHR in the same Samiti with its own secretary. Keys are role names
    (``other_secretary`` for KHR's); every password is PASSWORD."""
    with sessions() as session:
        users.create_panchayat(session, "RMP", "Rampura", "SAM1", district="Jaipur")
        users.create_panchayat(session, "KHR", "Kheri", "SAM1", district="Jaipur")
        users.create_panchayat(session, "FAR", "Faraway", "SAM2", district="Ajmer")
        def create_user(*args, **kwargs):
            return users.create_user(*args, password_method=FAST_HASH, **kwargs)

        made = {
            "pound_keeper": create_user(session, "pk", PASSWORD, "pound_keeper", display_name="Pound Keeper",
                                              panchayat_code="RMP"),
            "secretary": create_user(session, "sec", PASSWORD, "secretary", display_name="Secretary",
                                           panchayat_code="RMP"),
            "sarpanch": create_user(session, "sar", PASSWORD, "sarpanch", display_name="Sarpanch",
                                          panchayat_code="RMP"),
            "appellate_authority": create_user(session, "app", PASSWORD, "appellate_authority",
                                                     display_name="Vikas Adhikari", samiti_code="SAM1"),
            "receiving_officer": create_user(session, "recv", PASSWORD, "receiving_officer",
                                                   display_name="Gram Panchayat Kishanpura"),
            "administrator": create_user(session, "admin", PASSWORD, "administrator", display_name="Admin"),
            "other_secretary": create_user(session, "sec-khr", PASSWORD, "secretary",
                                                 display_name="Kheri Secretary", panchayat_code="KHR"),
            "far_appellate": create_user(session, "app-far", PASSWORD, "appellate_authority",
                                               display_name="Far Vikas Adhikari", samiti_code="SAM2"),
        }
        session.commit()
    return made


@pytest.fixture
def app(database_url, sessions, officers):
    from webapp import create_app
    # Tests move the virtual clock by days while an officer stays signed in; the sessions' idle
    # timeout and lifetime (webapp.web.access.sessions) are tested with their defaults in
    # test_sessions.py, and here last ten years (a scenario runs its clock for more than one).
    application = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                              "WTF_CSRF_ENABLED": False, "PASSWORD_HASH_METHOD": FAST_HASH,
                              "SESSION_IDLE_MINUTES": 3660 * 24 * 60, "SESSION_LIFETIME_HOURS": 3660 * 24})
    yield application
    application.extensions["rule130.engine"].dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def drive(sessions, officers, virtual_clock):
    """One case driven through the services with the virtual clock (tests/driver.py)."""
    from .driver import Driver
    return Driver(sessions, officers, virtual_clock)
