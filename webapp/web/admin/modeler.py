"""The modeler for administrators: edit a process diagram and its forms in the browser, save a draft,
validate, deploy with a note; and ``POST /api/v1/process-versions``, the same pipeline for programs.

The page is bpmn-js's Modeler with its properties panel and bpmnlint, bundled by ``npm run build``
(scripts/setup.sh) into ``webapp/static/modeler/`` (not in git). It loads its data from the JSON
endpoints below (session cookie and the CSRF token in the ``X-CSRFToken`` header); the page holds no
inline script (data goes in ``data-`` attributes), so it works under a Content-Security-Policy.

Every endpoint here is for installation-wide administrators only (403 otherwise). Problems come
back as ``{"element_id", "line", "message", "severity"}`` in a 422
``{"error": {"code": "invalid_diagram", "message", "problems": [...]}}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, render_template, request
from flask_babel import force_locale, gettext, ngettext
from flask_login import current_user
from sqlalchemy.orm import Session
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from webapp.errors import InvalidDiagram, NotFound, Rule130Error
from webapp.i18n import M_, N_, translate
from webapp.i18n.formats import DEFAULT_TZ, format_instant
from webapp.i18n.languages import current_language, normalise
from webapp.i18n.stored_texts import retranslate
from webapp.services.diagrams import drafts, repository
from webapp.store.models import User
from webapp.web import errors
from webapp.web.admin import preview
from webapp.web.admin.versions import listing_context
from webapp.web.api.errors import error_response, invalid_diagram_details, problem_json
from webapp.web.api.routes import bp as api_bp
from webapp.web.context import sessions, unauthorized

bp = Blueprint("modeler", __name__, url_prefix="/admin/processes")
BUNDLE = Path(__file__).resolve().parents[2] / "static" / "modeler" / "modeler.js"
TRUE = ("1", "true", "yes", "on")


def invalid_response(error: InvalidDiagram) -> Response:
    """422 ``{"error": {"code": "invalid_diagram", "message", "problems": [...], "verdict": {...}}}`` (the
    verdict when the pipeline gave one: :meth:`webapp.engine.diagrams.verdicts.Verdict.as_json`)."""
    return error_response(422, error.code, error.message, **invalid_diagram_details(error))


def too_large_response() -> Response:
    limit = current_app.config.get("MAX_CONTENT_LENGTH") or 0
    return error_response(413, "too_large", f"the upload is larger than the limit of {limit // (1024 * 1024)} MB; "
                                            "nothing was read, saved or deployed")


# -- the pages -----------------------------------------------------------------------------------------

@bp.before_request
def _administrators_only() -> Any:
    """Signed in (else the sign-in page), and an installation-wide administrator (else 403)."""
    if not current_user.is_authenticated:
        if request.method == "GET" and not request.path.endswith("/source"):
            return unauthorized()
        return error_response(401, "unauthorized", "sign in first")
    drafts.require_process_admin(current_user.user)
    return None


def _json_endpoint() -> bool:
    return request.method != "GET" or request.path.endswith("/source")


@bp.errorhandler(Rule130Error)
def _refused(error: Rule130Error) -> Any:
    if not _json_endpoint():
        return errors.handle_rule130_error(error)  # the application's error page
    if isinstance(error, InvalidDiagram):
        return invalid_response(error)
    return error_response(error.status, error.code, error.message)


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> Any:
    if not _json_endpoint():
        return errors.handle_http_error(error)
    if isinstance(error, RequestEntityTooLarge):
        return too_large_response()
    return error_response(error.code or 500, "error", error.description or error.name)


@bp.get("")
def process_list() -> Any:
    """Every deployed process with its current version and its draft, its versions with running cases,
    and the process audit trail (admin_versions.listing_context)."""
    with sessions()() as session:
        rows = [(drafts.version_json(version), drafts.draft_json(session, draft))
                for version, draft in drafts.processes(session)]
        versions_view = listing_context(session)
    return render_template("admin/processes.html", rows=rows, **versions_view)


# The texts the modeler's script shows (webapp/assets/modeler/index.js), in the page's language:
# handed to it as JSON in the page's data-texts attribute, with %(name)s fields it fills in.
MODELER_TEXTS = {
    "server_answered": N_("the server answered %(status)s"),
    "refused": N_("the server refused the request"),
    "line": N_("line %(line)s"),
    "error": N_("error"), "warning": N_("warning"),
    "no_problems": N_("No problems."),
    "bad_form_name": N_('A form file name has letters, digits, "_", "-" and ".", and ends in .json (e.g. '
                        'my_form.schema.json).'),
    "form_exists": N_("There is already a form %(name)s."),
    "remove_form": N_("Remove the form %(name)s from this draft?"),
    "draft": N_("Draft revision %(revision)s, saved %(when)s by %(who)s (from version %(base)s); the current version "
                "is %(number)s."),
    "version": N_("Version %(number)s, deployed %(when)s by %(who)s. No draft yet: save one to keep your changes."),
    "version_note": N_("Version %(number)s, deployed %(when)s by %(who)s — %(note)s. No draft yet: save one to keep "
                       "your changes."),
    "import_warnings": N_("(import warnings: %(count)s)"),
    "not_drawn": N_("The diagram could not be drawn: %(error)s"),
    "not_validated": N_("Not validated yet."),
    "validating": N_("Validating…"),
    "valid_diagram": N_("Valid: this diagram can be deployed."),
    "valid_forms": N_("Valid: this diagram and its forms can be deployed."),
    "valid_warnings": N_("Valid: this diagram and its forms can be deployed (see the warnings)."),
    "not_valid": N_("Not valid: %(error)s."),
    "saving": N_("Saving the draft…"),
    "not_saved": N_("Not saved: %(error)s"),
    "valid_draft": N_("Valid: this draft can be deployed."),
    "saved_ok": N_("Draft revision %(revision)s saved by %(who)s. It can be deployed."),
    "saved_bad": N_("Draft revision %(revision)s saved by %(who)s. It cannot be deployed yet: see the problems."),
    "need_note": N_("Write a note saying what changed before deploying."),
    "deploying": N_("Deploying…"),
    "deployed": N_("Deployed as version %(number)s. New cases start on it; running cases keep their version."),
    "already_deployed": N_("This content is already deployed as version %(number)s; nothing new was deployed."),
    "not_deployed": N_("Not deployed: %(error)s"),
    "no_draft": N_("There is no saved draft; reloading the current version."),
    "confirm_discard": N_("Discard the saved draft and open the current version again?"),
    "not_discarded": N_("Not discarded: %(error)s"),
    "opened": N_("Opened %(name)s; save a draft to keep it."),
    "cannot_open": N_("%(name)s cannot be opened: %(error)s. The diagram on screen is unchanged."),
    "went_wrong": N_("Something went wrong: %(error)s"),
    "current_version": N_("(current version %(number)s)"),
    "version_item": N_("Version %(number)s, deployed %(when)s by %(who)s"),
    "version_item_note": N_("Version %(number)s, deployed %(when)s by %(who)s — %(note)s"),
    "checking": N_("Checking…"),
    "hindi_name": N_("Hindi name"),
    "hindi_name_help": N_("How Hindi pages show this name. A name without Hindi cannot be deployed."),
    "hindi_from_catalogue": N_("From the catalogue: %(hindi)s"),
    "hindi_missing": N_("No Hindi yet for “%(name)s”."),
    "no_form": N_("No form is selected."),
    "form_json_view": N_("JSON (for experts)"),
    "form_fields_view": N_("Form"),
    "not_json": N_("The JSON text is not valid JSON (%(error)s): fix it or go back to the form view."),
    "field": N_("Field"), "field_name": N_("Name (key)"), "field_type": N_("Type"),
    "label_en": N_("Label (English)"), "label_hi": N_("Label (Hindi)"),
    "help_en": N_("Help text (English)"), "help_hi": N_("Help text (Hindi)"),
    "required": N_("Required"), "minimum": N_("Minimum"), "maximum": N_("Maximum"),
    "min_length": N_("Shortest (characters)"), "max_length": N_("Longest (characters)"),
    "amount": N_("Rupee amount (digits, up to 2 decimals)"),
    "choices": N_("Choices"), "choice_value": N_("Value"), "choice_hi": N_("Hindi label"),
    "add_choice": N_("Add a choice"), "remove": N_("Remove"), "add_field": N_("Add a field"),
    "move_up": N_("Move up"), "move_down": N_("Move down"),
    "form_title_en": N_("Form title (English)"), "form_title_hi": N_("Form title (Hindi)"),
    "type_text": N_("text"), "type_long_text": N_("long text"), "type_amount": N_("rupee amount"),
    "type_integer": N_("whole number"), "type_number": N_("number"), "type_choice": N_("choice"),
    "preview_en": N_("Preview in English (phone width)"), "preview_hi": N_("Preview in Hindi (phone width)"),
    "kept_keywords": N_("Kept as they are: %(keywords)s"),
}


@bp.get("/<process_id>")
def modeler(process_id: str) -> Any:
    """The modeler page for one process (404 when it was never deployed)."""
    with sessions()() as session:
        version = drafts.current_version(session, _process_id(process_id))
        number = version.version
    return render_template("admin/modeler.html", process_id=process_id, number=number,
                           bundle_available=BUNDLE.is_file(),
                           texts={key: translate(text) for key, text in MODELER_TEXTS.items()})


@bp.get("/<process_id>/source")
def source(process_id: str) -> Any:
    """The draft, or else the current version: diagram and forms (``drafts.source``), with the
    instants also as the page shows them (``deployed_at_text``, ``saved_at_text``: local time of
    the product's zone, in the reader's language)."""
    with sessions()() as session:
        found = drafts.source(session, _process_id(process_id))
        found["versions"] = drafts.versions_json(session, _process_id(process_id))
    language = current_language()
    found["version"]["deployed_at_text"] = format_instant(found["version"]["deployed_at"], DEFAULT_TZ, language)
    if found.get("draft"):
        found["draft"]["saved_at_text"] = format_instant(found["draft"]["saved_at"], DEFAULT_TZ, language)
    for version in found["versions"]:
        version["deployed_at_text"] = format_instant(version["deployed_at"], DEFAULT_TZ, language)
        version["note_text"] = retranslate(version["note"])
    found["hindi"] = drafts.catalogue_hindi(found["bpmn"], found["forms"])
    return jsonify(found)


def _badge(errors: int, warnings: int) -> str:
    """The modeler's badge: the server's verdict in a few words, plural forms of the page's language."""
    if errors:
        return str(ngettext("Not valid: %(num)d problem", "Not valid: %(num)d problems", errors))
    if warnings:
        return str(ngettext("Valid, %(num)d warning", "Valid, %(num)d warnings", warnings))
    return str(gettext("Valid"))


