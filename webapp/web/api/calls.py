"""What every view of the JSON API does around its one service call: authenticate the bearer token,
read the request body and its fields, find the case named in the address, run the call as one unit
of work (or, with ``?dry_run=true``, preview it) and answer with the case as JSON.

A field of the wrong kind is refused (422, naming the field); a body that is not a JSON object is
:class:`BadBody` (400, :func:`bad_body`). The endpoints are :mod:`webapp.web.api.routes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response, abort, g, jsonify, make_response, request

from webapp.errors import NotFound as RuleNotFound
from webapp.errors import Refused
from webapp.services.cases import cases
from webapp.services.people import users
from webapp.services.running import uow
from webapp.store.models import Case, User
from webapp.web.api.errors import error_response
from webapp.web.api.shapes import case_json
from webapp.web.context import db_session, sessions
from webapp.web.pages import training

API_ROOT = "/api/v1"  # the address of the API's blueprint; a new case is at API_ROOT/cases/<id>

def authenticate() -> Response | None:
    """Every endpoint needs ``Authorization: Bearer <token>`` of an active user: None when it is
    given (the user is then :func:`api_user`, acting on the clock of a training Panchayat if theirs
    is one), else the 401 answer."""
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


def api_user() -> User:
    """The user of the bearer token (set by :func:`authenticate` before every API view)."""
    user: User = g.api_user  # set by the bearer-token check before every API view
    return user


def json_body() -> dict[str, Any]:
    """The request body as a JSON object (any Content-Type; curl -d sends form encoding)."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        raise BadBody()
    return body


class BadBody(Exception):
    """The body is not a JSON object (HTTP 400)."""


def bad_body(_error: BadBody) -> Response:
    """The 400 answer to :class:`BadBody`."""
    return error_response(400, "bad_request", "the request body must be a JSON object, e.g. {\"data\": {}}")


def optional_int(body: dict[str, Any], field: str) -> int | None:
    """A whole-number field of the body: absent/null, or a JSON integer (a boolean, text or a
    fraction is refused, naming the field)."""
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"{field} must be a whole number", {field: "not a whole number"})
    return value


def optional_text(body: dict[str, Any], field: str, where: str | None = None) -> str | None:
    """A text field of the body: absent/null, or a JSON string (a number or list is refused, not
    turned into text)."""
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        if where is None:
            raise Refused(f"{field} must be text", {field: "not text"})
        raise Refused(f"{where} must be text", {where.split("[")[0]: f"{where}: not text"})
    return value


def json_object(body: dict[str, Any], field: str) -> dict[str, Any]:
    """An object field of the body (``data``): absent/null gives ``{}``; anything but an object is refused."""
    value = body.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(f"{field} must be a JSON object", {field: "not an object"})
    return value


def render_case(case_id: int, status: int = 200) -> Response:
    """Re-read the case after a unit of work (the request session may hold a stale copy)."""
    session = db_session()
    session.rollback()  # end any read transaction and forget loaded objects
    case = cases.get_case(session, api_user(), case_id)
    response = jsonify(case_json(case, api_user()))
    response.status_code = status
    if status == 201:
        response.headers["Location"] = f"{API_ROOT}/cases/{case.id}"
    return response


MAX_ID_DIGITS = 18  # every 18-digit id fits a 64-bit integer column


def resolve_case(case_ref: str) -> Case:
    """The case by id or number, within the user's scope (else 404).

    A reference of digits that is not a plain ASCII id in the database's integer range (``²``,
    ``99999999999999999999999``) names no case: answer 404 here, because ``cases.get_case``
    would pass it to ``int()`` / the database and fail with a 500.
    """
    if case_ref.isdigit() and not (case_ref.isascii() and len(case_ref) <= MAX_ID_DIGITS):
        raise RuleNotFound(f"no case {case_ref} is open to you")
    return cases.get_case(db_session(), api_user(), case_ref)


def dry_run() -> bool:
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


def perform(action: str, case_id: int, fn: Callable[..., Case], *args: Any, **kwargs: Any) -> int:
    """Run one service call as one transaction; return the case id (a refusal is recorded).

    With ``?dry_run=true`` nothing is recorded: the act is applied and rolled back
    (:func:`webapp.services.running.uow.preview`) and the answer is ``200 {"dry_run": true, "follows":
    [{"text", "document_id"}]}`` — what would follow — or the refusal the act would meet (not
    written into the case history)."""
    user = api_user()

    def call(session: Any, *a: Any, **kw: Any) -> int:
        return fn(session, *a, **kw).id

    if dry_run():
        follows = uow.preview(sessions(), action, call, *args, case_id=case_id, user=user, **kwargs)
        abort(make_response(jsonify({"dry_run": True, "follows": [f.as_json() for f in follows]}), 200))
    return uow.perform(sessions(), action, call, *args, case_id=case_id, user=user, **kwargs)


def only_fields(body: dict[str, Any], fields: tuple[str, ...], what: str) -> None:
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
