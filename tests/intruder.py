"""What anyone with direct access to the database can do, for the tests that show the audit trail
catching it: drop the append-only triggers (migrations 0011_ledger and 0022_append_only)."""

from __future__ import annotations

from sqlalchemy import text

from webapp.store import append_only


def drop_guards(sessions) -> None:
    """Drop every append-only trigger in the database of ``sessions``, and commit."""
    with sessions() as session:
        connection = session.connection()
        if connection.dialect.name == "postgresql":
            connection.execute(text("DROP TRIGGER ledger_entry_no_change ON ledger_entry"))
        else:
            connection.execute(text("DROP TRIGGER ledger_entry_no_update"))
            connection.execute(text("DROP TRIGGER ledger_entry_no_delete"))
        append_only.drop(connection, append_only.GUARDS)
        session.commit()
