"""The officers' pages: my tasks, a task's form, cases, a new case, the case page, the printable
notice and the inbox.

Every view parses the request, calls one service (through ``uow.perform`` when it changes
something, so a refusal changes nothing and is recorded in the case history) and renders. Refusals
of a form come back on the same page with HTTP 422, the message at the top and each field's
error beside the field; other refusals (403, 404, 409) go to the error pages of ``errors.py``.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user
from sqlalchemy import select

from .. import casefile, clock
from ..digits import ascii_digits
from ..errors import AlreadySubmitted, Conflict, NotFound, NotPermitted, Refused, SentTwice
from ..i18n import M_, Message, flash_message, format_instant, format_rupees
from ..services import (
    amounts,
    cases,
    corrections,
    documents,
    ledger,
    notifications,
    overview,
    rules,
    search,
    tasklist,
    tasks,
    uow,
)
from ..store.models import CaseTask, User
from ..tariff import SPECIES
from . import check
from .context import BPMN_JS_DIST, db_session, sessions, unauthorized
from .hardening import local_target
from .public import DEFAULT_TZ, fmt_words, notice_context, panchayat_of
from .task_forms import form_fields, lock_version, submitted_form, whole_number

bp = Blueprint("officer", __name__)

ANIMAL_ROWS = 5
MAX_ANIMAL_ROWS = 100


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
    error, status = None, 200
    try:
        listing = tasks.my_tasks(session, user, role=filters["role"] or None, status=filters["status"],
                                 case=filters["case"] or None)
    except Refused as refused:
        error, status = refused.message, 422
        listing = tasks.my_tasks(session, user)
    return render_template("officer/tasks.html", listing=listing, tasks=listing.rows, filters=filters, error=error,
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
        return _back_to_list()
    flash_message(M_("“%(task)s” in case %(number)s is now with %(officer)s.", task=M_(words(row.title)),
                     number=row.case_number, officer=officer), "success")
    return _back_to_list()


def _render_task(view: tasks.TaskView, *, values: dict[str, Any] | None = None, error: str | None = None,
                 field_errors: dict[str, str] | None = None, lock_version: int | None = None,
                 status: int = 200) -> Any:
    field_errors = field_errors or {}
    fields = form_fields(view.schema, values or {}, field_errors)
    names = {f["name"] for f in fields}
    other_errors = {k: v for k, v in field_errors.items() if k not in names}
    objector = (view.data.get("objection") or {}).get("objector")
    # the facts the officer decides on (full price and bids, claims, the pending appeal, F and C)
    session = db_session()
    case = cases.get_case(session, me(), view.case_id)
    row = tasklist.task_row(session, me(), view.case_id, view.task_id)
    cf = casefile.load(case.file_json)
    return render_template("officer/task.html", view=view, row=row, me_id=me().id, fields=fields, error=error, other_errors=other_errors,
                           objector=objector, cf=cf, summary=cases.summary(session, case), release_due=_release_due(view, cf),
                           lock_version=view.lock_version if lock_version is None else lock_version), status


def _release_due(view: tasks.TaskView, cf: casefile.CaseFile) -> Decimal | None:
    """For the task "Release cattle to owner", the total to collect now (F + C on the request's
    day: :func:`webapp.services.rules.release_due`, rupees); None for any other task."""
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
            follows = uow.preview(*act, case_id=case_id, user=user, record_refusal=True)
            return _check_task(view, data, follows, expected)
        _case, told = uow.perform_told(*act, case_id=case_id, user=user)
    except Refused as refused:
        return _render_task(view, values=data, error=refused.message, field_errors=refused.field_errors,
                            lock_version=expected, status=422)
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


def _check_task(view: tasks.TaskView, data: dict[str, Any], follows: list[Any], expected: int | None) -> Any:
    """The check page of a task's form: each field's label and value as recorded (a choice by its words)."""
    printed = []
    due = _release_due(view, casefile.load(cases.get_case(db_session(), me(), view.case_id).file_json))
    for f in form_fields(view.schema, data, {}):
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
                        deadline=deadline)


def _sent_twice(case_id: int, task: Message | None = None) -> Any:
    """The same task sent again after this officer completed it (a double click, the back button):
    a conflict (409) that says the first submission stands and this one changed nothing, not that
    someone else changed the case.

    Raises:
        SentTwice: always (a Conflict: 409).
    """
    number = cases.get_case(db_session(), me(), case_id).case_number
    if task is None:
        raise SentTwice(M_("this task of case %(number)s is no longer open: you completed it yourself; your first "
                          "submission stands and this one changed nothing", number=number))
    raise SentTwice(M_("the task “%(task)s” of case %(number)s is no longer open: you completed it yourself; your "
                      "first submission stands and this one changed nothing", task=task, number=number))


def _completed_by(case_id: int, task_id: str, user: User) -> bool:
    """Whether ``user`` completed the task ``task_id`` of the case (its row in the task table, read
    in a transaction of its own, after the one that lost)."""
    with sessions()() as session:
        row = session.scalar(select(CaseTask).where(CaseTask.case_id == case_id, CaseTask.task_id == str(task_id)))
        return row is not None and row.state == "completed" and row.completed_by == user.id


# -- cases ---------------------------------------------------------------------------------------

@bp.route("/cases")
def case_list() -> Any:
    """The cases the user may see, newest first; with ``q``, those found by case number, village,
    animal tag or party name (services.search)."""
    query = request.args.get("q", "").strip()
    if not query:
        return render_template("officer/cases.html", cases=cases.visible_cases(db_session(), me()), q="",
                               matches=None)
    too_long = len(query) > search.MAX_QUERY
    matches = [] if too_long else search.search_cases(db_session(), me(), query)
    return render_template("officer/cases.html", cases=[m.case for m in matches], q=query, matches=matches,
                           too_long=too_long)


def _blank_animal(row: dict[str, str]) -> bool:
    return not any((row.get(k) or "").strip() for k in ("species", "description", "tag"))


def _animal_rows(count: int) -> list[dict[str, str]]:
    return [{"species": request.form.get(f"species-{n}", ""), "description": request.form.get(f"description-{n}", ""),
             "tag": request.form.get(f"tag-{n}", "")} for n in range(1, count + 1)]


def _impounded_at(text: str, tz: str) -> datetime | str:
    """A datetime-local value (2026-01-05T10:00) read in the Panchayat's zone, as an aware instant.

    Anything unreadable is passed on as :class:`cases.TypedTime`, for the service to refuse in the
    page's words together with the form's other mistakes.
    """
    try:
        naive = datetime.fromisoformat(ascii_digits(text).strip())  # Devanagari digits too
    except ValueError:
        return cases.TypedTime(text)
    if naive.tzinfo is not None:
        return naive
    return naive.replace(tzinfo=ZoneInfo(tz))


@bp.route("/cases/new", methods=["GET", "POST"])
def new_case() -> Any:
    """The pound keeper records impounded cattle: a new case (blank animal rows are ignored)."""
    user = me()
    if user.role != "pound_keeper":
        raise NotPermitted(_("only the pound keeper records impounded cattle; you are signed in as %(role)s",
                             role=fmt_words(user.role)))
    panchayat = panchayat_of(db_session(), user.panchayat_id) if user.panchayat_id else None
    tz = panchayat.timezone if panchayat and panchayat.timezone else DEFAULT_TZ
    try:
        rows_wanted = int(request.values.get("rows", ANIMAL_ROWS))
    except ValueError:
        rows_wanted = ANIMAL_ROWS
    rows_wanted = max(1, min(rows_wanted, MAX_ANIMAL_ROWS))
    context = {"species": SPECIES, "tz": tz, "panchayat": panchayat}
    if request.method == "GET":
        now_local = clock.now().astimezone(ZoneInfo(tz)).strftime("%Y-%m-%dT%H:%M")
        # the form's own key: sent twice (a double click, the back button), it records one case
        values = {"impounded_at": now_local, "place_seized": "", "place_impounded": "", "nearest_village": "",
                  "submission": uuid.uuid4().hex}
        rows = [{"species": "", "description": "", "tag": ""} for _ in range(rows_wanted)]
        return render_template("officer/new_case.html", values=values, rows=rows, error=None, field_errors={},
                               **context)
    values = {k: request.form.get(k, "")
              for k in ("impounded_at", "place_seized", "place_impounded", "nearest_village", "submission")}
    rows = _animal_rows(rows_wanted)
    animals = [{k: v.strip() for k, v in row.items()} for row in rows if not _blank_animal(row)]
    try:
        case = uow.perform(sessions(), "start_case", cases.start_case, user,
                           impounded_at=_impounded_at(values["impounded_at"], tz),
                           place_seized=values["place_seized"], place_impounded=values["place_impounded"],
                           nearest_village=values["nearest_village"], animals=animals,
                           submission_key=values["submission"] or None, user=user)
    except AlreadySubmitted as again:
        flash_message(again.message, "info")
        if again.case_id:
            return redirect(url_for("officer.case", case_id=again.case_id))
        return redirect(url_for("officer.my_tasks"))
    except Refused as refused:
        if "submission" in refused.field_errors:  # the key recorded another case: a new key for this form
            values["submission"] = uuid.uuid4().hex
        return render_template("officer/new_case.html", values=values, rows=rows, error=refused.message,
                               field_errors=refused.field_errors, **context), 422
    flash_message(M_("Case %(number)s opened: the 3-day release window has started.", number=case.case_number),
                  "success")
    return redirect(url_for("officer.case", case_id=case.id))


def _case_page(case_id: int, *, status: int = 200, action: str | None = None, error: str | None = None,
               values: dict[str, str] | None = None) -> Any:
    """The case page; ``action``/``error`` put a refusal beside the action form that caused it."""

    session, user = db_session(), me()
    case = cases.get_case(session, user, case_id)
    cf = casefile.load(case.file_json)
    running = case.status == "running"
    run = cases.CaseRun(session, case, None)  # read only: never saved here
    version = run.loaded.version
    marks = overview.diagram_marks(run.wf)
    names = {task.task_spec.bpmn_id: task.task_spec.bpmn_name for task in run.wf.get_tasks()
             if getattr(task.task_spec, "bpmn_id", None)}
    entries = ledger.entries(session, case.id)
    context = {
        "case": case, "cf": cf, "tz": cf.timezone, "me": user,
        "panchayat": panchayat_of(session, case.panchayat_id),
        "summary": cases.summary(session, case),
        "deadlines": cases.deadlines(cf),
        "current": tasks.case_tasks(session, case) if running else [],
        "history": overview.audit_trail(session, case, version),
        "entries": entries, "accounts": overview.accounts(entries),
        "reversed_by": ledger.reversed_by(entries), "reversible": ledger.reversible(entries),
        "parties": overview.parties(cf),
        "documents": documents.list_for_case(session, case),
        "correction": corrections.correctable(session, user, case),
        "version": version, "marks": marks, "done": marks.done, "active": marks.active, "waiting": marks.waiting,
        "active_names": [names.get(i) or i for i in marks.active],
        "waiting_names": [names.get(i) or i for i in marks.waiting],
        "timer": overview.next_timer(run.wf) if running else None,
        "bpmn_available": BPMN_JS_DIST.is_dir(),
        "running": running, "action": action, "action_error": error, "values": values or {},
    }
    return render_template("officer/case.html", **context), status


@bp.route("/cases/<int:case_id>")
def case(case_id: int) -> Any:
    """Everything about one case: cattle, parties, deadlines, current step, history, money."""
    return _case_page(case_id)


def _case_act(case_id: int, action: str, fn: Any, *args: Any, done: Message, values: dict[str, str],
              title: Message | None = None, printed: list[tuple[str, str]] | None = None,
              deadline: str | None = None, **kwargs: Any) -> Any:
    """An act from the case page, through its check step (:mod:`.check`): ``title``, ``printed``
    (label, value) and the name of the ``deadline`` it meets (a key of :func:`cases.deadlines`)
    make the check page; ``done`` is flashed after it, with what followed."""
    user = me()
    asked = check.step()
    if asked == check.CHANGE:
        return _case_page(case_id, action=action, values=values)
    try:
        if asked == check.CHECK:
            follows = uow.preview(sessions(), action, fn, user, case_id, *args, case_id=case_id, user=user,
                                    record_refusal=True, **kwargs)
            case = cases.get_case(db_session(), user, case_id)
            last = cases.deadlines(casefile.load(case.file_json)).get(deadline) if deadline else None
            return check.render(title=title or M_(words(action)), printed=printed or [], follows=follows,
                                hidden=values, back=url_for("officer.case", case_id=case_id),
                                case_number=case.case_number,
                                deadline=(deadline.removesuffix("_last_day") + "_period", last)
                                if deadline and last else None)
        _case, told = uow.perform_told(sessions(), action, fn, user, case_id, *args, case_id=case_id, user=user, **kwargs)
    except Refused as refused:
        return _case_page(case_id, status=422, action=action, error=refused.message, values=values)
    check.tell(done, told, case_id)
    return redirect(url_for("officer.case", case_id=case_id))


@bp.route("/cases/<int:case_id>/objections", methods=["POST"])
def file_objection(case_id: int) -> Any:
    """The secretary records an objection (a claim of ownership) during the notice period."""
    objector = request.form.get("objector", "").strip()
    return _case_act(case_id, "file_objection", cases.file_objection, objector,
                     done=M_("The objection of %(name)s was recorded.", name=objector), values={"objector": objector},
                     title=M_("File an objection (claim of ownership)"), printed=[(_("Objector's name"), objector)],
                     deadline="objection_last_day")


@bp.route("/cases/<int:case_id>/appeals", methods=["POST"])
def file_appeal(case_id: int) -> Any:
    """The secretary records an appeal against the Panchayat's decision."""
    appellant = request.form.get("appellant", "").strip()
    return _case_act(case_id, "file_appeal", cases.file_appeal, appellant,
                     done=M_("The appeal of %(name)s was recorded.", name=appellant), values={"appellant": appellant},
                     title=M_("File an appeal against the Panchayat's decision"),
                     printed=[(_("Appellant's name"), appellant)], deadline="appeal_last_day")


