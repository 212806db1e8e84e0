"""audit head: on PostgreSQL, the chain head's lock and its reading in one statement

``rule130_audit_head(lock_class)`` (PostgreSQL only) takes the transaction-level advisory lock that
serializes the audit chain's head (webapp.store.audit) and then reads the last entry's ``seq`` and
``hash``: one round trip instead of two for every transaction that appends to the trail. The
function is PL/pgSQL and VOLATILE, so its SELECT runs with a snapshot taken after the lock was
granted (PostgreSQL, "Function Volatility Categories": a volatile function takes a fresh snapshot
for each query it runs): it sees the entries of the writer it waited for. A single statement
``SELECT pg_advisory_xact_lock(...), (SELECT ... FROM audit_entry ...)`` would not: its snapshot
is taken before the lock is waited for. SQLite needs nothing (one writer at a time).

Revision ID: 0028_audit_head
Revises: 0027_snapshot_lifetime
"""
import sqlalchemy as sa
from alembic import op

revision = "0028_audit_head"
down_revision = "0027_snapshot_lifetime"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE FUNCTION rule130_audit_head(lock_class integer, OUT head_seq integer, OUT head_hash varchar)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(lock_class, hashtext(current_schema()));
    SELECT a.seq, a.hash INTO head_seq, head_hash FROM audit_entry AS a ORDER BY a.seq DESC LIMIT 1;
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.text(FUNCTION))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.text("DROP FUNCTION rule130_audit_head(integer)"))
