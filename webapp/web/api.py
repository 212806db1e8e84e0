"""The JSON API under ``/api/v1``: the same operations as the officers' pages, for programs.

Every request carries ``Authorization: Bearer <token>`` (tokens come from
:func:`webapp.services.users.create_token`; only their hash is stored). Each view parses the
request, calls one service function (writes through :func:`webapp.services.uow.perform`, so a
refusal changes nothing but the case history) and renders JSON. No business rule lives here.

Shapes (docs/api.md): money as strings with two decimals, legal dates as ``YYYY-MM-DD`` in the
Panchayat's time zone, instants as ISO 8601 with the Panchayat's offset. Every error is
``{"error": {"code", "message"}}``, plus ``"fields"`` for refused form fields and ``"last_day"``
for a deadline that has passed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, Response, abort, g, jsonify, make_response, request
from sqlalchemy import select
from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.exceptions import NotFound as HTTPNotFound

from .. import casefile
from ..engine.parser import Problem, problems_of
from ..errors import AlreadySubmitted, InvalidDiagram, NotPermitted, Refused, Rule130Error
from ..errors import NotFound as RuleNotFound
from ..services import acts, cases, corrections, ledger, tasklist, tasks, uow, users
from ..store.models import Case, Panchayat, User, get_row
from . import training
from .api_json import case_brief, case_json, row_json, task_json
from .context import csrf, db_session, sessions

log = logging.getLogger("rule130.api")

bp = Blueprint("api", __name__, url_prefix="/api/v1")
csrf.exempt(bp)  # bearer tokens, not cookies: no cross-site request can carry the credential

API_PREFIX = "/api/"
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
              422: "refused", 500: "internal_error"}


# -- errors -------------------------------------------------------------------------------------

def error_response(status: int, code: str, message: str, **extra: Any) -> Response:
    """``{"error": {"code", "message", ...extra}}`` with ``status``."""
    body: dict[str, Any] = {"code": code, "message": message}
    body.update({k: v for k, v in extra.items() if v is not None})
    response = jsonify({"error": body})
    response.status_code = status
    return response


def problem_json(problem: Problem) -> dict[str, Any]:
    """One problem of a diagram for JSON: element id (or null), line (or null), message, severity (error |
    warning), and ``path`` (the element's place in the file) when the line alone does not find it."""
    found = {"element_id": problem.element_id, "line": problem.line, "message": problem.message,
             "severity": problem.severity}
    if problem.path:
        found["path"] = problem.path
    return found


def invalid_diagram_details(error: InvalidDiagram) -> dict[str, Any]:
    """What a 422 ``invalid_diagram`` carries besides its message: every problem, and the verdict when the
    pipeline gave one (:meth:`webapp.engine.parser.Verdict.as_json`; None otherwise)."""
    found = getattr(error, "verdict", None)
    return {"problems": [problem_json(p) for p in problems_of(error)],
            "verdict": found.as_json() if found is not None else None}


@bp.errorhandler(Rule130Error)
def _rule130_error(error: Rule130Error) -> Response:
    """The product's refusals, mapped by their own status (NotFound 404, NotPermitted 403,
    Conflict 409, Refused/DeadlinePassed 422; a diagram's refusal with its problems and verdict)."""
    if error.status >= 500:
        log.error("API %s %s failed: %s", request.method, request.path, error.message)
    if isinstance(error, InvalidDiagram):
        return error_response(error.status, error.code, error.message, **invalid_diagram_details(error))
    fields = (error.field_errors or None) if isinstance(error, Refused) else None
    last_day = error.details.get("last_day")
    return error_response(error.status, error.code, error.message, fields=fields,
                          last_day=str(last_day) if last_day else None)


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> Response:
    """HTTP errors raised inside an API view (a too-large body, a bad JSON body...)."""
    status = error.code or 500
    response = error_response(status, HTTP_CODES.get(status, "error"), error.description or error.name)
    if isinstance(error, MethodNotAllowed) and error.valid_methods:
        response.headers["Allow"] = ", ".join(error.valid_methods)
    return response


@bp.errorhandler(500)
def _internal_error(error: HTTPException) -> Response:
    """An unexpected failure (only when Flask does not propagate it, i.e. not under test)."""
    return error_response(500, "internal_error", "the server failed to handle the request; it was logged")


@bp.before_app_request
def _api_routing_errors() -> Response | None:
    """Unknown URL (404) or wrong method (405) under /api/: answer in JSON, not an HTML page.

    Routing errors are raised before any blueprint is chosen, so a blueprint error handler never
    sees them; checking here (before dispatch) leaves the pages' own error handlers untouched.
    """
    failure = request.routing_exception
    if failure is None or not request.path.startswith(API_PREFIX):
        return None
    if isinstance(failure, MethodNotAllowed):
        response = error_response(405, "method_not_allowed",
                                  f"{request.method} is not allowed on {request.path}")
        if failure.valid_methods:
            response.headers["Allow"] = ", ".join(failure.valid_methods)
        return response
    if isinstance(failure, HTTPNotFound):
        return error_response(404, "not_found", f"no API endpoint {request.path}")
    return None  # e.g. a redirect to the canonical URL: let Flask do it


# -- authentication -------------------------------------------------------------------------------

@bp.before_request
def _authenticate() -> Response | None:
    """Every endpoint needs ``Authorization: Bearer <token>`` of an active user (else 401)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    user = None
    if scheme.lower() == "bearer" and token.strip():
        user = users.user_for_token(db_session(), token.strip())
    if user is None:
        response = error_response(401, "unauthorized",
                                  "a valid API token is required: send 'Authorization: Bearer <token>'")
        response.headers["WWW-Authenticate"] = 'Bearer realm="rule130"'
        return response
    g.api_user = user
    training.use_clock_of(user)  # an officer of a training Panchayat acts on its clock
    return None


def _user() -> User:
    user: User = g.api_user  # set by the bearer-token check before every API view
    return user


# -- request parsing --------------------------------------------------------------------------------

def _body() -> dict[str, Any]:
    """The request body as a JSON object (any Content-Type; curl -d sends form encoding)."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        raise _BadBody()
    return body


class _BadBody(Exception):
    """The body is not a JSON object (HTTP 400)."""


@bp.errorhandler(_BadBody)
def _bad_body(_error: _BadBody) -> Response:
    return error_response(400, "bad_request", "the request body must be a JSON object, e.g. {\"data\": {}}")


def _optional_int(body: dict[str, Any], field: str) -> int | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"{field} must be a whole number", {field: "not a whole number"})
    return value