@bp.route("/cases/<int:case_id>/animal-events", methods=["POST"])
def record_animal_event(case_id: int) -> Any:
    """The pound keeper records that an animal died or escaped today."""
    kind = request.form.get("kind", "")
    raw = request.form.get("animal", "")
    position = whole_number(raw)
    what = {"death": _("died"), "escape": _("escaped")}.get(kind, kind)
    return _case_act(case_id, "record_animal_event", cases.record_animal_event, kind, position=position,
                     done=(M_("The death of animal %(num)s was recorded.", num=raw) if kind == "death"
                           else M_("The escape of animal %(num)s was recorded.", num=raw)), values={"kind": kind, "animal": raw},
                     title=M_("Record a death or an escape in the pound (today)"),
                     printed=[(_("Animal"), _animal_words(case_id, position, raw)), (_("What happened"), what)])


@bp.route("/cases/<int:case_id>/births", methods=["POST"])
def record_birth(case_id: int) -> Any:
    """The pound keeper records a calf born in the pound: its mother, the day, a description and tag."""
    raw = request.form.get("mother", "")
    values = {k: request.form.get(k, "") for k in ("mother", "born_on", "calf_description", "calf_tag")}
    return _case_act(case_id, "record_birth", cases.record_animal_event, "birth", position=whole_number(raw),
                     born_on=values["born_on"].strip() or None, calf_description=values["calf_description"],
                     calf_tag=values["calf_tag"], done=M_("The birth of a calf to animal %(num)s was recorded.", num=raw),
                     values=values, title=M_("Record a calf born in the pound"),
                     printed=[(_("Mother"), _animal_words(case_id, whole_number(raw), raw)),
                              (_("Day of birth"), values["born_on"].strip() or _("today")),
                              (_("Calf's description"), values["calf_description"]),
                              (_("Calf's tag (optional)"), values["calf_tag"])])


