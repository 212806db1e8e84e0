"""notification.params_json: the parameters a notification was written with

With the template name (already stored) they let the inbox show each notification in the reader's
current language, not the language the recipient had when it was written; ``message`` keeps the
text as written (what the e-mail said). Existing rows get NULL and are shown as written.

Revision ID: 0014_notification_params
Revises: 0013_escalation
"""
import sqlalchemy as sa
from alembic import op

revision = "0014_notification_params"
down_revision = "0013_escalation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notification") as batch:
        batch.add_column(sa.Column("params_json", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("notification") as batch:
        batch.drop_column("params_json")
