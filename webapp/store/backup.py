"""Backup and restore of the whole database: ``rule130 backup FILE`` / ``rule130 restore FILE``.

SQLite: the online backup API of the ``sqlite3`` module (a consistent copy while the application
and the timer worker keep writing; the copy is itself a SQLite file). PostgreSQL: ``pg_dump
--format=custom`` and ``pg_restore`` (PostgreSQL's client programs, which must be on the PATH and
match the server's major version or be newer).

A restore goes into an EMPTY database only (a new SQLite file, or a PostgreSQL database without
tables), so nothing is ever overwritten; afterwards the schema is upgraded to this version's
migrations and the audit trail is verified.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from webapp.errors import Refused
from webapp.store import db


def _sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise Refused("an in-memory SQLite database cannot be backed up or restored")
    return Path(database)


def _libpq_url(url: str) -> str:
    """The URL for pg_dump/pg_restore: SQLAlchemy's driver suffix removed, options kept."""
    parsed = make_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


def _pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise Refused(f"{name} is not installed: install PostgreSQL's client programs "
                      "(Debian: apt-get install postgresql-client)")
    return path


def backup(url: str, target: str | Path) -> Path:
    """Copy the database at ``url`` into the file ``target`` (refused if it exists).

    Returns the file. Raises Refused: the file exists, its folder is missing or not writable, an
    unsupported database, or pg_dump failed (its message is given).
    """
    target = Path(target)
    if target.exists():
        raise Refused(f"{target} already exists; choose a new file name (a backup never overwrites)")
    if not target.parent.is_dir():
        raise Refused(f"the folder {target.parent} does not exist; create it first or choose another place")
    if not os.access(target.parent, os.W_OK):
        raise Refused(f"the folder {target.parent} is not writable by this user; choose another place")
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        source = sqlite3.connect(_sqlite_path(url))
        copy = sqlite3.connect(target)
        try:
            with copy:
                source.backup(copy)
        finally:
            copy.close()
            source.close()
        return target
    if backend == "postgresql":
        done = subprocess.run([_pg_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges",
                               f"--file={target}", f"--dbname={_libpq_url(url)}"], capture_output=True, text=True)
        if done.returncode != 0:
            target.unlink(missing_ok=True)
            raise Refused(f"pg_dump failed: {done.stderr.strip()}")
        return target
    raise Refused(f"backups of {backend} databases are not supported (SQLite and PostgreSQL are)")


def _tables(url: str) -> list[str]:
    engine = db.make_engine(url)
    try:
        return inspect(engine).get_table_names()
    finally:
        engine.dispose()


def restore(url: str, source: str | Path) -> None:
    """Restore the backup file ``source`` into the EMPTY database at ``url``, then upgrade the
    schema to this version (Alembic).

    Raises Refused: no such file, the target database has tables, not a backup of this kind, or
    pg_restore failed (its message is given).
    """
    source = Path(source)
    if not source.is_file():
        raise Refused(f"no backup file {source}")
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        path = _sqlite_path(url)
        if path.exists() and path.stat().st_size > 0 and _tables(url):
            raise Refused(f"the database {path} is not empty; restore into a new file (nothing was changed)")
        with source.open("rb") as head:
            if head.read(16) != b"SQLite format 3\x00":
                raise Refused(f"{source} is not a SQLite backup")
        backup_db = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        target = sqlite3.connect(path)
        try:
            with target:
                backup_db.backup(target)
        finally:
            target.close()
            backup_db.close()
    elif backend == "postgresql":
        if _tables(url):
            raise Refused("the target PostgreSQL database is not empty; restore into a new database "
                          "(createdb NAME) — nothing was changed")
        done = subprocess.run([_pg_tool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error",
                               f"--dbname={_libpq_url(url)}", str(source)], capture_output=True, text=True)
        if done.returncode != 0:
            raise Refused(f"pg_restore failed: {done.stderr.strip()}")
    else:
        raise Refused(f"restoring {backend} databases is not supported (SQLite and PostgreSQL are)")
    db.upgrade(url)