def _animal_words(case_id: int, position: int | None, raw: str) -> str:
    """An animal of the case as its form lists it (``#1 cow (RJ-9) — grey cow``), else what was sent."""
    cf = casefile.load(cases.get_case(db_session(), me(), case_id).file_json)
    animal = next((a for a in cf.animals if a.position == position), None)
    if animal is None:
        return raw
    tag = f" ({animal.tag})" if animal.tag else ""
    return f"#{animal.position} {fmt_words(animal.species)}{tag} — {animal.description}"


@bp.route("/cases/<int:case_id>/ledger/reversals", methods=["POST"])
def reverse_entry(case_id: int) -> Any:
    """The secretary corrects the ledger: the reversing entry of ``entry`` with a ``reason``;
    a refusal comes back beside the form (422)."""
    raw, reason = request.form.get("entry", ""), request.form.get("reason", "")
    entry_id = whole_number(raw)
    values = {"entry": raw, "reason": reason}
    if entry_id is None:
        cases.get_case(db_session(), me(), case_id)  # another Panchayat's case: 404 before anything else
        ledger.check_reverser(me())
        return _case_page(case_id, status=422, action="reverse_entry", values=values,
                          error=_("Choose the ledger entry to reverse."))
    return _case_act(case_id, "reverse_entry", ledger.reverse, entry_id, reason,
                     done=M_("Entry %(num)s was reversed.", num=entry_id), values=values,
                     title=M_("Reverse a ledger entry"), printed=[(_("Entry"), raw), (_("Reason"), reason)])


