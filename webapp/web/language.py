"""The language switch on every page: a form posting ``lang`` (``en`` or ``hi``).

The choice is remembered in the ``lang`` cookie (visitors of the public board) and, for a signed-in
officer, in their user row (``app_user.language``), so it follows them to another phone or desk.
Works without JavaScript: a plain POST that redirects back to the page it came from.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, redirect, request, url_for

from webapp.i18n import M_, flash_message, languages
from webapp.services.people import users
from webapp.web.access.auth import _safe_next, signed_in_user
from webapp.web.context import sessions

bp = Blueprint("language", __name__)


@bp.route("/language", methods=["POST"])
def switch() -> Any:
    """Set the language to the posted ``lang`` and go back to ``next`` (a local path)."""
    language = languages.normalise(request.form.get("lang"))
    target = _safe_next(request.form.get("next")) or url_for("public.board")
    if language is None:
        flash_message(M_("Choose English or Hindi."), "error")
        return redirect(target)
    user = signed_in_user()
    if user is not None:
        with sessions()() as session:
            users.set_language(session, user.id, language)
            session.commit()
    response = redirect(target)
    response.set_cookie(languages.COOKIE, language, max_age=languages.COOKIE_MAX_AGE, samesite="Lax", httponly=True)
    return response
