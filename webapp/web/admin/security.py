"""Administrators' security pages: the API tokens of the users they manage, and revoking one.

The same service functions as ``rule130 list-tokens`` / ``rule130 revoke-token``
(:mod:`webapp.services.people.users`). Only an administrator may open them (others: 403); a token
outside the administrator's scope answers 404, like an unknown one.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, redirect, render_template, url_for
from flask_login import current_user

from webapp.errors import NotPermitted
from webapp.i18n import M_, flash_message
from webapp.services.people import users
from webapp.services.running import uow
from webapp.store.models import User
from webapp.web.context import db_session, sessions, unauthorized

bp = Blueprint("security", __name__, url_prefix="/admin")


@bp.before_request
def require_administrator() -> Any:
    """Signed in (else the sign-in page) and an administrator (else 403)."""
    if not current_user.is_authenticated:
        return unauthorized()
    if current_user.user.role != "administrator":
        raise NotPermitted(M_("only an administrator may manage API tokens"))
    return None


def _admin() -> User:
    user: User = current_user.user  # a LoginUser (officer_sessions) wraps the row
    return user


@bp.get("/tokens")
def tokens() -> Any:
    """The tokens of the users this administrator manages: id, user, role, Panchayat, created, revoked."""
    rows = users.tokens(db_session(), _admin())
    return render_template("security/tokens.html", rows=rows)


@bp.post("/tokens/<int:token_id>/revoke")
def revoke(token_id: int) -> Any:
    """Revoke one token (CSRF-protected form); 404 when unknown or outside the scope."""
    uow.perform(sessions(), "revoke_token", users.revoke_token, token_id, _admin())
    flash_message(M_("API token %(id)s revoked: it no longer works.", id=token_id), "success")
    return redirect(url_for("security.tokens"))
