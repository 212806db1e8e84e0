"""The simulator never writes into a live Panchayat (issue 21, item 2).

``rule130 simulate --database`` refuses a live Panchayat, naming it and what it holds, and writes
nothing; it runs into a training Panchayat. The users it makes cannot sign in (page, API token,
password) and are never offered as a task's holder nor told of a live Panchayat's cases. The
timer worker never fires a timer before its instant on the real clock. Migration 0020 disarms the
users the simulator made before, whose one password was written in the code.

Real SQLite (or PostgreSQL with RULE130_TEST_POSTGRES), the real command line, app and worker.
"""

from __future__ import annotations

import hashlib
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import func, inspect, select, text
from werkzeug.security import generate_password_hash

from webapp.cli import main
from webapp.errors import Refused
from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.notify import notifications
from webapp.services.people import passwords, users
from webapp.services.running import uow
from webapp.services.tasks import tasklist
from webapp.store import audit, db
from webapp.store.models import ApiToken, AuditEntry, Case, Panchayat, TimerFiring, User
from webapp.values import clock

from .conftest import FAST_HASH, PASSWORD, SCENARIOS

S1 = str(SCENARIOS / "s1-no-objection-full-price.yaml")
P42 = str(SCENARIOS / "p42-pending-awaiting-order.yaml")  # ends waiting for the sarpanch's order
WRONG = "The user name or the password is not right. Try again."
SIM_USERS = ("sim-pound-keeper-TRN", "sim-secretary-TRN", "sim-sarpanch-TRN", "sim-appellate-TRN")


def row_counts(database_url: str) -> dict[str, int]:
    """Every table's number of rows: what "nothing was written" is checked against."""
    engine = db.make_engine(database_url)
    try:
        with engine.connect() as connection:
            return {table: connection.execute(text(f'SELECT COUNT(*) FROM "{table}"')).scalar_one()
                    for table in inspect(connection).get_table_names()}
    finally:
        engine.dispose()


def simulate(database_url: str, *args: str):
    return CliRunner().invoke(main, ["simulate", *args, "--database", database_url])


def start_rmp_case(sessions, keeper: User, impounded_at: datetime) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, keeper, impounded_at=impounded_at,
                       place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


# -- simulate --database: a live Panchayat is refused, a training one runs --------------------------

def test_simulating_into_a_panchayat_with_real_officers_is_refused_in_one_sentence_and_writes_nothing(
        database_url, officers):
    before = row_counts(database_url)
    refused = simulate(database_url, S1, "--panchayat", "RMP")
    assert refused.exit_code == 2, refused.output
    assert refused.output.strip() == (
        "not run: the Panchayat RMP (Rampura) is a live Panchayat: it holds 3 real officers (users not made by "
        "the simulator); the simulator writes only into a training Panchayat (rule130 create-panchayat CODE "
        "--training) or into a new one it creates (--panchayat NEWCODE), so nothing was changed")
    assert row_counts(database_url) == before


def test_a_live_panchayats_real_cases_are_named_and_an_empty_live_panchayat_is_refused_too(
        database_url, sessions, officers):
    with clock.installed(clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))):
        start_rmp_case(sessions, officers["pound_keeper"], datetime.fromisoformat("2026-01-05T10:00:00+05:30"))
    before = row_counts(database_url)
    rmp = simulate(database_url, S1, "--panchayat", "RMP")
    assert rmp.exit_code == 2
    assert "the Panchayat RMP (Rampura) is a live Panchayat: it holds 1 real case and 3 real officers" in rmp.output
    khr = simulate(database_url, S1, "--panchayat", "KHR")
    assert "the Panchayat KHR (Kheri) is a live Panchayat: it holds 1 real officer (users not made" in khr.output
    far = simulate(database_url, S1, "--panchayat", "FAR")  # no officer, no case: still a live Panchayat
    assert far.exit_code == 2
    assert ("the Panchayat FAR (Faraway) is a live Panchayat: it holds no real case or officer yet, but it is not "
            "a training Panchayat;") in far.output
    assert row_counts(database_url) == before


