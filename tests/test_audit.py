"""The tamper-evident audit trail: every state change is chained in the same transaction, the
chain verifies, and `rule130 audit verify` names the first altered or missing entry.

Real database (SQLite, or PostgreSQL with RULE130_TEST_POSTGRES), real services, the real CLI.
"""

from __future__ import annotations

import itertools
import json
import threading
from decimal import Decimal

import pytest
from click.testing import CliRunner
from sqlalchemy import select, text

from webapp.cli import main as cli
from webapp.errors import Refused
from webapp.services.people import users
from webapp.store import audit
from webapp.store.models import AuditEntry, User

from .conftest import PASSWORD
from .driver import TWO_COWS, ist_midnight
from .intruder import drop_guards

pytestmark = pytest.mark.usefixtures("virtual_clock")



def entries(sessions) -> list[AuditEntry]:
    with sessions() as session:
        return list(session.scalars(select(AuditEntry).order_by(AuditEntry.seq)))


def kinds(sessions) -> list[str]:
    return [e.kind for e in entries(sessions)]


def verify_cli(database_url):
    return CliRunner().invoke(cli, ["audit", "verify", "--database", database_url])


def test_a_case_leaves_a_chained_entry_for_each_change(drive, sessions, database_url):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000.00"})
    drive.act("secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "12500.00"})
    trail = entries(sessions)
    # the fixture's deploy and users come first, then the case's own story, in order
    assert trail[0].kind == "process.deployed" and json.loads(trail[0].detail_json)["process_id"] == "rule130_case"
    case_kinds = [e.kind for e in trail if e.case_id == drive.case_id]
    assert case_kinds[0] == "case.start"
    assert "case.timer" in case_kinds
    tasks = [json.loads(e.detail_json)["element_id"] for e in trail if e.kind == "case.task"]
    assert tasks[-2:] == ["ut_publish_notice", "ut_record_bid"]
    bid = next(e for e in trail if e.kind == "case.task" and '"ut_record_bid"' in e.detail_json)
    assert bid.actor == "sec" and json.loads(bid.detail_json)["detail"]["amount"] == "12500.00"
    assert [e.seq for e in trail] == list(range(1, len(trail) + 1))
    assert trail[0].prev_hash == audit.GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(trail))
    result = verify_cli(database_url)
    assert result.exit_code == 0, result.output
    assert f"audit trail intact: {len(trail)} entries; head {trail[-1].hash}" in result.output


def test_ledger_entries_are_audited_with_their_amounts(drive, sessions):
    drive.start(TWO_COWS)
    drive.move("2026-01-08T23:59:59+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Owner M"})
    [posting] = [e for e in entries(sessions) if e.kind == "ledger.entry"]
    detail = json.loads(posting.detail_json)
    assert (detail["from"], detail["to"], Decimal(detail["amount"])) == ("owner", "pound_account", Decimal("1480.00"))
    assert posting.case_id == drive.case_id


def test_a_refused_act_leaves_only_its_refusal_in_the_trail(drive, sessions):
    drive.start(TWO_COWS)
    before = kinds(sessions)
    with pytest.raises(Refused):
        drive.act("pound_keeper", "ut_release", {})  # no owner named
    assert kinds(sessions) == [*before, "case.refusal"]


def test_a_deliberately_altered_row_is_named_by_audit_verify(drive, sessions, database_url):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    trail = entries(sessions)
    target = next(e for e in trail if e.kind == "case.start")
    drop_guards(sessions)
    with sessions() as session:
        session.execute(text("UPDATE audit_entry SET detail_json = :d WHERE id = :id"),
                        {"d": target.detail_json.replace('"Cattle impounded"', '"Cattle released"'), "id": target.id})
        session.commit()
    result = verify_cli(database_url)
    assert result.exit_code == 2
    assert (f"audit trail BROKEN at entry {target.seq} (row id {target.id}): entry {target.seq} "
            f"(case.start, id {target.id}) was altered: its content does not match its hash") in result.stderr
    assert f"{target.seq - 1} entries before it are intact" in result.stderr


