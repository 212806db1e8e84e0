"""In-app notifications: written by the diagram's handlers and the triggers of :mod:`.alerts`, read in
each officer's inbox; each one also queues its e-mail/webhook deliveries (:mod:`.deliveries`) in
the same transaction."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from sqlalchemy import bindparam, exists, func, or_, select, update
from sqlalchemy.orm import Session

from webapp.errors import NotFound
from webapp.i18n import M_, N_, render_for
from webapp.i18n.languages import current_language
from webapp.services.notify import deliveries
from webapp.services.people import users
from webapp.store import txcache
from webapp.store.db import rows_matched
from webapp.store.models import Case, Notification, NotificationPreference, Panchayat, User
from webapp.values import clock

TEMPLATES: dict[str, str] = {
    "report_raised": N_("{case}: the release window has passed; the file is open. Publish the notice (Rule 130(a))."),
    "auction_unsold": N_("{case}: the conditional auction closed without a sale. Decide the unsold cattle (Rule 130(b) proviso)."),
    "cattle_dispatched": N_("{case}: cattle were sent to you for sale. Record the sale and the remittance."),
    "outcome_final": N_("{case}: the Panchayat's decision is final (Rule 130(e) proviso)."),
    "feeding_charges_due": N_("{case}: the cattle were delivered; pay the feeding charges (Rule 130(d))."),
    "case_closed": N_("{case}: the case is closed."),
    "incident_opened": N_("{case}: held by incident {incident}: “{element}” failed ({error}). Fix the cause, then "
                          "retry or skip it on the incidents page."),
    "objection_filed": N_("{case}: an objection was filed by {objector}; decide the ownership claim (Rule 130(c))."),
    "appeal_filed": N_("{case}: an appeal was filed by {appellant} (Rule 130(e) proviso)."),
    "task_ready": N_("{case}: the task '{task}' is ready for you."),
    "deadline_near": N_("{case}: the last day of {period} is {last_day} (days left, counting today: {days_left}); "
                        "{consequence}"),
    "period_ended": N_("{case}: {period} is over; its last day was {last_day}."),
    "task_overdue": N_("{case}: the task '{task}' is overdue (due by {due_day})."),
    "act_corrected": N_("{case}: the act '{task}' of {day} was corrected by {officer}: {reason}. The case is back as it "
                        "was before it; its documents are cancelled and its money reversed."),
    "receiver_replaced_old": N_("{case}: the secretary {officer} named {new} as the receiving officer in your place: "
                                "{reason}. The case is no longer yours; record nothing in it."),
    "receiver_replaced_new": N_("{case}: cattle were sent to you for sale in place of {old}, named by mistake: "
                                "{reason}. Record the sale and the remittance."),
    "task_escalated": N_("{case}: the task '{task}' of the {role} is still not done (due by {due_day}); "
                      "escalated to you."),
    # an officer's account (webapp.services.panchayats.officers): no case, {case} is empty
    "officer_transferred": N_("You are transferred from Gram Panchayat {old} to Gram Panchayat {new} by {admin}; "
                              "your open tasks in {old} ({count}) went to {successor}."),
    "tasks_received_transfer": N_("The open tasks of {officer} in Gram Panchayat {panchayat} ({count}) are now "
                                  "yours: {officer} was transferred. Cases: {cases}."),
    "tasks_received_deactivation": N_("The open tasks of {officer} in Gram Panchayat {panchayat} ({count}) are "
                                      "now yours: {officer} was deactivated. Cases: {cases}."),
    "tasks_received_role": N_("The open tasks of {officer} in Gram Panchayat {panchayat} ({count}) are now "
                              "yours: {officer} has a new role. Cases: {cases}."),
}


def recipients(session: Session, case: Case, roles: list[str]) -> list[User]:
    """The active officers of ``roles`` who may see ``case`` (:func:`users.can_see`: its
    Panchayat's, its Samiti's, the installation's administrators, the receiving officer it names),
    ordered by user id; the users the simulator made only for a training Panchayat's case. The officers who may hear of the case are read once per transaction (one
    query, :func:`_officers`) and chosen from by role."""
    wanted = set(roles)
    return [user for user in _officers(session, case) if user.role in wanted and users.can_see(session, user, case)]


# Every active user who may hear of a case of Panchayat :panchayat_id (its officers, its Samiti's,
# the installation's, and the receiving officer :receiver_id), with their channel choices (none:
# inbox only, for deliveries.preferences); the users the simulator made only when that Panchayat is
# a training one (they never hear of a live Panchayat's case); built once.
_OFFICERS = (select(User, NotificationPreference)
             .outerjoin(NotificationPreference, NotificationPreference.user_id == User.id)
             .where(User.active.is_(True),
                    or_(User.simulated.is_(False),
                        select(Panchayat.training).where(Panchayat.id == bindparam("panchayat_id")).scalar_subquery()),
                    or_(User.panchayat_id == bindparam("panchayat_id"),
                        User.samiti_code == select(Panchayat.samiti_code)
                        .where(Panchayat.id == bindparam("panchayat_id")).scalar_subquery(),
                        User.id == bindparam("receiver_id"),
                        (User.panchayat_id.is_(None)) & (User.samiti_code.is_(None))))
             .order_by(User.id))


def _officers(session: Session, case: Case) -> list[User]:
    """:data:`_OFFICERS` for ``case``, read once per transaction (and again when the case's
    receiving officer changed in it)."""
    key = (case.id, case.panchayat_id, case.receiving_officer_id)
    known = txcache.of(session, "officers")
    if key not in known:
        found = session.execute(_OFFICERS, {"panchayat_id": case.panchayat_id,
                                            "receiver_id": case.receiving_officer_id}).all()
        chosen = txcache.of(session, deliveries.CHOICES)
        for user, pref in found:
            chosen.setdefault(user.id, pref)  # a choice saved earlier in this transaction stands
        known[key] = [user for user, _ in found]
    recipients: list[User] = known[key]
    return recipients


def notify(session: Session, case: Case, roles: list[str], template: str, *, exclude_user_id: int | None = None,
           **params: str) -> list[Notification]:
    """Write one notification per recipient of ``roles`` (but not ``exclude_user_id``, the officer
    whose own act caused it) and queue its deliveries on the recipient's channels, in the caller's
    transaction. Returns the rows written."""
    people = [user for user in recipients(session, case, roles) if user.id != exclude_user_id]
    # each recipient reads it in their own language (dates by Babel); English when untranslated
    rows = [Notification(user_id=user.id, case_id=case.id, template=template,
                         message=render_for(user.language, TEMPLATES.get(template, template), case=case.case_number,
                                            **params),
                         params_json=params_json(case.case_number, params), created_at=clock.now())
            for user in people]
    session.add_all(rows)
    # a training Panchayat's notifications stay in the inbox: no e-mail or webhook leaves for them
    if rows and not _is_training(session, case.panchayat_id):
        chosen = deliveries.preferences(session, [user.id for user in people])
        for row, user in zip(rows, people, strict=False):
            deliveries.enqueue(session, row, user, chosen.get(user.id))
    return rows


def tell(session: Session, user: User, template: str, *, training: bool = False, **params: str) -> Notification:
    """Write one notification about no case to ``user`` (an officer's own account: a transfer, tasks
    handed to them) and queue its deliveries on their channels (none for a training Panchayat's
    officer, ``training``), in the caller's transaction. Returns the row."""
    row = Notification(user_id=user.id, case_id=None, template=template,
                       message=render_for(user.language, TEMPLATES.get(template, template), case="", **params),
                       params_json=params_json("", params), created_at=clock.now())
    session.add(row)
    if not training and not user.simulated:
        deliveries.enqueue(session, row, user, deliveries.preferences(session, [user.id]).get(user.id))
    return row