@bp.post("/<process_id>/validate")
def validate(process_id: str) -> Any:
    """Validate ``{"bpmn", "forms"}`` without storing anything: 200 ``{"valid": true, "problems":
    [warnings], "verdict"}`` or 422 with every problem and the verdict."""
    body = _json_body()
    submission = drafts.read_submission(body.get("bpmn"), body.get("forms"))
    found = drafts.verdict(submission, _process_id(process_id))
    errors = sum(p.severity == "error" for p in found.problems)
    badge = _badge(errors, len(found.problems) - errors)
    if not found.deployable:
        response = invalid_response(found.refusal())
        body = response.get_json()
        body["badge"] = _badge(max(errors, 1), 0)
        response.set_data(json.dumps(body))
        return response
    return jsonify({"valid": True, "problems": [problem_json(p) for p in found.problems],
                    "verdict": found.as_json(), "badge": badge})


@bp.post("/<process_id>/forms/preview")
def preview_form(process_id: str) -> Any:
    """The officer's task page for a form ``{"schema": JSON Schema (object or text), "language": "en" |
    "hi", "task": the task's name}``, rendered by the officers' own template and field builder
    (``officer/task.html``, :func:`webapp.web.pages.task_forms.form_fields`) for an example case: 200
    ``{"html"}``; 422 when the schema is not a JSON object. Stores nothing."""
    body = _json_body()
    schema = body.get("schema")
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError as error:
            raise InvalidDiagram(M_("the form is not JSON: %(error)s", error=str(error))) from None
    if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
        raise InvalidDiagram(M_("the form must be a JSON Schema object with its fields under properties"))
    language = normalise(body.get("language")) or current_language()
    task = body.get("task") if isinstance(body.get("task"), str) else ""
    _process_id(process_id)
    with force_locale(language):
        html = preview.render(schema, task or str(schema.get("title") or ""))
    return jsonify({"html": html, "language": language})


