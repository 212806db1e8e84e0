"""The notification outbox: delivery rows written with the case change, sent afterwards with retries.

Writing: :func:`enqueue` adds one :class:`Delivery` per notification and per channel the recipient
has switched on, in the caller's session, so it commits or rolls back with the case change that
caused it (a unique constraint keeps it to one row per notification and channel).

Sending: :func:`deliver_due` claims one due row at a time with a compare-and-set UPDATE
(``status``/``next_attempt_at`` unchanged since read; PostgreSQL or SQLite alike), commits the claim
(``status = 'sending'``, ``attempts + 1``, ``next_attempt_at`` = now + the claim time), sends outside
any transaction, then records the result: ``sent``, or back to ``pending`` with ``last_error`` and
``next_attempt_at`` = now + backoff × 2^(attempts − 1) (at most the configured maximum), or
``failed`` after the last attempt. No case row is touched, so a slow or failing channel never
blocks or rolls back a case.

Semantics: at least once. A sender that dies after the server accepted the message and before
the row says ``sent`` leaves it ``sending``; when the claim expires it is sent again. The e-mail's
Message-ID and the webhook's ``X-Rule130-Delivery`` header carry the delivery id so receivers can
drop such a duplicate; nothing else can make SMTP or HTTP exactly-once.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import Conflict, NotFound, Refused
from webapp.i18n import M_, N_, render_for
from webapp.services.notify import channels
from webapp.services.people.users import managed_users
from webapp.store import txcache
from webapp.store.db import rows_matched
from webapp.store.models import Case, Delivery, Notification, NotificationPreference, User, get_row
from webapp.values import clock

log = logging.getLogger("rule130.notify")
CHANNELS = ("email", "webhook")
STATUSES = ("pending", "sending", "sent", "failed")

EMAIL_SUBJECT = N_("Rule 130 {case}: {what}")
EMAIL_SUBJECT_NO_CASE = N_("Rule 130: {what}")
EMAIL_BODY = N_("{name},\n\n{text}\n\nCase: {case}\nSent by the Rule 130 cattle pound case system (notification {id}). "
                "Sign in to see the case and your tasks.\n")
SUBJECTS: dict[str, str] = {
    "report_raised": N_("the release window has passed"),
    "auction_unsold": N_("the auction closed without a sale"),
    "cattle_dispatched": N_("cattle sent to you for sale"),
    "outcome_final": N_("the decision is final"),
    "feeding_charges_due": N_("feeding charges to pay"),
    "objection_filed": N_("an objection was filed"),
    "appeal_filed": N_("an appeal was filed"),
    "task_ready": N_("a task is ready for you"),
    "deadline_near": N_("a deadline is near"),
    "period_ended": N_("a legal period has ended"),
    "task_overdue": N_("a task is overdue"),
    "task_escalated": N_("an overdue task is escalated to you"),
    "case_closed": N_("the case is closed"),
}


CHOICES = "channel choices"  # txcache name: user id -> NotificationPreference or None, this transaction


def preferences(session: Session, user_ids: list[int]) -> dict[int, NotificationPreference]:
    """The stored channel choices of ``user_ids`` that have any, by user id (one query, no flush;
    the users already asked about in this transaction are not asked again)."""
    known = txcache.of(session, CHOICES)
    missing = [user_id for user_id in user_ids if user_id not in known]
    if missing:
        with session.no_autoflush:
            found = {pref.user_id: pref for pref in session.scalars(
                select(NotificationPreference).where(NotificationPreference.user_id.in_(missing)))}
        known.update({user_id: found.get(user_id) for user_id in missing})
    return {user_id: known[user_id] for user_id in user_ids if known[user_id] is not None}


def enqueue(session: Session, notification: Notification, user: User,
            pref: NotificationPreference | None) -> list[Delivery]:
    """Add the delivery rows of ``notification`` for the channels ``user`` has switched on
    (``pref``: the user's stored choices, from :func:`preferences`; None for none).

    Runs in the caller's transaction (the case change); nothing is flushed here (a flush would
    write the case row early). Returns the rows added (none when the user has only the inbox).
    """
    if pref is None:
        return []
    now = clock.now()
    rows = []
    if pref.email_enabled and pref.email_address:
        rows.append(Delivery(notification=notification, channel="email", target=pref.email_address,
                             status="pending", attempts=0, next_attempt_at=now, last_error="", created_at=now))
    if pref.webhook_enabled and pref.webhook_url:
        rows.append(Delivery(notification=notification, channel="webhook", target=pref.webhook_url,
                             status="pending", attempts=0, next_attempt_at=now, last_error="", created_at=now))
    session.add_all(rows)
    return rows


def backoff(settings: channels.ChannelSettings, attempts: int) -> timedelta:
    """The wait after failed attempt number ``attempts`` (1, 2, ...): base × 2^(attempts−1), capped."""
    seconds = settings.backoff_seconds * (2 ** min(max(attempts - 1, 0), 30))
    return timedelta(seconds=min(seconds, settings.backoff_max_seconds))


@dataclass
class Outcome:
    """What one attempt did: the delivery id, its channel, and ``sent`` / ``retry`` / ``failed``."""

    delivery_id: int
    channel: str
    result: str
    error: str = ""


def _claim(sessions: sessionmaker[Session], settings: channels.ChannelSettings, passed: set[int]) -> int | None:
    """Claim the earliest due delivery (not in ``passed``); its id, or None when none is due."""
    with sessions() as session:
        now = clock.now()
        query = (select(Delivery.id, Delivery.status, Delivery.next_attempt_at)
                 .where(Delivery.status.in_(("pending", "sending")), Delivery.next_attempt_at <= now)
                 .order_by(Delivery.next_attempt_at, Delivery.id).limit(20))
        if passed:
            query = query.where(Delivery.id.not_in(passed))
        for delivery_id, status, next_at in session.execute(query).all():
            claimed = rows_matched(
                session, update(Delivery)
                .where(Delivery.id == delivery_id, Delivery.status == status, Delivery.next_attempt_at == next_at)
                .values(status="sending", attempts=Delivery.attempts + 1,
                        next_attempt_at=now + timedelta(seconds=settings.claim_seconds))
                .execution_options(synchronize_session=False))
            if claimed == 1:
                session.commit()
                return delivery_id
        session.rollback()
        return None


def _message(session: Session, delivery: Delivery) -> tuple[Notification, Case | None, User]:
    notification = get_row(session, Notification, delivery.notification_id)
    case = get_row(session, Case, notification.case_id) if notification.case_id else None
    return notification, case, get_row(session, User, notification.user_id)


def _send(session: Session, settings: channels.ChannelSettings, delivery: Delivery) -> None:
    notification, case, user = _message(session, delivery)
    text = channels.dayfirst(notification.message)
    if delivery.channel == "email":
        # in the recipient's language, as the notification itself (webapp.i18n.render_for)
        what = render_for(user.language, SUBJECTS.get(notification.template, notification.template.replace("_", " ")))
        subject = (render_for(user.language, EMAIL_SUBJECT, case=case.case_number, what=what) if case
                   else render_for(user.language, EMAIL_SUBJECT_NO_CASE, what=what))
        body = render_for(user.language, EMAIL_BODY, name=user.display_name, text=text,
                          case=case.case_number if case else "-", id=notification.id)
        message_id = f"<rule130-delivery-{delivery.id}@{socket.getfqdn() or 'localhost'}>"
        channels.send_email(settings, channels.email_message(settings, delivery.target, subject, body, message_id))
    elif delivery.channel == "webhook":
        payload = {"delivery_id": delivery.id, "notification_id": notification.id, "template": notification.template,
                   "message": notification.message, "case_number": case.case_number if case else None,
                   "user": user.username, "created_at": notification.created_at.isoformat()}
        channels.send_webhook(settings, delivery.target, channels.webhook_body(payload), delivery.id)
    else:
        raise channels.SendFailed(f"unknown channel {delivery.channel!r}")


def attempt(sessions: sessionmaker[Session], settings: channels.ChannelSettings, delivery_id: int) -> Outcome:
    """Send one claimed delivery and record the result (its own short transaction)."""
    with sessions() as session:
        delivery = get_row(session, Delivery, delivery_id)  # claimed by this worker (claim_next)
        channel = delivery.channel
        try:
            _send(session, settings, delivery)
            error = None
        except channels.SendFailed as failed:
            error = str(failed)[:2000]
        except Exception as unexpected:  # a bug in a channel must not stop the loop; it is logged and retried
            log.exception("delivery %s: unexpected error", delivery_id)
            error = f"{unexpected.__class__.__name__}: {unexpected}"[:2000]
        now = clock.now()
        if error is None:
            delivery.status, delivery.sent_at, delivery.last_error = "sent", now, ""
            result = "sent"
        elif delivery.attempts >= settings.max_attempts:
            delivery.status, delivery.last_error = "failed", error
            result = "failed"
        else:
            delivery.status, delivery.last_error = "pending", error
            delivery.next_attempt_at = now + backoff(settings, delivery.attempts)
            result = "retry"
        session.commit()
    if error:
        log.warning("delivery %s (%s) attempt failed (%s): %s", delivery_id, channel, result, error)
    return Outcome(delivery_id, channel, result, error or "")


def deliver_due(sessions: sessionmaker[Session], settings: channels.ChannelSettings, limit: int = 100) -> list[Outcome]:
    """One pass: claim and send due deliveries one by one (at most ``limit``); what each attempt did."""
    passed: set[int] = set()
    outcomes = []
    while len(passed) < limit:
        delivery_id = _claim(sessions, settings, passed)
        if delivery_id is None:
            break
        passed.add(delivery_id)
        outcomes.append(attempt(sessions, settings, delivery_id))
    return outcomes


def next_attempt(sessions: sessionmaker[Session]) -> datetime | None:
    """The earliest instant a pending or claimed delivery is due (None when the outbox is empty)."""
    with sessions() as session:
        return session.scalar(select(func.min(Delivery.next_attempt_at))
                              .where(Delivery.status.in_(("pending", "sending"))))


def listing(session: Session, admin: User, *, status: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """Deliveries for the administrators' page, newest first: the row, its notification, user, case.

    Only deliveries to users ``admin`` manages (:func:`.users.managed_users`: everyone for an
    installation-wide administrator, the Samiti's or the Panchayat's users for a scoped one).
    """
    query = (select(Delivery, Notification, User, Case)
             .join(Notification, Notification.id == Delivery.notification_id)
             .join(User, User.id == Notification.user_id)
             .outerjoin(Case, Case.id == Notification.case_id)
             .where(managed_users(admin))
             .order_by(Delivery.id.desc()).limit(limit))
    if status:
        query = query.where(Delivery.status == status)
    return [{"delivery": d, "notification": n, "user": u, "case": c} for d, n, u, c in session.execute(query).all()]


def counts(session: Session, admin: User) -> dict[str, int]:
    """How many deliveries to the users ``admin`` manages are in each status."""
    found = dict(session.execute(select(Delivery.status, func.count(Delivery.id))
                                 .join(Notification, Notification.id == Delivery.notification_id)
                                 .join(User, User.id == Notification.user_id)
                                 .where(managed_users(admin)).group_by(Delivery.status)).all())
    return {status: int(found.get(status, 0)) for status in STATUSES}


def retry_now(session: Session, admin: User, delivery_id: int) -> Delivery:
    """Send a failed or waiting delivery again at the next pass of the delivery loop.

    A ``failed`` delivery gets one more attempt (its attempt count is kept, so a second failure
    marks it failed again); a ``pending`` one is brought forward to now. Nothing else changes.
    Raises:
        NotFound: no such delivery, or its recipient is not a user ``admin`` manages.
        Refused: it was sent, or it is being sent right now.
    """
    row = session.scalar(select(Delivery).join(Notification, Notification.id == Delivery.notification_id)
                         .join(User, User.id == Notification.user_id)
                         .where(Delivery.id == delivery_id, managed_users(admin))) if 0 < delivery_id < 2**63 else None
    if row is None:
        raise NotFound(M_("no delivery %(id)s", id=delivery_id))
    if row.status in ("sent", "sending"):
        raise Refused(M_("delivery %(id)s is %(status)s; only a failed or waiting delivery is sent again",
                         id=delivery_id, status=row.status),
                      then=M_("Nothing more is needed for a delivery that was sent; a failed or waiting one can be "
                              "sent again from the list."))
    now = clock.now()
    hit = rows_matched(session, update(Delivery).where(Delivery.id == row.id, Delivery.status == row.status,
                                                 Delivery.next_attempt_at == row.next_attempt_at)
                          .values(status="pending", next_attempt_at=now).execution_options(synchronize_session=False))
    if not hit:
        raise Conflict(M_("delivery %(id)s changed at the same moment; reload the log", id=delivery_id))
    session.refresh(row)
    return row
