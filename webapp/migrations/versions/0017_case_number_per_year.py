"""case_number_sequence: each Panchayat numbers its cases from 0001 in every year of impoundment

Case numbers are ``CODE/YEAR/NNNN`` with the local year of the impoundment. Until now NNNN came from
one counter per Panchayat (``panchayat.case_sequence``) that ran on across years; a register is
numbered by year, so the first case impounded in 2027 is ``CODE/2027/0001``. The new table keeps the
last number given per (Panchayat, year). Numbers already given stay as they are: for every year in
which a Panchayat already has cases, the counter starts after the highest number the old counter
gave, so no number is given twice; a year with no case yet starts at 1.

Revision ID: 0017_case_number_per_year
Revises: 0016_timer_firing_lag
"""
import sqlalchemy as sa
from alembic import op

revision = "0017_case_number_per_year"
down_revision = "0016_timer_firing_lag"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "case_number_sequence",
        sa.Column("panchayat_id", sa.Integer(), sa.ForeignKey("panchayat.id"), primary_key=True),
        sa.Column("year", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("last", sa.Integer(), nullable=False),
    )
    connection = op.get_bind()
    counters = dict(connection.execute(sa.text("SELECT id, case_sequence FROM panchayat")).all())
    years: set[tuple[int, int]] = set()
    for panchayat_id, number in connection.execute(sa.text("SELECT panchayat_id, case_number FROM case_instance")):
        parts = number.split("/")
        if len(parts) >= 3 and parts[-2].isdigit():
            years.add((panchayat_id, int(parts[-2])))
    if years:
        connection.execute(sa.text("INSERT INTO case_number_sequence (panchayat_id, year, last) VALUES (:p, :y, :n)"),
                           [{"p": p, "y": y, "n": counters.get(p) or 0} for p, y in sorted(years)])
    with op.batch_alter_table("panchayat") as batch:
        batch.drop_column("case_sequence")


def downgrade() -> None:
    with op.batch_alter_table("panchayat") as batch:
        batch.add_column(sa.Column("case_sequence", sa.Integer(), nullable=False, server_default="0"))
    op.execute("UPDATE panchayat SET case_sequence = COALESCE((SELECT max(last) FROM case_number_sequence s "
               "WHERE s.panchayat_id = panchayat.id), 0)")
    op.drop_table("case_number_sequence")
