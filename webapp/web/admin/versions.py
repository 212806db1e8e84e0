"""Administrators' pages and API for process versions: list, download, compare, redeploy, and move
running cases to another version (dry run first). Administrators only (others get 403); every
form carries a CSRF token; each view parses the request, calls one service function and renders.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, g, jsonify, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy.orm import Session

from webapp.errors import NotPermitted, Refused, Rule130Error
from webapp.i18n import M_, flash_message
from webapp.services.cases import migration
from webapp.services.diagrams import repository, versions
from webapp.services.running import uow
from webapp.store.models import User
from webapp.web.api import calls as api_request
from webapp.web.api import errors as api_errors
from webapp.web.context import csrf, db_session, sessions, unauthorized

bp = Blueprint("admin_versions", __name__, url_prefix="/admin/processes")
api_bp = Blueprint("api_versions", __name__, url_prefix="/api/v1/processes")
csrf.exempt(api_bp)  # bearer tokens, as the rest of the API

NOTE_LIMIT = 500




def _note(value: Any) -> str:
    if value is not None and not isinstance(value, str):
        raise Refused(M_("the note must be text"), {"note": M_("not text")})
    note = (value or "").strip()
    if len(note) > NOTE_LIMIT:
        raise Refused(M_("the note is longer than %(NOTE_LIMIT)s characters", NOTE_LIMIT=NOTE_LIMIT), {"note": M_("too long")})
    return note


def _two_versions() -> tuple[int, int]:
    a, b = request.args.get("a", type=int), request.args.get("b", type=int)
    if a is None or b is None:
        raise Refused(M_("choose two versions to compare, e.g. ?a=1&b=2"), {"a": M_("a version number"), "b": M_("a version number")})
    return a, b


def _zip(process_id: str, number: int) -> Response:
    name, data = versions.download(db_session(), process_id, number)
    response = Response(data, mimetype="application/zip")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# -- pages ----------------------------------------------------------------------------------------

@bp.before_request
def _only_administrators() -> Any:
    if not current_user.is_authenticated:
        return unauthorized()
    versions.actor_name(current_user.user)  # NotPermitted (403) unless an installation-wide administrator
    return None


def _me() -> User:
    user: User = current_user.user  # a LoginUser (officer_sessions) wraps the row
    return user


def listing_context(session: Session) -> dict[str, Any]:
    """What the processes page (``modeler.process_list`` at /admin/processes) shows about versions:
    every process with its current version and running cases per version, and the process audit trail."""
    return {"processes": versions.processes(session), "trail": versions.trail(session, limit=50)}


@bp.get("/<process_id>/versions")
def version_list(process_id: str) -> Any:
    """The versions of one process, newest first, with download, compare, redeploy and move."""
    session = db_session()
    listed = versions.list_versions(session, process_id)
    return render_template("admin/versions.html", process_id=process_id, versions=listed,
                           trail=versions.trail(session, process_id, limit=50))


@bp.get("/<process_id>/versions/<int:number>/download")
def download(process_id: str, number: int) -> Any:
    """A zip of the version's BPMN and forms, byte for byte as deployed."""
    return _zip(process_id, number)


@bp.get("/<process_id>/versions/diff")
def diff(process_id: str) -> Any:
    """What changed between versions ``a`` and ``b`` (query parameters)."""
    a, b = _two_versions()
    return render_template("admin/diff.html", process_id=process_id,
                           diff=versions.compare(db_session(), process_id, a, b))


@bp.post("/<process_id>/versions/<int:number>/redeploy")
def redeploy(process_id: str, number: int) -> Any:
    """Deploy version ``number`` again as a new version (form field ``note``, optional)."""
    def act(session: Any) -> Any:
        return repository.redeploy(session, _me(), process_id, number, _note(request.form.get("note")))

    version = uow.perform(sessions(), "redeploy", act)
    flash_message(M_("Version %(number)s deployed again as version %(new)s. Running cases stay on their versions; "
                     "move them from the version's page.", number=number, new=version.version), "success")
    return redirect(url_for("admin_versions.version_list", process_id=process_id))


@bp.get("/<process_id>/versions/<int:number>/migrate")
def migrate_plan(process_id: str, number: int) -> Any:
    """The dry run: every running case, whether it can move to version ``number`` and why not."""
    verdicts = migration.plan(db_session(), _me(), process_id, number)
    return render_template("admin/migrate.html", process_id=process_id, number=number, verdicts=verdicts,
                           movable=sum(v.movable for v in verdicts))


