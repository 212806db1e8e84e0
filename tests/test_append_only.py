"""The database itself refuses edits of the history, the documents as issued, the audit trails and
the acts' identity (webapp.store.append_only, migration 0022_append_only; issue 34, item 2), for a
writer that does not go through the ORM: plain SQL, as anyone with a database login could send.
What may still be written is written once: a document's cancellation, an act's correction; an
act's engine snapshot may be let go. Real database: SQLite, or PostgreSQL with RULE130_TEST_POSTGRES."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from webapp.store.models import AuditEntry, CaseAct, CaseDocument, CaseEvent

from .driver import TWO_COWS, ist_midnight, publish
from .test_corrections import correct


@pytest.fixture
def published(drive):
    """Two cows, the notice published (N1 in English and Hindi), with its act, history and trail."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive, full_price="1200.00")
    return drive


def sql(sessions, statement: str, **params) -> int:
    """Run ``statement`` and commit; the number of rows it matched."""
    with sessions() as session:
        result = session.execute(text(statement), params)
        session.commit()
        return result.rowcount


def refused(sessions, statement: str, message: str, **params) -> None:
    with pytest.raises(DBAPIError, match=message):
        sql(sessions, statement, **params)


def first(sessions, model, **where):
    with sessions() as session:
        return session.scalars(select(model).filter_by(**where).order_by(model.id)).first()


@pytest.mark.parametrize(("table", "message"), [
    ("case_event", "case history rows are never edited or deleted"),
    ("audit_entry", "audit trail entries are never edited or deleted"),
])
def test_a_history_row_or_audit_entry_is_never_changed_or_deleted(published, table, message):
    sessions = published.sessions
    with sessions() as session:
        row_id = session.scalar(text(f"SELECT max(id) FROM {table}"))
    refused(sessions, f"UPDATE {table} SET detail_json = '{{}}' WHERE id = :id", message, id=row_id)
    refused(sessions, f"DELETE FROM {table} WHERE id = :id", message, id=row_id)
    refused(sessions, f"DELETE FROM {table}", message)
    with sessions() as session:
        assert session.scalar(text(f"SELECT count(*) FROM {table} WHERE id = :id"), {"id": row_id}) == 1


def test_a_process_audit_row_is_never_changed(published):
    sessions = published.sessions
    with sessions() as session:
        row_id = session.scalar(text("SELECT max(id) FROM process_audit"))
    assert row_id is not None  # the deploy of the Rule 130 process wrote one
    refused(sessions, "UPDATE process_audit SET actor = 'someone' WHERE id = :id",
            "process audit rows are never edited or deleted", id=row_id)


def test_a_document_as_issued_is_never_changed_and_its_cancellation_is_written_once(published):
    sessions = published.sessions
    notice = first(sessions, CaseDocument, case_id=published.case_id, kind="notice", language="en")
    assert notice.number == "RMP/2026/0001/N1"
    message = "a document is kept as issued"
    for change in ("html = 'forged'", "number = 'RMP/2026/0001/N9'", "sha256 = :x", "issued_by = NULL"):
        refused(sessions, f"UPDATE case_document SET {change} WHERE id = :id", message, id=notice.id, x="0" * 64)
    assert sql(sessions, "UPDATE case_document SET html = html WHERE id = :id", id=notice.id) == 1  # no change: let be
    refused(sessions, "DELETE FROM case_document WHERE id = :id", message, id=notice.id)
    # the correction writes the cancellation, once: a second one (another reason) is refused
    published.move("2026-01-09T12:00:00+05:30")
    correct(published, reason="full price typed as 1200 for 12000")
    cancelled = first(sessions, CaseDocument, id=notice.id)
    assert cancelled.cancel_reason == "full price typed as 1200 for 12000" and cancelled.cancelled_at is not None
    refused(sessions, "UPDATE case_document SET cancel_reason = 'another reason' WHERE id = :id", message, id=notice.id)
    refused(sessions, "UPDATE case_document SET cancelled_at = NULL, cancelled_by = NULL, cancel_reason = NULL "
                      "WHERE id = :id", message, id=notice.id)
    assert first(sessions, CaseDocument, id=notice.id).cancel_reason == "full price typed as 1200 for 12000"


def test_an_acts_identity_is_fixed_its_correction_written_once_and_its_snapshot_may_go(published):
    sessions = published.sessions
    act = first(sessions, CaseAct, case_id=published.case_id, element_id="ut_publish_notice")
    message = "an act is kept as recorded"
    refused(sessions, "UPDATE case_act SET at = :at WHERE id = :id", message, id=act.id, at="2026-01-01 00:00:00")
    refused(sessions, "UPDATE case_act SET marks_json = '{}' WHERE id = :id", message, id=act.id)
    refused(sessions, "DELETE FROM case_act WHERE id = :id", message, id=act.id)
    published.move("2026-01-09T12:00:00+05:30")
    correct(published, reason="full price typed as 1200 for 12000")
    corrected = first(sessions, CaseAct, id=act.id)
    assert corrected.correction_reason == "full price typed as 1200 for 12000"
    refused(sessions, "UPDATE case_act SET correction_reason = 'other' WHERE id = :id", message, id=act.id)
    # the engine snapshot is not the act's identity: it may be let go once it can serve no correction
    assert sql(sessions, "UPDATE case_act SET before = :b WHERE id = :id", id=act.id, b=b"") == 1
    assert first(sessions, CaseAct, id=act.id).before == b""


