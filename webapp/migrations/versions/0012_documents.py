"""case_document: the documents of a case exactly as issued (HTML and its SHA-256, per language)

Revision ID: 0012_documents
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0012_documents"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "case_document",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("number", sa.String(length=60), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("clause", sa.String(length=100), nullable=False),
        sa.Column("issued_at", webapp.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("issued_by", sa.Integer(), nullable=True),
        sa.Column("html", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["case_instance.id"]),
        sa.ForeignKeyConstraint(["issued_by"], ["app_user.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("case_id", "key", "language"),
    )
    op.create_index("ix_case_document_case_id", "case_document", ["case_id"])


def downgrade() -> None:
    op.drop_index("ix_case_document_case_id", table_name="case_document")
    op.drop_table("case_document")
