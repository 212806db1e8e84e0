"""case_task: the task table behind "My tasks", filled from the running cases' engine state

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 08:00:00
"""
from types import SimpleNamespace

import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('case_task',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=False),
    sa.Column('case_number', sa.String(length=40), nullable=False),
    sa.Column('panchayat_id', sa.Integer(), nullable=False),
    sa.Column('receiver_id', sa.Integer(), nullable=True),
    sa.Column('process_version_id', sa.Integer(), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('element_id', sa.String(length=100), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('lane', sa.String(length=32), nullable=False),
    sa.Column('subject', sa.String(length=200), nullable=True),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('ready_since', webapp.store.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('due_on', sa.Date(), nullable=True),
    sa.Column('deadline_label', sa.String(length=40), nullable=True),
    sa.Column('deadline_on', sa.Date(), nullable=True),
    sa.Column('act_by', sa.Date(), nullable=True),
    sa.Column('claimed_by', sa.Integer(), nullable=True),
    sa.Column('claimed_at', webapp.store.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('assigned_to', sa.Integer(), nullable=True),
    sa.Column('assigned_by', sa.Integer(), nullable=True),
    sa.Column('assigned_at', webapp.store.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('ended_at', webapp.store.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('completed_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['assigned_by'], ['app_user.id'], ),
    sa.ForeignKeyConstraint(['assigned_to'], ['app_user.id'], ),
    sa.ForeignKeyConstraint(['case_id'], ['case_instance.id'], ),
    sa.ForeignKeyConstraint(['claimed_by'], ['app_user.id'], ),
    sa.ForeignKeyConstraint(['completed_by'], ['app_user.id'], ),
    sa.ForeignKeyConstraint(['panchayat_id'], ['panchayat.id'], ),
    sa.ForeignKeyConstraint(['receiver_id'], ['app_user.id'], ),
    sa.ForeignKeyConstraint(['process_version_id'], ['process_version.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('case_id', 'task_id')
    )
    with op.batch_alter_table('case_task', schema=None) as batch_op:
        batch_op.create_index('ix_case_task_case_state', ['case_id', 'state'], unique=False)
        batch_op.create_index('ix_case_task_claimed', ['claimed_by', 'state'], unique=False)
        batch_op.create_index('ix_case_task_receiver', ['receiver_id', 'state', 'act_by'], unique=False)
        batch_op.create_index('ix_case_task_scope', ['panchayat_id', 'state', 'lane', 'act_by'], unique=False)
    _fill_from_running_cases()


def _fill_from_running_cases() -> None:
    """One row per READY user task of every running case, read from its stored engine state
    (the columns read here exist at this revision)."""
    from webapp.engine.execution import runtime
    from webapp.services.diagrams import repository
    from webapp.services.running import task_table
    from webapp.store.models import CaseTask, ProcessVersion
    from webapp.values import casefile, clock

    bind = op.get_bind()
    versions: dict[int, object] = {}
    rows: list[dict] = []
    running = bind.execute(sa.text("SELECT id, case_number, panchayat_id, process_version_id, state_json, file_json "
                                   "FROM case_instance WHERE status = 'running'")).all()
    now = clock.now()
    for case_id, number, panchayat_id, version_id, state_json, file_json in running:
        if version_id not in versions:
            v = bind.execute(sa.text("SELECT id, process_id, version, content_hash, bpmn_xml, forms_json, spec_json "
                                     "FROM process_version WHERE id = :id"), {"id": version_id}).one()
            versions[version_id] = repository.load(ProcessVersion(
                id=v[0], process_id=v[1], version=v[2], content_hash=v[3], bpmn_xml=v[4], forms_json=v[5],
                spec_json=v[6])).parsed
        workflow = runtime.load_state(state_json, versions[version_id], lambda *_a: None)
        cf = casefile.load(file_json)
        case = SimpleNamespace(id=case_id, case_number=number, panchayat_id=panchayat_id,
                               process_version_id=version_id)
        for task in runtime.ready_user_tasks(workflow):
            row = CaseTask(case_id=case_id, task_id=str(task.id), state="ready", ready_since=now)
            task_table._fill(row, case, cf, task)
            rows.append({c.name: getattr(row, c.name) for c in CaseTask.__table__.columns if c.name != "id"})
    if rows:
        # only the columns of this revision (the model may have more, added by later migrations)
        existing = {c["name"] for c in sa.inspect(bind).get_columns("case_task")}
        columns = [c for c in CaseTask.__table__.columns if c.name in existing and c.name != "id"]
        table = sa.table("case_task", *[sa.column(c.name, c.type) for c in columns])
        op.bulk_insert(table, [{c.name: row[c.name] for c in columns} for row in rows])


def downgrade() -> None:
    with op.batch_alter_table('case_task', schema=None) as batch_op:
        batch_op.drop_index('ix_case_task_scope')
        batch_op.drop_index('ix_case_task_receiver')
        batch_op.drop_index('ix_case_task_claimed')
        batch_op.drop_index('ix_case_task_case_state')
    op.drop_table('case_task')
