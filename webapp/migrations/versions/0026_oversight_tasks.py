"""oversight: the open tasks' index carries the case, so a page's stage counts come from the index alone

``ix_case_task_oversight`` (0025_oversight: panchayat, state, element, deadline) is made again as
(panchayat_id, state, element_id, case_id, deadline_on): the one query of the open tasks by stage and
of the cases with an open task (webapp.services.reports.oversight) reads only these columns, so
PostgreSQL answers it with an index-only scan instead of visiting each task row for its case; the
query of the tasks past their legal deadline still finds them in it by Panchayat and state.

Revision ID: 0026_oversight_tasks
Revises: 0025_oversight
"""
from alembic import op

revision = "0026_oversight_tasks"
down_revision = "0025_oversight"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_case_task_oversight", "case_task")
    op.create_index("ix_case_task_oversight", "case_task",
                    ["panchayat_id", "state", "element_id", "case_id", "deadline_on"])


def downgrade() -> None:
    op.drop_index("ix_case_task_oversight", "case_task")
    op.create_index("ix_case_task_oversight", "case_task", ["panchayat_id", "state", "element_id", "deadline_on"])
