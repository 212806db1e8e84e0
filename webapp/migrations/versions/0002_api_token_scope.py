"""API tokens scoped to a role and a Panchayat, revocable

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 07:50:00

Each token records the role, Panchayat and Samiti it was made for (its user's at the time); a
token whose user has since changed role or scope no longer works, and a revoked one never again.
Existing tokens take their user's current role and scope.
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('api_token') as batch:
        batch.add_column(sa.Column('role', sa.String(length=32), nullable=False, server_default=''))
        batch.add_column(sa.Column('panchayat_id', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('samiti_code', sa.String(length=32), nullable=True))
        batch.add_column(sa.Column('label', sa.String(length=200), nullable=False, server_default=''))
        batch.add_column(sa.Column('revoked_at', webapp.store.models.UTCDateTime(), nullable=True))
        batch.create_foreign_key('fk_api_token_panchayat', 'panchayat', ['panchayat_id'], ['id'])
    op.execute("UPDATE api_token SET role = (SELECT role FROM app_user WHERE app_user.id = api_token.user_id), "
               "panchayat_id = (SELECT panchayat_id FROM app_user WHERE app_user.id = api_token.user_id), "
               "samiti_code = (SELECT samiti_code FROM app_user WHERE app_user.id = api_token.user_id)")


def downgrade() -> None:
    with op.batch_alter_table('api_token') as batch:
        batch.drop_constraint('fk_api_token_panchayat', type_='foreignkey')
        for column in ('revoked_at', 'label', 'samiti_code', 'panchayat_id', 'role'):
            batch.drop_column(column)
