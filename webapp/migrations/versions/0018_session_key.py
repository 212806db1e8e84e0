"""session_key: the key every signed-in session of a user carries; a new key ends them all

``app_user.session_key`` is a random text put into each browser session at sign-in and compared
on every request (webapp.web.access.sessions); signing out, a new password, deactivation and a
change of role, Panchayat or Samiti give the user a new key (webapp.store.session_keys), so every
session made before it ends at once, in every server process. NULL until the user first signs in.

The lockout of 0005 goes: ``failed_logins`` and ``locked_until`` let anyone lock an officer out
with five wrong passwords (and told known names from unknown ones); failed sign-ins are limited
per (address, name), address and name instead (webapp.web.access.signin_limits), outside the database.

Revision ID: 0018_session_key
Revises: 0017_case_number_per_year
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0018_session_key"
down_revision = "0017_case_number_per_year"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("app_user") as batch:
        batch.add_column(sa.Column("session_key", sa.String(64), nullable=True))
        batch.drop_column("locked_until")
        batch.drop_column("failed_logins")


def downgrade() -> None:
    with op.batch_alter_table("app_user") as batch:
        batch.add_column(sa.Column("failed_logins", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("locked_until", webapp.store.models.UTCDateTime(), nullable=True))
        batch.drop_column("session_key")
