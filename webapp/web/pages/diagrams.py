"""Process diagrams: a version's picture drawn on the server (SVG, no JavaScript; the case page
shows it with the case's marks), and bpmn-js (served from npm's package, no CDN) for the pages that
zoom: the current process version, and one case's diagram with its current step and its path so far."""

from __future__ import annotations

import functools
import json
from typing import Any

from flask import Blueprint, Response, abort, render_template, request, send_from_directory
from sqlalchemy import select

from webapp.i18n.languages import LANGUAGES, current_language
from webapp.services.cases import cases, overview
from webapp.services.diagrams import pictures, repository
from webapp.store.models import ProcessVersion
from webapp.web.context import BPMN_JS_DIST, db_session, login_required
from webapp.web.pages.officer import me

bp = Blueprint("diagrams", __name__)


YEAR = 365 * 86400  # seconds: the cache of a file whose URL changes with its content


@functools.cache
def bpmn_js_version() -> str:
    """The installed bpmn-js package's version (its package.json, pinned by package-lock.json), which
    the viewer's URLs carry: a new version is a new URL, so the files can be cached for a year."""
    try:
        return str(json.loads((BPMN_JS_DIST.parent / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return "0"


@bp.app_context_processor
def _viewer_version() -> dict[str, Any]:
    return {"bpmn_js_version": bpmn_js_version}


@bp.get("/vendor/bpmn-js/<version>/<path:filename>")
def bpmn_js(version: str, filename: str) -> Any:
    """bpmn-js's ready bundles and styles, as installed by ``npm ci``, under the package's version:
    immutable for a year (a warm page asks for none of them). Another version: 404."""
    if not BPMN_JS_DIST.is_dir() or version != bpmn_js_version():
        abort(404)
    response = send_from_directory(BPMN_JS_DIST, filename, max_age=YEAR)
    response.cache_control.immutable = True
    return response


@bp.get("/processes/<int:version_id>/bpmn")
@login_required
def process_xml(version_id: int) -> Any:
    """The BPMN XML of a deployed version (404 when unknown or beyond a 64-bit id): as deployed, or
    with ``?labels=hi`` / ``?labels=en`` its drawn labels in that language for the viewer, the lanes'
    roles as words (overview.labelled_for; any other value: as deployed)."""
    version = db_session().get(ProcessVersion, version_id) if version_id < 2**63 else None
    if version is None:
        abort(404)
    language = request.args.get("labels")
    xml = overview.labelled_for(version.bpmn_xml, language) if language in LANGUAGES else version.bpmn_xml
    response = Response(xml, mimetype="application/xml")
    # a deployed version never changes: the viewer's next page draws it from the browser's cache
    # (private: it is behind the sign-in; a day, in case the labelling itself changes with a release)
    response.cache_control.private = True
    response.cache_control.max_age = 86400
    return response


def version_picture(version: ProcessVersion, language: str | None = None) -> pictures.Picture:
    """The picture of ``version`` in ``language`` (the page's when None), from the cache."""
    return pictures.picture(version.bpmn_xml, language or current_language())


@bp.get("/processes/<int:version_id>/picture-<language>.svg")
@login_required
def process_svg(version_id: int, language: str) -> Any:
    """A deployed version's diagram drawn as SVG on the server, its names in ``language`` (en, hi;
    another: 404), without marks (the case page draws its marks over it). With ``?d=`` the
    picture's digest (as pages link it): private and immutable for a year; without it or with
    another digest (a release drew it otherwise): the current picture, not cached. A version whose
    diagram cannot be drawn: 404."""
    version = db_session().get(ProcessVersion, version_id) if version_id < 2**63 else None
    if version is None or language not in LANGUAGES:
        abort(404)
    drawn = version_picture(version, language)
    if not drawn.drawing.svg:
        abort(404)
    response = Response(drawn.drawing.svg, mimetype="image/svg+xml")
    response.cache_control.private = True
    if request.args.get("d") == drawn.digest:
        response.cache_control.max_age = YEAR
        response.cache_control.immutable = True
    else:
        response.cache_control.no_cache = True
    return response


@bp.get("/processes/current")
@login_required
def current_process() -> Any:
    version = repository.current(db_session())
    versions = list(db_session().scalars(select(ProcessVersion).order_by(ProcessVersion.version.desc())))
    return render_template("diagrams/process.html", version=version, versions=versions,
                           bpmn_available=BPMN_JS_DIST.is_dir())


@bp.get("/cases/<int:case_id>/diagram")
@login_required
def case_diagram(case_id: int) -> Any:
    session = db_session()
    case = cases.get_case(session, me(), case_id)
    run = cases.CaseRun(session, case, None)
    marks = overview.diagram_marks(run.wf)
    names = {task.task_spec.bpmn_id: task.task_spec.bpmn_name for task in run.wf.get_tasks()
             if getattr(task.task_spec, "bpmn_id", None)}
    # the steps as a list, for those who would rather read than look: what happened (with when),
    # what is active, what the case waits for
    happened = [event for event in cases.history(session, case) if event.kind in ("start", "task", "timer", "correction")]
    return render_template("diagrams/case.html", case=case, version=run.loaded.version, done=marks.done,
                           active=marks.active, waiting=marks.waiting, bpmn_available=BPMN_JS_DIST.is_dir(),
                           happened=happened, tz=run.cf.timezone,
                           active_names=[names.get(i) or i for i in marks.active],
                           waiting_names=[names.get(i) or i for i in marks.waiting])
