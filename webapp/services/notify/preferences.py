"""Each user's notification channels: the in-app inbox always, e-mail and a webhook when chosen."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from webapp.errors import Refused
from webapp.i18n import M_
from webapp.services.notify import channels, deliveries
from webapp.store import txcache
from webapp.store.models import NotificationPreference, User
from webapp.values import clock


@dataclass
class Choices:
    """What the preferences page shows and saves."""

    email_enabled: bool = False
    email_address: str = ""
    webhook_enabled: bool = False
    webhook_url: str = ""


def get(session: Session, user: User) -> Choices:
    """The user's choices (all off when never saved)."""
    row = session.get(NotificationPreference, user.id)
    if row is None:
        return Choices()
    return Choices(row.email_enabled, row.email_address, row.webhook_enabled, row.webhook_url)


def save(session: Session, user: User, choices: Choices, settings: channels.ChannelSettings) -> Choices:
    """Store the user's channels. Notifications written from now on are delivered accordingly.

    Raises:
        Refused: e-mail on without a valid address; a webhook on without an http(s) URL, or while
            the product has no webhook secret configured. Nothing is saved then.
    """
    email = (choices.email_address or "").strip()
    url = (choices.webhook_url or "").strip()
    if choices.email_enabled or email:
        email = channels.check_email(email)
    if choices.webhook_enabled and not settings.webhook_secret:
        raise Refused(M_("webhooks are not offered here: the administrator has not configured a signing secret "
                      "(RULE130_WEBHOOK_SECRET)"), {"webhook_enabled": M_("not available")})
    if choices.webhook_enabled or url:
        url = channels.check_url(url, settings)
    row = session.get(NotificationPreference, user.id)
    if row is None:
        row = NotificationPreference(user_id=user.id)
        session.add(row)
    row.email_enabled, row.email_address = bool(choices.email_enabled), email
    row.webhook_enabled, row.webhook_url = bool(choices.webhook_enabled), url
    row.updated_at = clock.now()
    txcache.of(session, deliveries.CHOICES)[user.id] = row  # a notice later in this transaction uses the new choice
    return get(session, user)
