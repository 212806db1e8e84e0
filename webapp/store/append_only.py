"""Append-only tables, refused by the database itself (issue 34, item 2).

The ORM hook of :mod:`webapp.store.immutable` refuses edits that go through a session; the
triggers made here refuse them for any writer (plain SQL, another program), on PostgreSQL and
SQLite. Each guarded table is described by a :class:`Guard`:

- ``fixed``: the columns an UPDATE may never change (the row's identity and what it recorded);
- ``once``: groups of columns written once, while the group's first column is still NULL (a
  document's cancellation, an act's correction), and never again;
- every other column may change (an act's engine snapshot, ``case_act.before``, which is let go
  once the act can no longer be corrected).

A DELETE is refused, but for one case: a **replay**. The corrigendum replays an act on the case as
the act found it (webapp.services.cases.corrigenda), which takes the rows the act and later steps
wrote out of the way inside a savepoint that is always rolled back. Such a savepoint first adds a
row for its case to ``replay_scope`` (:func:`replaying`); a guard with ``replayable`` lets a DELETE
of that case's rows through while the row is there, and the rollback takes the row and the deletes
away together. Nothing is ever committed so: :func:`replaying` refuses to be used outside a
savepoint, and ``before_commit`` refuses a commit while ``replay_scope`` holds a row. A table with no
``once`` groups and no free columns refuses every UPDATE. The ledger's own trigger (migration 0011_ledger) predates this module and is kept.

A migration passes the list of its own revision to :func:`create` (``AT_0022`` for
0022_append_only, ``AT_0026`` for 0026a_append_only_paper), never :data:`GUARDS`: a later change is a new list under the new revision's
name, so an old migration always does what it did.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.orm import Session

_REPLAYED = "rule130.replayed"


@dataclass(frozen=True)
class Guard:
    """One append-only table. ``message`` is what the database raises (English: it reaches the log,
    never a page; a page shows the unit of work's own refusal)."""

    table: str
    fixed: tuple[str, ...]
    once: tuple[tuple[str, ...], ...] = ()
    free: tuple[str, ...] = ()
    message: str = ""
    replayable: bool = False

    @property
    def refuses_every_update(self) -> bool:
        return not self.once and not self.free


def _changed(columns: tuple[str, ...], dialect: str) -> str:
    """An SQL condition true when any of ``columns`` differs between OLD and NEW (NULL-safe)."""
    op = "IS DISTINCT FROM" if dialect == "postgresql" else "IS NOT"
    return " OR ".join(f"NEW.{c} {op} OLD.{c}" for c in columns)


def _update_refused(guard: Guard, dialect: str) -> str:
    """The SQL condition under which an UPDATE of ``guard.table`` is refused."""
    if guard.refuses_every_update:
        return "TRUE" if dialect == "postgresql" else "1"
    parts = [_changed(guard.fixed, dialect)]
    for group in guard.once:
        parts.append(f"(OLD.{group[0]} IS NOT NULL AND ({_changed(group, dialect)}))")
    return " OR ".join(f"({part})" for part in parts)


def _delete_refused(guard: Guard, dialect: str) -> str:
    """The SQL condition under which a DELETE of ``guard.table`` is refused."""
    if not guard.replayable:
        return "TRUE" if dialect == "postgresql" else "1"
    return f"NOT EXISTS (SELECT 1 FROM {REPLAY_SCOPE} WHERE case_id = OLD.case_id)"


def trigger_names(guard: Guard, dialect: str) -> tuple[str, ...]:
    """The names of the triggers :func:`create` makes for ``guard`` on ``dialect``."""
    if dialect == "postgresql":
        return (f"{guard.table}_append_only",)
    return (f"{guard.table}_no_update", f"{guard.table}_no_delete")


def create(bind: Any, guards: tuple[Guard, ...]) -> None:
    """Make the triggers of ``guards`` on the connection ``bind`` (PostgreSQL or SQLite; another
    database gets none). Raises what the database raises."""
    dialect = bind.dialect.name
    for guard in guards:
        message = guard.message.replace("'", "''")
        if dialect == "postgresql":
            bind.execute(text(f"""
                CREATE FUNCTION {guard.table}_append_only() RETURNS trigger AS $$
                BEGIN
                    IF TG_OP = 'DELETE' THEN
                        IF {_delete_refused(guard, dialect)} THEN
                            RAISE EXCEPTION '{message}';
                        END IF;
                        RETURN OLD;
                    END IF;
                    IF {_update_refused(guard, dialect)} THEN
                        RAISE EXCEPTION '{message}';
                    END IF;
                    RETURN NEW;
                END;
                $$ LANGUAGE plpgsql"""))
            bind.execute(text(f"CREATE TRIGGER {guard.table}_append_only BEFORE UPDATE OR DELETE ON {guard.table} "
                              f"FOR EACH ROW EXECUTE FUNCTION {guard.table}_append_only()"))
        elif dialect == "sqlite":
            bind.execute(text(f"CREATE TRIGGER {guard.table}_no_update BEFORE UPDATE ON {guard.table} "
                              f"WHEN {_update_refused(guard, dialect)} BEGIN SELECT RAISE(ABORT, '{message}'); END"))
            bind.execute(text(f"CREATE TRIGGER {guard.table}_no_delete BEFORE DELETE ON {guard.table} "
                              f"WHEN {_delete_refused(guard, dialect)} BEGIN SELECT RAISE(ABORT, '{message}'); END"))


def drop(bind: Any, guards: tuple[Guard, ...]) -> None:
    """Remove the triggers of ``guards`` (a migration's downgrade; a test that plays an intruder
    with database access). Missing triggers are passed over."""
    dialect = bind.dialect.name
    for guard in guards:
        if dialect == "postgresql":
            bind.execute(text(f"DROP TRIGGER IF EXISTS {guard.table}_append_only ON {guard.table}"))
            bind.execute(text(f"DROP FUNCTION IF EXISTS {guard.table}_append_only()"))
        elif dialect == "sqlite":
            for name in trigger_names(guard, dialect):
                bind.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


REPLAY_SCOPE = "replay_scope"
"""The table of the cases being replayed in an open savepoint (one ``case_id`` column, its key)."""

HISTORY = Guard("case_event", fixed=(), message="case history rows are never edited or deleted", replayable=True)
AUDIT = Guard("audit_entry", fixed=(), message="audit trail entries are never edited or deleted")
PROCESS_AUDIT = Guard("process_audit", fixed=(), message="process audit rows are never edited or deleted")
DOCUMENTS = Guard(
    "case_document",
    fixed=("id", "case_id", "key", "kind", "number", "language", "title", "clause", "issued_at", "issued_by",
           "html", "sha256"),
    once=(("cancelled_at", "cancelled_by", "cancel_reason"),),
    message="a document is kept as issued; a correction cancels it, a corrigendum supersedes it", replayable=True)
ACTS = Guard(
    "case_act",
    fixed=("id", "case_id", "at", "name", "element_id", "actor_user_id", "actor_role", "process_version_id",
           "marks_json", "last_event_id"),
    once=(("corrected_at", "corrected_by", "correction_reason", "correction_event_id"),),
    free=("before",),
    message="an act is kept as recorded; only its correction is written, once")

AT_0022: tuple[Guard, ...] = (HISTORY, AUDIT, PROCESS_AUDIT, DOCUMENTS, ACTS)
"""The guards migration 0022_append_only made."""

DOCUMENTS_0026 = Guard(
    "case_document", fixed=(*DOCUMENTS.fixed, "from_paper"), once=DOCUMENTS.once, message=DOCUMENTS.message,
    replayable=True)
"""A document as issued, with ``from_paper`` (0023_papercases: entered from the paper file) fixed too."""
PAPER_RECEIPTS = Guard("paper_receipt", fixed=(), message="a paper receipt is kept as entered from the paper file")
"""A paper receipt of a paper case (0023_papercases): its number, amount and ledger entry as entered."""

CHANGED_0026: tuple[Guard, ...] = (DOCUMENTS,)
"""The guards of 0022_append_only that migration 0026a_append_only_paper replaces (its downgrade
makes them again)."""
AT_0026: tuple[Guard, ...] = (DOCUMENTS_0026, PAPER_RECEIPTS)
"""The guards migration 0026a_append_only_paper made: the columns migrations 0023-0025 added to the
guarded tables (``case_document.from_paper``; ``case_act``, ``case_event``, ``audit_entry`` and
``process_audit`` got none), and the new record only ever added (``paper_receipt``)."""

GUARDS = (HISTORY, AUDIT, PROCESS_AUDIT, ACTS, *AT_0026)
"""The guards in force at the head revision (the tests' intruder drops these)."""


@contextmanager
def replaying(session: Session, case_id: int) -> Iterator[None]:
    """Let the history rows and documents of case ``case_id`` be deleted inside the caller's open
    savepoint (``session.begin_nested()``), which the caller then rolls back. Raises RuntimeError
    outside a savepoint: a replay never commits."""
    if not session.in_nested_transaction():
        raise RuntimeError("a replay runs only inside a savepoint that is rolled back")
    session.info[_REPLAYED] = True
    session.execute(text(f"INSERT INTO {REPLAY_SCOPE} (case_id) VALUES (:case_id)"), {"case_id": case_id})
    yield


@event.listens_for(Session, "before_commit")
def _no_replay_committed(session: Session) -> None:
    """Refuse a commit while a replay's row is still in ``replay_scope`` (a defect: its savepoint
    was not rolled back). Only a session that began a replay pays for the check."""
    if not session.info.get(_REPLAYED):
        return
    session.info.pop(_REPLAYED, None)
    if session.execute(text(f"SELECT count(*) FROM {REPLAY_SCOPE}")).scalar():
        raise RuntimeError("a replay's deletions may never be committed: roll its savepoint back")
