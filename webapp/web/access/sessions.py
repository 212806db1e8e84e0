"""How long a signed-in session lasts, and ending every session of an officer at once.

A browser session of a signed-in officer holds three things (in Flask's signed session cookie):

- the user's id and their **session key** (``app_user.session_key``), as Flask-Login's
  "alternative token" ``"<id>:<key>"`` (:meth:`LoginUser.get_id`). The key is
  compared with the user's row on every request (:func:`load_user`), so a new key ends every
  session of the user at once, in every server process: signing out gives one
  (:func:`sign_out`), and so do a new password, deactivation and a change of role, Panchayat or
  Samiti (:mod:`webapp.store.session_keys`);
- when it was signed in, and when it was last used (seconds since the epoch, from
  :func:`webapp.values.clock.now`). A session is refused once it is older than the absolute lifetime, or
  unused for longer than the idle timeout; the officer is sent to the sign-in page with a message
  saying which.

Configuration (``create_app`` config keys; the environment variable in brackets sets the default):

- ``SESSION_IDLE_MINUTES`` [``RULE130_SESSION_IDLE_MINUTES``, default 30]: minutes without a
  request after which a session ends (a phone left on a desk, a shared office computer);
- ``SESSION_LIFETIME_HOURS`` [``RULE130_SESSION_LIFETIME_HOURS``, default 12]: hours after signing
  in at which a session ends however busy (one working day). Flask's own check of the session
  cookie's signed age (``PERMANENT_SESSION_LIFETIME``) is set to the same.

API bearer tokens are another mechanism (:func:`webapp.services.people.users.user_for_token`): they stop
with deactivation or a change of role or scope, not with a sign-out or a new password.
"""

from __future__ import annotations

import hmac
import os
from datetime import timedelta
from typing import Any

from flask import Flask, current_app
from flask import session as flask_session

from webapp.i18n import M_, flash_message
from webapp.store import audit, session_keys
from webapp.store.models import User
from webapp.values import clock
from webapp.web.context import db_session, login_manager

SIGNED_IN_AT = "rule130_signed_in_at"  # the session's keys (seconds since the epoch, UTC)
SEEN_AT = "rule130_seen_at"
SEEN_REFRESH_SECONDS = 60  # "last used" is rewritten at most once a minute (a new cookie each time)
FLASK_LOGIN_KEYS = ("_user_id", "_fresh", "_id", "_remember", "_remember_seconds")


class LoginUser:
    """Flask-Login's view of a user; its id is the session token ``"<user id>:<session key>"``
    (Flask-Login's alternative tokens), which :func:`load_user` checks
    on every request."""

    def __init__(self, user: User) -> None:
        self.user = user
        self.id = user.id
        self.is_authenticated = True
        self.is_active = user.active
        self.is_anonymous = False

    def get_id(self) -> str:
        return f"{self.id}:{self.user.session_key}"



def _minutes(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
    return int(value)


def defaults() -> dict[str, int]:
    """The configuration defaults of this module, from the environment (see the module docstring).

    Raises:
        ValueError: an environment variable that is not a whole number of at least 1, named.
    """
    return {"SESSION_IDLE_MINUTES": _minutes("RULE130_SESSION_IDLE_MINUTES", 30),
            "SESSION_LIFETIME_HOURS": _minutes("RULE130_SESSION_LIFETIME_HOURS", 12)}


def init_app(app: Flask) -> None:
    """Take this module's settings (a key given to ``create_app`` wins over the environment) and
    install :func:`load_user` as Flask-Login's user loader.

    Raises:
        ValueError: a setting that is not a whole number of at least 1, named.
    """
    for key, value in defaults().items():
        app.config.setdefault(key, value)
        setting = app.config[key]
        if isinstance(setting, bool) or not isinstance(setting, int) or setting < 1:
            raise ValueError(f"{key} must be a whole number of at least 1, not {setting!r}")
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(hours=app.config["SESSION_LIFETIME_HOURS"])
    login_manager.user_loader(load_user)


def start(user: User) -> None:
    """Stamp the new session of ``user`` (just signed in with Flask-Login) with the sign-in time."""
    now = clock.now().timestamp()
    flask_session[SIGNED_IN_AT] = now
    flask_session[SEEN_AT] = now


def _end(message: Any | None) -> None:
    """Forget the signed-in user in this browser session; say why on the next page."""
    for key in (*FLASK_LOGIN_KEYS, SIGNED_IN_AT, SEEN_AT):
        flask_session.pop(key, None)
    if message is not None:
        flash_message(message, "info")


def _expiry_message(now: float) -> Any | None:
    """Why this session's time is up (its lifetime or its idle timeout), or None while it is not."""
    signed_in, seen = flask_session.get(SIGNED_IN_AT), flask_session.get(SEEN_AT)
    if not isinstance(signed_in, (int, float)) or not isinstance(seen, (int, float)):
        return M_("Your session has ended. Please sign in again.")
    hours, minutes = current_app.config["SESSION_LIFETIME_HOURS"], current_app.config["SESSION_IDLE_MINUTES"]
    if now - signed_in > hours * 3600:
        return M_("You were signed out: a session lasts at most %(hours)s hours. Please sign in again.",
                  hours=hours)
    if now - seen > minutes * 60:
        return M_("You were signed out after %(minutes)s minutes without use. Please sign in again.",
                  minutes=minutes)
    return None


def load_user(token: str) -> Any:
    """Flask-Login's user loader: the signed-in officer (a :class:`LoginUser`) of
    the session token ``"<user id>:<session key>"``, or None (not signed in).

    None, and the session forgets the user, when the token is malformed, the user is unknown,
    inactive or made by the simulator (it never signs in), the key is not the user's current one
    (signed out, a new password, a new role or scope), or the session is past its lifetime or its
    idle timeout (the next page says so). A session in use has its "last used" time renewed (at
    most once a minute)."""
    user_id, _, key = str(token).partition(":")
    user = db_session().get(User, int(user_id)) if user_id.isdigit() and key else None
    if (user is None or not user.active or not user.session_key or user.simulated
            or not hmac.compare_digest(user.session_key.encode(), key.encode())):
        _end(M_("Your session has ended. Please sign in again.") if user is not None else None)
        return None
    now = clock.now().timestamp()
    expired = _expiry_message(now)
    if expired is not None:
        _end(expired)
        return None
    if now - flask_session[SEEN_AT] >= SEEN_REFRESH_SECONDS:
        flask_session[SEEN_AT] = now
    return LoginUser(user)


def sign_out(session: Any, user: User) -> None:
    """End every session of ``user`` (a new session key) and record ``auth.sign_out`` in the audit
    trail; the caller commits."""
    row = session.get(User, user.id)
    if row is None:
        return
    session_keys.end_sessions(row)
    audit.record(session, "auth.sign_out", actor=row.username)
