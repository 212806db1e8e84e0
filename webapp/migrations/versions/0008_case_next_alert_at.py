"""case_instance.next_alert_at: the next "deadline near" notice of a case

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 08:40:00
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('case_instance', schema=None) as batch_op:
        batch_op.add_column(sa.Column('next_alert_at', webapp.store.models.UTCDateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f('ix_case_instance_next_alert_at'), ['next_alert_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('case_instance', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_case_instance_next_alert_at'))
        batch_op.drop_column('next_alert_at')
