"""ledger reversals, a refusal of edits to ledger rows, the case's shortfall, and tariffs

- ``ledger_entry.reversal_of`` (the entry a correction reverses, at most once) and ``reason``;
- a trigger (PostgreSQL and SQLite) refusing UPDATE and DELETE on ``ledger_entry``: entries are
  never edited or deleted, a correction is a reversing entry;
- ``case_instance.shortfall``: F + C not covered by the money of the case (RULE130.md (e));
- ``tariff_rate``: fine and feeding per species with an effective date, installation-wide or per
  Panchayat, seeded with RULE130.md's example defaults in force from 2000-01-01.

Revision ID: 0011_ledger
Revises: 0012_documents
"""
from datetime import UTC, date, datetime
from decimal import Decimal

import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0011_ledger"
down_revision = "0012_documents"
branch_labels = None
depends_on = None

MESSAGE = "ledger entries are never edited or deleted; post a reversing entry"
SEED_FROM = date(2000, 1, 1)
# RULE130.md "Money": examples only, not the law (copied here so the migration never changes)
DEFAULTS = {
    "cow": ("500.00", "60.00"), "bullock": ("450.00", "75.25"), "buffalo": ("400.00", "80.00"),
    "camel": ("600.00", "100.00"), "horse": ("700.00", "120.00"), "goat": ("100.00", "20.00"),
    "sheep": ("80.00", "15.00"),
}


def _create_guard(bind) -> None:
    if bind.dialect.name == "postgresql":
        op.execute(f"""
            CREATE FUNCTION ledger_entry_immutable() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION '{MESSAGE}';
            END;
            $$ LANGUAGE plpgsql""")
        op.execute("CREATE TRIGGER ledger_entry_no_change BEFORE UPDATE OR DELETE ON ledger_entry "
                   "FOR EACH ROW EXECUTE FUNCTION ledger_entry_immutable()")
    elif bind.dialect.name == "sqlite":
        for event in ("UPDATE", "DELETE"):
            op.execute(f"CREATE TRIGGER ledger_entry_no_{event.lower()} BEFORE {event} ON ledger_entry "
                       f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END")


def _drop_guard(bind) -> None:
    if bind.dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS ledger_entry_no_change ON ledger_entry")
        op.execute("DROP FUNCTION IF EXISTS ledger_entry_immutable()")
    elif bind.dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS ledger_entry_no_update")
        op.execute("DROP TRIGGER IF EXISTS ledger_entry_no_delete")


def upgrade() -> None:
    bind = op.get_bind()
    with op.batch_alter_table("ledger_entry") as batch_op:
        batch_op.add_column(sa.Column("reversal_of", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=False, server_default=""))
        batch_op.create_foreign_key("fk_ledger_entry_reversal_of", "ledger_entry", ["reversal_of"], ["id"])
        batch_op.create_unique_constraint("uq_ledger_entry_reversal_of", ["reversal_of"])
    # after the batch (which may re-create the table on SQLite, dropping its triggers)
    _create_guard(bind)

    with op.batch_alter_table("case_instance") as batch_op:
        batch_op.add_column(sa.Column("shortfall", sa.Numeric(14, 2), nullable=False, server_default="0"))

    rates = op.create_table(
        "tariff_rate",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("panchayat_id", sa.Integer(), nullable=True),
        sa.Column("species", sa.String(length=32), nullable=False),
        sa.Column("fine", sa.Numeric(14, 2), nullable=False),
        sa.Column("feeding_per_day", sa.Numeric(14, 2), nullable=False),
        sa.Column("effective_from", sa.Date(), nullable=False),
        sa.Column("created_at", webapp.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("note", sa.Text(), nullable=False, server_default=""),
        sa.ForeignKeyConstraint(["panchayat_id"], ["panchayat.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_tariff_rate_lookup", "tariff_rate", ["panchayat_id", "species", "effective_from"])
    now = datetime.now(UTC)
    op.bulk_insert(rates, [{"panchayat_id": None, "species": species, "fine": Decimal(fine),
                            "feeding_per_day": Decimal(feeding), "effective_from": SEED_FROM, "created_at": now,
                            "created_by": "migration 0011_ledger",
                            "note": "RULE130.md example defaults (not the law)"}
                           for species, (fine, feeding) in DEFAULTS.items()])


def downgrade() -> None:
    bind = op.get_bind()
    op.drop_index("ix_tariff_rate_lookup", table_name="tariff_rate")
    op.drop_table("tariff_rate")
    with op.batch_alter_table("case_instance") as batch_op:
        batch_op.drop_column("shortfall")
    _drop_guard(bind)
    with op.batch_alter_table("ledger_entry") as batch_op:
        batch_op.drop_constraint("uq_ledger_entry_reversal_of", type_="unique")
        batch_op.drop_constraint("fk_ledger_entry_reversal_of", type_="foreignkey")
        batch_op.drop_column("reason")
        batch_op.drop_column("reversal_of")
