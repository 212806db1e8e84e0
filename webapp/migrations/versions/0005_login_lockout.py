"""sign-in lockout: consecutive failed sign-ins and the lock's end per user

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 07:55:00
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('app_user') as batch:
        batch.add_column(sa.Column('failed_logins', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('locked_until', webapp.store.models.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('app_user') as batch:
        batch.drop_column('locked_until')
        batch.drop_column('failed_logins')
