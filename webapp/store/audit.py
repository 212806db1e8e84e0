"""The tamper-evident audit trail: every state change appended, hash-chained, in its own transaction.

Each :class:`~webapp.store.models.AuditEntry` carries ``hash = SHA-256(canonical JSON of the entry
(seq, at, kind, actor, case_id, detail_json) + previous entry's hash)``; the first entry's previous
hash is 64 zeros. Changing, inserting or deleting any entry but the last breaks every hash after
it, and :func:`verify` names the first entry that no longer matches.

What is recorded, and how: a SQLAlchemy ``before_flush`` hook on every session turns each new case
history row (task completed, timer fired, case started, refusal, notification), ledger entry,
stored document (each language version) and its cancellation by a correction, deployed process version, new or changed user (role, Panchayat, Samiti, active: a permission
change; a new password hash), and API token made or revoked into an entry, written in the same
flush (one INSERT for all of them, :mod:`.append`) — so the entry commits or rolls back with the
change itself. What an entry holds of a ledger entry, a history row and a document, and how
:func:`verify` checks that the rows still say so, is in :mod:`.audit_records`. Sign-ins are recorded by
:func:`record` (the sign-in page). New code that writes these rows is covered without a call.

Concurrent writers: on PostgreSQL the chain head is serialized with a transaction-level advisory
lock (``pg_advisory_xact_lock``), held until the writer commits, taken and followed by the head's
reading in one statement (the function ``rule130_audit_head``, migration 0028_audit_head); on
SQLite the database's single writer does it. The unique ``seq`` refuses a fork should anything slip through.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import event, inspect, select, text
from sqlalchemy.orm import Session

from webapp.store import append
from webapp.store import audit_records as records
from webapp.store.models import ApiToken, AuditEntry, CaseDocument, CaseEvent, LedgerEntry, ProcessVersion, User
from webapp.values import clock

GENESIS = "0" * 64
ADVISORY_LOCK_CLASS = 1301996  # any constant; with the schema's hash it names the lock on the chain head
PERMISSION_FIELDS = ("role", "panchayat_id", "samiti_code", "district", "active")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces, UTF-8 text kept as is: one text for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def entry_hash(seq: int, at: Any, kind: str, actor: str | None, case_id: int | None, detail_json: str,
               prev_hash: str) -> str:
    """SHA-256 (hex) of the entry's canonical JSON followed by the previous entry's hash."""
    payload = canonical_json({"seq": seq, "at": at.astimezone(UTC).isoformat(timespec="microseconds"),
                              "kind": kind, "actor": actor, "case_id": case_id, "detail_json": detail_json})
    return hashlib.sha256((payload + prev_hash).encode("utf-8")).hexdigest()


def record(session: Session, kind: str, *, actor: str | None = None, case_id: int | None = None,
           detail: dict[str, Any] | None = None) -> AuditEntry:
    """Append an entry explicitly (e.g. ``auth.sign_in``); it is chained when the session flushes,
    in the caller's transaction."""
    entry = AuditEntry(kind=kind, actor=actor, case_id=case_id, detail_json=canonical_json(detail or {}))
    session.add(entry)
    return entry


# -- the hook -------------------------------------------------------------------------------------

_HEAD = "rule130.audit_head"  # session.info: (seq, hash) this transaction appended last
_NAMES = "rule130.audit_names"  # session.info: user id -> username, read once per transaction


_HEAD_ROW = select(AuditEntry.seq, AuditEntry.hash).order_by(AuditEntry.seq.desc()).limit(1)  # built once
_TAKE_WRITE_LOCK = text("UPDATE audit_entry SET seq = seq WHERE 1 = 0")
_LOCK_AND_READ_HEAD = text("SELECT head_seq, head_hash FROM rule130_audit_head(:class)")  # PostgreSQL


