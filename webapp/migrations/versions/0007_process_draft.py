"""process drafts: an administrator's unfinished edit of a process (the modeler page)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 07:50:00
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('process_draft',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('process_id', sa.String(length=100), nullable=False),
    sa.Column('base_version_id', sa.Integer(), nullable=True),
    sa.Column('bpmn_xml', sa.Text(), nullable=False),
    sa.Column('forms_json', sa.Text(), nullable=False),
    sa.Column('saved_by', sa.String(length=80), nullable=False),
    sa.Column('saved_at', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['base_version_id'], ['process_version.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('process_id')
    )


def downgrade() -> None:
    op.drop_table('process_draft')