def _optional_text(body: dict[str, Any], field: str, where: str | None = None) -> str | None:
    """A text field of the body: absent/null, or a JSON string (a number or list is refused, not
    turned into text)."""
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        if where is None:
            raise Refused(f"{field} must be text", {field: "not text"})
        raise Refused(f"{where} must be text", {where.split("[")[0]: f"{where}: not text"})
    return value


def _object(body: dict[str, Any], field: str) -> dict[str, Any]:
    value = body.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(f"{field} must be a JSON object", {field: "not an object"})
    return value


def _render_case(case_id: int, status: int = 200) -> Response:
    """Re-read the case after a unit of work (the request session may hold a stale copy)."""
    session = db_session()
    session.rollback()  # end any read transaction and forget loaded objects
    case = cases.get_case(session, _user(), case_id)
    response = jsonify(case_json(case, _user()))
    response.status_code = status
    if status == 201:
        response.headers["Location"] = f"{bp.url_prefix}/cases/{case.id}"
    return response


MAX_ID_DIGITS = 18  # every 18-digit id fits a 64-bit integer column


def _resolve(case_ref: str) -> Case:
    """The case by id or number, within the user's scope (else 404).

    A reference of digits that is not a plain ASCII id in the database's integer range (``²``,
    ``99999999999999999999999``) names no case: answer 404 here, because ``cases.get_case``
    would pass it to ``int()`` / the database and fail with a 500.
    """
    if case_ref.isdigit() and not (case_ref.isascii() and len(case_ref) <= MAX_ID_DIGITS):
        raise RuleNotFound(f"no case {case_ref} is open to you")
    return cases.get_case(db_session(), _user(), case_ref)


