"""notification channels: preferences, the delivery outbox, deadline reminders sent

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 07:50:00
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('notification_preference',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('email_enabled', sa.Boolean(), nullable=False),
    sa.Column('email_address', sa.String(length=254), nullable=False),
    sa.Column('webhook_enabled', sa.Boolean(), nullable=False),
    sa.Column('webhook_url', sa.String(length=500), nullable=False),
    sa.Column('updated_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['app_user.id'], ),
    sa.PrimaryKeyConstraint('user_id')
    )
    op.create_table('delivery',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('notification_id', sa.Integer(), nullable=False),
    sa.Column('channel', sa.String(length=16), nullable=False),
    sa.Column('target', sa.String(length=500), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=False),
    sa.Column('created_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('sent_at', webapp.store.models.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['notification_id'], ['notification.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('notification_id', 'channel')
    )
    with op.batch_alter_table('delivery', schema=None) as batch_op:
        batch_op.create_index('ix_delivery_status_next', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_delivery_notification_id'), ['notification_id'], unique=False)
    op.create_table('deadline_reminder',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=False),
    sa.Column('element_id', sa.String(length=100), nullable=False),
    sa.Column('due_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('sent_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['case_instance.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('case_id', 'element_id', 'due_at')
    )
    with op.batch_alter_table('deadline_reminder', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_deadline_reminder_case_id'), ['case_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('deadline_reminder', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_deadline_reminder_case_id'))
    op.drop_table('deadline_reminder')
    with op.batch_alter_table('delivery', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_delivery_notification_id'))
        batch_op.drop_index('ix_delivery_status_next')
    op.drop_table('delivery')
    op.drop_table('notification_preference')