@bp.route("/cases/<int:case_id>/corrections", methods=["POST"])
def correct_act(case_id: int) -> Any:
    """An officer corrects a clerical mistake: the case's latest act (``act``) is undone with a
    ``reason`` (webapp.services.corrections), through the check step; a refusal comes back beside
    the form (422)."""
    raw, reason = request.form.get("act", ""), request.form.get("reason", "")
    act_id = whole_number(raw)
    values = {"act": raw, "reason": reason}
    session = db_session()
    case = cases.get_case(session, me(), case_id)  # another Panchayat's case: 404 before anything else
    if act_id is None:
        return _case_page(case_id, status=422, action="correct_act", values=values,
                          error=_("Choose the act to correct."))
    act = corrections.get_act(session, case, act_id)
    when = format_instant(act.at, casefile.load(case.file_json).timezone)
    return _case_act(case_id, "correct_act", corrections.correct, act_id, reason,
                     done=M_("The act “%(act)s” was corrected: the case is back as it was before it.", act=M_(act.name)),
                     values=values, title=M_("Correct a clerical mistake"),
                     printed=[(_("Act"), f"{_(act.name)} ({when})"), (_("What was recorded wrongly"), reason)])


@bp.route("/cases/<int:case_id>/notice")
def notice(case_id: int) -> Any:
    """The printable notice of clause (a) with the conditional auction of clause (b)."""
    session = db_session()
    case = cases.get_case(session, me(), case_id)
    cf = casefile.load(case.file_json)
    return render_template("public/notice.html", **notice_context(case, cf, panchayat_of(session, case.panchayat_id)),
                           public=False)


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
