"""a training Panchayat's own clock, and training Panchayats put away by a reset

``panchayat.clock_offset_seconds``: how far a training Panchayat's clock runs ahead of the real
clock, in whole seconds (0 for every live Panchayat, and never changed for one); moved only forward,
from the browser or ``rule130 training --move`` (webapp.services.panchayats.training). ``panchayat.archived_at``:
the instant (UTC) a training Panchayat was put away by a reset: its cases stay, out of every list,
and no timer of theirs fires again; its officers moved to a fresh training Panchayat of the same code.

Revision ID: 0021_training_clock
Revises: 0020_training_simulated
"""
import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0021_training_clock"
down_revision = "0020_training_simulated"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("panchayat") as batch:
        batch.add_column(sa.Column("clock_offset_seconds", sa.BigInteger(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("archived_at", webapp.store.models.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("panchayat") as batch:
        batch.drop_column("archived_at")
        batch.drop_column("clock_offset_seconds")
