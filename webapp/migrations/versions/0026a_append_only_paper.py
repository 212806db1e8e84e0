"""the paper cases' records refused edits by the database: a document's ``from_paper``, the paper receipts

``case_document.from_paper`` (added by 0023_papercases, after 0022_append_only made the document's
guard) joins the columns an UPDATE may never change: a document entered from the paper file cannot
be passed off as one the product issued, nor the other way round. ``paper_receipt`` refuses every
UPDATE and DELETE: a paper receipt's number and amount stay as entered, against its ledger entry
(which 0011_ledger's trigger keeps). The other guarded tables got no column after 0022
(webapp.store.append_only.AT_0026).

Revision ID: 0026a_append_only_paper
Revises: 0026_oversight_tasks
"""
from alembic import op

from webapp.store.append_only import AT_0022, AT_0026, CHANGED_0026, create, drop

revision = "0026a_append_only_paper"
down_revision = "0026_oversight_tasks"
branch_labels = None
depends_on = None

assert all(guard in AT_0022 for guard in CHANGED_0026)


def upgrade() -> None:
    bind = op.get_bind()
    drop(bind, CHANGED_0026)
    create(bind, AT_0026)


def downgrade() -> None:
    bind = op.get_bind()
    drop(bind, AT_0026)
    create(bind, CHANGED_0026)