def _head(session: Session) -> tuple[int, str]:
    """The last entry's (seq, hash), after taking the lock that serializes the chain head until
    this transaction ends (PostgreSQL: an advisory lock; SQLite: the database's write lock, held
    once the transaction has written, else taken by a write that changes nothing, so the head
    cannot move between reading it and appending).

    Once this transaction has appended, the lock is held until it ends, so the head is what it
    appended last (kept in ``session.info``, dropped when any transaction of the session ends)."""
    held: tuple[int, str] | None = session.info.get(_HEAD)
    if held is not None:
        return held
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        # Advisory locks are database-wide: the schema's name in the key keeps two installations
        # (or two test schemas) in one database from waiting on each other's chains. The function
        # (migration 0028_audit_head) takes the lock, then reads the head with a snapshot taken
        # after the lock was granted: one statement.
        row = session.connection().execute(_LOCK_AND_READ_HEAD, {"class": ADVISORY_LOCK_CLASS}).first()
        return (row[0], row[1]) if row is not None and row[0] is not None else (0, GENESIS)
    if dialect == "sqlite" and not _writing(session):
        session.execute(_TAKE_WRITE_LOCK)
    row = session.connection().execute(_HEAD_ROW).first()  # Core: plain columns, no ORM result
    return (row[0], row[1]) if row else (0, GENESIS)


def _writing(session: Session) -> bool:
    """SQLite: this transaction has written already, so it holds the database's write lock (the
    driver opens a transaction only before its first INSERT, UPDATE or DELETE)."""
    dbapi = session.connection().connection.dbapi_connection
    return dbapi is not None and bool(getattr(dbapi, "in_transaction", False))


def know_user(session: Session, user: User) -> None:
    """Note the name of the user acting in this transaction (the caller holds the signed-in user),
    so that the entries of their acts name them without reading the user's row again (nothing is
    noted for a user object whose name is not loaded: the row is read as before)."""
    loaded = inspect(user).dict
    if "id" in loaded and "username" in loaded:
        session.info.setdefault(_NAMES, {})[loaded["id"]] = loaded["username"]


def _username(session: Session, user_id: int | None, cache: dict[int, str | None]) -> str | None:
    if user_id is None:
        return None
    if user_id not in cache:
        user = session.get(User, user_id)
        cache[user_id] = user.username if user is not None else f"user {user_id}"
    return cache[user_id]


def _changes(obj: Any, fields: tuple[str, ...]) -> dict[str, list[Any]]:
    state = inspect(obj)
    out = {}
    for name in fields:
        history = state.attrs[name].history
        if history.has_changes():
            before = history.deleted[0] if history.deleted else None
            after = history.added[0] if history.added else None
            if before != after:
                out[name] = [before, after]
    return out


