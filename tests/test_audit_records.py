"""The trail vouches for the records: `rule130 audit verify` checks the ledger entries, the case
history and the stored documents against the audit entries that recorded them, naming the first row
that differs (table, id, field, entry) and rows no entry recorded — also for a trail written before
format 2 (entries without ``"v": 2``).

Real database (SQLite, or PostgreSQL with RULE130_TEST_POSTGRES): the append-only triggers are
dropped as anyone with database access can (tests/intruder.py), and rows are changed with plain SQL.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import select, text

from webapp.cli import main as cli
from webapp.store import audit
from webapp.store.models import AuditEntry, CaseDocument, CaseEvent, LedgerEntry

from .driver import TWO_COWS, Driver
from .intruder import drop_guards

pytestmark = pytest.mark.usefixtures("virtual_clock")


@pytest.fixture
def released(sessions, officers, virtual_clock):
    """Two cows released to their owner in the window: a ledger entry of ₹1480.00, its history rows
    and the release receipt in English and Hindi."""
    drive = Driver(sessions, officers, virtual_clock)
    drive.start(TWO_COWS)
    drive.move("2026-01-08T23:59:59+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Owner M"})
    with sessions() as session:
        [posting] = session.scalars(select(LedgerEntry).where(LedgerEntry.case_id == drive.case_id))
        documents = session.scalars(select(CaseDocument).where(CaseDocument.case_id == drive.case_id)
                                    .order_by(CaseDocument.id)).all()
        [entry] = session.scalars(select(AuditEntry).where(AuditEntry.kind == "ledger.entry"))
    assert posting.amount == 1480 and [d.language for d in documents] == ["en", "hi"]
    return drive, posting, entry, documents


def verify(database_url):
    return CliRunner().invoke(cli, ["audit", "verify", "--database", database_url])


def sql(sessions, statement: str, **params) -> None:
    with sessions() as session:
        session.execute(text(statement), params)
        session.commit()


def test_an_intact_database_verifies_with_every_row_checked(released, sessions, database_url):
    drive, _posting, _entry, _documents = released
    with sessions() as session:
        rows = sum(len(session.scalars(select(model)).all()) for model in (LedgerEntry, CaseEvent, CaseDocument))
        kinds = [e.kind for e in session.scalars(select(AuditEntry).where(AuditEntry.case_id == drive.case_id))]
    result = verify(database_url)
    assert result.exit_code == 0, result.output
    assert f"; {rows} ledger entries, history rows and documents match it" in result.output
    assert kinds.count("document.issued") == 2  # each language version, with every field of the row


def test_an_amount_changed_with_the_trigger_dropped_is_named(released, sessions, database_url):
    _drive, posting, entry, _documents = released
    drop_guards(sessions)
    sql(sessions, "UPDATE ledger_entry SET amount = 1.00 WHERE id = :id", id=posting.id)
    with sessions() as session:
        assert audit.verify(session, rows=False).ok  # the chain itself is untouched
    result = verify(database_url)
    assert result.exit_code == 2
    assert result.stderr == (f"audit trail intact ({_count(sessions)} entries), but the records "
                             f"differ from it: ledger_entry row {posting.id} (case {posting.case_id}) differs from "
                             f"what audit entry {entry.seq} recorded: amount is '1.00' in the table, '1480.00' in "
                             "the trail\n")


def _count(sessions) -> int:
    with sessions() as session:
        return len(session.scalars(select(AuditEntry.id)).all())


def test_a_forged_ledger_row_and_a_removed_one_are_named(released, sessions, database_url):
    _drive, posting, entry, _documents = released
    drop_guards(sessions)
    sql(sessions, "INSERT INTO ledger_entry (case_id, panchayat_id, at, from_account, to_account, amount, kind, "
                  "clause, element_id, officer_id, memo, reason) SELECT case_id, panchayat_id, at, from_account, "
                  "to_account, amount, kind, clause, element_id, officer_id, memo, reason FROM ledger_entry "
                  "WHERE id = :id", id=posting.id)
    with sessions() as session:
        forged = session.scalar(select(LedgerEntry.id).order_by(LedgerEntry.id.desc()).limit(1))
    result = verify(database_url)
    assert result.exit_code == 2
    assert (f"ledger_entry row {forged} (case {posting.case_id}) was never recorded in the audit trail: no entry "
            "holds it") in result.stderr  # the copy, not the original: the first row pairs with the entry
    sql(sessions, "DELETE FROM ledger_entry WHERE id IN (:a, :b)", a=posting.id, b=forged)
    result = verify(database_url)
    assert result.exit_code == 2
    assert (f"audit entry {entry.seq} (ledger.entry) recorded a ledger_entry row of case {posting.case_id} that is "
            "no longer in the table") in result.stderr


def test_a_history_row_changed_or_removed_is_named_with_its_field(released, sessions, database_url):
    drive, _posting, _entry, _documents = released
    with sessions() as session:
        release = session.scalar(select(CaseEvent).where(CaseEvent.case_id == drive.case_id,
                                                         CaseEvent.element_id == "ut_release"))
        recorded = session.scalar(select(AuditEntry).where(AuditEntry.kind == "case.task",
                                                           AuditEntry.detail_json.contains('"ut_release"')))
    forged = json.dumps({**json.loads(release.detail_json), "owner": "Someone Else"})
    drop_guards(sessions)
    sql(sessions, "UPDATE case_event SET detail_json = :d WHERE id = :id", d=forged, id=release.id)
    result = verify(database_url)
    assert result.exit_code == 2
    assert (f"case_event row {release.id} (case {drive.case_id}) differs from what audit entry {recorded.seq} "
            "recorded: detail_json is") in result.stderr and "'Someone Else'" in result.stderr
    sql(sessions, "UPDATE case_event SET detail_json = :d WHERE id = :id", d=release.detail_json, id=release.id)
    assert verify(database_url).exit_code == 0  # put back as it was: intact again
    sql(sessions, "UPDATE case_event SET actor_user_id = NULL WHERE id = :id", id=release.id)
    result = verify(database_url)
    assert f"case_event row {release.id} (case {drive.case_id}) differs" in result.stderr
    assert "actor_user_id is None in the table, 'pk' in the trail" in result.stderr


def test_a_stored_document_changed_is_named_with_its_field(released, sessions, database_url):
    _drive, _posting, _entry, documents = released
    hindi = documents[1]
    forged = hindi.html.replace("</article>", "<p>प्राप्त राशि ₹ 14.00</p></article>")
    assert forged != hindi.html
    drop_guards(sessions)
    sql(sessions, "UPDATE case_document SET html = :h WHERE id = :id", h=forged, id=hindi.id)
    result = verify(database_url)
    assert result.exit_code == 2
    assert (f"case_document row {hindi.id} ({hindi.number}, hi) differs from what audit entry ") in result.stderr
    assert f"recorded: the SHA-256 of the text is '{audit_sha(forged)}' in the table" in result.stderr
    sql(sessions, "UPDATE case_document SET html = :h, title = 'Forged' WHERE id = :id", h=hindi.html, id=hindi.id)
    result = verify(database_url)
    assert f"title is 'Forged' in the table, '{hindi.title}' in the trail" in result.stderr


def audit_sha(html: str) -> str:
    import hashlib
    return hashlib.sha256(html.encode("utf-8")).hexdigest()


def rewrite_as_format_1(sessions) -> None:
    """The trail as it was written before format 2: ledger and history entries without the fields
    format 2 added, no ``document.issued`` entries; numbered and chained again from the start."""
    with sessions() as session:
        trail = session.scalars(select(AuditEntry).order_by(AuditEntry.seq)).all()
        kept = []
        for entry in trail:
            if entry.kind == "document.issued":
                session.delete(entry)
                continue
            detail = json.loads(entry.detail_json)
            if entry.kind == "ledger.entry" or entry.kind.startswith("case."):
                for name in ("v", "at", "panchayat_id", "officer_id", "actor_user_id"):
                    detail.pop(name, None)
            entry.detail_json = audit.canonical_json(detail)
            kept.append(entry)
        session.flush()
        prev = audit.GENESIS
        for seq, entry in enumerate(kept, start=1):
            entry.seq, entry.prev_hash = seq, prev
            entry.hash = prev = audit.entry_hash(seq, entry.at, entry.kind, entry.actor, entry.case_id,
                                                 entry.detail_json, prev)
            session.flush()
        session.commit()


def test_a_trail_of_format_1_still_vouches_for_its_rows(released, sessions, database_url):
    _drive, posting, _entry, documents = released
    drop_guards(sessions)
    rewrite_as_format_1(sessions)
    assert verify(database_url).exit_code == 0
    sql(sessions, "UPDATE ledger_entry SET memo = 'forged' WHERE id = :id", id=posting.id)
    result = verify(database_url)
    assert result.exit_code == 2 and f"ledger_entry row {posting.id}" in result.stderr
    assert "memo is 'forged' in the table" in result.stderr
    sql(sessions, "UPDATE ledger_entry SET memo = :m WHERE id = :id", m=posting.memo, id=posting.id)
    english = documents[0]
    sql(sessions, "UPDATE case_document SET html = 'forged' WHERE id = :id", id=english.id)
    result = verify(database_url)  # checked against the hashes of its issue's history entry
    assert f"case_document row {english.id} ({english.number}, en) differs" in result.stderr
    assert f"the SHA-256 of the text is '{audit_sha('forged')}' in the table" in result.stderr
