"""The signed-in officer's own account: changing their password.

A new password must pass the password rule (:func:`webapp.services.people.passwords.check`); changing it
ends every other session of the officer at once (on other phones and desks), and this browser
stays signed in with a new session. Wrong present passwords — and only those, not new passwords
the rule refuses — are limited like failed sign-ins (``LOGIN_RATE_LIMIT`` per user,
:mod:`webapp.web.access.signin_limits`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, g, redirect, render_template, request, url_for
from flask import session as flask_session
from flask_login import current_user, login_user

from webapp.errors import Refused
from webapp.i18n import M_, flash_message
from webapp.services.people import passwords
from webapp.store import audit
from webapp.web.access import sessions as officer_sessions
from webapp.web.access.auth import LoginUser
from webapp.web.context import db_session, login_required

bp = Blueprint("account", __name__, url_prefix="/account")

# what an officer with a first password may open before choosing their own (the rest redirects here)
FIRST_PASSWORD_OPEN = ("account.change_password", "auth.logout", "auth.login", "static", "language.switch")


@bp.before_app_request
def first_password_first() -> Any:
    """An officer who signed in with a first password an administrator gave them (a new account, a
    reset: ``must_change_password``) must choose their own before any other page
    (webapp.services.panchayats.officers); the API is not a page and answers as before."""
    if (current_user.is_authenticated and current_user.user.must_change_password
            and request.endpoint not in FIRST_PASSWORD_OPEN and not request.path.startswith("/api/")
            and not (request.endpoint or "").startswith("static")):
        flash_message(M_("You signed in with a first password: choose your own password now."), "info")
        return redirect(url_for("account.change_password"))
    return None


@bp.route("/password", methods=["GET", "POST"])
@login_required
def change_password() -> Any:
    """GET: the form (present password, new password twice). POST: change it and go to the tasks
    with a message; a refusal (the present password not right, the two new ones differ, the rule)
    shows the form again with the reason (422) and changes nothing."""
    if request.method == "GET":
        return render_template("account/password.html", error=None, field_errors={},
                               first=current_user.user.must_change_password)
    user = current_user.user
    current = request.form.get("current") or ""
    new, again = request.form.get("password") or "", request.form.get("again") or ""
    session = db_session()
    try:
        if new != again:
            raise Refused(M_("the two new passwords are not the same"), {"again": M_("not the same")})
        changed = passwords.set_password(session, user.username, new, current=current,
                                         method=current_app.config["PASSWORD_HASH_METHOD"])
        audit.record(session, "auth.password_changed", actor=changed.username)
        session.commit()  # the new hash and, with it, a new session key: every session ends
    except Refused as refused:
        session.rollback()
        # only a wrong present password is a guess (signin_limits counts it); a new password the
        # rule refuses, or two that differ, is not
        g.wrong_present_password = "current" in refused.field_errors
        return render_template("account/password.html", error=refused.message,
                               field_errors=dict(refused.field_errors),
                               first=current_user.user.must_change_password), 422
    flask_session.clear()  # this browser goes on, in a new session with the new key
    login_user(LoginUser(changed))
    officer_sessions.start(changed)
    flash_message(M_("Your password is changed. You are signed out on every other phone and computer."), "success")
    return redirect(url_for("officer.my_tasks"))