def _is_training(session: Session, panchayat_id: int) -> bool:
    panchayat = session.get(Panchayat, panchayat_id)  # in the session's identity map after the first
    return panchayat is not None and panchayat.training


# A notification about a case of a put-away training Panchayat (webapp.services.panchayats.training.reset) is
# kept but no longer shown: its case is out of every list, and the trainees start afresh.
_NOT_PUT_AWAY = or_(Notification.case_id.is_(None), ~exists(
    select(Case.id).join(Panchayat, Panchayat.id == Case.panchayat_id)
    .where(Case.id == Notification.case_id, Panchayat.archived_at.is_not(None))))


def inbox(session: Session, user: User, limit: int = 100) -> list[Notification]:
    """The user's notifications, newest first (at most ``limit``), but those about the cases of a
    put-away training Panchayat."""
    return list(session.scalars(select(Notification).where(Notification.user_id == user.id, _NOT_PUT_AWAY)
                                .order_by(Notification.created_at.desc(), Notification.id.desc()).limit(limit)))


def unread_count(session: Session, user: User) -> int:
    """How many of the user's notifications shown in the inbox (:func:`inbox`) are unread."""
    return session.scalar(select(func.count()).select_from(Notification)
                          .where(Notification.user_id == user.id, Notification.read_at.is_(None), _NOT_PUT_AWAY)) or 0


def mark_read(session: Session, user: User, notification_id: int | None = None) -> int:
    """Mark one (or, with None, every) unread notification of ``user`` read, at the clock's now.

    Returns:
        how many were marked (0 for one already read).
    Raises:
        NotFound: ``notification_id`` is not one of ``user``'s notifications (another user's, or
            none): nothing is marked.
    """
    if notification_id is not None and session.scalar(
            select(Notification.id).where(Notification.id == notification_id, Notification.user_id == user.id)) is None:
        raise NotFound(M_("There is no notification %(id)s in your inbox.", id=notification_id))
    query = update(Notification).where(Notification.user_id == user.id, Notification.read_at.is_(None))
    if notification_id is not None:
        query = query.where(Notification.id == notification_id)
    return rows_matched(session, query.values(read_at=clock.now()))


# -- the text of a notification for its reader ---------------------------------------------------

def params_json(case_number: str, params: dict[str, Any]) -> str:
    """The parameters of a notification as stored in ``Notification.params_json``: a JSON object of
    texts (``case`` the case number; a day as its ISO text, which :func:`.i18n.render_for` shows
    day first; any other value as its English text)."""
    return json.dumps({"case": case_number,
                       **{key: value.isoformat() if isinstance(value, date) else str(value)
                          for key, value in params.items()}}, ensure_ascii=False)


def text(notification: Notification, language: str | None = None) -> str:
    """The message of ``notification`` in ``language`` (``"en"``/``"hi"``; default the current
    request's language): its template rendered again with the stored parameters, so a reader who
    changed language reads every notification in the new one. A row without stored parameters
    (written before migration 0014), or with an unknown template, gives its ``message`` as written."""
    template = TEMPLATES.get(notification.template)
    if template is None or not notification.params_json:
        return notification.message
    try:
        params = json.loads(notification.params_json)
    except ValueError:
        return notification.message
    if not isinstance(params, dict):
        return notification.message
    try:
        return render_for(language or current_language(), template, **params)
    except (KeyError, IndexError, ValueError):  # the template and the stored parameters differ
        return notification.message
