"""The documents of a case as issued: the printable page and the PDF (webapp.services.papers.documents).

Both answer only within the officer's scope: another Panchayat's case, or a document of another
case, is "not found" (404), never "forbidden". The stored text is served as it is; the PDF is
headless Chromium's print of that text (webapp.services.papers.pdf; 503 with a message where no PDF can be made).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, render_template
from flask_login import current_user

from webapp.services.cases import cases
from webapp.services.papers import documents
from webapp.store.models import Panchayat
from webapp.web.context import db_session, unauthorized

bp = Blueprint("documents", __name__)


@bp.before_request
def require_login() -> Any:
    """Documents are for signed-in officers (the public board shows the notice while it runs)."""
    if not current_user.is_authenticated:
        return unauthorized()
    return None


def _find(case_id: int, document_id: int) -> tuple[Any, Any]:
    session = db_session()
    case = cases.get_case(session, current_user.user, case_id)
    return case, documents.get_document(session, case, document_id)


def _zone(case: Any) -> str:
    """The time zone of the case's Panchayat (its instants are shown in it)."""
    panchayat = db_session().get(Panchayat, case.panchayat_id)
    return panchayat.timezone if panchayat is not None and panchayat.timezone else "Asia/Kolkata"


@bp.route("/cases/<int:case_id>/documents/<int:document_id>")
def page(case_id: int, document_id: int) -> Any:
    """The printable page of one document in its language: the stored text exactly as issued, with
    its SHA-256 and whether it still matches the hash recorded at issue."""
    case, row = _find(case_id, document_id)
    session = db_session()
    other = next((v for lang, v in documents.list_for_case_key(session, case, row.key).items()
                  if lang != row.language), None)
    intact = documents.intact(session, case, row)
    return render_template("documents/page.html", case=case, doc=row, other=other, tz=_zone(case), intact=intact,
                           verify=documents.verify_line(row, intact))


@bp.route("/cases/<int:case_id>/documents/<int:document_id>.pdf")
def pdf(case_id: int, document_id: int) -> Any:
    """The PDF of one document (inline, named after its number and language)."""
    case, row = _find(case_id, document_id)
    panchayat = db_session().get(Panchayat, case.panchayat_id)
    body = documents.pdf_bytes(row, _zone(case), training=bool(panchayat is not None and panchayat.training))
    name = f"{row.number.replace('/', '-')}-{row.language}.pdf"
    return Response(body, mimetype="application/pdf",
                    headers={"Content-Disposition": f'inline; filename="{name}"', "Cache-Control": "private"})
