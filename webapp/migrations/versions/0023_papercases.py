"""running paper cases brought in at their stage (issue 31, item 2)

``panchayat.established_on``: the local day the Panchayat was constituted (None: not recorded); a
paper case's facts may not be dated before it. ``case_document.from_paper``: the document was
produced when a running paper case was brought in, for an act recorded on paper, and carries the
paper's own number (webapp.services.intake.paper_cases). ``paper_receipt``: each paper receipt of
money received in such a case, with its own number (unique in its Panchayat), against the ledger
entry the replay posted for it.

Columns are added with ADD COLUMN (no table is rebuilt on SQLite, so the triggers of the
append-only tables stay).

Revision ID: 0023_papercases
Revises: 0022_append_only
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0023_papercases"
down_revision = "0022_append_only"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("panchayat", sa.Column("established_on", sa.Date(), nullable=True))
    op.add_column("case_document", sa.Column("from_paper", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "paper_receipt",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("case_id", sa.Integer(), sa.ForeignKey("case_instance.id"), nullable=False, index=True),
        sa.Column("panchayat_id", sa.Integer(), sa.ForeignKey("panchayat.id"), nullable=False),
        sa.Column("number", sa.String(60), nullable=False),
        sa.Column("number_key", sa.String(60), nullable=False),
        sa.Column("amount", sa.Numeric(14, 2), nullable=False),
        sa.Column("received_at", webapp.store.models.UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("ledger_entry_id", sa.Integer(), sa.ForeignKey("ledger_entry.id"), nullable=False, unique=True),
        sa.Column("entered_by", sa.Integer(), sa.ForeignKey("app_user.id"), nullable=False),
        sa.Column("entered_at", webapp.store.models.UTCDateTime(), nullable=False),
        sa.UniqueConstraint("panchayat_id", "number_key"),
    )


def downgrade() -> None:
    op.drop_table("paper_receipt")
    with op.batch_alter_table("case_document") as batch:
        batch.drop_column("from_paper")
    with op.batch_alter_table("panchayat") as batch:
        batch.drop_column("established_on")
