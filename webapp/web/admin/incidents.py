"""Administrators' incidents pages: the held cases, why, and retry or skip (webapp.services.jobs.incidents).

Officers see the hold on the case and task pages through the ``case_incident`` template function
(``incidents/_held.html``).
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.errors import CaseHeld, NotPermitted, Refused
from webapp.i18n import M_, flash_message
from webapp.services.jobs import incidents
from webapp.store.models import Case, Incident
from webapp.web.context import db_session, sessions, unauthorized

bp = Blueprint("incidents", __name__, url_prefix="/admin/incidents")


@bp.app_context_processor
def _held_lookup() -> dict[str, Any]:
    def case_incident(case_id: int | None) -> Incident | None:
        """The open incident holding case ``case_id`` (for the held banner), or None."""
        if case_id is None:
            return None
        case = db_session().get(Case, case_id)
        return incidents.holding(db_session(), case) if case is not None else None
    return {"case_incident": case_incident}


@bp.before_request
def require_administrator() -> Any:
    if not current_user.is_authenticated:
        return unauthorized()
    if current_user.user.role != "administrator":
        raise NotPermitted(M_("only an administrator may handle incidents"))
    return None


@bp.get("")
def listing() -> Any:
    """Open incidents (``?all=1``: also the retried and skipped ones), newest first."""
    show_all = request.args.get("all") == "1"
    rows = incidents.listing(db_session(), current_user.user, status=None if show_all else "open")
    return render_template("incidents/list.html", rows=rows, show_all=show_all)


@bp.get("/<int:incident_id>")
def detail(incident_id: int) -> Any:
    """One incident: the element, the error, the data snapshot, the instant; retry and skip."""
    incident, case = incidents.get(db_session(), current_user.user, incident_id)
    try:
        snapshot = json.dumps(json.loads(incident.data_json), indent=2, ensure_ascii=False)
    except ValueError:
        snapshot = incident.data_json
    return render_template("incidents/detail.html", incident=incident, case=case, snapshot=snapshot)


@bp.post("/<int:incident_id>/retry")
def retry(incident_id: int) -> Any:
    """Run the held case again; on success the hold is released, else the incident stays open."""
    try:
        incident = incidents.retry(sessions(), current_user.user, incident_id)
    except CaseHeld as held:
        flash_message(M_("The retry failed; the case is still held. %(why)s", why=held.message), "error")
        return redirect(url_for("incidents.detail", incident_id=incident_id))
    except Refused as refused:
        flash_message(refused.message, "error")
        return redirect(url_for("incidents.detail", incident_id=incident_id))
    flash_message(M_("Incident %(id)s retried: the case ran on and is released.", id=incident.id), "success")
    return redirect(url_for("incidents.listing"))


@bp.post("/<int:incident_id>/skip")
def skip(incident_id: int) -> Any:
    """Release the hold without running anything; the reason is required and recorded."""
    try:
        incident = incidents.skip(sessions(), current_user.user, incident_id, request.form.get("reason", ""))
    except Refused as refused:
        flash_message(refused.message, "error")
        return redirect(url_for("incidents.detail", incident_id=incident_id))
    flash_message(M_("Incident %(id)s skipped: the case is released where it stood before the failing step.",
                     id=incident.id), "success")
    return redirect(url_for("incidents.listing"))
