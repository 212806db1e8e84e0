"""The JSON API under ``/api/v1``: the same operations as the officers' pages, for programs.

Every request carries ``Authorization: Bearer <token>`` (tokens come from
:func:`webapp.services.people.users.create_token`; only their hash is stored). Each view parses the
request, calls one service function (writes through :func:`webapp.services.running.uow.perform`, so a
refusal changes nothing but the case history) and renders JSON. No business rule lives here.

Shapes (docs/api.md): money as strings with two decimals, legal dates as ``YYYY-MM-DD`` in the
Panchayat's time zone, instants as ISO 8601 with the Panchayat's offset. Every error is
``{"error": {"code", "message"}}``, plus ``"fields"`` for refused form fields and ``"last_day"``
for a deadline that has passed (:mod:`webapp.web.api.errors`). What each view does around its
service call (the token, the body's fields, the case, the unit of work) is
:mod:`webapp.web.api.calls`; the JSON shapes are :mod:`webapp.web.api.shapes`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, Response, jsonify, request
from sqlalchemy import select
from werkzeug.exceptions import HTTPException

from webapp.errors import AlreadySubmitted, NotPermitted, Refused, Rule130Error
from webapp.errors import NotFound as RuleNotFound
from webapp.services.cases import cases, corrections, receivers
from webapp.services.money import ledger
from webapp.services.running import acts, uow
from webapp.services.tasks import tasklist, tasks
from webapp.store.models import Case, Panchayat, User, get_row
from webapp.values import casefile
from webapp.web.api import corrigenda
from webapp.web.api.calls import (
    API_ROOT,
    BadBody,
    api_user,
    authenticate,
    bad_body,
    json_body,
    json_object,
    only_fields,
    optional_int,
    optional_text,
    perform,
    render_case,
    resolve_case,
)
from webapp.web.api.errors import error_response, http_error, internal_error, routing_error, rule130_error
from webapp.web.api.shapes import case_brief, case_json, row_json, task_json
from webapp.web.context import csrf, db_session, sessions

bp = Blueprint("api", __name__, url_prefix=API_ROOT)
csrf.exempt(bp)  # bearer tokens, not cookies: no cross-site request can carry the credential

# errors in JSON (webapp.web.api.errors); an unknown address or method under /api/ is answered
# before dispatch, as no blueprint's error handler sees it
bp.register_error_handler(Rule130Error, rule130_error)
bp.register_error_handler(HTTPException, http_error)
bp.register_error_handler(500, internal_error)
bp.register_error_handler(BadBody, bad_body)
bp.before_app_request(routing_error)
# every endpoint needs a bearer token (webapp.web.api.calls.authenticate)
bp.before_request(authenticate)


# -- endpoints --------------------------------------------------------------------------------------

@bp.get("/me")
def me() -> Response:
    """The signed-in user: name, role and scope."""
    user = api_user()
    panchayat = db_session().get(Panchayat, user.panchayat_id) if user.panchayat_id else None
    if user.role == "receiving_officer":
        kind = "dispatched"
    elif panchayat is not None:
        kind = "panchayat"
    elif user.samiti_code:
        kind = "samiti"
    else:
        kind = "installation" if user.role == "administrator" else "none"
    return jsonify({
        "username": user.username,
        "display_name": user.display_name,
        "role": user.role,
        "scope": {
            "kind": kind,
            "panchayat": {"code": panchayat.code, "name": panchayat.name} if panchayat else None,
            "samiti": user.samiti_code or (panchayat.samiti_code if panchayat else None),
        },
    })


@bp.get("/oversight")
def oversight_of() -> Response:
    """A Samiti's or District's Panchayats (``?samiti=CODE``, ``?district=NAME``; neither: the
    token's own), read-only: the figures of webapp.services.reports.oversight.as_json."""
    from webapp.services.reports import oversight
    session, user = db_session(), api_user()
    scope = oversight.scope_for(session, user, samiti=request.args.get("samiti"), district=request.args.get("district"))
    return jsonify(oversight.as_json(oversight.overview(session, scope)))


@bp.get("/tasks")
def my_tasks() -> Response:
    """My task list from the task table: ``?role=&status=&case=`` (docs/api.md), most urgent first."""
    session = db_session()
    user = api_user()
    listing = tasks.my_tasks(session, user, role=request.args.get("role") or None,
                             status=request.args.get("status") or "ready", case=request.args.get("case") or None)
    locks = dict(session.execute(select(Case.id, Case.lock_version)
                                 .where(Case.id.in_({r.case_id for r in listing.rows}))).all()) if listing.rows else {}
    zones = {p.id: ZoneInfo(p.timezone or "Asia/Kolkata") for p in session.scalars(select(Panchayat))}
    out = [row_json(row, user, zones.get(row.panchayat_id), locks.get(row.case_id))
           for row in listing.rows]
    return jsonify({"tasks": out, "total": listing.total, "overdue": listing.overdue,
                    "today": listing.today.isoformat()})


def _task_action(case_ref: str, task_id: str, action: str, fn: Callable[..., Any], *args: Any) -> Response:
    case = resolve_case(case_ref)
    user = api_user()
    uow.perform(sessions(), action, fn, user, case.id, task_id, *args, user=user)
    session = db_session()
    session.rollback()
    row = tasklist.task_row(session, user, case.id, task_id)
    tz = ZoneInfo(casefile.load(case.file_json).timezone)
    return jsonify({"task": row_json(row, user, tz, case.lock_version)})


@bp.post("/cases/<path:case_ref>/tasks/<task_id>/claim")
def claim_task(case_ref: str, task_id: str) -> Response:
    """Claim a ready task of my lane (409 naming the officer who holds it)."""
    return _task_action(case_ref, task_id, "claim_task", tasklist.claim)


@bp.post("/cases/<path:case_ref>/tasks/<task_id>/release")
def release_task(case_ref: str, task_id: str) -> Response:
    """Give back a task I hold (409 if another officer holds it, 422 if nobody does)."""
    return _task_action(case_ref, task_id, "release_task", tasklist.release)


@bp.post("/cases/<path:case_ref>/tasks/<task_id>/reassign")
def reassign_task(case_ref: str, task_id: str) -> Response:
    """The sarpanch gives a task to ``{"officer": "<user name>"}`` of the task's role."""
    officer = optional_text(json_body(), "officer")
    return _task_action(case_ref, task_id, "reassign_task", tasklist.reassign, officer or "")


@bp.get("/cases")
def list_cases() -> Response:
    """Cases within my scope, newest first (at most 500); ``?status=running|completed``."""
    status = request.args.get("status") or None
    if status not in (None, "running", "completed"):
        raise Refused("status must be running or completed", {"status": "running or completed"})
    found = cases.visible_cases(db_session(), api_user(), status=status)
    return jsonify({"cases": [case_brief(c) for c in found]})


@bp.post("/cases")
def start_case() -> Response:
    """The pound keeper records impounded cattle: a new case (201). With an ``Idempotency-Key``
    header (8 to 80 letters, digits, ``-``, ``_``) a retry of the same call answers 200 with the
    case the first call started, and records nothing again; the key sent with another body is 422."""
    if api_user().role != "pound_keeper":  # the role before the body, as the service would (403 either way)
        raise NotPermitted("only the pound keeper records impounded cattle; you are signed in as "
                           f"{api_user().role.replace('_', ' ')}")
    body = json_body()
    unknown = sorted(set(body) - {"impounded_at", "place_seized", "place_impounded", "nearest_village", "animals"})
    if unknown:
        raise Refused(f"unknown field {', '.join(unknown)}; a case takes impounded_at, place_seized, "
                      "place_impounded, nearest_village and animals", {name: "unknown field" for name in unknown})
    animals = body.get("animals")
    if not isinstance(animals, list) or not all(isinstance(a, dict) for a in animals):
        raise Refused("animals must be a list of objects with species, description and optionally tag",
                      {"animals": "a list of objects"})
    for field in ("impounded_at", "place_seized", "place_impounded", "nearest_village"):
        optional_text(body, field)
    for position, animal in enumerate(animals, start=1):
        for field in ("species", "description", "tag"):
            optional_text(animal, field, f"animals[{position}].{field}")
    user = api_user()
    key = request.headers.get("Idempotency-Key")
    if key is not None and not cases.SUBMISSION_KEY.fullmatch(key):
        raise Refused("the Idempotency-Key header must be 8 to 80 letters, digits, '-' or '_'",
                      {"Idempotency-Key": "not a key"})
    try:
        case = uow.perform(sessions(), "start_case", cases.start_case, user,
                           impounded_at=body.get("impounded_at"), place_seized=body.get("place_seized"),
                           place_impounded=body.get("place_impounded"), nearest_village=body.get("nearest_village"),
                           animals=animals, submission_key=key, user=user)
    except AlreadySubmitted as again:
        if not again.case_id:  # the first call with this key is still being recorded
            raise
        return render_case(again.case_id, 200)  # a retry: the case the first call started
    except Refused as refused:
        if "submission" not in refused.field_errors:
            raise
        earlier = cases.case_for_submission(db_session(), user, key) if key is not None else None
        raise Refused(f"the Idempotency-Key {key} already recorded case {earlier.case_number if earlier else ''} "
                      "with another body; nothing was recorded. Send another case with a new key",
                      {"Idempotency-Key": "used for another case"}) from None
    return render_case(case.id, 201)


POST_ONLY = re.compile(r"^(?P<case>.+)/(objections|appeals|animal-events|ledger/reversals|acts/[^/]+"
                       r"|tasks/[^/]+/(claim|release|reassign))$")  # the POST-only addresses under a case


@bp.get("/cases/<path:case_ref>")
def get_case(case_ref: str) -> Response:
    """One case by id or case number (``RMP%2F2026%2F0001``). A GET of one of the case's POST-only
    addresses (``.../objections``) is 405, not a search for a case of that name."""
    post_only = POST_ONLY.match(case_ref)
    if post_only:
        try:
            resolve_case(post_only.group("case"))
        except RuleNotFound:
            pass
        else:
            response = error_response(405, "method_not_allowed", f"GET is not allowed on {request.path}; use POST")
            response.headers["Allow"] = "POST"
            return response
    case = resolve_case(case_ref)
    return jsonify(case_json(case, api_user()))


@bp.get("/cases/<path:case_ref>/tasks/<task_id>")
def get_task(case_ref: str, task_id: str) -> Response:
    """One ready task of my lane with its form (404 unknown, 403 another role's, 409 closed), in
    the shape of ``GET /tasks`` (todo, act_by, claims...) with the task's own form data as context."""
    case = resolve_case(case_ref)
    user = api_user()
    view = tasks.get_task(db_session(), user, case.id, task_id)
    tz = ZoneInfo(casefile.load(case.file_json).timezone)
    listed = row_json(tasklist.task_row(db_session(), user, case.id, task_id), user, tz, view.lock_version)
    return jsonify({**listed, **task_json(view, user, tz)})


@bp.post("/cases/<path:case_ref>/tasks/<task_id>")
def complete_task(case_ref: str, task_id: str) -> Response:
    """Complete a task with ``{"data": {...}, "lock_version": n}``; 200 with the case."""
    body = json_body()
    data = json_object(body, "data")
    lock_version = optional_int(body, "lock_version")
    case = resolve_case(case_ref)
    case_id = perform("complete_task", case.id, tasks.complete_task, api_user(), case.id, task_id, data, lock_version)
    return render_case(case_id)


@bp.post("/cases/<path:case_ref>/acts/<element_id>")
def act(case_ref: str, element_id: str) -> Response:
    """Complete the ready task of a diagram element (``ut_record_bid``...) without its task id:
    the rule checks run first, so a late act is refused naming the last day even after the timer
    closed the task. ``{"data": {...}, "objector": "...", "lock_version": n}`` (objector picks the
    claim's task; lock_version, if given, must be the case's, else 409)."""
    body = json_body()
    unknown = sorted(set(body) - {"data", "objector", "lock_version"})
    if unknown:
        raise Refused(f"unknown field {', '.join(unknown)}; an act takes data, objector and lock_version",
                      {name: "unknown field" for name in unknown})
    data = json_object(body, "data")
    objector = optional_text(body, "objector")
    lock_version = optional_int(body, "lock_version")
    match = {"objector": objector} if objector is not None else {}
    case = resolve_case(case_ref)
    case_id = perform(element_id, case.id, tasks.act, api_user(), case.id, element_id, data, lock_version, **match)
    return render_case(case_id)


@bp.post("/cases/<path:case_ref>/objections")
def file_objection(case_ref: str) -> Response:
    """The secretary records an objection ``{"objector"}`` (Rule 130(a), (c)); 201 with the case."""
    body = json_body()
    only_fields(body, ("objector",), "an objection")
    case = resolve_case(case_ref)
    case_id = perform("file_objection", case.id, cases.file_objection, api_user(), case.id,
                       optional_text(body, "objector"))
    return render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/appeals")
def file_appeal(case_ref: str) -> Response:
    """The secretary records an appeal ``{"appellant"}`` (Rule 130(e) proviso); 201 with the case."""
    body = json_body()
    only_fields(body, ("appellant",), "an appeal")
    case = resolve_case(case_ref)
    case_id = perform("file_appeal", case.id, cases.file_appeal, api_user(), case.id,
                       optional_text(body, "appellant"))
    return render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/animal-events")
def animal_event(case_ref: str) -> Response:
    """The pound keeper records a death or escape ``{"kind", "tag" | "position"}``, or a birth
    ``{"kind": "birth", "tag" | "position" (the mother), "born_on"?, "calf_description"?, "calf_tag"?}``;
    201 with the case."""
    body = json_body()
    if body.get("kind") == "birth":
        only_fields(body, ("kind", "tag", "position", "born_on", "calf_description", "calf_tag"), "a birth")
    else:
        only_fields(body, ("kind", "tag", "position"), "a death or an escape")
    tag = optional_text(body, "tag")
    position = optional_int(body, "position")
    optional_text(body, "kind")
    birth = {k: optional_text(body, k) for k in ("born_on", "calf_description", "calf_tag")}
    if (tag is None) == (position is None):
        raise Refused("give the animal's tag or its position (1, 2, ...): one of them, not both" if tag is not None
                      else "give the animal's tag or its position (1, 2, ...)",
                      {"tag": "tag or position", "position": "tag or position"})
    case = resolve_case(case_ref)
    kind = str(body.get("kind") or "")
    action = {"death": "record_death", "escape": "record_escape", "birth": "record_birth"}.get(kind,
                                                                                           "record_animal_event")
    extra = birth if kind == "birth" else {}
    case_id = perform(action, case.id, cases.record_animal_event, api_user(), case.id, kind, tag=tag,
                       position=position, **extra)
    return render_case(case_id, 201)


@bp.get("/cases/<path:case_ref>/corrections")
def case_acts(case_ref: str) -> Response:
    """The case's acts, latest first: ``{"acts": [{"id", "name", "element_id", "at", "actor_role",
    "corrected_at", "correction_reason"}], "correctable": {"act": id, "refusal": message | null} | null}``
    — whether I may correct the latest act now, and if not, why."""
    case = resolve_case(case_ref)
    session = db_session()
    latest, refusal = corrections.correctable(session, api_user(), case)
    zone = ZoneInfo(casefile.load(case.file_json).timezone)  # the Panchayat's offset, to the second
    listed = [{"id": a.id, "name": a.name, "element_id": a.element_id,
               "at": a.at.astimezone(zone).isoformat(timespec="seconds"),
               "actor_role": a.actor_role,
               "corrected_at": a.corrected_at.astimezone(zone).isoformat(timespec="seconds") if a.corrected_at else None,
               "correction_reason": a.correction_reason} for a in reversed(acts.of_case(session, case.id))]
    return jsonify({"acts": listed, "correctable": None if latest is None else {
        "act": latest.id, "refusal": None if refusal is None else refusal.message}})


@bp.post("/cases/<path:case_ref>/corrections")
def correct_act(case_ref: str) -> Response:
    """Correct a clerical mistake ``{"act": id, "reason": "..."}`` (webapp.services.cases.corrections):
    the case is put back as the act found it; 201 with the case."""
    body = json_body()
    only_fields(body, ("act", "reason"), "a correction")
    act_id = optional_int(body, "act")
    reason = optional_text(body, "reason")
    case = resolve_case(case_ref)
    if act_id is None:
        raise Refused("give the id of the act to correct (GET .../corrections lists them)", {"act": "required"})
    case_id = perform("correct_act", case.id, corrections.correct, api_user(), case.id, act_id, reason or "")
    return render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/receiving-officer")
def replace_receiver(case_ref: str) -> Response:
    """The secretary names the right receiving officer ``{"receiver": user name, "reason": "..."}``
    in place of one named by mistake, until that officer has recorded the remittance
    (webapp.services.cases.receivers); ``?dry_run=true`` says what would follow; 201 with the case."""
    body = json_body()
    only_fields(body, ("receiver", "reason"), "naming another receiving officer")
    receiver = optional_text(body, "receiver")
    reason = optional_text(body, "reason")
    case = resolve_case(case_ref)
    case_id = perform("replace_receiver", case.id, receivers.replace, api_user(), case.id, receiver or "", reason or "")
    return render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/ledger/reversals")
def reverse_entry(case_ref: str) -> Response:
    """The secretary reverses ledger entry ``{"entry": id, "reason": "..."}``; 201 with the case."""
    body = json_body()
    only_fields(body, ("entry", "reason"), "a reversal")
    entry_id = optional_int(body, "entry")
    reason = optional_text(body, "reason")
    case = resolve_case(case_ref)
    ledger.check_reverser(api_user())
    if entry_id is None:
        raise Refused("give the id of the ledger entry to reverse", {"entry": "required"})

    def reverse(session: Any, user: User, case_id: int, *args: Any) -> Case:
        ledger.reverse(session, user, case_id, *args)
        return get_row(session, Case, case_id)

    case_id = perform("reverse_entry", case.id, reverse, api_user(), case.id, entry_id, reason or "")
    return render_case(case_id, 201)


for _rule, _view, _methods in corrigenda.ROUTES:  # the corrigendum (webapp.web.api.corrigenda)
    bp.add_url_rule(_rule, view_func=_view, methods=list(_methods))
