"""What the blueprints share with the application: CSRF protection, the login manager, and the
request's database session (:func:`db_session`) or the session factory (:func:`sessions`).

Kept out of :mod:`webapp.app` so that the blueprints, which :func:`webapp.app.create_app`
registers, never import the module that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import flask_login
from flask import current_app, g
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect
from sqlalchemy.orm import Session, sessionmaker

from webapp.i18n import N_

# bpmn-js's ready bundles, as npm ci installs them (the diagram pages need them; no CDN)
BPMN_JS_DIST = Path(__file__).resolve().parents[2] / "node_modules" / "bpmn-js" / "dist"
csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = N_("Please sign in to continue.")  # translated by localize_callback
login_manager.session_protection = "strong"  # a session cookie moved to another browser/address is dropped


def db_session() -> Session:
    """The request's SQLAlchemy session (one per request, closed at teardown)."""
    if "db_session" not in g:
        g.db_session = sessions()()
    session: Session = g.db_session
    return session


def sessions() -> sessionmaker[Session]:
    """The session factory, for service calls that run their own unit of work (uow.perform)."""
    factory: sessionmaker[Session] = current_app.extensions["rule130.sessions"]
    return factory


F = TypeVar("F", bound=Callable[..., Any])


def login_required(view: F) -> F:
    """Flask-Login's ``login_required`` (which ships no types), for a view of type ``F``."""
    return cast(F, flask_login.login_required(view))


def unauthorized() -> Any:
    """Flask-Login's answer to a request that needs a signed-in officer (the sign-in page, or 401
    for the API), as :data:`login_manager` is set up."""
    return login_manager.unauthorized()
