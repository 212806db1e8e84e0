"""timer_firing.lag_seconds: the timer worker's lag, apart from the timer's lateness

``lateness_seconds`` is the firing instant minus the due instant: the legal record of how late a
period's end was acted on. A timer that was already due when the engine armed it (a case recorded
days after the impoundment) is late by days without any worker being slow; ``lag_seconds`` is the
firing instant minus the later of the due instant and the instant the timer was armed, which the
timer lag page and the ``rule130_timer_lag_seconds`` histogram report. Existing firings keep NULL
(their lateness stands in).

Revision ID: 0016_timer_firing_lag
Revises: 0015_case_submission_key
"""
import sqlalchemy as sa
from alembic import op

revision = "0016_timer_firing_lag"
down_revision = "0015_case_submission_key"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("timer_firing") as batch:
        batch.add_column(sa.Column("lag_seconds", sa.Double(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("timer_firing") as batch:
        batch.drop_column("lag_seconds")
