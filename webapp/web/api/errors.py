"""The JSON API's errors: every failure under ``/api/`` as ``{"error": {"code", "message"}}``.

``"fields"`` is added for refused form fields, ``"last_day"`` for a deadline that has passed and
``"then"`` for what can still be done, and by whom (docs/api.md); a refused diagram carries its problems and verdict. The API's blueprints
(:mod:`webapp.web.api.routes`, the tariffs and process versions) register these functions as their error
handlers; no page's error handler is touched.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, jsonify, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.exceptions import NotFound as HTTPNotFound

from webapp.engine.diagrams.problems import Problem, problems_of
from webapp.errors import InvalidDiagram, Refused, Rule130Error

log = logging.getLogger("rule130.api")

API_PREFIX = "/api/"
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
              422: "refused", 500: "internal_error"}


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
    pipeline gave one (:meth:`webapp.engine.diagrams.verdicts.Verdict.as_json`; None otherwise)."""
    found = getattr(error, "verdict", None)
    return {"problems": [problem_json(p) for p in problems_of(error)],
            "verdict": found.as_json() if found is not None else None}


def rule130_error(error: Rule130Error) -> Response:
    """The product's refusals, mapped by their own status (NotFound 404, NotPermitted 403,
    Conflict 409, Refused/DeadlinePassed 422; a diagram's refusal with its problems and verdict)."""
    if error.status >= 500:
        log.error("API %s %s failed: %s", request.method, request.path, error.message)
    if isinstance(error, InvalidDiagram):
        return error_response(error.status, error.code, error.message, then=error.then,
                              **invalid_diagram_details(error))
    fields = (error.field_errors or None) if isinstance(error, Refused) else None
    last_day = error.details.get("last_day")
    return error_response(error.status, error.code, error.message, fields=fields,
                          last_day=str(last_day) if last_day else None, then=error.then)


def http_error(error: HTTPException) -> Response:
    """HTTP errors raised inside an API view (a too-large body, a bad JSON body...)."""
    status = error.code or 500
    response = error_response(status, HTTP_CODES.get(status, "error"), error.description or error.name)
    if isinstance(error, MethodNotAllowed) and error.valid_methods:
        response.headers["Allow"] = ", ".join(error.valid_methods)
    return response


def internal_error(error: HTTPException) -> Response:
    """An unexpected failure (only when Flask does not propagate it, i.e. not under test)."""
    return error_response(500, "internal_error", "the server failed to handle the request; it was logged")


def routing_error() -> Response | None:
    """Unknown URL (404) or wrong method (405) under /api/: answer in JSON, not an HTML page; None
    for any other request.

    Routing errors are raised before any blueprint is chosen, so a blueprint error handler never
    sees them; the API's blueprint runs this before every request of the application (before
    dispatch), which leaves the pages' own error handlers untouched.
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
