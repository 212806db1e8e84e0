"""case_instance.submission_key, submission_hash: the key of the form or API call that started the case

A new-case form carries a key made when the form was shown (an API call may send one as the
``Idempotency-Key`` header); the case keeps it, unique within its Panchayat, so the same form sent
twice (a double click, the back button, a retry after a lost answer) records one case, not two.
``submission_hash`` (SHA-256 of what was sent) tells a repeat from the same key sent with other
details, which is refused. Existing cases get NULL (several NULLs do not collide).

Revision ID: 0015_case_submission_key
Revises: 0014_notification_params
"""
import sqlalchemy as sa
from alembic import op

revision = "0015_case_submission_key"
down_revision = "0014_notification_params"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("case_instance") as batch:
        batch.add_column(sa.Column("submission_key", sa.String(80), nullable=True))
        batch.add_column(sa.Column("submission_hash", sa.String(64), nullable=True))
        batch.create_unique_constraint("uq_case_submission_key", ["panchayat_id", "submission_key"])


def downgrade() -> None:
    with op.batch_alter_table("case_instance") as batch:
        batch.drop_constraint("uq_case_submission_key", type_="unique")
        batch.drop_column("submission_hash")
        batch.drop_column("submission_key")
