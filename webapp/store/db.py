"""Engines and sessions. The database comes from ``DATABASE_URL`` (default: SQLite in the instance folder)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import CursorResult, Engine, Executable, create_engine, event, select
from sqlalchemy.orm import Session, sessionmaker

from webapp.store.models import Case

if TYPE_CHECKING:  # imported where used: alembic loads slowly and most processes never migrate
    from alembic.config import Config

ROOT = Path(__file__).resolve().parents[2]


def default_url(instance_path: str | os.PathLike[str] | None = None) -> str:
    """``DATABASE_URL`` if set, else ``sqlite:///<instance>/rule130.db``."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    folder = Path(instance_path) if instance_path else ROOT / "instance"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'rule130.db'}"


def make_engine(url: str) -> Engine:
    """An engine; SQLite gets foreign keys, WAL and a busy timeout so the worker and web can share it."""
    if url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url[len("postgres://"):]
    elif url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:  # pragma: no cover - trivial
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            if ":memory:" not in url:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions on ``engine``; a save that arms a nearer timer wakes the timer workers (``wakeup``);
    every flush appends its state changes to the audit trail (``audit``); ledger entries and tariff
    rates are never changed or deleted (``immutable``); a user whose password, role, scope or active
    flag changes gets a new session key, which ends their signed-in sessions (``session_keys``)."""
    from webapp.store import (
        audit,  # noqa: F401  (installs the audit trail's before_flush hook)
        immutable,  # noqa: F401  (installs the guard of rows that are only added)
        session_keys,  # noqa: F401  (a new password, role or scope ends the user's sessions)
        wakeup,
    )
    return wakeup.watch(sessionmaker(engine, expire_on_commit=False))


def upgrade(url: str, revision: str = "head") -> None:
    """Create or upgrade the schema with Alembic (the only way tables are made) to ``revision``
    (default the latest; an earlier one for tests of a migration)."""
    from alembic import command

    command.upgrade(_alembic_config(url), revision)


def _alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(ROOT / "webapp" / "migrations"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest schema revision this code knows (its latest Alembic migration, e.g. ``0020_…``)."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config("sqlite://")).get_current_head()
    if head is None:
        raise RuntimeError("the migrations folder holds no revision")
    return head


def schema_revision(engine: Engine) -> tuple[str | None, bool]:
    """What the database of ``engine`` holds: (its Alembic revision or None, whether it has any
    table at all). Reads only; raises SQLAlchemy's errors when the database cannot be read."""
    from alembic.migration import MigrationContext
    from sqlalchemy import inspect

    with engine.connect() as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
        return revision, bool(inspect(connection).get_table_names())


def lock_case(session: Session, case_id: int) -> None:
    """Take the row lock of case ``case_id`` for the rest of the transaction (PostgreSQL
    ``SELECT ... FOR UPDATE``; SQLite has one writer at a time and needs none).

    A unit of work that will change a case takes it before anything else, so every writer of one
    case locks its row first and in the same order: two acts, or an act and a timer worker (which
    claims its case the same way), queue on it instead of each locking a row the other needs next
    (a deadlock, which PostgreSQL breaks by aborting one of them). An unknown id locks nothing.
    """
    if session.get_bind().dialect.name != "postgresql":
        return
    session.execute(select(Case.id).where(Case.id == case_id).with_for_update())


def rows_matched(session: Session, statement: Executable) -> int:
    """Run ``statement`` (an UPDATE or DELETE) in ``session``'s transaction and return the number of
    rows it matched, as the driver counts them (``CursorResult.rowcount``): 0 when a guarded update
    lost to another transaction."""
    result = session.execute(statement)
    return cast(CursorResult[Any], result).rowcount  # an UPDATE or DELETE returns a cursor result