def _dry_run() -> bool:
    """The ``dry_run`` query parameter (``true``/``1`` or ``false``/``0``; absent: false).

    Raises:
        Refused: any other value, naming it.
    """
    raw = request.args.get("dry_run")
    if raw is None or raw.lower() in ("false", "0"):
        return False
    if raw.lower() in ("true", "1"):
        return True
    raise Refused(f"dry_run is true or false, not {raw[:40]!r}", {"dry_run": "true or false"})


def _perform(action: str, case_id: int, fn: Callable[..., Case], *args: Any, **kwargs: Any) -> int:
    """Run one service call as one transaction; return the case id (a refusal is recorded).

    With ``?dry_run=true`` nothing is recorded: the act is applied and rolled back
    (:func:`webapp.services.uow.preview`) and the answer is ``200 {"dry_run": true, "follows":
    [{"text", "document_id"}]}`` — what would follow — or the refusal the act would meet (not
    written into the case history)."""
    user = _user()

    def call(session: Any, *a: Any, **kw: Any) -> int:
        return fn(session, *a, **kw).id

    if _dry_run():
        follows = uow.preview(sessions(), action, call, *args, case_id=case_id, user=user, **kwargs)
        abort(make_response(jsonify({"dry_run": True, "follows": [f.as_json() for f in follows]}), 200))
    return uow.perform(sessions(), action, call, *args, case_id=case_id, user=user, **kwargs)


# -- endpoints --------------------------------------------------------------------------------------

@bp.get("/me")
def me() -> Response:
    """The signed-in user: name, role and scope."""
    user = _user()
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


@bp.get("/tasks")
def my_tasks() -> Response:
    """My task list from the task table: ``?role=&status=&case=`` (docs/api.md), most urgent first."""
    session = db_session()
    user = _user()
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
    case = _resolve(case_ref)
    user = _user()
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
    officer = _optional_text(_body(), "officer")
    return _task_action(case_ref, task_id, "reassign_task", tasklist.reassign, officer or "")


@bp.get("/cases")
def list_cases() -> Response:
    """Cases within my scope, newest first (at most 500); ``?status=running|completed``."""
    status = request.args.get("status") or None
    if status not in (None, "running", "completed"):
        raise Refused("status must be running or completed", {"status": "running or completed"})
    found = cases.visible_cases(db_session(), _user(), status=status)
    return jsonify({"cases": [case_brief(c) for c in found]})


@bp.post("/cases")
def start_case() -> Response:
    """The pound keeper records impounded cattle: a new case (201). With an ``Idempotency-Key``
    header (8 to 80 letters, digits, ``-``, ``_``) a retry of the same call answers 200 with the
    case the first call started, and records nothing again; the key sent with another body is 422."""
    if _user().role != "pound_keeper":  # the role before the body, as the service would (403 either way)
        raise NotPermitted("only the pound keeper records impounded cattle; you are signed in as "
                           f"{_user().role.replace('_', ' ')}")
    body = _body()
    unknown = sorted(set(body) - {"impounded_at", "place_seized", "place_impounded", "nearest_village", "animals"})
    if unknown:
        raise Refused(f"unknown field {', '.join(unknown)}; a case takes impounded_at, place_seized, "
                      "place_impounded, nearest_village and animals", {name: "unknown field" for name in unknown})
    animals = body.get("animals")
    if not isinstance(animals, list) or not all(isinstance(a, dict) for a in animals):
        raise Refused("animals must be a list of objects with species, description and optionally tag",
                      {"animals": "a list of objects"})
    for field in ("impounded_at", "place_seized", "place_impounded", "nearest_village"):
        _optional_text(body, field)
    for position, animal in enumerate(animals, start=1):
        for field in ("species", "description", "tag"):
            _optional_text(animal, field, f"animals[{position}].{field}")
    user = _user()
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
        return _render_case(again.case_id, 200)  # a retry: the case the first call started
    except Refused as refused:
        if "submission" not in refused.field_errors:
            raise
        earlier = cases.case_for_submission(db_session(), user, key) if key is not None else None
        raise Refused(f"the Idempotency-Key {key} already recorded case {earlier.case_number if earlier else ''} "
                      "with another body; nothing was recorded. Send another case with a new key",
                      {"Idempotency-Key": "used for another case"}) from None
    return _render_case(case.id, 201)


