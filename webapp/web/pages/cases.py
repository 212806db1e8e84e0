"""The officers' case pages: the cases I may see (and a search among them), a new case, the case
page with the acts made from it (an objection, an appeal, a death, escape or birth in the pound, a
ledger reversal, a correction) and the printable notice.

They are views of the officers' blueprint (:data:`webapp.web.pages.officer.bp`, endpoints
``officer.case_list``, ``officer.case``...), added to it when this module is imported, before the
application registers the blueprint (webapp.web). Each view parses the request, calls one service
(through ``uow.perform`` when it changes something) and renders; an act from the case page goes
through the check step (:mod:`webapp.web.pages.check`) and a refusal comes back beside the form that
caused it (HTTP 422).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import redirect, render_template, request, url_for
from flask_babel import gettext as _

from webapp.errors import AlreadySubmitted, NotPermitted, Refused
from webapp.i18n import M_, Message, flash_message, localize
from webapp.i18n.formats import format_instant
from webapp.services.cases import cases, corrections, overview, receivers, search
from webapp.services.diagrams import pictures
from webapp.services.money import ledger
from webapp.services.papers import appeal_words, documents
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.values import casefile, clock
from webapp.values.casefile import Appeal, CaseFile
from webapp.values.digits import ascii_digits
from webapp.values.tariff import SPECIES
from webapp.web.context import db_session, sessions
from webapp.web.pages import check
from webapp.web.pages.diagrams import version_picture
from webapp.web.pages.officer import bp, me, words
from webapp.web.pages.public import DEFAULT_TZ, fmt_words, notice_context, panchayat_of
from webapp.web.pages.task_forms import whole_number

ANIMAL_ROWS = 5
MAX_ANIMAL_ROWS = 100


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
    context = {"species": SPECIES, "tz": tz, "panchayat": panchayat, "max_rows": MAX_ANIMAL_ROWS}
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
    asked = check.step()
    if asked == check.CHANGE:
        return render_template("officer/new_case.html", values=values, rows=rows, error=None, field_errors={},
                               **context)
    impounded_at = _impounded_at(values["impounded_at"], tz)
    act: dict[str, Any] = {"impounded_at": impounded_at, "place_seized": values["place_seized"],
                           "place_impounded": values["place_impounded"], "nearest_village": values["nearest_village"],
                           "animals": animals, "submission_key": values["submission"] or None}
    try:
        if asked == check.CHECK:
            follows = uow.preview(sessions(), "start_case", cases.start_case, user, **act, user=user)
            return _opening_check(values, rows, animals, impounded_at, tz, follows)
        case, told = uow.perform_told(sessions(), "start_case", cases.start_case, user, **act, user=user)
    except AlreadySubmitted as again:
        flash_message(again.message, "info")
        if again.case_id:
            return redirect(url_for("officer.case", case_id=again.case_id))
        return redirect(url_for("officer.my_tasks"))
    except Refused as refused:
        if "submission" in refused.field_errors:  # the key recorded another case: a new key for this form
            values["submission"] = uuid.uuid4().hex
        return render_template("officer/new_case.html", values=values, rows=rows, error=refused.message,
                               then=refused.then, field_errors=refused.field_errors, **context), 422
    check.tell(M_("Case %(number)s opened.", number=case.case_number), told, case.id)  # with what followed
    return redirect(url_for("officer.case", case_id=case.id))


def _opening_check(values: dict[str, str], rows: list[dict[str, str]], animals: list[dict[str, str]],
                   impounded_at: datetime | str, tz: str, follows: list[Any]) -> Any:
    """The check page of a new case: the impoundment as it will be recorded (the instant in the
    Panchayat's zone, the places, each animal) and what follows (the release window's last day, the
    tasks and timers the diagram opens), with Confirm and Change posting the form's values again."""
    printed: list[tuple[str, str]] = [
        (_("Impounded on"), format_instant(impounded_at, tz) if isinstance(impounded_at, datetime) else str(impounded_at)),
        (_("Place seized"), values["place_seized"].strip()),
        (_("Place impounded (pound)"), values["place_impounded"].strip()),
        (_("Village nearest the place of seizure (where the notice is published)"), values["nearest_village"].strip())]
    for n, animal in enumerate(animals, start=1):
        described = ", ".join(part for part in (fmt_words(animal["species"]) if animal["species"] else "",
                                                animal["description"],
                                                _("tag %(tag)s", tag=animal["tag"]) if animal["tag"] else "") if part)
        printed.append((_("Animal %(num)s", num=n), described))
    hidden: dict[str, Any] = dict(values, rows=len(rows))
    for n, row in enumerate(rows, start=1):
        hidden.update({f"species-{n}": row["species"], f"description-{n}": row["description"], f"tag-{n}": row["tag"]})
    return check.render(title=M_("open the case"), printed=printed, follows=follows, hidden=hidden,
                        back=url_for("officer.new_case"), case_number=_("New case"))