def test_a_database_with_an_older_schema_is_refused_before_it_is_upgraded(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    db.upgrade(url, "0019_corrections")
    before = row_counts(url)
    refused = simulate(url, S1)
    assert refused.exit_code == 2
    assert f"--database: {url!r} has at schema revision 0019_corrections, and this rule130 needs " \
           f"{db.head_revision()}; upgrade it first with rule130 init-db" in refused.output
    assert row_counts(url) == before  # alembic_version included: still 0019


@pytest.fixture
def training(database_url, sessions, officers):
    """Training Panchayat TRN in a Samiti of its own (RMP's SAM1 is refused), made on the command line, with
    a trainee sarpanch of its own; scenario p42 simulated into it (the sarpanch's order is due)."""
    shared = CliRunner().invoke(main, ["create-panchayat", "TRN", "--name", "Training Rampura", "--samiti", "SAM1",
                                       "--training", "--database", database_url])
    assert shared.exit_code == 2
    assert ("the Samiti SAM1 holds the live Panchayat KHR: a training Panchayat needs a Samiti of its own (say, "
            "--samiti TRAINING-TRN), so that no live officer sees its cases") in shared.output
    made = CliRunner().invoke(main, ["create-panchayat", "TRN", "--name", "Training Rampura", "--samiti",
                                     "TRAINING-TRN", "--training", "--database", database_url])
    assert made.exit_code == 0, made.output
    assert "training Panchayat TRN created" in made.output
    with sessions() as session:
        users.create_user(session, "trainee", PASSWORD, "sarpanch", display_name="Trainee Sarpanch",
                          panchayat_code="TRN", password_method=FAST_HASH)
        session.commit()
    ran = simulate(database_url, P42, "--panchayat", "TRN")
    assert ran.exit_code == 0, ran.output
    assert "scenario p42-pending-awaiting-order: case TRN-TRN/2026/0001" in ran.output
    assert "all expectations held" in ran.output
    return database_url


def test_a_training_panchayat_takes_the_simulators_cases_and_its_users_are_marked(training, sessions):
    with sessions() as session:
        assert session.scalar(select(Panchayat.training).where(Panchayat.code == "TRN")) is True
        assert session.scalar(select(Panchayat.training).where(Panchayat.code == "RMP")) is False
        made = {u.username: u for u in session.scalars(select(User).where(User.simulated.is_(True)))}
        assert sorted(made) == sorted(SIM_USERS)
        assert {u.password_hash for u in made.values()} == {users.UNUSABLE_PASSWORD}
        assert session.scalar(select(User.simulated).where(User.username == "trainee")) is False
        assert session.scalar(select(func.count(Case.id)).join(Panchayat).where(Panchayat.code == "RMP")) == 0


def test_the_simulator_creates_its_own_panchayat_as_a_training_one(database_url, sessions, officers):
    ran = simulate(database_url, S1)
    assert ran.exit_code == 0, ran.output
    with sessions() as session:
        assert session.scalar(select(Panchayat.training).where(Panchayat.code == "SIM1")) is True
    again = simulate(database_url, S1)  # into the same training Panchayat: numbered on
    assert again.exit_code == 0 and "case TRN-SIM1/2026/0002" in again.output


# -- a simulator-made user cannot sign in, anywhere ---------------------------------------------------

def test_a_simulator_made_user_cannot_sign_in_and_is_told_what_a_wrong_password_is_told(training, app):
    client = app.test_client()
    for password in ("simulator-pass", users.UNUSABLE_PASSWORD, PASSWORD):
        response = client.post("/login", data={"username": "sim-sarpanch-TRN", "password": password})
        assert response.status_code == 200
        assert WRONG in response.get_data(as_text=True)
    wrong = client.post("/login", data={"username": "trainee", "password": "not the password at all"})
    assert WRONG in wrong.get_data(as_text=True)
    assert client.get("/tasks").status_code == 302  # not signed in
    assert client.post("/login", data={"username": "trainee", "password": PASSWORD}).status_code == 302


def test_a_simulator_made_user_gets_no_api_token_and_a_token_made_anyhow_is_refused(training, app, sessions):
    made = CliRunner().invoke(main, ["create-token", "sim-secretary-TRN", "--database", training])
    assert made.exit_code == 2
    assert ("refused: the user sim-secretary-TRN was made by the simulator and cannot sign in: it has no "
            "password and gets no API token") in made.output
    with sessions() as session:  # a token row written by other means (say, before migration 0020)
        user = session.scalar(select(User).where(User.username == "sim-secretary-TRN"))
        session.add(ApiToken(user_id=user.id, token_hash=hashlib.sha256(b"sim-token").hexdigest(),
                             created_at=clock.now(), role=user.role, panchayat_id=user.panchayat_id,
                             samiti_code=user.samiti_code))
        session.commit()
        assert users.user_for_token(session, "sim-token") is None
        with pytest.raises(Refused, match="was made by the simulator"):
            passwords.set_password(session, "sim-secretary-TRN", "eleven ravens mend quiet lanterns")
    response = app.test_client().get("/api/v1/me", headers={"Authorization": "Bearer sim-token"})
    assert response.status_code == 401


# -- never a holder, never told of a live Panchayat's case --------------------------------------------

def test_simulator_users_are_not_offered_in_the_reassign_list(training, app, sessions):
    with sessions() as session:
        trainee = session.scalar(select(User).where(User.username == "trainee"))
        offered = tasklist.officers_by_lane(session, trainee)
        assert [u.username for u in offered["sarpanch"]] == ["trainee"]
        assert all(not u.simulated for lane in offered.values() for u in lane)
        row = tasklist.task_list(session, trainee).rows[0]
        with pytest.raises(Refused) as refused:
            tasklist.reassign(session, trainee, row.case_id, row.task_id, "sim-sarpanch-TRN")
        session.rollback()
    assert "the task can go to: Trainee Sarpanch (trainee)" in refused.value.message
    client = app.test_client()
    assert client.post("/login", data={"username": "trainee", "password": PASSWORD}).status_code == 302
    page = client.get("/tasks").get_data(as_text=True)
    assert "Give to" in page and 'value="trainee"' in page
    assert 'value="sim-' not in page


def test_simulator_users_are_not_told_of_a_live_panchayats_case(training, sessions, officers):
    """sim-appellate-TRN, the training Panchayat's appellate authority, does not hear of RMP's cases
    (the real appellate authority does), nor does the real one hear of the training Panchayat's."""
    with clock.installed(clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))):
        case = start_rmp_case(sessions, officers["pound_keeper"], datetime.fromisoformat("2026-01-05T10:00:00+05:30"))
    with sessions() as session:
        live = session.get(Case, case.id)
        told = notifications.recipients(session, live, ["appellate_authority", "sarpanch", "receiving_officer"])
        assert sorted(u.username for u in told) == ["app", "sar"]
        trn = session.scalar(select(Case).join(Panchayat).where(Panchayat.code == "TRN"))
        told = notifications.recipients(session, trn, ["appellate_authority"])
        assert sorted(u.username for u in told) == ["sim-appellate-TRN"]


