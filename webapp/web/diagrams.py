"""Process diagrams drawn in the browser with bpmn-js (served from npm's package, no CDN):
the current process version, and one case's diagram with its current step and its path so far."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Response, abort, render_template, send_from_directory
from flask_login import login_required
from sqlalchemy import select
from SpiffWorkflow.util.task import TaskState

from ..app import db_session
from ..services import cases, repository
from ..store.models import ProcessVersion
from .officer import me

bp = Blueprint("diagrams", __name__)
BPMN_JS_DIST = Path(__file__).resolve().parents[2] / "node_modules" / "bpmn-js" / "dist"


@bp.get("/vendor/bpmn-js/<path:filename>")
def bpmn_js(filename: str) -> Any:
    """bpmn-js's ready bundles and styles, as installed by ``npm ci``."""
    if not BPMN_JS_DIST.is_dir():
        abort(404)
    return send_from_directory(BPMN_JS_DIST, filename, max_age=86400)


@bp.get("/processes/<int:version_id>/bpmn")
@login_required
def process_xml(version_id: int) -> Any:
    """The BPMN XML of a deployed version (404 when unknown or beyond a 64-bit id)."""
    version = db_session().get(ProcessVersion, version_id) if version_id < 2**63 else None
    if version is None:
        abort(404)
    return Response(version.bpmn_xml, mimetype="application/xml")


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
    done, active = set(), set()
    for task in run.wf.get_tasks():
        bpmn_id = getattr(task.task_spec, "bpmn_id", None)
        if not bpmn_id:
            continue
        if task.state == TaskState.COMPLETED:
            done.add(bpmn_id)
        elif task.state in (TaskState.READY, TaskState.WAITING, TaskState.STARTED):
            active.add(bpmn_id)
    return render_template("diagrams/case.html", case=case, version=run.loaded.version,
                           done=sorted(done - active), active=sorted(active), bpmn_available=BPMN_JS_DIST.is_dir())
