"""What the blueprints share with the application: CSRF protection, the login manager, and the
request's database session (:func:`db_session`) or the session factory (:func:`sessions`).

Kept out of :mod:`webapp.app` so that the blueprints, which :func:`webapp.app.create_app`
registers, never import the module that imports them.
"""

from __future__ import annotations

from pathlib import Path

from flask import current_app, g
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect

from ..i18n import N_

# bpmn-js's ready bundles, as npm ci installs them (the diagram pages need them; no CDN)
BPMN_JS_DIST = Path(__file__).resolve().parents[2] / "node_modules" / "bpmn-js" / "dist"
csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = N_("Please sign in to continue.")  # translated by localize_callback
login_manager.session_protection = "strong"  # a session cookie moved to another browser/address is dropped


def db_session():
    """The request's SQLAlchemy session (one per request, closed at teardown)."""
    if "db_session" not in g:
        g.db_session = current_app.extensions["rule130.sessions"]()
    return g.db_session


def sessions():
    """The session factory, for service calls that run their own unit of work (uow.perform)."""
    return current_app.extensions["rule130.sessions"]
