"""The officers' pages: my tasks, a task's form and the inbox; and the officers' blueprint, with
what every officer page needs (a signed-in user: :func:`me`).

The case pages (the cases, a new case, the case page and the acts made from it, the printable
notice) are :mod:`webapp.web.pages.cases`, views of the same blueprint.

Every view parses the request, calls one service (through ``uow.perform`` when it changes
something, so a refusal changes nothing and is recorded in the case history) and renders. Refusals
of a form come back on the same page with HTTP 422, the message at the top and each field's
error beside the field; other refusals (403, 404, 409) go to the error pages of ``errors.py``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from flask import Blueprint, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user
from sqlalchemy import select

from webapp.errors import Conflict, NotFound, Refused, SentTwice
from webapp.i18n import M_, Message, flash_message
from webapp.i18n.formats import format_rupees
from webapp.services.cases import cases
from webapp.services.money import amounts
from webapp.services.notify import notifications
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import rules, tasklist, tasks
from webapp.store.models import CaseTask, User
from webapp.values import casefile, clock
from webapp.web.access.hardening import local_target
from webapp.web.context import db_session, sessions, unauthorized
from webapp.web.pages import check
from webapp.web.pages.public import DEFAULT_TZ, panchayat_of
from webapp.web.pages.task_forms import form_fields, lock_version, submitted_form, whole_number

bp = Blueprint("officer", __name__)


@bp.before_request
def require_login() -> Any:
    """Every officer page needs a signed-in user (Flask-Login's ``login_required`` for the blueprint)."""
    if not current_user.is_authenticated:
        return unauthorized()
    return None


def me() -> User:
    user: User = current_user.user  # a LoginUser (officer_sessions) wraps the row
    return user


def words(identifier: str | None) -> str:
    """An identifier (a task's element name, a status) as the words of its catalogue entry:
    ``record_bid`` -> ``record bid`` (give it to ``M_`` to show it in the page's language)."""
    return str(identifier or "").replace("_", " ")


# -- my tasks and a task ----------------------------------------------------------------------------

@bp.route("/")
def index() -> Any:
    return redirect(url_for("officer.my_tasks"))


@bp.route("/tasks")
def my_tasks() -> Any:
    """The user's task list (the task table), most urgent first; filters ``role``, ``status``, ``case``.

    A filter the user may not use (another role's lane) is refused on the page with 422.
    """
    session, user = db_session(), me()
    filters = {"role": request.args.get("role", "").strip(), "status": request.args.get("status", "").strip() or "ready",
               "case": request.args.get("case", "").strip()}
    error, then, status = None, None, 200
    try:
        listing = tasks.my_tasks(session, user, role=filters["role"] or None, status=filters["status"],
                                 case=filters["case"] or None)
    except Refused as refused:
        error, then, status = refused.message, refused.then, 422
        listing = tasks.my_tasks(session, user)
    return render_template("officer/tasks.html", listing=listing, tasks=listing.rows, filters=filters, error=error, then=then,
                           lanes=tasklist.visible_lanes(user), statuses=tasklist.STATUSES,
                           officers=tasklist.officers_by_lane(session, user), me=user), status


def _back_to_list() -> Any:
    """Back to the page the form was sent from (its ``next``, when a path of this site:
    :func:`.hardening.local_target`), else to "My tasks"."""
    return redirect(local_target(request.form.get("next")) or url_for("officer.my_tasks"))


@bp.route("/cases/<int:case_id>/tasks/<task_id>/claim", methods=["POST"])
def claim_task(case_id: int, task_id: str) -> Any:
    """Claim a task (409 page naming the holder when another officer has it)."""
    user = me()
    row = uow.perform(sessions(), "claim_task", tasklist.claim, user, case_id, task_id, user=user)
    flash_message(M_("You hold “%(task)s” in case %(number)s: no other officer can complete it.",
                     task=M_(words(row.title)), number=row.case_number), "success")
    return _back_to_list()


@bp.route("/cases/<int:case_id>/tasks/<task_id>/release", methods=["POST"])
def release_task(case_id: int, task_id: str) -> Any:
    """Give back a task you hold."""
    user = me()
    row = uow.perform(sessions(), "release_task", tasklist.release, user, case_id, task_id, user=user)
    flash_message(M_("You released “%(task)s” in case %(number)s.", task=M_(words(row.title)),
                     number=row.case_number), "success")
    return _back_to_list()


@bp.route("/cases/<int:case_id>/tasks/<task_id>/reassign", methods=["POST"])
def reassign_task(case_id: int, task_id: str) -> Any:
    """The sarpanch gives a task to a named officer of its role; a refusal comes back on the list."""
    user = me()
    officer = request.form.get("officer", "")
    try:
        row = uow.perform(sessions(), "reassign_task", tasklist.reassign, user, case_id, task_id, officer, user=user)
    except Refused as refused:
        flash_message(refused.message, "error")
        if refused.then:
            flash_message(refused.then, "info")
        return _back_to_list()
    flash_message(M_("“%(task)s” in case %(number)s is now with %(officer)s.", task=M_(words(row.title)),
                     number=row.case_number, officer=officer), "success")
    return _back_to_list()


def _task_fields(view: tasks.TaskView, values: dict[str, Any], errors: dict[str, str]) -> list[dict[str, Any]]:
    """The task's form fields (:func:`form_fields`); on the decision on unsold cattle the receiving
    officer is chosen from a list of those who may take the case
    (:func:`webapp.services.people.users.receiving_officers`), by name with the user name beside it,
    the user name sent: never typed (issue 29, item 5)."""
    fields = form_fields(view.schema, values, errors)
    if view.form_key != "decide_unsold":
        return fields
    for f in fields:
        if f["name"] == "receiver":
            officers = users.receiving_officers(db_session(), view.case_number)
            f["kind"], f["label"] = "select", _("Receiving officer")
            f["options"] = [(u.username, f"{u.display_name} ({u.username})") for u in officers]
            f["help"] = (_("The receiving officers who may take this case. Required when sending the cattle for sale.")
                         if officers else _("No receiving officer may take this case: an administrator adds one "
                                            "(role receiving officer) before the cattle can be sent for sale."))
            if f["value"] and f["value"] not in dict(f["options"]):  # a name sent by hand, not one of the list
                match = next((u.username for u in officers if f["value"].strip().lower() == u.username.lower()), "")
                f["value"] = match
    return fields


def _render_task(view: tasks.TaskView, *, values: dict[str, Any] | None = None, error: str | None = None,
                 field_errors: dict[str, str] | None = None, lock_version: int | None = None,
                 status: int = 200, then: str | None = None) -> Any:
    field_errors = field_errors or {}
    fields = _task_fields(view, values or {}, field_errors)
    names = {f["name"] for f in fields}
    other_errors = {k: v for k, v in field_errors.items() if k not in names}
    objector = (view.data.get("objection") or {}).get("objector")
    # the facts the officer decides on (full price and bids, claims, the pending appeal, F and C)
    session = db_session()
    case = cases.get_case(session, me(), view.case_id)
    row = tasklist.task_row(session, me(), view.case_id, view.task_id)
    cf = casefile.load(case.file_json)
    return render_template("officer/task.html", view=view, row=row, me_id=me().id, fields=fields, error=error, then=then, other_errors=other_errors,
                           objector=objector, cf=cf, summary=cases.summary(session, case), release_due=_release_due(view, cf),
                           lock_version=view.lock_version if lock_version is None else lock_version), status


def _release_due(view: tasks.TaskView, cf: casefile.CaseFile) -> Decimal | None:
    """For the task "Release cattle to owner", the total to collect now (F + C on the request's
    day: :func:`webapp.services.tasks.rules.release_due`, rupees); None for any other task."""
    return rules.release_due(cf, clock.now()) if view.form_key == "release_by_owner" else None


@bp.route("/cases/<int:case_id>/tasks/<task_id>", methods=["GET", "POST"])
def task(case_id: int, task_id: str) -> Any:
    """GET: the task's form. POST: complete it (one transaction); a refusal re-renders it with 422."""
    user = me()
    try:
        view = tasks.get_task(db_session(), user, case_id, task_id)
    except Conflict:
        if request.method != "POST" or not _completed_by(case_id, task_id, user):
            raise
        return _sent_twice(case_id)
    if request.method == "GET":
        return _render_task(view)
    data = submitted_form(view.schema)
    expected = lock_version()
    if expected is None and request.form.get("lock_version", "") != "":
        # a mangled version would otherwise skip the check for a case changed since the form was shown
        return _render_task(view, values=data, error=_("The form is out of date (its version is not a number): "
                                                       "reload the task and enter it again."), status=422)
    asked = check.step()
    if asked == check.CHANGE:
        return _render_task(view, values=data, lock_version=expected)
    act = (sessions(), "complete_task", tasks.complete_task, user, case_id, task_id, data, expected)
    try:
        if asked == check.CHECK:
            follows, warnings = check.preview(*act, case_id=case_id, user=user)
            return _check_task(view, data, follows, expected, warnings)
        _case, told = uow.perform_told(*act, case_id=case_id, user=user)
    except Refused as refused:
        return _render_task(view, values=data, error=refused.message, field_errors=refused.field_errors,
                            lock_version=expected, status=422, then=refused.then)
    except Conflict:
        if not _completed_by(case_id, task_id, user):
            raise
        return _sent_twice(case_id, M_(words(view.name)))
    check.tell(M_("Done: “%(task)s” in case %(number)s.", task=M_(words(view.name)), number=view.case_number),
               told, case_id)
    return redirect(url_for("officer.case", case_id=case_id))


def _as_rupees(typed: str) -> str:
    """An amount as the documents print it (₹1,200.00), read as the service reads it; else as typed."""
    try:
        return format_rupees(amounts.parse_amount(typed, "amount"))
    except (Refused, ValueError, ArithmeticError):
        return typed


def _check_task(view: tasks.TaskView, data: dict[str, Any], follows: list[Any], expected: int | None,
                warnings: list[Message]) -> Any:
    """The check page of a task's form: each field's label and value as recorded (a choice by its
    words); ``warnings``: what no correction could undo (:func:`check.preview`), and for a bid one
    that looks mistyped (:func:`rules.bid_warnings`)."""
    printed = []
    cf = casefile.load(cases.get_case(db_session(), me(), view.case_id).file_json)
    due = _release_due(view, cf)
    if view.form_key == "record_bid":  # the check passed: the amount is one
        warnings = [*rules.bid_warnings(cf, amounts.parse_amount(data.get("amount"), "amount")), *warnings]
    for f in _task_fields(view, data, {}):
        if f["depends"] and not f["depends"]["applies"] and f["name"] not in data:
            continue  # a field for another choice (the form's if/then) was not part of this act
        value = dict(f["options"]).get(f["value"], f["value"]) if f["kind"] in ("select", "radio") else f["value"]
        if f["amount"]:
            value = _as_rupees(value)
        if due is not None and f["name"] == "amount_received":
            printed.append((_("Total to collect (fine + feeding)"), format_rupees(due)))
        printed.append((f["label"], value))
        if due is not None and f["name"] == "amount_received":
            received = amounts.parse_amount(f["value"], "amount_received")  # the check passed: an amount ≥ due
            printed.append((_("Change to give back"), format_rupees(received - due)))
    hidden = {**{k: v for k, v in data.items()}, "lock_version": "" if expected is None else expected}
    deadline = (view.deadline_label, view.deadline) if view.deadline_label else None
    return check.render(title=M_(words(view.name)), printed=printed, follows=follows, hidden=hidden,
                        back=url_for("officer.case", case_id=view.case_id), case_number=view.case_number,
                        deadline=deadline, warnings=warnings)


def _sent_twice(case_id: int, task: Message | None = None) -> Any:
    """The same task sent again after this officer completed it (a double click, the back button):
    a conflict (409) that says this submission was not recorded and how to enter it again if it
    was a different entry (a second bid from another tab), not that someone else changed the case.

    Raises:
        SentTwice: always (a Conflict: 409).
    """
    number = cases.get_case(db_session(), me(), case_id).case_number
    if task is None:
        raise SentTwice(M_("this task of case %(number)s is no longer open: you completed it yourself; what you sent "
                          "this time was not recorded. If it differs from your first entry (another bid, another "
                          "amount), enter it again on the case's open task", number=number))
    raise SentTwice(M_("the task “%(task)s” of case %(number)s is no longer open: you completed it yourself; what "
                      "you sent this time was not recorded. If it differs from your first entry (another bid, "
                      "another amount), enter it again on the case's open task", task=task, number=number))


def _completed_by(case_id: int, task_id: str, user: User) -> bool:
    """Whether ``user`` completed the task ``task_id`` of the case (its row in the task table, read
    in a transaction of its own, after the one that lost)."""
    with sessions()() as session:
        row = session.scalar(select(CaseTask).where(CaseTask.case_id == case_id, CaseTask.task_id == str(task_id)))
        return row is not None and row.state == "completed" and row.completed_by == user.id


# -- inbox ---------------------------------------------------------------------------------------

@bp.route("/inbox")
def inbox() -> Any:
    """The user's notifications, newest first; unread ones highlighted."""
    user = me()
    panchayat = panchayat_of(db_session(), user.panchayat_id) if user.panchayat_id else None
    return render_template("officer/inbox.html", items=notifications.inbox(db_session(), user),
                           tz=panchayat.timezone if panchayat else DEFAULT_TZ)


@bp.route("/inbox/read", methods=["POST"])
def inbox_read() -> Any:
    """Mark one notification (``id``) or all of them (``all``) read; an id that is not one of the
    user's notifications is refused on the inbox, naming it, and marks nothing."""
    user = me()
    raw = request.form.get("id", "")
    notification_id = whole_number(raw)
    if notification_id is None and not request.form.get("all"):
        flash_message(M_("Choose a notification to mark as read."), "error")
        return redirect(url_for("officer.inbox"))
    try:
        uow.perform(sessions(), "mark_read", notifications.mark_read, user, notification_id)
    except NotFound as missing:
        flash_message(missing.message, "error")
        return redirect(url_for("officer.inbox"))
    flash_message(M_("Marked as read.") if notification_id else M_("All notifications marked as read."), "success")
    return redirect(url_for("officer.inbox"))