def test_a_recomputed_hash_does_not_hide_an_alteration(drive, sessions, database_url):
    """Whoever alters an entry and fixes its own hash breaks the link to the next entry."""
    drive.start(TWO_COWS)
    trail = entries(sessions)
    target = trail[-2]
    detail = target.detail_json[:-1] + ',"forged":true}'
    assert detail != target.detail_json
    forged = audit.entry_hash(target.seq, target.at, target.kind, target.actor, target.case_id, detail,
                              target.prev_hash)
    drop_guards(sessions)
    with sessions() as session:
        session.execute(text("UPDATE audit_entry SET detail_json = :d, hash = :h WHERE id = :id"),
                        {"d": detail, "h": forged, "id": target.id})
        session.commit()
    result = verify_cli(database_url)
    assert result.exit_code == 2
    assert f"BROKEN at entry {target.seq + 1}" in result.stderr and "does not follow entry" in result.stderr


def test_a_deleted_entry_is_named_as_missing(drive, sessions, database_url):
    drive.start(TWO_COWS)
    trail = entries(sessions)
    drop_guards(sessions)
    with sessions() as session:
        session.execute(text("DELETE FROM audit_entry WHERE seq = 3"))
        session.commit()
    result = verify_cli(database_url)
    assert result.exit_code == 2 and "entry 3 is missing" in result.stderr
    assert len(trail) > 3


def test_sign_ins_tokens_and_permission_changes_are_audited(client, sessions):
    assert client.post("/login", data={"username": "sec", "password": "wrong password"}).status_code == 200
    assert client.post("/login", data={"username": "sec", "password": PASSWORD}).status_code == 302
    with sessions() as session:
        row, _ = users.issue_token(session, "sar")
        session.commit()
        users.revoke_token(session, row.id)
        session.commit()
        sar = session.scalar(select(User).where(User.username == "sar"))
        sar.role = "secretary"
        session.commit()
    trail = entries(sessions)
    # (the test app's hash method is the fixtures' own, so no rehash entry here)
    assert [(e.kind, e.actor) for e in trail][-5:] == [
        ("auth.sign_in_failed", "sec"), ("auth.sign_in", "sec"),
        ("token.created", "sar"), ("token.revoked", "sar"), ("user.permission_changed", "sar")]
    change = json.loads(trail[-1].detail_json)
    assert change == {"username": "sar", "changes": {"role": ["sarpanch", "secretary"]}}
    with sessions() as session:
        assert audit.verify(session).ok


def test_concurrent_writers_keep_one_chain(sessions, database_url):
    """Four threads append at once (on PostgreSQL the advisory lock, on SQLite the write lock,
    serializes the head): no fork, no gap, the chain verifies."""
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(15):
                with sessions() as session:
                    audit.record(session, "test.concurrent", actor=f"writer {n}", detail={"i": i})
                    session.commit()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    before = len(entries(sessions))
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    trail = entries(sessions)
    assert len(trail) == before + 60
    assert [e.seq for e in trail] == list(range(1, len(trail) + 1))
    with sessions() as session:
        verdict = audit.verify(session)
    assert verdict.ok and verdict.checked == len(trail)


def test_a_writer_that_waited_for_the_head_chains_on_the_entry_it_waited_for(sessions, database_url):
    """A second writer arrives while the first holds the head (PostgreSQL: the advisory lock; SQLite:
    the write lock) and the first commits only after: the second's one reading of the head, taken
    once the lock is granted, is the first's entry, not the head as it stood when it arrived."""
    before = len(entries(sessions))
    first = sessions()
    audit.record(first, "test.first", actor="first")
    first.flush()  # holds the head until it commits
    arrived, done, errors = threading.Event(), threading.Event(), []

    def second() -> None:
        try:
            with sessions() as session:
                audit.record(session, "test.second", actor="second")
                arrived.set()
                session.commit()  # waits for the first writer
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=second)
    thread.start()
    assert arrived.wait(10)
    assert not done.wait(1.0), "the second writer did not wait for the head"
    first.commit()
    first.close()
    thread.join(30)
    assert not errors, errors
    trail = entries(sessions)[before:]
    assert [(e.kind, e.seq) for e in trail] == [("test.first", before + 1), ("test.second", before + 2)]
    assert trail[1].prev_hash == trail[0].hash
    with sessions() as session:
        assert audit.verify(session).ok