@bp.post("/<process_id>/draft")
def save_draft(process_id: str) -> Any:
    """Save ``{"bpmn", "forms", "revision"}`` as the draft; 200 ``{"draft", "valid", "problems"}``."""
    body = _json_body()
    submission = drafts.read_submission(body.get("bpmn"), body.get("forms"))
    revision = _revision(body)
    user = current_user.user

    def save(session: Session) -> tuple[dict[str, Any], bool, list[Any]]:
        draft, deployable, problems = drafts.save_draft(session, user, _process_id(process_id), submission, revision)
        saved = drafts.draft_json(session, draft)
        if saved is None:  # save_draft returns the row it wrote
            raise LookupError("the draft just saved is not there")
        return saved, deployable, problems

    draft, deployable, problems = drafts.perform(sessions(), save)
    draft["saved_at_text"] = format_instant(draft["saved_at"], DEFAULT_TZ, current_language())
    errors = sum(p.severity == "error" for p in problems)
    return jsonify({"draft": draft, "valid": deployable, "problems": [problem_json(p) for p in problems],
                    "badge": _badge(max(errors, 1) if not deployable else 0, len(problems) - errors)})


@bp.post("/<process_id>/draft/discard")
def discard_draft(process_id: str) -> Any:
    """Delete the draft ``{"revision"}``; the page then opens the current version."""
    body = _json_body()
    drafts.perform(sessions(), drafts.discard_draft, current_user.user, _process_id(process_id), _revision(body))
    return jsonify({"discarded": True})


