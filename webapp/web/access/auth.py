"""Signing in and out (Flask-Login), and the signed-in officer shown in every page's header."""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, current_app, redirect, render_template, request, url_for
from flask import session as flask_session
from flask_babel import gettext as _
from flask_login import current_user, login_user, logout_user

from webapp.i18n import M_, flash_message
from webapp.services.notify import notifications
from webapp.services.people import users
from webapp.store import audit
from webapp.store.models import User
from webapp.web.access import sessions as officer_sessions
from webapp.web.access import signin_limits
from webapp.web.access.hardening import local_target
from webapp.web.access.sessions import LoginUser as LoginUser
from webapp.web.context import db_session

bp = Blueprint("auth", __name__)
log = logging.getLogger("rule130.web")


def signed_in_user() -> User | None:
    """The signed-in officer's User row (None when nobody is signed in)."""
    if current_user and current_user.is_authenticated:
        user: User = current_user.user  # a LoginUser (officer_sessions) wraps the row
        return user
    return None


def _safe_next(target: str | None) -> str | None:
    """A local path to go back to after signing in; anything else (another site) is ignored
    (:func:`.hardening.local_target`)."""
    return local_target(target)


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    """GET: the sign-in form. POST: check the user name and password; a failure says so (200), the
    same for a wrong password and an unknown name (:func:`webapp.services.people.users.sign_in`). Failed
    sign-ins are limited per (address, name), per address and per name (429 beyond a limit,
    :mod:`webapp.web.access.signin_limits`); a success renews the browser's device cookie, which exempts
    this officer on this browser from the limits strangers can fill."""
    next_url = _safe_next(request.values.get("next"))
    if request.method == "GET":
        if signed_in_user() is not None:
            return redirect(next_url or url_for("officer.my_tasks"))
        return render_template("auth/login.html", next_url=next_url, username="", error=None)
    username = (request.form.get("username") or "").strip()
    password = request.form.get("password") or ""
    session = db_session()
    user = (users.sign_in(session, username, password, method=current_app.config["PASSWORD_HASH_METHOD"])
            if username and password else None)
    audit.record(session, "auth.sign_in" if user else "auth.sign_in_failed", actor=username[:80] or None,
                 detail={"address": request.remote_addr})
    session.commit()  # the first session key, a stronger hash, the audit entry
    if user is None:
        log.info("failed sign-in for user name %r", username[:80])
        return render_template("auth/login.html", next_url=next_url, username=username,
                               error=_("The user name or the password is not right. Try again."))
    # a new session at sign-in: nothing set before it (a planted session, the old CSRF token) survives
    flask_session.clear()
    login_user(LoginUser(user))
    officer_sessions.start(user)
    flash_message(M_("Signed in as %(name)s.", name=user.display_name), "success")
    return signin_limits.remember_device(redirect(next_url or url_for("officer.my_tasks")), user.username)


@bp.route("/logout", methods=["POST"])
def logout() -> Any:
    """Sign out (a POST form, so a link or an image cannot sign anyone out): every session of the
    officer ends, on this browser and on any other (:func:`webapp.web.access.sessions.sign_out`)."""
    user = signed_in_user()
    if user is not None:
        session = db_session()
        officer_sessions.sign_out(session, user)
        session.commit()
    logout_user()
    flask_session.clear()
    flash_message(M_("You have signed out."), "success")
    return redirect(url_for("auth.login"))


@bp.app_context_processor
def header_context() -> dict[str, Any]:
    """Every page's header: the signed-in officer and the number of unread notifications."""
    try:
        user = signed_in_user()
        unread = notifications.unread_count(db_session(), user) if user is not None else 0
    except Exception:  # the header must never turn a page (or an error page) into a 500
        log.exception("could not build the page header")
        user, unread = None, 0
    return {"me": user, "unread_count": unread}