def _case_page(case_id: int, *, status: int = 200, action: str | None = None, error: str | None = None,
               values: dict[str, str] | None = None, then: str | None = None) -> Any:
    """The case page; ``action``/``error`` put a refusal beside the action form that caused it, with
    ``then``, what can still be done (:attr:`webapp.errors.Rule130Error.then`)."""

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
    # the diagram drawn on the server (cached per version and language) with the case's marks over it;
    # ?diagram=whole shows all of it, else the part around the active steps
    picture = version_picture(version)
    drawn_marks = pictures.marks(picture.drawing, marks.done, marks.active, marks.waiting)
    whole = request.args.get("diagram") == "whole"
    part = None if whole else pictures.around(picture.drawing, drawn_marks)
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
        # the receiving officers the secretary may name instead of the one named (None: not now)
        "receivers": (users.receiving_officers(session, case.case_number)
                      if running and user.role == "secretary" and receivers.replaceable(cf) is None else None),
        "version": version, "marks": marks, "done": marks.done, "active": marks.active, "waiting": marks.waiting,
        "active_names": [names.get(i) or i for i in marks.active],
        "waiting_names": [names.get(i) or i for i in marks.waiting],
        "timer": overview.next_timer(run.wf) if running else None,
        "picture": picture, "drawn_marks": drawn_marks, "diagram_part": part, "diagram_whole": whole,
        "undrawn_names": [overview.elements(version.bpmn_xml).get(i, ("", ""))[0] or i for i in picture.drawing.undrawn],
        "running": running, "action": action, "action_error": error, "action_then": then, "values": values or {},
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
            follows, warnings = check.preview(sessions(), action, fn, user, case_id, *args, case_id=case_id, user=user,
                                              **kwargs)
            case = cases.get_case(db_session(), user, case_id)
            last = cases.deadlines(casefile.load(case.file_json)).get(deadline) if deadline else None
            return check.render(title=title or M_(words(action)), printed=printed or [], follows=follows,
                                hidden=values, back=url_for("officer.case", case_id=case_id),
                                case_number=case.case_number,
                                deadline=(deadline.removesuffix("_last_day") + "_period", last)
                                if deadline and last else None, warnings=warnings)
        _case, told = uow.perform_told(sessions(), action, fn, user, case_id, *args, case_id=case_id, user=user, **kwargs)
    except Refused as refused:
        return _case_page(case_id, status=422, action=action, error=refused.message, values=values,
                          then=refused.then)
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


@bp.app_template_global("appeal_against")
def appeal_against(cf: CaseFile, appeal: Appeal | None = None) -> str:
    """The decision ``appeal`` is against (None: that an appeal filed now would be against), in the
    page's language: "the order that the auction stand (Monday, 9 February 2026)", "the order on
    the objection of Ramesh (…)" (:func:`webapp.services.papers.appeal_words.appeal_against`)."""
    return localize(appeal_words.appeal_against(cf, appeal))


@bp.route("/cases/<int:case_id>/appeals", methods=["POST"])
def file_appeal(case_id: int) -> Any:
    """The secretary records an appeal against the Panchayat's decision (named: the order that the
    auction stand, or the order on whose objection)."""
    appellant = request.form.get("appellant", "").strip()
    cf = casefile.load(cases.get_case(db_session(), me(), case_id).file_json)
    against = appeal_words.appeal_against(cf, appellant=appellant or None)
    return _case_act(case_id, "file_appeal", cases.file_appeal, appellant,
                     done=M_("The appeal of %(name)s was recorded.", name=appellant), values={"appellant": appellant},
                     title=M_("File an appeal against %(decision)s", decision=against),
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
    ``reason`` (webapp.services.cases.corrections), through the check step; a refusal comes back beside
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


@bp.route("/cases/<int:case_id>/receiving-officer", methods=["POST"])
def replace_receiver(case_id: int) -> Any:
    """The secretary names the right receiving officer (``receiver``, a user name from the list) in
    place of one named by mistake, with a ``reason`` (webapp.services.cases.receivers), through the
    check step; a refusal comes back beside the form (422)."""
    receiver, reason = request.form.get("receiver", ""), request.form.get("reason", "")
    session = db_session()
    case = cases.get_case(session, me(), case_id)  # another Panchayat's case: 404 before anything else
    cf = casefile.load(case.file_json)
    chosen = next((u for u in users.receiving_officers(session, case.case_number) if u.username == receiver), None)
    named = f"{chosen.display_name} ({chosen.username})" if chosen is not None else receiver
    return _case_act(case_id, "replace_receiver", receivers.replace, receiver, reason,
                     done=M_("%(receiver)s is now the receiving officer of the case.", receiver=named),
                     values={"receiver": receiver, "reason": reason}, title=M_("Name another receiving officer"),
                     printed=[(_("Receiving officer named"), cf.dispatch.receiver if cf.dispatch else "—"),
                              (_("Receiving officer from now"), named), (_("Reason"), reason)])


@bp.route("/cases/<int:case_id>/notice")
def notice(case_id: int) -> Any:
    """The printable notice of clause (a) with the conditional auction of clause (b)."""
    session = db_session()
    case = cases.get_case(session, me(), case_id)
    cf = casefile.load(case.file_json)
    return render_template("public/notice.html", **notice_context(case, cf, panchayat_of(session, case.panchayat_id)),
                           public=False)
