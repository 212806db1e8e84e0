"""officers administered in the browser: a District's administrators, and a first password

``app_user.district``: the district an administrator of a District manages (the ``panchayat.district``
of its Panchayats); NULL for every other user. ``app_user.must_change_password``: the user signs in
with a first password an administrator gave them (a new officer, a password reset) and must choose
their own before anything else (webapp.web.access.account). ``api_token.district``: the district the
token was made for, as its role, Panchayat and Samiti (webapp.services.people.users.user_for_token).

Revision ID: 0024_officers
Revises: 0023_papercases
"""
import sqlalchemy as sa
from alembic import op

revision = "0024_officers"
down_revision = "0023_papercases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("app_user") as batch:
        batch.add_column(sa.Column("district", sa.String(100), nullable=True))
        batch.add_column(sa.Column("must_change_password", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("api_token") as batch:
        batch.add_column(sa.Column("district", sa.String(100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_token") as batch:
        batch.drop_column("district")
    with op.batch_alter_table("app_user") as batch:
        batch.drop_column("must_change_password")
        batch.drop_column("district")