def test_a_real_receiving_officer_is_not_found_among_the_simulators_and_back(training, sessions):
    with sessions() as session:
        made = users.create_simulator_user(session, "sim-receiver-TRN-9", "receiving_officer",
                                           display_name="Fair In-charge")
        session.commit()
        assert users.by_display_name(session, "Fair In-charge", "receiving_officer") is None
        assert users.by_display_name(session, "sim-receiver-TRN-9", "receiving_officer") is None
        assert users.by_display_name(session, "Fair In-charge", "receiving_officer", include_simulated=True) == made
        assert users.is_training_case(session, "TRN-TRN/2026/0001") is True
        assert users.is_training_case(session, "RMP/2026/0001") is False


# -- the worker reads the real clock ----------------------------------------------------------------

def test_the_worker_fires_no_timer_before_its_instant_on_the_real_clock(sessions, officers):
    """A virtual clock a month ahead, installed where the worker runs (a leak): the timer due in
    the real past fires, stamped with the real instant; the one due in the real future does not."""
    real_now = datetime.now(UTC)
    with clock.installed(clock.VirtualClock(real_now - timedelta(days=5))):
        past = start_rmp_case(sessions, officers["pound_keeper"], real_now - timedelta(days=5))
    future = start_rmp_case(sessions, officers["pound_keeper"], real_now - timedelta(minutes=1))
    with sessions() as session:
        future_due = session.get(Case, future.id).next_timer_due
    assert future_due > real_now + timedelta(days=2)
    stop, leaked = threading.Event(), clock.VirtualClock(real_now + timedelta(days=30))

    def work() -> None:
        with clock.installed(leaked):
            timers.run_worker(sessions, stop, max_sleep=0.05, settle=0.0)

    worker = threading.Thread(target=work)
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with sessions() as session:
                if session.scalar(select(func.count(TimerFiring.id)).where(TimerFiring.case_id == past.id)):
                    break
            time.sleep(0.05)
        time.sleep(0.5)  # more passes under the leaked clock
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive()
    with sessions() as session:
        fired = session.scalars(select(TimerFiring).where(TimerFiring.case_id == past.id)).all()
        assert [f.element_id for f in fired] == ["bt_release_window"]
        assert real_now < fired[0].fired_at <= datetime.now(UTC)  # the real instant, not the leaked one
        assert session.scalar(select(func.count(TimerFiring.id)).where(TimerFiring.case_id == future.id)) == 0
        assert session.get(Case, future.id).next_timer_due == future_due


