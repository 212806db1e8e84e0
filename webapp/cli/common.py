"""What every ``rule130`` command module shares: the database option, the session factory of a
URL, and running one function as a transaction that prints a refusal and exits 2."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import Rule130Error

T = TypeVar("T")


def _url(database_url: str | None) -> str:
    from webapp.store import db
    return database_url or db.default_url()


def _in_transaction(database_url: str | None, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(session, *args, **kwargs)`` and commit; a refusal prints ``refused: ...`` and exits 2."""
    with _sessions(database_url)() as session:
        try:
            result = fn(session, *args, **kwargs)
            session.commit()
        except Rule130Error as error:
            click.echo(f"refused: {error.message}", err=True)
            sys.exit(2)
    return result


def _sessions(database_url: str | None) -> sessionmaker[Session]:
    from webapp.store import db
    return db.session_factory(db.make_engine(_url(database_url)))


database_option = click.option("--database", "database_url", default=None, envvar="DATABASE_URL",
                               help="database URL (default: DATABASE_URL, else SQLite in ./instance)")
