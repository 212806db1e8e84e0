"""Nothing lost: a backup restored into an empty database runs the cases on (a timer fires, a task
completes, the ledger and the audit trail carry on). SQLite through the online backup API while a
case is open; PostgreSQL through pg_dump/pg_restore when those programs and the server are there.
"""

from __future__ import annotations

import shutil
import uuid
from decimal import Decimal

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from webapp.cli import main as cli
from webapp.services.people import users
from webapp.store import audit, db
from webapp.store.models import Case, User

from .conftest import FAST_HASH, POSTGRES
from .driver import TWO_COWS, Driver, ist_midnight

D = Decimal


def officers_of(sessions):
    with sessions() as session:
        return {u.role: u for u in session.query(User).all() if u.username in ("pk", "sec", "sar")}


def run_on_after_restore(url: str, case_id: int, virtual_clock) -> None:
    """On the restored database: the release timer fires, the notice and a bid are taken, the
    sarpanch's order is reached; the ledger holds the bid; the audit trail verifies."""
    engine = db.make_engine(url)
    sessions = db.session_factory(engine)
    try:
        drive = Driver(sessions, officers_of(sessions), virtual_clock)
        drive.case_id = case_id
        assert drive.ready("pound_keeper") == [("ut_release", ist_midnight("2026-01-08").date())]
        assert drive.fire_past(ist_midnight("2026-01-09")) == 1  # the timer armed before the backup fires
        assert [e for e, _ in drive.ready("secretary")] == ["ut_publish_notice"]
        drive.move("2026-01-09T11:00:00+05:30")
        drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000.00"})
        drive.act("secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "12500.00"})
        case = drive.case()
        assert drive.file().sale.amount == D("12500.00") and case.status == "running"
        with sessions() as session:
            verdict = audit.verify(session)
            assert verdict.ok, verdict.reason
            assert session.scalar(text("SELECT count(*) FROM case_instance")) == 1
    finally:
        engine.dispose()


def test_sqlite_backup_restored_into_an_empty_database_runs_the_case_on(tmp_path, sessions, officers, virtual_clock,
                                                                        database_url):
    if not database_url.startswith("sqlite"):
        pytest.skip("the SQLite backup path (the PostgreSQL one has its own test)")
    drive = Driver(sessions, officers, virtual_clock)
    drive.start(TWO_COWS)
    file = tmp_path / "backup.sqlite"
    runner = CliRunner()
    made = runner.invoke(cli, ["backup", str(file), "--database", database_url])
    assert made.exit_code == 0, made.output
    assert f"backup written to {file}" in made.stdout
    # the original goes on after the backup: the copy must not see it
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-1")
    empty = f"sqlite:///{tmp_path / 'restored.db'}"
    restored = runner.invoke(cli, ["restore", str(file), "--database", empty])
    assert restored.exit_code == 0, restored.output
    assert "audit trail intact" in restored.stdout
    engine = db.make_engine(empty)
    with db.session_factory(engine)() as session:
        case = session.get(Case, drive.case_id)
        assert case.case_number == "RMP/2026/0001" and '"died_on": null' in case.file_json
        assert "2026-01-06" not in case.file_json  # the death came after the backup
    engine.dispose()
    virtual_clock.set(ist_midnight("2026-01-07"))
    run_on_after_restore(empty, drive.case_id, virtual_clock)


def test_restore_refuses_a_database_that_is_not_empty_and_a_missing_file(tmp_path, sessions, officers, database_url):
    runner = CliRunner()
    file = tmp_path / "backup.sqlite"
    if database_url.startswith("sqlite"):
        assert runner.invoke(cli, ["backup", str(file), "--database", database_url]).exit_code == 0
        again = runner.invoke(cli, ["backup", str(file), "--database", database_url])
        assert again.exit_code == 2 and "already exists" in again.stderr
        refused = runner.invoke(cli, ["restore", str(file), "--database", database_url])
        assert refused.exit_code == 2 and "is not empty" in refused.stderr
    missing = runner.invoke(cli, ["restore", str(tmp_path / "nope.dump"), "--database",
                                  f"sqlite:///{tmp_path / 'x.db'}"])
    assert missing.exit_code == 2 and "no backup file" in missing.stderr


def _pg_database(name: str) -> str:
    return POSTGRES.rsplit("/", 1)[0] + f"/{name}"


@pytest.mark.skipif(not POSTGRES or not shutil.which("pg_dump"),
                    reason="needs RULE130_TEST_POSTGRES and pg_dump/pg_restore")
def test_postgresql_backup_with_pg_dump_restored_into_a_new_database_runs_the_case_on(tmp_path, virtual_clock):
    admin = db.make_engine(POSTGRES).execution_options(isolation_level="AUTOCOMMIT")
    names = [f"rule130_bk_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    with admin.connect() as connection:
        for name in names:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    source, target = (_pg_database(n) for n in names)
    try:
        db.upgrade(source)
        engine = db.make_engine(source)
        sessions = db.session_factory(engine)
        from webapp.services.diagrams import repository
        with sessions() as session:
            repository.deploy_bundled(session, "tests")
            users.create_panchayat(session, "RMP", "Rampura", "SAM1")
            for name, role in (("pk", "pound_keeper"), ("sec", "secretary"), ("sar", "sarpanch")):
                users.create_user(session, name, "long enough password", role, panchayat_code="RMP",
                                  password_method=FAST_HASH)
            session.commit()
        drive = Driver(sessions, officers_of(sessions), virtual_clock)
        drive.start(TWO_COWS)
        engine.dispose()
        file = tmp_path / "backup.dump"
        runner = CliRunner()
        made = runner.invoke(cli, ["backup", str(file), "--database", source])
        assert made.exit_code == 0, made.output
        restored = runner.invoke(cli, ["restore", str(file), "--database", target])
        assert restored.exit_code == 0, restored.output
        refused = runner.invoke(cli, ["restore", str(file), "--database", target])
        assert refused.exit_code == 2 and "not empty" in refused.stderr
        virtual_clock.set(ist_midnight("2026-01-07"))
        run_on_after_restore(target, drive.case_id, virtual_clock)
    finally:
        with admin.connect() as connection:
            for name in names:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