POST_ONLY = re.compile(r"^(?P<case>.+)/(objections|appeals|animal-events|ledger/reversals|acts/[^/]+"
                       r"|tasks/[^/]+/(claim|release|reassign))$")  # the POST-only addresses under a case


@bp.get("/cases/<path:case_ref>")
def get_case(case_ref: str) -> Response:
    """One case by id or case number (``RMP%2F2026%2F0001``). A GET of one of the case's POST-only
    addresses (``.../objections``) is 405, not a search for a case of that name."""
    post_only = POST_ONLY.match(case_ref)
    if post_only:
        try:
            _resolve(post_only.group("case"))
        except RuleNotFound:
            pass
        else:
            response = error_response(405, "method_not_allowed", f"GET is not allowed on {request.path}; use POST")
            response.headers["Allow"] = "POST"
            return response
    case = _resolve(case_ref)
    return jsonify(case_json(case, _user()))


@bp.get("/cases/<path:case_ref>/tasks/<task_id>")
def get_task(case_ref: str, task_id: str) -> Response:
    """One ready task of my lane with its form (404 unknown, 403 another role's, 409 closed), in
    the shape of ``GET /tasks`` (todo, act_by, claims...) with the task's own form data as context."""
    case = _resolve(case_ref)
    user = _user()
    view = tasks.get_task(db_session(), user, case.id, task_id)
    tz = ZoneInfo(casefile.load(case.file_json).timezone)
    listed = row_json(tasklist.task_row(db_session(), user, case.id, task_id), user, tz, view.lock_version)
    return jsonify({**listed, **task_json(view, user, tz)})


@bp.post("/cases/<path:case_ref>/tasks/<task_id>")
def complete_task(case_ref: str, task_id: str) -> Response:
    """Complete a task with ``{"data": {...}, "lock_version": n}``; 200 with the case."""
    body = _body()
    data = _object(body, "data")
    lock_version = _optional_int(body, "lock_version")
    case = _resolve(case_ref)
    case_id = _perform("complete_task", case.id, tasks.complete_task, _user(), case.id, task_id, data, lock_version)
    return _render_case(case_id)


@bp.post("/cases/<path:case_ref>/acts/<element_id>")
def act(case_ref: str, element_id: str) -> Response:
    """Complete the ready task of a diagram element (``ut_record_bid``...) without its task id:
    the rule checks run first, so a late act is refused naming the last day even after the timer
    closed the task. ``{"data": {...}, "objector": "...", "lock_version": n}`` (objector picks the
    claim's task; lock_version, if given, must be the case's, else 409)."""
    body = _body()
    unknown = sorted(set(body) - {"data", "objector", "lock_version"})
    if unknown:
        raise Refused(f"unknown field {', '.join(unknown)}; an act takes data, objector and lock_version",
                      {name: "unknown field" for name in unknown})
    data = _object(body, "data")
    objector = _optional_text(body, "objector")
    lock_version = _optional_int(body, "lock_version")
    match = {"objector": objector} if objector is not None else {}
    case = _resolve(case_ref)
    case_id = _perform(element_id, case.id, tasks.act, _user(), case.id, element_id, data, lock_version, **match)
    return _render_case(case_id)


def _only(body: dict[str, Any], fields: tuple[str, ...], what: str) -> None:
    """Refuse a body with a field other than ``fields`` (``what`` names the call), naming it: a
    misspelt or misplaced field must not be dropped without a word.

    Raises:
        Refused: an unknown field (422, ``{field: "unknown field"}``).
    """
    unknown = sorted(set(body) - set(fields))
    if unknown:
        listed = ", ".join(fields[:-1]) + f" and {fields[-1]}" if len(fields) > 1 else fields[0]
        raise Refused(f"unknown field {', '.join(unknown)}; {what} takes {listed}",
                      {name: "unknown field" for name in unknown})