def _entries_for(session: Session, obj: Any, new: bool, names: dict[int, str | None]) -> list[AuditEntry]:
    """The entries one new or changed row calls for (none for rows that are not audited)."""
    if isinstance(obj, CaseEvent) and new:
        return [AuditEntry(kind=f"case.{obj.kind}", actor=_username(session, obj.actor_user_id, names),
                           case_id=obj.case_id, detail_json=canonical_json(records.event_detail(obj)))]
    if isinstance(obj, LedgerEntry) and new:
        return [AuditEntry(kind="ledger.entry", actor=_username(session, obj.officer_id, names), case_id=obj.case_id,
                           detail_json=canonical_json(records.ledger_detail(obj)))]
    if isinstance(obj, CaseDocument) and new:
        return [AuditEntry(kind="document.issued", actor=_username(session, obj.issued_by, names),
                           case_id=obj.case_id, detail_json=canonical_json(records.document_detail(obj)))]
    if isinstance(obj, CaseDocument) and _changes(obj, ("cancelled_at",)) and obj.cancelled_at is not None:
        return [AuditEntry(kind="document.cancelled", actor=_username(session, obj.cancelled_by, names),
                           case_id=obj.case_id, detail_json=canonical_json(
                               {"document_id": obj.id, "number": obj.number, "language": obj.language,
                                "sha256": obj.sha256, "reason": obj.cancel_reason,
                                "cancelled_at": records.instant(obj.cancelled_at)}))]
    if isinstance(obj, ProcessVersion) and new:
        return [AuditEntry(kind="process.deployed", actor=obj.deployed_by, detail_json=canonical_json(
            {"process_id": obj.process_id, "version": obj.version, "content_hash": obj.content_hash,
             "note": obj.note}))]
    if isinstance(obj, User):
        if new:
            detail = {"username": obj.username, "role": obj.role, "panchayat_id": obj.panchayat_id,
                      "samiti_code": obj.samiti_code}
            if obj.simulated:  # made by the simulator: it never signs in (webapp.services.people.users)
                detail["simulated"] = True
            return [AuditEntry(kind="user.created", actor=obj.username, detail_json=canonical_json(detail))]
        out = []
        changed = _changes(obj, PERMISSION_FIELDS)
        if changed:
            out.append(AuditEntry(kind="user.permission_changed", actor=obj.username,
                                  detail_json=canonical_json({"username": obj.username, "changes": changed})))
        if _changes(obj, ("password_hash",)):
            out.append(AuditEntry(kind="user.password_hash_changed", actor=obj.username,
                                  detail_json=canonical_json({"username": obj.username,
                                                              "method": obj.password_hash.split("$", 1)[0]})))
        return out
    if isinstance(obj, ApiToken):
        owner = _username(session, obj.user_id, names)
        if new:
            return [AuditEntry(kind="token.created", actor=owner, detail_json=canonical_json(
                {"user": owner, "role": obj.role, "panchayat_id": obj.panchayat_id, "label": obj.label}))]
        if _changes(obj, ("revoked_at",)) and obj.revoked_at is not None:
            return [AuditEntry(kind="token.revoked", actor=owner, detail_json=canonical_json(
                {"token_id": obj.id, "user": owner}))]
    return []


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    """Turn the flush's audited changes into chained entries, added to the same flush; then write
    the rows that are only added in bulk (:mod:`.append`)."""
    pending: list[AuditEntry] = []
    names: dict[int, str | None] = session.info.setdefault(_NAMES, {})
    with session.no_autoflush:
        for obj in list(session.new):
            if isinstance(obj, AuditEntry):
                if obj.hash is None:
                    pending.append(obj)
            else:
                pending.extend(_entries_for(session, obj, True, names))
        for obj in list(session.dirty):
            if isinstance(obj, (User, ApiToken, CaseDocument)) and session.is_modified(obj, include_collections=False):
                pending.extend(_entries_for(session, obj, False, names))
        # the other rows first: on SQLite their INSERT takes the write lock the chain head needs
        append.write(session, append.UNCHAINED)
        if pending:
            _chain(session, pending)
            append.write(session, append.CHAINED)


def _chain(session: Session, pending: list[AuditEntry]) -> None:
    """Number and hash ``pending`` after the chain head, and add them to the session."""
    seq, prev = _head(session)
    now = clock.now()
    for entry in pending:
        seq += 1
        entry.seq, entry.at, entry.prev_hash = seq, entry.at or now, prev
        entry.hash = entry_hash(seq, entry.at, entry.kind, entry.actor, entry.case_id, entry.detail_json, prev)
        prev = entry.hash
        session.add(entry)
    session.info[_HEAD] = (seq, prev)


def _forget(session: Session, transaction: Any) -> None:
    """A transaction or savepoint ended: the head and the names are read again by the next one.
    (The inner transaction each flush opens, which ends with it, is not one of them.)"""
    if transaction.parent is not None and not transaction.nested:
        return
    session.info.pop(_HEAD, None)
    session.info.pop(_NAMES, None)


event.listen(Session, "before_flush", _before_flush)
event.listen(Session, "after_transaction_end", _forget)


# -- verification ---------------------------------------------------------------------------------