@bp.post("/<process_id>/deploy")
def deploy_draft(process_id: str) -> Any:
    """Deploy the saved draft ``{"revision", "note"}``: 201 ``{"version", "created": true}`` (200 with
    ``created`` false when that content was already deployed), 422 with every problem, 409 when
    another administrator saved or deployed it first."""
    body = _json_body()
    note = body.get("note") or ""
    if not isinstance(note, str):
        raise InvalidDiagram(M_("the note must be text"))

    def deploy(session: Session) -> Any:
        version, created = drafts.deploy_draft(session, current_user.user, _process_id(process_id),
                                               _revision(body), note)
        return drafts.version_json(version), created

    version, created = drafts.perform(sessions(), deploy)
    return jsonify({"version": version, "created": created}), 201 if created else 200


def _process_id(value: str) -> str:
    if not value or len(value) > 100:
        raise NotFound(M_("no such process"))
    return value


def _revision(body: dict[str, Any]) -> int | None:
    value = body.get("revision")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidDiagram(M_("revision must be a whole number or null"))
    return value


def _json_body() -> dict[str, Any]:
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        raise InvalidDiagram(M_('send a JSON object, e.g. {"bpmn": "<bpmn:definitions ...>", "forms": {}}'))
    return body


# -- the JSON API: POST /api/v1/process-versions ---------------------------------------------------------

@api_bp.post("/process-versions")
def api_deploy() -> Any:
    """Validate and deploy a process version (administrators' tokens only).

    Body: JSON ``{"bpmn": XML text, "forms": {file name: JSON Schema object or text}, "note",
    "process_id" (default rule130_case), "dry_run"}`` or multipart/form-data with a ``bpmn`` file,
    ``forms`` files (named by their file names) and ``note``, ``process_id``, ``dry_run`` fields.
    Returns:
        201 ``{"version", "created": true, "problems": [warnings]}``; 200 with ``created`` false when
        the same content is already deployed; ``dry_run``: 200 ``{"valid": true, "problems": [...]}``;
        422 ``invalid_diagram`` with every problem; 403 for any user but an administrator; 413 for
        a body over the size limit (refused before it is read).
    """
    try:
        drafts.require_process_admin(g.api_user)
        submission, fields = _api_submission()
        process_id = fields.get("process_id") or repository.PROCESS_ID
        if not isinstance(process_id, str) or len(process_id) > 100:
            raise InvalidDiagram(M_("process_id must be the id of a process in the diagram"))
        found = drafts.verdict(submission, process_id)
        problems = found.problems
        if not found.deployable:
            return invalid_response(found.refusal())
        if fields.get("dry_run") in (True, *TRUE):
            return jsonify({"valid": True, "process_id": process_id,
                            "problems": [problem_json(p) for p in problems], "verdict": found.as_json()})
        note = fields.get("note") or ""
        if not isinstance(note, str):
            raise InvalidDiagram(M_("the note must be text"))
        user = g.api_user
        version, created = drafts.perform(
            sessions(), lambda session: _deployed(session, user, process_id, submission, note))
    except InvalidDiagram as error:
        return invalid_response(error)
    except RequestEntityTooLarge:
        return too_large_response()
    return jsonify({"version": version, "created": created,
                    "problems": [problem_json(p) for p in problems]}), 201 if created else 200


def _deployed(session: Session, user: User, process_id: str, submission: Any, note: str) -> tuple[dict[str, Any], bool]:
    version, created = drafts.deploy(session, user, process_id, submission, note)
    return drafts.version_json(version), created


def _api_submission() -> tuple[drafts.Submission, dict[str, Any]]:
    """The diagram, forms and fields of an API request (JSON or multipart)."""
    if request.mimetype == "multipart/form-data":
        upload = request.files.get("bpmn")
        if upload is None:
            raise InvalidDiagram(M_("send the diagram as the multipart file field 'bpmn'"))
        forms: dict[str, Any] = {}
        for part in request.files.getlist("forms"):
            data = part.read()
            try:
                forms[part.filename or ""] = data.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidDiagram(M_("form %(filename)s is not UTF-8 text", filename=part.filename)) from None
        fields = {key: request.form.get(key) for key in ("note", "process_id", "dry_run")}
        return drafts.read_submission(upload.read(), forms), fields
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        raise InvalidDiagram(M_('send a JSON object {"bpmn": "<bpmn:definitions ...>", "forms": {...}} '
                             "or multipart/form-data with a 'bpmn' file"))
    return drafts.read_submission(body.get("bpmn"), body.get("forms")), body