@bp.post("/cases/<path:case_ref>/objections")
def file_objection(case_ref: str) -> Response:
    """The secretary records an objection ``{"objector"}`` (Rule 130(a), (c)); 201 with the case."""
    body = _body()
    _only(body, ("objector",), "an objection")
    case = _resolve(case_ref)
    case_id = _perform("file_objection", case.id, cases.file_objection, _user(), case.id,
                       _optional_text(body, "objector"))
    return _render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/appeals")
def file_appeal(case_ref: str) -> Response:
    """The secretary records an appeal ``{"appellant"}`` (Rule 130(e) proviso); 201 with the case."""
    body = _body()
    _only(body, ("appellant",), "an appeal")
    case = _resolve(case_ref)
    case_id = _perform("file_appeal", case.id, cases.file_appeal, _user(), case.id,
                       _optional_text(body, "appellant"))
    return _render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/animal-events")
def animal_event(case_ref: str) -> Response:
    """The pound keeper records a death or escape ``{"kind", "tag" | "position"}``, or a birth
    ``{"kind": "birth", "tag" | "position" (the mother), "born_on"?, "calf_description"?, "calf_tag"?}``;
    201 with the case."""
    body = _body()
    if body.get("kind") == "birth":
        _only(body, ("kind", "tag", "position", "born_on", "calf_description", "calf_tag"), "a birth")
    else:
        _only(body, ("kind", "tag", "position"), "a death or an escape")
    tag = _optional_text(body, "tag")
    position = _optional_int(body, "position")
    _optional_text(body, "kind")
    birth = {k: _optional_text(body, k) for k in ("born_on", "calf_description", "calf_tag")}
    if (tag is None) == (position is None):
        raise Refused("give the animal's tag or its position (1, 2, ...): one of them, not both" if tag is not None
                      else "give the animal's tag or its position (1, 2, ...)",
                      {"tag": "tag or position", "position": "tag or position"})
    case = _resolve(case_ref)
    kind = str(body.get("kind") or "")
    action = {"death": "record_death", "escape": "record_escape", "birth": "record_birth"}.get(kind,
                                                                                           "record_animal_event")
    extra = birth if kind == "birth" else {}
    case_id = _perform(action, case.id, cases.record_animal_event, _user(), case.id, kind, tag=tag,
                       position=position, **extra)
    return _render_case(case_id, 201)


@bp.get("/cases/<path:case_ref>/corrections")
def case_acts(case_ref: str) -> Response:
    """The case's acts, latest first: ``{"acts": [{"id", "name", "element_id", "at", "actor_role",
    "corrected_at", "correction_reason"}], "correctable": {"act": id, "refusal": message | null} | null}``
    — whether I may correct the latest act now, and if not, why."""
    case = _resolve(case_ref)
    session = db_session()
    latest, refusal = corrections.correctable(session, _user(), case)
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
    """Correct a clerical mistake ``{"act": id, "reason": "..."}`` (webapp.services.corrections):
    the case is put back as the act found it; 201 with the case."""
    body = _body()
    _only(body, ("act", "reason"), "a correction")
    act_id = _optional_int(body, "act")
    reason = _optional_text(body, "reason")
    case = _resolve(case_ref)
    if act_id is None:
        raise Refused("give the id of the act to correct (GET .../corrections lists them)", {"act": "required"})
    case_id = _perform("correct_act", case.id, corrections.correct, _user(), case.id, act_id, reason or "")
    return _render_case(case_id, 201)


@bp.post("/cases/<path:case_ref>/ledger/reversals")
def reverse_entry(case_ref: str) -> Response:
    """The secretary reverses ledger entry ``{"entry": id, "reason": "..."}``; 201 with the case."""
    body = _body()
    _only(body, ("entry", "reason"), "a reversal")
    entry_id = _optional_int(body, "entry")
    reason = _optional_text(body, "reason")
    case = _resolve(case_ref)
    ledger.check_reverser(_user())
    if entry_id is None:
        raise Refused("give the id of the ledger entry to reverse", {"entry": "required"})

    def reverse(session: Any, user: User, case_id: int, *args: Any) -> Case:
        ledger.reverse(session, user, case_id, *args)
        return get_row(session, Case, case_id)

    case_id = _perform("reverse_entry", case.id, reverse, _user(), case.id, entry_id, reason or "")
    return _render_case(case_id, 201)
