"""oversight for a Samiti and a District: the district officer's District, the cattle each case
holds, and the indexes the oversight pages read

``app_user.district``: a district officer's District (the ``panchayat.district`` of the Panchayats
they oversee), None for every other user. ``case_instance.cattle_held``: the head of cattle in the
pound now (webapp.values.pound.cattle_in_pound), filled here from each case file and kept in step on
every save. Indexes: ``panchayat.district``; running cases and cattle per Panchayat; open tasks per
Panchayat by stage and legal deadline; ledger entries per Panchayat by instant with accounts and
amount (balances and a month's receipts from the index alone).

Revision ID: 0022_oversight
Revises: 0021_training_clock
"""
import sqlalchemy as sa
from alembic import op

from webapp.values import casefile
from webapp.values.pound import cattle_in_pound

revision = "0022_oversight"
down_revision = "0021_training_clock"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("app_user") as batch:
        batch.add_column(sa.Column("district", sa.String(100), nullable=True))
    with op.batch_alter_table("case_instance") as batch:
        batch.add_column(sa.Column("cattle_held", sa.Integer(), nullable=False, server_default="0"))
    connection = op.get_bind()
    rows = connection.execute(sa.text("SELECT id, file_json FROM case_instance WHERE status = 'running'")).all()
    for case_id, file_json in rows:
        held = cattle_in_pound(casefile.load(file_json))
        if held:
            connection.execute(sa.text("UPDATE case_instance SET cattle_held = :held WHERE id = :id"),
                               {"held": held, "id": case_id})
    op.create_index("ix_panchayat_district", "panchayat", ["district"])
    op.create_index("ix_case_oversight", "case_instance", ["panchayat_id", "status", "cattle_held"])
    op.create_index("ix_case_task_oversight", "case_task", ["panchayat_id", "state", "element_id", "deadline_on"])
    op.create_index("ix_ledger_oversight", "ledger_entry", ["panchayat_id", "at", "from_account", "to_account", "amount"])


def downgrade() -> None:
    op.drop_index("ix_ledger_oversight", "ledger_entry")
    op.drop_index("ix_case_task_oversight", "case_task")
    op.drop_index("ix_case_oversight", "case_instance")
    op.drop_index("ix_panchayat_district", "panchayat")
    with op.batch_alter_table("case_instance") as batch:
        batch.drop_column("cattle_held")
    with op.batch_alter_table("app_user") as batch:
        batch.drop_column("district")
