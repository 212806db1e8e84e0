"""Administrators' tariff page and API: the rates in force, their history, and a new rate with its
effective day (webapp.services.money.tariffs). Administrators only (others 403), within their scope
(another Samiti's Panchayat: 404); every form carries a CSRF token; rates are only added.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g, jsonify, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from webapp.errors import NotPermitted, Refused, Rule130Error
from webapp.i18n import M_, flash_message
from webapp.services.money import tariffs
from webapp.services.running import uow
from webapp.store.models import Panchayat, User
from webapp.values.tariff import SPECIES
from webapp.web.api import calls as api_request
from webapp.web.api import errors as api_errors
from webapp.web.context import csrf, db_session, sessions, unauthorized

bp = Blueprint("admin_tariffs", __name__, url_prefix="/admin/tariffs")
api_bp = Blueprint("api_tariffs", __name__, url_prefix="/api/v1/tariffs")
csrf.exempt(api_bp)  # bearer tokens, as the rest of the API

FIELDS = ("species", "fine", "feeding_per_day", "effective_from", "note")


@bp.before_request
def _only_administrators() -> Any:
    if not current_user.is_authenticated:
        return unauthorized()
    if current_user.user.role != "administrator":
        raise NotPermitted(_("only an administrator sets tariffs; you are signed in as %(role)s",
                             role=_(current_user.user.role.replace("_", " "))))
    return None


def _context(session: Any, admin: User, panchayat: Panchayat | None) -> dict[str, Any]:
    tz = tariffs.zone(session, panchayat)
    today = tariffs.today(session, panchayat)  # a training Panchayat's on its own clock
    rates = tariffs.in_force(session, panchayat.id, today) if panchayat is not None else {
        row.rate.species: row.rate for row in tariffs.history(session, None) if row.status == "in_force"}
    return {"scopes": tariffs.managed(session, admin), "panchayat": panchayat, "today": today, "tz": tz,
            "in_force": [rates[s] for s in SPECIES if s in rates], "history": tariffs.history(session, panchayat),
            "first_day": tariffs.first_allowed_day(session, panchayat), "species": SPECIES}


def _page(code: str | None, *, values: dict[str, str] | None = None, error: str | None = None,
          field_errors: dict[str, str] | None = None, status: int = 200) -> Any:
    session, admin = db_session(), current_user.user
    panchayat = tariffs.scope(session, admin, code)
    return render_template("admin/tariffs.html", values=values or {}, error=error, field_errors=field_errors or {},
                           **_context(session, admin, panchayat)), status


@bp.get("")
def page() -> Any:
    """The rates in force today and their history for one scope (``?panchayat=CODE``), with the form
    for a new rate."""
    try:
        return _page(request.args.get("panchayat"))
    except Refused:  # a Samiti's administrator who chose no Panchayat: the first of theirs
        first = next((scope for scope in tariffs.managed(db_session(), current_user.user) if scope is not None), None)
        if first is None:
            raise
        return redirect(url_for("admin_tariffs.page", panchayat=first.code))


@bp.post("")
def add() -> Any:
    """Add a rate (form fields ``panchayat``, ``species``, ``fine``, ``feeding_per_day``,
    ``effective_from``, ``note``); a refusal comes back on the page with 422."""
    admin = current_user.user
    code = request.form.get("panchayat", "")
    values: dict[str, Any] = {k: request.form.get(k, "") for k in FIELDS}
    try:
        row = uow.perform(sessions(), "add_tariff", tariffs.add, admin, code, **values)
    except Refused as refused:
        return _page(code if code else None, values=values, error=refused.message,
                     field_errors=refused.field_errors, status=422)
    flash_message(M_("New rate for %(species)s in force from %(day)s.", species=M_(row.species),
                     day=row.effective_from), "success")
    return redirect(url_for("admin_tariffs.page", panchayat=code or None))


# -- JSON API (docs/api.md) ---------------------------------------------------------------------------

@api_bp.before_request
def _api_admin() -> Any:
    failure = api_request.authenticate()
    if failure is not None:
        return failure
    if g.api_user.role != "administrator":
        return api_errors.error_response(403, "forbidden", "only an administrator sets tariffs; you are signed in as "
                                  f"{g.api_user.role.replace('_', ' ')}")
    return None


@api_bp.errorhandler(Rule130Error)
def _api_error(error: Rule130Error) -> Any:
    return api_errors.rule130_error(error)


def _rate_json(row: Any, status: str | None = None) -> dict[str, Any]:
    out = {"id": row.id, "species": row.species, "fine": f"{row.fine:.2f}",
           "feeding_per_day": f"{row.feeding_per_day:.2f}", "effective_from": row.effective_from.isoformat(),
           "created_by": row.created_by, "created_at": row.created_at.isoformat(), "note": row.note}
    if status is not None:
        out["status"] = status
    return out


def _scope_json(panchayat: Panchayat | None) -> dict[str, Any] | None:
    return {"code": panchayat.code, "name": panchayat.name} if panchayat is not None else None


@api_bp.get("")
def api_tariffs() -> Any:
    """The rates in force on ``?on=YYYY-MM-DD`` (default today) and the history of one scope
    (``?panchayat=CODE``; empty: your Panchayat, or the installation)."""
    session = db_session()
    panchayat = tariffs.scope(session, g.api_user, request.args.get("panchayat"))
    on_text = request.args.get("on")
    try:
        on = tariffs._day(on_text) if on_text else tariffs.today(session, panchayat)
    except Refused as refused:
        raise Refused(refused.message.replace("effective date", "day"), {"on": "not a date"}) from None
    if panchayat is not None:
        rates = tariffs.in_force(session, panchayat.id, on)
        in_force = {s: {"fine": f"{r.fine:.2f}", "feeding_per_day": f"{r.feeding_per_day:.2f}",
                        "effective_from": r.effective_from.isoformat(), "scope": r.scope} for s, r in rates.items()}
    else:
        in_force = {}
        for row in sorted((r.rate for r in tariffs.history(session, None)
                           if r.status != "superseded" and r.rate.effective_from <= on),
                          key=lambda r: (r.effective_from, r.id)):
            in_force[row.species] = {"fine": f"{row.fine:.2f}", "feeding_per_day": f"{row.feeding_per_day:.2f}",
                                     "effective_from": row.effective_from.isoformat(), "scope": "installation"}
    return jsonify({"panchayat": _scope_json(panchayat), "on": on.isoformat(), "in_force": in_force,
                    "history": [_rate_json(r.rate, r.status) for r in tariffs.history(session, panchayat)]})


@api_bp.post("")
def api_add() -> Any:
    """Add a rate ``{"panchayat"?, "species", "fine", "feeding_per_day", "effective_from", "note"?}``; 201."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return api_errors.error_response(400, "bad_request", "the request body must be a JSON object, e.g. "
                                  "{\"species\": \"cow\", \"fine\": \"550.00\", \"feeding_per_day\": \"65.00\", "
                                  "\"effective_from\": \"2026-04-01\"}")
    code = body.get("panchayat")
    if code is not None and not isinstance(code, str):
        raise Refused("panchayat must be a Panchayat code (text)", {"panchayat": "not text"})
    row = uow.perform(sessions(), "add_tariff", tariffs.add, g.api_user, code,
                      **{k: body.get(k) for k in FIELDS})
    return jsonify(_rate_json(row)), 201
