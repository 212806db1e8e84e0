"""incidents: a failed step holds its case

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 08:30:00
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('incident',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=False),
    sa.Column('element_id', sa.String(length=100), nullable=True),
    sa.Column('element_name', sa.String(length=200), nullable=True),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('data_json', sa.Text(), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('raised_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('actor_user_id', sa.Integer(), nullable=True),
    sa.Column('resolved_at', webapp.store.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('resolved_by_id', sa.Integer(), nullable=True),
    sa.Column('resolution_note', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['actor_user_id'], ['app_user.id'], ),
    sa.ForeignKeyConstraint(['case_id'], ['case_instance.id'], ),
    sa.ForeignKeyConstraint(['resolved_by_id'], ['app_user.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_incident_case_id'), 'incident', ['case_id'], unique=False)
    op.create_index(op.f('ix_incident_status'), 'incident', ['status'], unique=False)
    op.add_column('case_instance', sa.Column('held_incident_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column('case_instance', 'held_incident_id')
    op.drop_index(op.f('ix_incident_status'), table_name='incident')
    op.drop_index(op.f('ix_incident_case_id'), table_name='incident')
    op.drop_table('incident')
