"""The Flask application factory (``create_app``), after Flask's tutorial: each test builds its own app."""

from __future__ import annotations

import logging
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from flask import Flask, g
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect

from .i18n import N_
from .store import db

csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = N_("Please sign in to continue.")  # translated by localize_callback
login_manager.session_protection = "strong"  # a session cookie moved to another browser/address is dropped


def _secret_key(instance_path: str) -> str:
    if os.environ.get("RULE130_SECRET_KEY"):
        return os.environ["RULE130_SECRET_KEY"]
    path = Path(instance_path) / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the web application.

    Config keys: ``DATABASE_URL`` (default: env or SQLite in the instance folder),
    ``SECRET_KEY``, ``RUN_TIMER_WORKER`` (start the in-process timer worker; default False here,
    ``rule130 serve`` turns it on), ``WTF_CSRF_ENABLED``.
    """
    app = Flask(__name__, instance_relative_config=True)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    from .web import hardening
    app.config.from_mapping(hardening.defaults())
    app.config.from_mapping(
        DATABASE_URL=db.default_url(app.instance_path),
        RUN_TIMER_WORKER=False,
        MAX_CONTENT_LENGTH=2 * 1024 * 1024,
    )
    if test_config:
        app.config.update(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app.instance_path)

    engine = db.make_engine(app.config["DATABASE_URL"])
    app.extensions["rule130.engine"] = engine
    app.extensions["rule130.sessions"] = db.session_factory(engine)

    csrf.init_app(app)
    login_manager.init_app(app)
    from . import i18n
    i18n.init_app(app)
    login_manager.localize_callback = i18n.translate

    from .web import officer_sessions
    officer_sessions.init_app(app)  # the user loader: session key, idle timeout, lifetime

    @app.teardown_appcontext
    def close_session(_exc: BaseException | None) -> None:
        session = g.pop("db_session", None)
        if session is not None:
            session.close()

    from .web import register
    register(app)
    hardening.init_app(app)
    from .web.act_instant import ArrivalInstant
    app.wsgi_app = ArrivalInstant(app.wsgi_app)  # type: ignore[method-assign]  # outermost: read first

    if app.config["RUN_TIMER_WORKER"]:
        start_timer_worker(app)
    from . import logs
    logs.configure()
    return app


def db_session():
    """The request's SQLAlchemy session (one per request, closed at teardown)."""
    from flask import current_app
    if "db_session" not in g:
        g.db_session = current_app.extensions["rule130.sessions"]()
    return g.db_session


def sessions():
    """The session factory, for service calls that run their own unit of work (uow.perform)."""
    from flask import current_app
    return current_app.extensions["rule130.sessions"]


LEASE_RETRY_SECONDS = 5


def start_timer_worker(app: Flask) -> threading.Thread:
    """Run the timer worker in a daemon thread of this process (``rule130 serve`` default).

    While another worker holds the lease (SQLite runs one), the thread tries again every
    ``LEASE_RETRY_SECONDS`` until it is free; :func:`stop_timer_worker` ends it and frees the lease."""
    from .services import timers

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
    from .services import channels, deliveries
    deliveries.start_thread(app.extensions["rule130.sessions"], channels.ChannelSettings.load(app.config), stop)
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
