"""The Alembic migrations and the SQLAlchemy models describe the same schema.

Migrations are the only way tables are made (``db.upgrade``); the models are what the code reads
and writes. A column added to one and not the other (or with another type, nullability, index or
foreign key) would surface only on the first write that needs it, on whichever store lacks it.
Alembic's ``compare_metadata`` — the comparison ``alembic revision --autogenerate`` uses — lists
every difference between the migrated database and the models; there must be none, on SQLite and
(with ``RULE130_TEST_POSTGRES``) on PostgreSQL.
"""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from webapp.store import db
from webapp.store.models import Base


def _differences(url: str) -> list:
    engine = db.make_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True,
                                                                   "compare_server_default": False})
            return compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()


def test_the_migrated_database_has_exactly_the_models_tables_columns_and_indexes(database_url):
    assert _differences(database_url) == []
