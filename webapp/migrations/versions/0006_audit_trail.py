"""tamper-evident audit trail: hash-chained entries

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 08:10:00
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('audit_entry',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('at', webapp.store.models.UTCDateTime(), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('actor', sa.String(length=80), nullable=True),
    sa.Column('case_id', sa.Integer(), nullable=True),
    sa.Column('detail_json', sa.Text(), nullable=False),
    sa.Column('prev_hash', sa.String(length=64), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('seq')
    )
    op.create_index(op.f('ix_audit_entry_case_id'), 'audit_entry', ['case_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_audit_entry_case_id'), table_name='audit_entry')
    op.drop_table('audit_entry')
