"""The Flask application factory (``create_app``), after Flask's tutorial: each test builds its own app."""

from __future__ import annotations

import logging
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from flask import Flask, g
from sqlalchemy.engine import make_url

from webapp.store import db
from webapp.web.context import csrf as csrf
from webapp.web.context import db_session as db_session
from webapp.web.context import login_manager as login_manager
from webapp.web.context import sessions as sessions

SECRET_KEY_FILE = "secret_key"


class SecretKeyMissing(RuntimeError):
    """No secret key is set and none can be kept beside the database (see :func:`secret_key`)."""


def _sqlite_folder(database_url: str) -> Path | None:
    """The folder of the SQLite database file ``database_url`` names; None for any other database
    (PostgreSQL, an in-memory SQLite)."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:" \
            or url.database.startswith("file:"):
        return None
    return Path(url.database).resolve().parent


def secret_key(database_url: str) -> str:
    """The key that signs the session cookie and the form tokens (Flask's ``SECRET_KEY``).

    ``RULE130_SECRET_KEY`` when set; else, for a SQLite database file, the file ``secret_key``
    beside it (``instance/secret_key`` beside the default ``instance/rule130.db``), made once with
    32 random bytes (hex) readable by its owner only (0600) and read by every process that opens
    that database — never a file in the folder the command was started from or in the code's
    checkout when the database is elsewhere.

    Raises:
        SecretKeyMissing: the database is not a SQLite file (PostgreSQL: the web processes, maybe
            on several hosts, must share one key, which a file on one host is not), or the key file
            beside it is empty.
    """
    if os.environ.get("RULE130_SECRET_KEY"):
        return os.environ["RULE130_SECRET_KEY"]
    folder = _sqlite_folder(database_url)
    if folder is None:
        raise SecretKeyMissing(
            "no secret key: set RULE130_SECRET_KEY to the same random text in every web process (e.g. "
            "export RULE130_SECRET_KEY=$(cat /etc/rule130/secret_key); make it with "
            "python3 -c 'import secrets; print(secrets.token_hex(32))'); only a SQLite database keeps its "
            "key in a file beside it (docs/operations.md, \"The secret key\")")
    path = folder / SECRET_KEY_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        draft = folder / f".{SECRET_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_hex(32))
        try:
            os.link(draft, path)  # whole or not at all: another process starting now keeps its own or this one
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    key = path.read_text().strip()
    if not key:
        raise SecretKeyMissing(f"the secret key file {path} is empty: remove it (a new key is made; everyone signs "
                               "in again) or set RULE130_SECRET_KEY")
    return key


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the web application.

    Config keys: ``DATABASE_URL`` (default: env or SQLite in the instance folder),
    ``SECRET_KEY`` (default: :func:`secret_key`), ``RUN_TIMER_WORKER`` (start the in-process
    timer worker; default False here, ``rule130 serve`` turns it on), ``WTF_CSRF_ENABLED``.

    Raises:
        SecretKeyMissing: no ``SECRET_KEY`` given and :func:`secret_key` has none for the database.
    """
    app = Flask(__name__, instance_relative_config=True)
    from webapp.web.access import hardening
    app.config.from_mapping(hardening.defaults())
    app.config.from_mapping(
        RUN_TIMER_WORKER=False,
        MAX_CONTENT_LENGTH=2 * 1024 * 1024,
    )
    if test_config:
        app.config.update(test_config)
    if not app.config.get("DATABASE_URL"):
        app.config["DATABASE_URL"] = db.default_url(app.instance_path)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key(app.config["DATABASE_URL"])

    engine = db.make_engine(app.config["DATABASE_URL"])
    app.extensions["rule130.engine"] = engine
    app.extensions["rule130.sessions"] = db.session_factory(engine)

    csrf.init_app(app)
    login_manager.init_app(app)
    from webapp import i18n
    i18n.init_app(app)
    login_manager.localize_callback = i18n.translate
    from webapp.services.diagrams import repository
    factory = app.extensions["rule130.sessions"]
    i18n.set_names_source(lambda: repository.deployed_names(factory), app)

    from webapp.web.access import sessions as officer_sessions
    officer_sessions.init_app(app)  # the user loader: session key, idle timeout, lifetime

    @app.teardown_appcontext
    def close_session(_exc: BaseException | None) -> None:
        session = g.pop("db_session", None)
        if session is not None:
            session.close()

    from webapp.web import register
    register(app)
    hardening.init_app(app)
    from webapp.web import assets
    assets.init_app(app)  # compressed responses, static files under hashed names (WhiteNoise)
    from webapp.web.act_instant import ArrivalInstant
    app.wsgi_app = ArrivalInstant(app.wsgi_app)  # type: ignore[method-assign]  # outermost: read first

    if app.config["RUN_TIMER_WORKER"]:
        start_timer_worker(app)
    from webapp import logs
    logs.configure()
    return app


LEASE_RETRY_SECONDS = 5


def start_timer_worker(app: Flask) -> threading.Thread:
    """Run the timer worker in a daemon thread of this process (``rule130 serve`` default).

    While another worker holds the lease (SQLite runs one), the thread tries again every
    ``LEASE_RETRY_SECONDS`` until it is free; :func:`stop_timer_worker` ends it and frees the lease."""
    from webapp.services.jobs import timers

    stop = threading.Event()
    app.extensions["rule130.worker_stop"] = stop

    def work() -> None:
        # Another worker's lease (or the lease of this server's previous run, stopped a moment ago)
        # keeps it waiting, never gone: it tries again until the lease is free or expires.
        waited = False
        while not stop.is_set():
            try:
                timers.run_worker(app.extensions["rule130.sessions"], stop)
                return
            except timers.LeaseHeld as held:
                if not waited:
                    logging.getLogger("rule130.timers").warning(
                        "in-process timer worker waiting: %s; trying again every %s s", held, LEASE_RETRY_SECONDS)
                    waited = True
                stop.wait(LEASE_RETRY_SECONDS)

    thread = threading.Thread(target=work, name="rule130-timer-worker", daemon=True)
    thread.start()
    app.extensions["rule130.worker_thread"] = thread
    from webapp.services.jobs import delivery_worker
    from webapp.services.notify import channels
    delivery_worker.start_thread(app.extensions["rule130.sessions"], channels.ChannelSettings.load(app.config), stop)
    return thread


def stop_timer_worker(app: Flask, timeout: float = 10.0) -> None:
    """Stop the in-process timer worker, if any, and wait for it to release its lease (a server
    started again at once then runs its worker at once, instead of waiting for the lease to expire)."""
    stop = app.extensions.get("rule130.worker_stop")
    if stop is not None:
        stop.set()
    thread = app.extensions.get("rule130.worker_thread")
    if thread is not None:
        thread.join(timeout)
