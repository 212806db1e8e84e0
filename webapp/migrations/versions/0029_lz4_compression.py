"""lz4: PostgreSQL compresses a case's engine state and case file with lz4 instead of pglz

Every save of a case rewrites its engine state (``case_instance.state_json``, some 40 KB of JSON
for a case near its end) and its case file. PostgreSQL compresses such values before storing them
out of line (TOAST), by default with pglz. Measured on this project's development machine (a 39 KB
state, UPDATE and COMMIT, 200 times): pglz 1.63 ms and 9,216 bytes stored, lz4 0.39 ms and 8,697
bytes (docs/benchmarks.md, "Eighth round"). The documents' HTML, written once and kept for good,
stays with pglz, which packs it tighter (12.0 against 16.0 KiB per s1 case). ``ALTER COLUMN ...
SET COMPRESSION lz4`` (PostgreSQL 14 and newer, a server built with lz4) applies to values written
from then on; values already stored stay as they are and read the same. Nothing changes on
SQLite, or on a server without lz4.

Revision ID: 0029_lz4_compression
Revises: 0028_audit_head
"""
import sqlalchemy as sa
from alembic import op

revision = "0029_lz4_compression"
down_revision = "0028_audit_head"
branch_labels = None
depends_on = None

COLUMNS = (("case_instance", "state_json"), ("case_instance", "file_json"))


def _lz4_available(bind: sa.engine.Connection) -> bool:
    return bool(bind.execute(sa.text(
        "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")).first())


def _set(method: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql" or not _lz4_available(bind):
        return
    for table, column in COLUMNS:
        op.execute(sa.text(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION {method}"))


def upgrade() -> None:
    _set("lz4")


def downgrade() -> None:
    _set("pglz")