def test_the_real_time_cap_reads_a_clock_behind_the_wall_clock_as_it_is():
    behind = clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))
    assert clock.NotAheadOfRealTime(behind).now() == behind.now()
    ahead = clock.VirtualClock(datetime.now(UTC) + timedelta(days=400))
    assert clock.NotAheadOfRealTime(ahead).now() <= datetime.now(UTC)


# -- migration 0020: the simulator's users of before lose their written-in password -----------------

def test_migration_0020_disarms_the_users_the_simulator_made_with_its_written_in_password(database_url):
    from alembic import command

    command.downgrade(db._alembic_config(database_url), "0019_corrections")
    engine = db.make_engine(database_url)
    old_hash = generate_password_hash("simulator-pass", method="pbkdf2:sha256:1000")
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO panchayat (code, name, samiti_code, district, timezone, appeal_period_days, "
            "return_period_days, appellate_forum) VALUES ('RMP', 'Rampura', 'SAM1', '', 'Asia/Kolkata', 30, 7, 'x')"))
        pid = connection.execute(text("SELECT id FROM panchayat WHERE code = 'RMP'")).scalar_one()
        for name, hashed in (("sim-sarpanch-RMP", old_hash), ("sim-receiver-RMP-1", old_hash),
                             ("sim-ple", generate_password_hash(PASSWORD, method=FAST_HASH)), ("sar", old_hash)):
            connection.execute(text(
                "INSERT INTO app_user (username, display_name, password_hash, role, panchayat_id, language, active, "
                "created_at, session_key) VALUES (:u, :u, :h, 'sarpanch', :p, 'en', :a, '2026-01-01 00:00:00', 'k')"),
                {"u": name, "h": hashed, "p": pid, "a": True})
        uid = connection.execute(text("SELECT id FROM app_user WHERE username = 'sim-sarpanch-RMP'")).scalar_one()
        connection.execute(text(
            "INSERT INTO api_token (user_id, token_hash, created_at, role, panchayat_id, label) "
            "VALUES (:u, :h, '2026-01-01 00:00:00', 'sarpanch', :p, '')"),
            {"u": uid, "h": hashlib.sha256(b"old-sim-token").hexdigest(), "p": pid})
    engine.dispose()
    db.upgrade(database_url)
    engine = db.make_engine(database_url)
    sessions = db.session_factory(engine)
    try:
        with sessions() as session:
            found = {u.username: u for u in session.scalars(select(User))}
            for name in ("sim-sarpanch-RMP", "sim-receiver-RMP-1"):
                assert found[name].simulated and found[name].password_hash == users.UNUSABLE_PASSWORD
                assert found[name].session_key != "k"  # its signed-in sessions end
                assert users.sign_in(session, name, "simulator-pass", method=FAST_HASH) is None
            # a real user keeps what it had, even one whose name starts with sim- or whose password is that one
            assert not found["sim-ple"].simulated and not found["sar"].simulated
            assert users.sign_in(session, "sim-ple", PASSWORD, method=FAST_HASH) is not None
            assert users.user_for_token(session, "old-sim-token") is None
            entries = [(e.kind, e.actor) for e in session.scalars(select(AuditEntry).order_by(AuditEntry.seq))]
            assert entries[:2] == [("user.password_hash_changed", "sim-sarpanch-RMP"),
                                   ("user.password_hash_changed", "sim-receiver-RMP-1")]
            assert audit.verify(session).ok
            assert session.scalar(select(Panchayat.training).where(Panchayat.code == "RMP")) is False
            session.rollback()
    finally:
        engine.dispose()