def test_new_rows_are_still_added(published):
    """The guards refuse changes, not additions: the case goes on and adds history and trail."""
    sessions = published.sessions
    with sessions() as session:
        events = session.scalar(select(CaseEvent.id).order_by(CaseEvent.id.desc()).limit(1))
        entries = session.scalar(select(AuditEntry.id).order_by(AuditEntry.id.desc()).limit(1))
    published.fire_past(ist_midnight("2026-02-09"))
    with sessions() as session:
        assert session.scalar(select(CaseEvent.id).order_by(CaseEvent.id.desc()).limit(1)) > events
        assert session.scalar(select(AuditEntry.id).order_by(AuditEntry.id.desc()).limit(1)) > entries


def test_a_replay_deletes_only_inside_its_savepoint_and_is_never_committed(published):
    """The corrigendum's replay (webapp.services.cases.corrigenda) takes later rows out of the way in a
    savepoint it rolls back; outside one, or committed, it is refused."""
    from webapp.store import append_only

    sessions, case_id = published.sessions, published.case_id
    with sessions() as session:
        with pytest.raises(RuntimeError, match="only inside a savepoint"), append_only.replaying(session, case_id):
            pass
        savepoint = session.begin_nested()
        with append_only.replaying(session, case_id):
            gone = session.execute(text("DELETE FROM case_event WHERE case_id = :c"), {"c": case_id}).rowcount
        assert gone > 0
        savepoint.rollback()
        assert session.scalar(text("SELECT count(*) FROM case_event WHERE case_id = :c"), {"c": case_id}) == gone
        session.commit()
    with sessions() as session:
        session.begin_nested()
        with append_only.replaying(session, case_id):
            pass
        with pytest.raises(RuntimeError, match="may never be committed"):
            session.commit()
    with sessions() as session:
        assert session.scalar(text("SELECT count(*) FROM replay_scope")) == 0
    refused(sessions, "DELETE FROM case_event WHERE case_id = :c", "case history rows are never", c=case_id)


def test_a_paper_documents_from_paper_and_its_paper_receipt_are_fixed(sessions, officers, virtual_clock):
    """A document entered from the paper file stays so (``from_paper`` fixed since
    0026a_append_only_paper), and a live document cannot be passed off as one from the paper; the
    paper receipt keeps its number and amount, and is never deleted."""
    from webapp.store.models import PaperReceipt

    from .test_paper_cases import NOTICE, NOW, at, bring

    virtual_clock.set(at(NOW))
    brought = bring(sessions, officers["secretary"], [
        NOTICE, {"do": "bid", "at": "2026-02-06T12:00:00+05:30", "bidder": "Mohan", "amount": "5200.00",
                 "receipt_number": "R 4512", "amount_received": "5200.00"}])
    sale = first(sessions, CaseDocument, case_id=brought.case_id, kind="sale_receipt", language="en")
    assert (sale.number, sale.from_paper) == ("R 4512", True)
    message = "a document is kept as issued"
    refused(sessions, "UPDATE case_document SET from_paper = :f WHERE id = :id", message, id=sale.id, f=False)
    refused(sessions, "UPDATE case_document SET from_paper = :f WHERE case_id = :c", message, c=brought.case_id, f=False)
    assert first(sessions, CaseDocument, id=sale.id).from_paper is True
    # the cancellation is still written once (the guard's other rule unchanged)
    assert sql(sessions, "UPDATE case_document SET cancel_reason = 'wrong cow', cancelled_at = :t WHERE id = :id",
               id=sale.id, t="2026-03-10 06:30:00") == 1
    receipt = first(sessions, PaperReceipt, case_id=brought.case_id)
    assert (receipt.number, str(receipt.amount)) == ("R 4512", "5200.00")
    message = "a paper receipt is kept as entered"
    refused(sessions, "UPDATE paper_receipt SET amount = 520 WHERE id = :id", message, id=receipt.id)
    refused(sessions, "UPDATE paper_receipt SET number = 'R 4513', number_key = 'R4513' WHERE id = :id", message,
            id=receipt.id)
    refused(sessions, "DELETE FROM paper_receipt WHERE id = :id", message, id=receipt.id)
    assert str(first(sessions, PaperReceipt, id=receipt.id).amount) == "5200.00"


def test_a_live_document_cannot_be_marked_as_entered_from_paper(published):
    sessions = published.sessions
    notice = first(sessions, CaseDocument, case_id=published.case_id, kind="notice", language="en")
    assert notice.from_paper is False
    refused(sessions, "UPDATE case_document SET from_paper = :f WHERE id = :id", "a document is kept as issued",
            id=notice.id, f=True)
