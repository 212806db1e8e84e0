"""version files, redeploys and the process audit trail

Each version keeps its files exactly as deployed (for download), a redeploy stores the same content
again under a new number (so the content hash is no longer unique), and deploys, redeploys and
case moves go to a process-level audit trail. Existing versions get their files (forms as
canonical JSON, the only form the old rows kept) and one "deploy" audit row each.

Revision ID: 0010
Revises: 0009
"""
import hashlib
import json

import sqlalchemy as sa
from alembic import op

import webapp.store.models

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def _hash_unique_name(bind) -> str | None:
    for constraint in sa.inspect(bind).get_unique_constraints("process_version"):
        if sorted(constraint["column_names"]) == ["content_hash", "process_id"]:
            return constraint["name"]
    return None


def upgrade() -> None:
    bind = op.get_bind()
    name = _hash_unique_name(bind)
    # SQLite reflects the unnamed constraint without a name: name it through a convention to drop it.
    convention = {"uq": "uq_%(table_name)s_%(column_0_N_name)s"}
    with op.batch_alter_table("process_version", naming_convention=convention) as batch_op:
        batch_op.drop_constraint(name or "uq_process_version_process_id_content_hash", type_="unique")
        batch_op.add_column(sa.Column("redeploy_of", sa.Integer(), nullable=True))
        batch_op.create_index("ix_process_version_content_hash", ["process_id", "content_hash"], unique=False)

    files = op.create_table(
        "process_version_file",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("process_version_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=200), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["process_version_id"], ["process_version.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("process_version_id", "path"),
    )
    op.create_index("ix_process_version_file_process_version_id", "process_version_file", ["process_version_id"])
    audit = op.create_table(
        "process_audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", webapp.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("process_id", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=80), nullable=False),
        sa.Column("version_from", sa.Integer(), nullable=True),
        sa.Column("version_to", sa.Integer(), nullable=True),
        sa.Column("case_id", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("detail_json", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["case_instance.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_process_audit_at", "process_audit", ["at"])
    op.create_index("ix_process_audit_process_id", "process_audit", ["process_id"])
    op.create_index("ix_process_audit_case_id", "process_audit", ["case_id"])

    versions = sa.table("process_version", sa.column("id", sa.Integer), sa.column("process_id", sa.String),
                        sa.column("version", sa.Integer), sa.column("bpmn_xml", sa.Text),
                        sa.column("forms_json", sa.Text), sa.column("deployed_by", sa.String),
                        sa.column("deployed_at", webapp.store.models.UTCDateTime()), sa.column("note", sa.Text))
    for row in bind.execute(sa.select(versions).order_by(versions.c.id)).mappings().all():
        contents = {f"{row['process_id']}.bpmn": row["bpmn_xml"].encode("utf-8")}
        for form_name, form in sorted(json.loads(row["forms_json"]).items()):
            contents[f"forms/{form_name}"] = (json.dumps(form, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        op.bulk_insert(files, [{"process_version_id": row["id"], "path": path, "content": content,
                                "sha256": hashlib.sha256(content).hexdigest()} for path, content in contents.items()])
        op.bulk_insert(audit, [{"at": row["deployed_at"], "process_id": row["process_id"], "action": "deploy",
                                "actor": row["deployed_by"], "version_from": None, "version_to": row["version"],
                                "case_id": None, "note": row["note"], "detail_json": "{}"}])


def downgrade() -> None:
    op.drop_table("process_audit")
    op.drop_table("process_version_file")
    with op.batch_alter_table("process_version") as batch_op:
        batch_op.drop_index("ix_process_version_content_hash")
        batch_op.drop_column("redeploy_of")
        batch_op.create_unique_constraint("uq_process_version_process_id_content_hash", ["process_id", "content_hash"])
