"""Notification pages: a user's channel preferences, and the administrators' delivery log."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.errors import Conflict, NotPermitted, Refused
from webapp.i18n import M_, flash_message
from webapp.services.notify import channels, deliveries, notifications, preferences
from webapp.services.running import uow
from webapp.web.context import db_session, sessions, unauthorized
from webapp.web.pages.officer import me
from webapp.web.pages.public import DEFAULT_TZ, panchayat_of

bp = Blueprint("notify", __name__)


@bp.app_template_filter("notice")
def notice_text(notification: Any) -> str:
    """A notification's message in the reader's language (the inbox, the delivery log):
    :func:`.notifications.text` in the current request's language."""
    return notifications.text(notification)


@bp.app_template_filter("delivery_error")
def delivery_error(text: str | None) -> str:
    """A delivery's last error in the reader's language (:func:`.channels.error_text`)."""
    return channels.error_text(text or "")


@bp.before_request
def require_login() -> Any:
    if not current_user.is_authenticated:
        return unauthorized()
    return None


def channel_settings() -> channels.ChannelSettings:
    """The channel settings of this application (its config over the environment)."""
    return channels.ChannelSettings.load(current_app.config)


@bp.route("/preferences", methods=["GET", "POST"])
def preferences_page() -> Any:
    """GET: the user's channels. POST: save them (422 with the message and nothing saved when refused)."""
    user = me()
    settings = channel_settings()
    field_errors: dict[str, str] = {}
    error = None
    status = 200
    if request.method == "POST":
        choices = preferences.Choices(email_enabled=request.form.get("email_enabled") == "1",
                                      email_address=request.form.get("email_address", "")[:1000],
                                      webhook_enabled=request.form.get("webhook_enabled") == "1",
                                      webhook_url=request.form.get("webhook_url", "")[:1000])
        try:
            uow.perform(sessions(), "save_preferences", preferences.save, user, choices, settings)
        except Refused as refused:
            error, field_errors, status = refused.message, dict(refused.field_errors), 422
        else:
            flash_message(M_("Your notification channels are saved."), "success")
            return redirect(url_for("notify.preferences_page"))
    else:
        choices = preferences.get(db_session(), user)
    return render_template("notify/preferences.html", choices=choices, error=error, field_errors=field_errors,
                           email_configured=bool(settings.smtp_host),
                           webhook_offered=bool(settings.webhook_secret)), status


def _administrator() -> Any:
    user = me()
    if user.role != "administrator":
        raise NotPermitted(M_("only an administrator may see the delivery log"))
    return user


@bp.route("/admin/deliveries")
def deliveries_page() -> Any:
    """Administrators: the delivery log of the users in their scope (all, their Samiti's or their
    Panchayat's), newest first, with status, attempts and the last error."""
    user = _administrator()
    status = request.args.get("status") or None
    if status not in (None, *deliveries.STATUSES):
        status = None
    panchayat = panchayat_of(db_session(), user.panchayat_id) if user.panchayat_id else None
    return render_template("notify/deliveries.html", rows=deliveries.listing(db_session(), user, status=status),
                           counts=deliveries.counts(db_session(), user), status=status,
                           tz=panchayat.timezone if panchayat else DEFAULT_TZ)


@bp.route("/admin/deliveries/<int:delivery_id>/retry", methods=["POST"])
def retry_delivery(delivery_id: int) -> Any:
    """Administrators: send a failed or waiting delivery of a user in their scope again now
    (another scope's delivery is not found); back to the log with what happened."""
    user = _administrator()
    try:
        uow.perform(sessions(), "retry_delivery", deliveries.retry_now, user, delivery_id)
    except (Refused, Conflict) as refused:
        flash_message(refused.message, "error")
    else:
        flash_message(M_("Delivery %(id)s will be sent again at once.", id=delivery_id), "success")
    return redirect(url_for("notify.deliveries_page"))
