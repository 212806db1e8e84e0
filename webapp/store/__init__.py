"""Persistence: SQLAlchemy 2 models and sessions (Alembic migrations in webapp/migrations)."""
