"""Cases started at the same moment (RULE130.md: one case per impoundment, numbered per Panchayat):
each gets its own case number, and the same new-case form sent twice at once records one case."""

from __future__ import annotations

import contextvars
import threading

from sqlalchemy import select

from webapp.errors import AlreadySubmitted
from webapp.services.cases import cases
from webapp.services.running import uow
from webapp.store.models import Case

GOAT = [{"species": "goat", "description": "black goat"}]
IMPOUNDED = "2026-01-05T09:00:00+05:30"


def start_at_once(sessions, keeper, keys: list[str | None]) -> list[object]:
    """Start one case per key in threads released together; each result is the case or the error."""
    results: list[object] = [None] * len(keys)
    gate = threading.Barrier(len(keys))

    def start(n: int) -> None:
        gate.wait()
        try:
            results[n] = uow.perform(sessions, "start_case", cases.start_case, keeper, impounded_at=IMPOUNDED,
                                     place_seized="Bhimpura", place_impounded="Kanji House",
                                     nearest_village="Bhimpura", animals=GOAT, submission_key=keys[n])
        except Exception as error:
            results[n] = error

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(start, n)) for n in range(len(keys))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_cases_started_at_the_same_moment_get_numbers_one_to_four(sessions, officers, virtual_clock):
    results = start_at_once(sessions, officers["pound_keeper"], [None, None, "form-key-0003", "form-key-0004"])
    assert all(isinstance(r, Case) for r in results), results
    with sessions() as session:
        numbers = sorted(session.scalars(select(Case.case_number)))
    assert numbers == ["RMP/2026/0001", "RMP/2026/0002", "RMP/2026/0003", "RMP/2026/0004"]


def test_one_form_sent_three_times_at_once_records_one_case(sessions, officers, virtual_clock):
    results = start_at_once(sessions, officers["pound_keeper"], ["same-form-key"] * 3)
    started = [r for r in results if isinstance(r, Case)]
    repeats = [r for r in results if isinstance(r, AlreadySubmitted)]
    assert (len(started), len(repeats)) == (1, 2), results
    with sessions() as session:
        assert list(session.scalars(select(Case.case_number))) == ["RMP/2026/0001"]


def start(sessions, keeper, impounded_at: str) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, keeper, impounded_at=impounded_at,
                       place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=GOAT)


def test_each_year_of_impoundment_is_numbered_from_one(sessions, officers, virtual_clock):
    """The year in a case number is the local year of the impoundment, and each year's cases are
    numbered from 0001: a case recorded on 2 January 2027 for cattle impounded on 31 December 2026
    (23:30 IST, 18:00 UTC) takes 2026's next number."""
    from datetime import datetime

    keeper = officers["pound_keeper"]
    assert start(sessions, keeper, IMPOUNDED).case_number == "RMP/2026/0001"
    virtual_clock.set(datetime.fromisoformat("2027-01-02T10:00:00+05:30"))
    assert start(sessions, keeper, "2027-01-01T08:00:00+05:30").case_number == "RMP/2027/0001"
    assert start(sessions, keeper, "2026-12-31T23:30:00+05:30").case_number == "RMP/2026/0002"
    assert start(sessions, keeper, "2027-01-02T09:00:00+05:30").case_number == "RMP/2027/0002"


def test_the_migration_to_yearly_numbers_never_gives_a_number_twice(tmp_path, virtual_clock):
    """Migration 0017: a Panchayat whose one counter reached 3 over 2025 and 2026 goes on from 0004 in
    2026 (0003 is taken) and from 0001 in 2027, a year with no case yet."""
    from datetime import datetime

    from sqlalchemy import text

    from webapp.services.diagrams import repository
    from webapp.services.people import users
    from webapp.store import db

    from .conftest import FAST_HASH, PASSWORD

    url = f"sqlite:///{tmp_path / 'old.db'}"
    db.upgrade(url, "0016_timer_firing_lag")
    engine = db.make_engine(url)
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO panchayat (id, code, name, samiti_code, district, timezone, appeal_period_days, "
            "return_period_days, appellate_forum, case_sequence) VALUES (1, 'RMP', 'Rampura', 'SAM1', '', "
            "'Asia/Kolkata', 30, 7, 'Vikas Adhikari, Panchayat Samiti', 3)"))
        version = connection.execute(text(
            "INSERT INTO process_version (process_id, version, content_hash, deployed_by, deployed_at, bpmn_xml, "
            "forms_json, spec_json, note) VALUES ('rule130_case', 1, 'x', 'test', '2026-01-01 00:00:00', '', '{}', "
            "'{}', '') RETURNING id")).scalar_one()
        for number in ("RMP/2025/0001", "RMP/2026/0002", "RMP/2026/0003"):
            connection.execute(text(
                "INSERT INTO case_instance (case_number, panchayat_id, process_version_id, status, outcome, file_json, "
                "state_json, lock_version, created_at, updated_at) VALUES (:n, 1, :v, 'completed', 'released_by_owner', "
                "'{}', '{}', 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"), {"n": number, "v": version})
    engine.dispose()
    db.upgrade(url)
    engine = db.make_engine(url)
    sessions = db.session_factory(engine)
    with sessions() as session:
        repository.deploy_bundled(session, "tests")
        keeper = users.create_user(session, "pk", PASSWORD, "pound_keeper", panchayat_code="RMP",
                                   password_method=FAST_HASH)
        session.commit()
    virtual_clock.set(datetime.fromisoformat("2027-01-10T10:00:00+05:30"))
    numbers = [start(sessions, keeper, at).case_number for at in
               ("2026-06-01T10:00:00+05:30", "2027-01-05T10:00:00+05:30", "2026-12-01T10:00:00+05:30")]
    engine.dispose()
    assert numbers == ["RMP/2026/0004", "RMP/2027/0001", "RMP/2026/0005"]
