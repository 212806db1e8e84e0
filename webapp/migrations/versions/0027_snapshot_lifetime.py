"""snapshot lifetime: an act's snapshot is let go once the act can no longer be corrected or amended

``case_act.before`` (the case row as the act found it, webapp.services.running.acts) may now be
NULL: the housekeeping of the timer worker (webapp.services.jobs.snapshots) sets it so from the
first instant after the act's last day for a corrigendum (its local day + 90, in the case's zone),
by when its correction window (day + 7, a decision's the same day) has long closed. The partial
index ``ix_case_act_snapshot`` holds the acts that still keep one, by instant: the housekeeping's
look-up reads only them (some 90 days of acts), never the table.

On SQLite the column's nullability is changed by copying the table (Alembic's batch mode), which
drops its triggers: the append-only guard of ``case_act`` (0022_append_only, unchanged) is made again.

Revision ID: 0027_snapshot_lifetime
Revises: 0026a_append_only_paper
"""
import sqlalchemy as sa
from alembic import op

from webapp.store.append_only import ACTS, create, drop

revision = "0027_snapshot_lifetime"
down_revision = "0026a_append_only_paper"
branch_labels = None
depends_on = None

KEPT = "before IS NOT NULL"


def upgrade() -> None:
    bind = op.get_bind()
    drop(bind, (ACTS,))
    with op.batch_alter_table("case_act") as batch:
        batch.alter_column("before", existing_type=sa.LargeBinary(), nullable=True)
    create(bind, (ACTS,))
    op.create_index("ix_case_act_snapshot", "case_act", ["at"], postgresql_where=sa.text(KEPT),
                    sqlite_where=sa.text(KEPT))


def downgrade() -> None:
    bind = op.get_bind()
    op.drop_index("ix_case_act_snapshot", table_name="case_act")
    drop(bind, (ACTS,))
    # a snapshot let go is not brought back: an empty one stands for it (its act was past every window)
    op.execute(sa.text("UPDATE case_act SET before = :empty WHERE before IS NULL").bindparams(
        sa.bindparam("empty", b"", type_=sa.LargeBinary())))
    with op.batch_alter_table("case_act") as batch:
        batch.alter_column("before", existing_type=sa.LargeBinary(), nullable=False)
    create(bind, (ACTS,))
