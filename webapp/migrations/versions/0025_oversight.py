"""oversight for a Samiti and a District: the district officer's District, the cattle each case
holds, and the indexes the oversight pages read

``app_user.district`` (0024_officers) is also a district officer's District (the
``panchayat.district`` of the Panchayats they oversee). ``case_instance.cattle_held``: the head of cattle in the
pound now (webapp.values.pound.cattle_in_pound), filled here from each case file and kept in step on
every save. Indexes: ``panchayat.district``; running cases and cattle per Panchayat; open tasks per
Panchayat by stage and legal deadline; ledger entries per Panchayat by instant with accounts and
amount (a month's receipts from the index alone). ``panchayat_balance``: each Panchayat's account
balances, filled here from its ledger and kept by a trigger on every new ledger entry (entries are
only ever added: migration 0011's guard), in the same transaction.

Revision ID: 0025_oversight
Revises: 0024_officers
"""
import sqlalchemy as sa
from alembic import op

from webapp.values import casefile
from webapp.values.pound import cattle_in_pound

revision = "0025_oversight"
down_revision = "0024_officers"
branch_labels = None
depends_on = None


ACCOUNTS = ("suspense", "pound_account", "panchayat_fund")
TOUCHES = "NEW.to_account IN ('suspense', 'pound_account', 'panchayat_fund') " \
          "OR NEW.from_account IN ('suspense', 'pound_account', 'panchayat_fund')"
CHANGES = ", ".join(f"{a} = {a} + (CASE WHEN NEW.to_account = '{a}' THEN NEW.amount ELSE 0 END) "
                    f"- (CASE WHEN NEW.from_account = '{a}' THEN NEW.amount ELSE 0 END)" for a in ACCOUNTS)


def _create_trigger(bind) -> None:
    if bind.dialect.name == "postgresql":
        op.execute(f"""
            CREATE FUNCTION panchayat_balance_follows() RETURNS trigger AS $$
            BEGIN
                IF {TOUCHES} THEN
                    INSERT INTO panchayat_balance (panchayat_id, suspense, pound_account, panchayat_fund)
                    VALUES (NEW.panchayat_id, 0, 0, 0) ON CONFLICT (panchayat_id) DO NOTHING;
                    UPDATE panchayat_balance SET {CHANGES} WHERE panchayat_id = NEW.panchayat_id;
                END IF;
                RETURN NEW;
            END;
            $$ LANGUAGE plpgsql""")
        op.execute("CREATE TRIGGER ledger_entry_balance AFTER INSERT ON ledger_entry "
                   "FOR EACH ROW EXECUTE FUNCTION panchayat_balance_follows()")
    elif bind.dialect.name == "sqlite":
        op.execute(f"CREATE TRIGGER ledger_entry_balance AFTER INSERT ON ledger_entry WHEN {TOUCHES} BEGIN "
                   "INSERT OR IGNORE INTO panchayat_balance (panchayat_id, suspense, pound_account, panchayat_fund) "
                   "VALUES (NEW.panchayat_id, 0, 0, 0); "
                   f"UPDATE panchayat_balance SET {CHANGES} WHERE panchayat_id = NEW.panchayat_id; END")


def upgrade() -> None:
    # app_user.district: added by 0024_officers (a District's administrator), read here for the district officer
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
    op.create_table("panchayat_balance",
                    sa.Column("panchayat_id", sa.Integer(), sa.ForeignKey("panchayat.id"), primary_key=True,
                              autoincrement=False),
                    *[sa.Column(a, sa.Numeric(14, 2), nullable=False, server_default="0") for a in ACCOUNTS])
    sums = ", ".join(f"SUM(CASE WHEN to_account = '{a}' THEN amount ELSE 0 END) "
                     f"- SUM(CASE WHEN from_account = '{a}' THEN amount ELSE 0 END)" for a in ACCOUNTS)
    op.execute(f"INSERT INTO panchayat_balance (panchayat_id, {', '.join(ACCOUNTS)}) "
               f"SELECT panchayat_id, {sums} FROM ledger_entry GROUP BY panchayat_id")
    _create_trigger(connection)
    op.create_index("ix_ledger_oversight", "ledger_entry", ["panchayat_id", "at", "from_account", "to_account", "amount"])


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS ledger_entry_balance ON ledger_entry")
        op.execute("DROP FUNCTION IF EXISTS panchayat_balance_follows()")
    else:
        op.execute("DROP TRIGGER IF EXISTS ledger_entry_balance")
    op.drop_table("panchayat_balance")
    op.drop_index("ix_ledger_oversight", "ledger_entry")
    op.drop_index("ix_case_task_oversight", "case_task")
    op.drop_index("ix_case_oversight", "case_instance")
    op.drop_index("ix_panchayat_district", "panchayat")
    with op.batch_alter_table("case_instance") as batch:
        batch.drop_column("cattle_held")
