"""the history, the documents as issued, the audit trails and the acts refused edits by the database

Triggers on PostgreSQL and SQLite (webapp.store.append_only): ``case_event``, ``audit_entry`` and
``process_audit`` refuse every UPDATE and DELETE; ``case_document`` refuses a DELETE and any change
of what was issued, and lets its cancellation be written once; ``case_act`` refuses a DELETE and
any change of the act's identity, lets its correction be written once and its engine snapshot go.
A history row or a document may be deleted only inside a corrigendum's replay, in a savepoint that
is rolled back (``replay_scope``).

Revision ID: 0022_append_only
Revises: 0021_training_clock
"""
import sqlalchemy as sa
from alembic import op

from webapp.store.append_only import AT_0022, create, drop

revision = "0022_append_only"
down_revision = "0021_training_clock"
branch_labels = None
depends_on = None

GUARDS = AT_0022  # the list as this revision made it, kept by its name in webapp.store.append_only


def upgrade() -> None:
    # the cases being replayed in an open savepoint (webapp.store.append_only.replaying): never committed
    op.create_table("replay_scope", sa.Column("case_id", sa.Integer(), primary_key=True, autoincrement=False))
    create(op.get_bind(), GUARDS)


def downgrade() -> None:
    drop(op.get_bind(), GUARDS)
    op.drop_table("replay_scope")
