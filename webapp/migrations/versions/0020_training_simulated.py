"""training Panchayats and simulator users: the simulator never writes into a live Panchayat

``panchayat.training`` marks a training Panchayat, the only kind the simulator (``rule130
simulate --database``) writes into; every Panchayat that exists before this migration is live.
``app_user.simulated`` marks a user the simulator made: such a user has no usable password
(``webapp.services.people.users.UNUSABLE_PASSWORD``), cannot sign in or use an API token, is never
offered as a task's holder and hears only of training Panchayats' cases.

Users the simulator made before this migration had one password written in the code
("simulator-pass", werkzeug's ``pbkdf2:sha256:1000``) and could sign in with it: every user whose
name starts with ``sim-`` and whose hash is of that password is marked ``simulated``, its hash
replaced by the unusable marker and its session key renewed (its signed-in sessions end). Each
is recorded in the audit trail (``user.password_hash_changed``), chained as the application does
(webapp.store.audit).

Revision ID: 0020_training_simulated
Revises: 0019_corrections
"""
import secrets
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from werkzeug.security import check_password_hash

import webapp.store.models

revision = "0020_training_simulated"
down_revision = "0019_corrections"
branch_labels = None
depends_on = None

OLD_SIMULATOR_PASSWORD = "simulator-pass"
UNUSABLE = "!simulator"  # webapp.services.people.users.UNUSABLE_PASSWORD, fixed here as of this revision

_users = sa.table("app_user", sa.column("id", sa.Integer), sa.column("username", sa.String),
                  sa.column("password_hash", sa.String), sa.column("simulated", sa.Boolean),
                  sa.column("session_key", sa.String))
_audit = sa.table("audit_entry", sa.column("seq", sa.Integer),
                  sa.column("at", webapp.store.models.UTCDateTime()), sa.column("kind", sa.String),
                  sa.column("actor", sa.String), sa.column("case_id", sa.Integer),
                  sa.column("detail_json", sa.Text), sa.column("prev_hash", sa.String),
                  sa.column("hash", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("panchayat") as batch:
        batch.add_column(sa.Column("training", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("app_user") as batch:
        batch.add_column(sa.Column("simulated", sa.Boolean(), nullable=False, server_default=sa.false()))
    _disarm_old_simulator_users()


def _disarm_old_simulator_users() -> None:
    from webapp.store.audit import GENESIS, canonical_json, entry_hash

    connection = op.get_bind()
    found = connection.execute(sa.select(_users.c.id, _users.c.username, _users.c.password_hash)
                               .where(_users.c.username.like("sim-%")).order_by(_users.c.id)).all()
    old = [(user_id, name) for user_id, name, hashed in found
           if hashed.startswith("pbkdf2:") and check_password_hash(hashed, OLD_SIMULATOR_PASSWORD)]
    if not old:
        return
    head = connection.execute(sa.select(_audit.c.seq, _audit.c.hash).order_by(_audit.c.seq.desc()).limit(1)).first()
    seq, prev = (head.seq, head.hash) if head else (0, GENESIS)
    at = datetime.now(UTC)
    for user_id, name in old:
        connection.execute(_users.update().where(_users.c.id == user_id)
                           .values(simulated=True, password_hash=UNUSABLE, session_key=secrets.token_urlsafe(32)))
        seq += 1
        detail = canonical_json({"username": name, "method": UNUSABLE,
                                 "reason": "migration 0020: a simulator user's fixed password removed"})
        digest = entry_hash(seq, at, "user.password_hash_changed", name, None, detail, prev)
        connection.execute(_audit.insert().values(seq=seq, at=at, kind="user.password_hash_changed", actor=name,
                                                  case_id=None, detail_json=detail, prev_hash=prev, hash=digest))
        prev = digest


def downgrade() -> None:
    with op.batch_alter_table("app_user") as batch:
        batch.drop_column("simulated")
    with op.batch_alter_table("panchayat") as batch:
        batch.drop_column("training")