def test_one_transaction_reads_the_head_once_and_a_rolled_back_savepoint_is_not_chained(sessions, database_url):
    """Within one transaction the head is read (and locked) once, however many flushes append; a
    savepoint rolled back takes its entries with it, and the next append chains on what stands."""
    from sqlalchemy import event

    head_reads: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        # SQLite reads the head; PostgreSQL locks and reads it in one call (0028_audit_head)
        if statement.startswith(("SELECT audit_entry.seq, audit_entry.hash", "SELECT head_seq, head_hash")):
            head_reads.append(statement)

    with sessions() as session:
        before = len(entries(sessions))
        event.listen(session.get_bind(), "before_cursor_execute", count)
        try:
            for i in range(3):  # three flushes, one transaction
                audit.record(session, "test.flushes", actor="tester", detail={"i": i})
                session.flush()
            assert len(head_reads) == 1
            savepoint = session.begin_nested()
            audit.record(session, "test.undone", actor="tester")
            session.flush()
            savepoint.rollback()
            audit.record(session, "test.after_savepoint", actor="tester")
            session.commit()
        finally:
            event.remove(session.get_bind(), "before_cursor_execute", count)
    assert len(head_reads) == 2  # read again only after the savepoint was undone
    trail = entries(sessions)
    assert [e.kind for e in trail[before:]] == ["test.flushes"] * 3 + ["test.after_savepoint"]
    assert [e.seq for e in trail] == list(range(1, len(trail) + 1))
    with sessions() as session:
        verdict = audit.verify(session)
    assert verdict.ok and verdict.checked == len(trail)


def test_removing_the_newest_entries_is_caught_against_a_recorded_head(drive, sessions, database_url):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    trail = entries(sessions)
    first = verify_cli(database_url)
    assert first.exit_code == 0
    head = f"{len(trail)}:{trail[-1].hash}"
    assert f"record it as {head}" in first.output
    drive.move("2026-01-09T11:00:00+05:30")
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000.00"})
    later = CliRunner().invoke(cli, ["audit", "verify", "--database", database_url, "--head", head])
    assert later.exit_code == 0, later.output
    assert f"it still holds the recorded head, entry {len(trail)}" in later.output
    # the newest entries go, back to before the recorded head: the chain alone still verifies
    drop_guards(sessions)
    with sessions() as session:
        session.execute(text("DELETE FROM audit_entry WHERE seq >= :seq"), {"seq": len(trail) - 1})
        session.commit()
    with sessions() as session:
        assert audit.verify(session, rows=False).ok  # the chain alone still verifies...
    plain = verify_cli(database_url)  # ...but the rows those entries recorded are now unrecorded
    assert plain.exit_code == 2 and "was never recorded in the audit trail: no entry holds it" in plain.stderr
    cut = CliRunner().invoke(cli, ["audit", "verify", "--database", database_url, "--head", head])
    assert cut.exit_code == 2
    assert cut.stderr == (f"audit trail BROKEN: the recorded head, entry {len(trail)}, is not in the trail, which "
                          f"ends at entry {len(trail) - 2}: the newest entries were removed\n")


def test_a_recorded_head_with_another_hash_or_malformed_is_refused(drive, sessions, database_url):
    drive.start(TWO_COWS)
    trail = entries(sessions)
    other = CliRunner().invoke(cli, ["audit", "verify", "--database", database_url, "--head", f"2:{'0' * 64}"])
    assert other.exit_code == 2
    assert "entry 2 has another hash than the recorded head (0000000000000000…): the trail was rewritten" \
        in other.stderr
    assert trail[1].hash != "0" * 64
    bad = CliRunner().invoke(cli, ["audit", "verify", "--database", database_url, "--head", "latest"])
    assert bad.exit_code == 2 and "expected ENTRY:HASH as an earlier verify printed it" in bad.output
