"""Error pages: the product's refusals and HTTP errors mapped once to a status and a message.

Pages get an HTML page with the message and its next step (what can still be done, and by whom);
paths under ``/api/`` get JSON ``{"error": {"code": ..., "message": ..., "then": ...}}`` with the same
status. No stack trace ever reaches a
user: an unexpected exception is logged and answered with a plain apology (500).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify, make_response, render_template, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, InternalServerError

from webapp.errors import AlreadySubmitted, CaseHeld, Refused, Rule130Error, SentTwice

log = logging.getLogger("rule130.web")

CSRF_MESSAGE = _l("This form has expired or was not sent from this site, so nothing was saved. "
                  "Reload the page and submit the form again.")


def wants_json() -> bool:
    """True for requests to the JSON API (paths under ``/api/``)."""
    return request.path.startswith("/api/")


def _json(code: str, message: str, status: int, **extra: Any) -> tuple[Response, int]:
    body: dict[str, Any] = {"code": code, "message": message}
    body.update({k: v for k, v in extra.items() if v})
    return jsonify({"error": body}), status


def _page(template: str, status: int, **context: Any) -> tuple[str, int]:
    return render_template(template, status=status, **context), status


def handle_rule130_error(error: Rule130Error) -> Any:
    """A refusal of the product: its message with its status (422, 404, 403, 409, 500...)."""
    if error.status >= 500:
        log.error("%s on %s %s: %s", type(error).__name__, request.method, request.path, error.message,
                  exc_info=error)
    if wants_json():  # the same shape as the API blueprint's own handler (docs/api.md)
        fields = error.field_errors if isinstance(error, Refused) else None
        last_day = error.details.get("last_day")
        return _json(error.code, error.message, error.status, fields=fields,
                     last_day=str(last_day) if last_day else None, then=error.then)
    if isinstance(error, CaseHeld):
        title = _("Case on hold")
    elif isinstance(error, (SentTwice, AlreadySubmitted)):
        title = _("Already done")
    else:
        titles = {403: _("Not permitted"), 404: _("Not found"), 409: _("Changed by someone else"), 422: _("Refused")}
        title = titles.get(error.status, _("Error"))
    return _page("errors/error.html", error.status, title=title, message=error.message, then=error.then)


def handle_not_found(error: HTTPException) -> Any:
    if wants_json():
        return _json("not_found", "no such resource", 404)
    return _page("errors/error.html", 404, title=_("Not found"),
                 message=_("There is no such page, or it is not open to you."))


def handle_method_not_allowed(error: HTTPException) -> Any:
    if wants_json():
        response, status = _json("method_not_allowed", f"{request.method} is not allowed here", 405)
    else:
        body, status = _page("errors/error.html", 405, title=_("Not allowed"),
                             message=_("This page cannot be used with %(method)s. Go back and use the links "
                                       "and buttons on the page.", method=request.method))
        response = make_response(body)
    valid = getattr(error, "valid_methods", None)
    if valid:
        response.headers["Allow"] = ", ".join(valid)
    return response, status


def handle_csrf_error(error: CSRFError) -> Any:
    if wants_json():
        return _json("csrf_failed", "the CSRF token is missing or invalid", 400)
    return _page("errors/error.html", 400, title=_("Form expired"), message=str(CSRF_MESSAGE))


def handle_http_error(error: HTTPException) -> Any:
    """Any other HTTP error (400, 413, ...): its standard name and short description."""
    status = error.code or 500
    if status >= 500:
        return handle_internal_error(error)
    if wants_json():
        return _json(error.name.lower().replace(" ", "_"), error.description or error.name, status)
    titles = {400: _("Bad request"), 413: _("Too large"), 414: _("Address too long"), 415: _("Unsupported data"),
              429: _("Too many requests")}
    messages = {400: _("The request could not be understood. Go back, reload the page and try again."),
                413: _("What was sent is larger than this site accepts."),
                429: error.description or _("Too many requests in a short time; wait a minute and try again.")}
    return _page("errors/error.html", status, title=titles.get(status, _("Error")),
                 message=messages.get(status, _("This request cannot be handled (error %(status)s).", status=status)))


def handle_internal_error(error: Exception) -> Any:
    """500: a plain apology; the exception goes to the log (Flask has logged the traceback of an
    unhandled exception already; this line adds the request that caused it)."""
    original = getattr(error, "original_exception", None) or error
    log.error("internal error on %s %s: %s: %s", request.method, request.path, type(original).__name__, original)
    if wants_json():
        return _json("internal_error", "something went wrong on the server; nothing more is shown here", 500)
    # A standalone template: it must render even when the database is the problem.
    return render_template("errors/500.html"), 500


def register(app: Flask) -> None:
    """Install the error handlers on ``app``."""
    app.register_error_handler(Rule130Error, handle_rule130_error)
    app.register_error_handler(CSRFError, handle_csrf_error)
    app.register_error_handler(404, handle_not_found)
    app.register_error_handler(405, handle_method_not_allowed)
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(InternalServerError, handle_internal_error)
