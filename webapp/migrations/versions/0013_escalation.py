"""task table: the instant an overdue task was escalated to the sarpanch

The diagram's escalation timers (non-interrupting boundary timers on officers' tasks, RULE130.md
"Service levels for officers' tasks") tell the sarpanch that a task is still not done; "My tasks"
shows such a task as escalated from that instant. Existing rows get NULL (not escalated); a case
whose escalation timer already fired is marked at its next change.

Revision ID: 0013_escalation
Revises: 0011_ledger
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0013_escalation"
down_revision = "0011_ledger"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("case_task") as batch:
        batch.add_column(sa.Column("escalated_at", webapp.store.models.UTCDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("case_task") as batch:
        batch.drop_column("escalated_at")
