"""Alembic environment: the URL comes from the caller's Config (see webapp.store.db.upgrade)."""

from alembic import context
from sqlalchemy import engine_from_config, pool

from webapp.store.db import make_engine
from webapp.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url")
    engine = make_engine(url) if url else engine_from_config(config.get_section(config.config_ini_section, {}),
                                                             prefix="sqlalchemy.", poolclass=pool.NullPool)
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # Batch migrations on SQLite re-create a table (copy, drop, rename); with foreign keys enforced,
            # dropping a table that other rows reference fails. Alembic's batch-mode advice: switch the
            # check off while migrating (outside a transaction, where the pragma takes effect), then verify.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
            if sqlite:
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"the migration left rows whose foreign keys point nowhere: {broken[:5]}")
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