@dataclass
class Verdict:
    """The result of :func:`verify`: ``ok``, how many entries were checked, the head hash, and for a
    broken chain the first entry that fails (``broken_seq``, its row ``broken_id``) and why. When
    the chain holds, ``records`` tells how the rows compare with it; a row that differs makes the
    verdict not ``ok``, with ``reason`` naming the first (``broken_id`` None)."""

    ok: bool
    checked: int
    head: str
    broken_seq: int | None = None
    broken_id: int | None = None
    reason: str = ""
    recorded_hash: str | None = None  # the hash of the entry a recorded head names, when checked
    records: records.Report | None = None  # the rows checked against the entries (an intact chain only)


def _entries(session: Session) -> Generator[AuditEntry, None, None]:
    """Stream the trail in sequence order, 1,000 rows at a time (a server-side cursor on PostgreSQL).

    The result is closed when the caller stops early (``verify`` returns at the first broken entry),
    so no cursor or transaction is left open on the connection.
    """
    result = session.scalars(select(AuditEntry).order_by(AuditEntry.seq).execution_options(yield_per=1000))
    try:
        yield from result
    finally:
        result.close()


def verify(session: Session, recorded_head: tuple[int, str] | None = None, *, rows: bool = True) -> Verdict:
    """Recompute the chain from the first entry; stop at the first that does not match. Then, with
    ``rows``, check that the ledger entries, case history rows and stored documents still say what
    the chain recorded of them (:func:`.audit_records.check`).

    Detects an entry whose content or hash was changed, an entry removed or inserted (a gap or a
    wrong previous hash). Removing the newest entries leaves a shorter valid chain: pass
    ``recorded_head``, ``(seq, hash)`` of a head printed by an earlier verify and kept elsewhere,
    and the verdict is broken when that entry is no longer in the chain or has another hash. A row
    changed, added or removed behind the application's back (e.g. with the ledger's append-only
    trigger dropped) is named: table, row id, field and the entry that recorded it.
    """
    verdict = _verify_chain(session, recorded_head)
    if not verdict.ok or not rows:
        return verdict
    report = records.check(session)
    verdict.records = report
    if report.first is not None:
        verdict.ok = False
        verdict.broken_seq, verdict.reason = report.first.seq, report.first.reason
    return verdict


def _verify_chain(session: Session, recorded_head: tuple[int, str] | None) -> Verdict:
    stream = _entries(session)
    with contextlib.closing(stream):
        verdict = _check(stream, recorded_head[0] if recorded_head else None)
    if not verdict.ok or recorded_head is None:
        return verdict
    seq, wanted = recorded_head
    if verdict.checked < seq:
        return Verdict(False, verdict.checked, verdict.head, seq, None,
                       f"the recorded head, entry {seq}, is not in the trail, which ends at entry "
                       f"{verdict.checked}: the newest entries were removed")
    if verdict.recorded_hash != wanted:
        return Verdict(False, verdict.checked, verdict.head, seq, None,
                       f"entry {seq} has another hash than the recorded head ({wanted[:16]}…): the trail "
                       "was rewritten from there")
    return verdict


def _check(stream: Iterator[AuditEntry], recorded_seq: int | None = None) -> Verdict:
    prev, expected_seq, checked, recorded_hash = GENESIS, 1, 0, None
    for entry in stream:
        where = f"entry {entry.seq} ({entry.kind}, id {entry.id})"
        if entry.seq != expected_seq:
            return Verdict(False, checked, prev, entry.seq, entry.id,
                           f"entry {expected_seq} is missing: the next entry found is {where}")
        if entry.prev_hash != prev:
            return Verdict(False, checked, prev, entry.seq, entry.id,
                           f"{where} does not follow entry {entry.seq - 1}: its previous hash differs "
                           "(an entry before it was altered or removed)")
        actual = entry_hash(entry.seq, entry.at, entry.kind, entry.actor, entry.case_id, entry.detail_json,
                            entry.prev_hash)
        if actual != entry.hash:
            return Verdict(False, checked, prev, entry.seq, entry.id,
                           f"{where} was altered: its content does not match its hash")
        prev, expected_seq, checked = entry.hash, expected_seq + 1, checked + 1
        if entry.seq == recorded_seq:
            recorded_hash = entry.hash
    return Verdict(True, checked, prev, recorded_hash=recorded_hash)