@bp.post("/<process_id>/versions/<int:number>/migrate")
def migrate(process_id: str, number: int) -> Any:
    """Move one case (form field ``case``: its number) or, without it, every movable case."""
    case_ref = (request.form.get("case") or "").strip()
    if case_ref:
        try:
            verdict = migration.move_case(sessions(), _me(), process_id, number, case_ref)
        except Refused as refused:
            flash_message(refused.message, "error")
        else:
            flash_message(M_("Case %(case)s moved from version %(from)s to %(to)s.", case=verdict.case_number,
                             **{"from": verdict.version_from, "to": verdict.version_to}), "success")
    else:
        results = migration.move_all(sessions(), _me(), process_id, number)
        moved = [r.verdict.case_number for r in results if r.moved]
        left = [r for r in results if not r.moved and r.verdict.version_from != number]
        cases, num = ", ".join(moved), len(moved)
        if moved and left:
            said = M_("%(num)s case(s) moved to version %(number)s: %(cases)s; %(left)s could not move (see below).",
                      num=num, number=number, cases=cases, left=len(left))
        elif moved:
            said = M_("%(num)s case(s) moved to version %(number)s: %(cases)s.", num=num, number=number, cases=cases)
        elif left:
            said = M_("No case moved to version %(number)s; %(left)s could not move (see below).",
                      number=number, left=len(left))
        else:
            said = M_("No case moved to version %(number)s.", number=number)
        flash_message(said, "success" if moved else "info")
    return redirect(url_for("admin_versions.migrate_plan", process_id=process_id, number=number))


# -- JSON API (docs/api.md) ---------------------------------------------------------------------------

@api_bp.before_request
def _api_admin() -> Any:
    failure = api_request.authenticate()
    if failure is not None:
        return failure
    try:
        versions.actor_name(g.api_user)
    except NotPermitted as refused:
        return api_errors.error_response(403, "forbidden", refused.message)
    return None


@api_bp.errorhandler(Rule130Error)
def _api_error(error: Rule130Error) -> Response:
    return api_errors.rule130_error(error)


@api_bp.get("")
def api_processes() -> Any:
    return jsonify({"processes": [{"process": p.process_id, "current_version": p.current, "versions": p.versions,
                                   "running_cases": {str(k): v for k, v in sorted(p.running_cases.items())}}
                                  for p in versions.processes(db_session())]})


@api_bp.get("/<process_id>/versions")
def api_versions(process_id: str) -> Any:
    return jsonify({"versions": [v.as_json() for v in versions.list_versions(db_session(), process_id)]})


@api_bp.get("/<process_id>/versions/<int:number>/download")
def api_download(process_id: str, number: int) -> Any:
    return _zip(process_id, number)


@api_bp.get("/<process_id>/versions/diff")
def api_diff(process_id: str) -> Any:
    a, b = _two_versions()
    return jsonify(versions.compare(db_session(), process_id, a, b).as_json())


@api_bp.post("/<process_id>/versions/<int:number>/redeploy")
def api_redeploy(process_id: str, number: int) -> Any:
    body = request.get_json(force=True, silent=True)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return api_errors.error_response(400, "bad_request", "the request body must be a JSON object, e.g. {\"note\": \"...\"}")

    def act(session: Any) -> dict[str, Any]:
        version = repository.redeploy(session, g.api_user, process_id, number, _note(body.get("note")))
        return {"version": version.version, "note": version.note, "redeploy_of": version.redeploy_of,
                "content_hash": version.content_hash}

    return jsonify(uow.perform(sessions(), "redeploy", act)), 201


@api_bp.get("/<process_id>/versions/<int:number>/migration")
def api_migration_plan(process_id: str, number: int) -> Any:
    verdicts = migration.plan(db_session(), g.api_user, process_id, number, request.args.get("case") or None)
    return jsonify({"version": number, "cases": [v.as_json() for v in verdicts],
                    "movable": sum(v.movable for v in verdicts)})


@api_bp.post("/<process_id>/versions/<int:number>/migration")
def api_migrate(process_id: str, number: int) -> Any:
    body = request.get_json(force=True, silent=True)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return api_errors.error_response(400, "bad_request", "the request body must be a JSON object, e.g. "
                                  "{\"case\": \"RMP/2026/0001\"} or {} for every movable case")
    case_ref = body.get("case")
    if case_ref is not None and not isinstance(case_ref, str):
        raise Refused(M_("case must be a case number (text)"), {"case": M_("not text")})
    if case_ref:
        verdict = migration.move_case(sessions(), g.api_user, process_id, number, case_ref)
        return jsonify({"version": number, "cases": [{**verdict.as_json(), "moved": True}], "moved": 1})
    results = migration.move_all(sessions(), g.api_user, process_id, number)
    return jsonify({"version": number, "cases": [r.as_json() for r in results], "moved": sum(r.moved for r in results)})


@api_bp.get("/<process_id>/audit")
def api_audit(process_id: str) -> Any:
    rows = versions.trail(db_session(), process_id)
    return jsonify({"audit": [{"at": r.at.isoformat(), "action": r.action, "actor": r.actor,
                               "version_from": r.version_from, "version_to": r.version_to,
                               "case_id": r.case_id, "note": r.note} for r in rows]})
