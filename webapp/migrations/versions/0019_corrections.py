"""corrections: the acts officers record, with the case as each found it; cancelled documents

``case_act`` keeps one row per act on a case (a task completed, an objection or appeal filed, a
death, escape or birth) with the case row as the act found it, so that a clerical mistake can be
corrected: the case is put back as it was, the act's ledger entries reversed and its documents
cancelled (webapp.services.cases.corrections). ``case_document`` gains the cancellation, set once: the
document stays as issued and is printed with the word CANCELLED.

Revision ID: 0019_corrections
Revises: 0018_session_key
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0019_corrections"
down_revision = "0018_session_key"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "case_act",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("at", webapp.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("element_id", sa.String(length=100), nullable=True),
        sa.Column("actor_user_id", sa.Integer(), nullable=True),
        sa.Column("actor_role", sa.String(length=32), nullable=True),
        sa.Column("process_version_id", sa.Integer(), nullable=False),
        sa.Column("before", sa.LargeBinary(), nullable=False),
        sa.Column("marks_json", sa.Text(), nullable=False),
        sa.Column("last_event_id", sa.Integer(), nullable=True),
        sa.Column("corrected_at", webapp.store.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column("corrected_by", sa.Integer(), nullable=True),
        sa.Column("correction_reason", sa.Text(), nullable=True),
        sa.Column("correction_event_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["case_id"], ["case_instance.id"]),
        sa.ForeignKeyConstraint(["actor_user_id"], ["app_user.id"]),
        sa.ForeignKeyConstraint(["corrected_by"], ["app_user.id"]),
        sa.ForeignKeyConstraint(["process_version_id"], ["process_version.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_case_act_case", "case_act", ["case_id", "id"])
    with op.batch_alter_table("case_document") as batch:
        batch.add_column(sa.Column("cancelled_at", webapp.store.models.UTCDateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("cancelled_by", sa.Integer(), sa.ForeignKey("app_user.id",
                                   name="fk_case_document_cancelled_by"), nullable=True))
        batch.add_column(sa.Column("cancel_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("case_document") as batch:
        batch.drop_constraint("fk_case_document_cancelled_by", type_="foreignkey")
        batch.drop_column("cancel_reason")
        batch.drop_column("cancelled_by")
        batch.drop_column("cancelled_at")
    op.drop_index("ix_case_act_case", table_name="case_act")
    op.drop_table("case_act")
