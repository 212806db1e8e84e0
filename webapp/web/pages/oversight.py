"""Oversight of a Samiti or a District as pages and CSV (webapp.services.reports.oversight), read-only.

``/oversight`` shows the user's Samiti or District (``?samiti=CODE`` narrows a District to one of its
Samitis; an installation-wide administrator names ``?district=NAME`` or ``?samiti=CODE``, else chooses
from the list); ``?sort=COLUMN&dir=asc|desc`` orders the Panchayats. ``/oversight/panchayat/<code>``
is one Panchayat's stages and its tasks past a legal deadline. ``/oversight.csv`` and
``/oversight/past-deadline.csv`` download the same tables (formula-like cells made plain text).
A role without oversight answers 403; a Samiti, District or Panchayat outside the user's scope 404;
an unknown sort column comes back on the page with 422 and nothing else changes.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, render_template, request
from flask_babel import gettext as _
from flask_login import current_user

from webapp.errors import Refused
from webapp.i18n import localize
from webapp.i18n.formats import format_rupees
from webapp.i18n.languages import current_language
from webapp.services.reports import oversight, registers_csv
from webapp.store.models import User
from webapp.web.context import db_session, unauthorized

bp = Blueprint("oversight", __name__)
SHOWN_PAST = 50  # tasks past a deadline listed on the scope's page; all of them in its CSV and on each Panchayat's
ROWS_PER_PAGE = 50  # Panchayats a page lists (a District has hundreds): ?page=N, in the order sorted; the CSV has all


@bp.before_request
def require_login() -> Any:
    """Every oversight page needs a signed-in user (anonymous: the sign-in page)."""
    if not current_user.is_authenticated:
        return unauthorized()
    return None


def me() -> User:
    user: User = current_user.user
    return user


def _labels() -> dict[str, Any]:
    """The names of the sort columns and the stages, for the templates (in the page's language
    where the template does not translate them itself)."""
    words = {a: _(a.replace("_", " ")) for a in oversight.ACCOUNTS}
    return {"stage_titles": oversight.STAGE_TITLES,
            "sort_labels": {"code": _("Code"), "name": _("Gram Panchayat"), "samiti": _("Samiti"), "running": _("Running"),
                            "past_deadline": _("Past deadline"), "most_days_past": _("Most days past"),
                            "cattle_held": _("Cattle held"), "receipts_month": _("Receipts this month"), **words},
            "past_labels": {"days_past": _("Days past"), "case_number": _("Case"), "panchayat": _("Gram Panchayat"),
                            "lane": _("Whose act"), "last_day": _("Last day")}}


def _asked() -> dict[str, str]:
    """The scope asked for in the query string (kept in every link of the page)."""
    return {k: request.args.get(k, "")[:100] for k in ("samiti", "district") if request.args.get(k)}


def _order(default_desc: bool) -> tuple[str | None, bool]:
    key = request.args.get("sort", "")[:40] or None
    direction = request.args.get("dir", "")
    return key, (direction == "desc") if direction in ("asc", "desc") else (default_desc if key else False)


@bp.get("/oversight")
def page() -> Any:
    """The scope's Panchayats: stages, deadlines, cattle, money and receipts (the choice of scope
    for an installation-wide administrator who named none)."""
    user, session = me(), db_session()
    oversight.require_oversight_role(user)
    asked = _asked()
    choices = oversight.choices(session, user)
    if not asked and oversight.default_scope(user) is None:
        return render_template("oversight/choose.html", me=user, choices=choices)
    scope = oversight.scope_for(session, user, **asked)
    data = oversight.overview(session, scope)
    key, desc = _order(default_desc=True)
    error = None
    try:
        rows = oversight.sort_rows(data.rows, key, desc)
    except Refused as refused:
        error, rows, key = localize(refused.message), data.rows, None
    pages = max(1, -(-len(rows) // ROWS_PER_PAGE))
    number = request.args.get("page", "1")[:6]
    number_ = min(max(int(number), 1), pages) if number.isascii() and number.isdigit() else 1
    shown = rows[(number_ - 1) * ROWS_PER_PAGE:number_ * ROWS_PER_PAGE]
    language = current_language()
    amounts = {a for r in shown for a in (r.balances["pound_account"], r.balances["suspense"], r.receipts_month)}
    money = {a: format_rupees(a, language) for a in amounts}  # each amount formatted once
    paging = {"number": number_, "pages": pages, "first": (number_ - 1) * ROWS_PER_PAGE + 1 if rows else 0,
              "last": (number_ - 1) * ROWS_PER_PAGE + len(shown), "of": len(rows),
              "query": dict(asked, **({"sort": key, "dir": "desc" if desc else "asc"} if key else {}))}
    return render_template("oversight/page.html", me=user, data=data, rows=shown, money=money, paging=paging, sort=key, desc=desc, asked=asked,
                           error=error, choices=choices, stages=oversight.STAGES, accounts=oversight.ACCOUNTS,
                           sorts=oversight.SORTS, past=data.past_deadline[:SHOWN_PAST],
                           shown_past=SHOWN_PAST, **_labels()), (422 if error else 200)


@bp.get("/oversight/panchayat/<code>")
def panchayat(code: str) -> Any:
    """One Panchayat of the scope: its figures, its stages and every task past a legal deadline."""
    user, session = me(), db_session()
    asked = _asked()
    scope = oversight.panchayat_scope(session, user, code, **asked)
    data = oversight.overview(session, scope)
    key, desc = _order(default_desc=True)
    error = None
    try:
        past = oversight.sort_past(data.past_deadline, key, desc if key else True)
    except Refused as refused:
        error, past, key = localize(refused.message), data.past_deadline, None
    page = render_template("oversight/panchayat.html", me=user, data=data, row=data.rows[0], past=past, sort=key,
                           desc=desc, asked=asked, error=error, stages=oversight.STAGES,
                           accounts=oversight.ACCOUNTS, past_sorts=oversight.OVERDUE_SORTS, **_labels())
    return page, (422 if error else 200)


def _csv(name: str, header: list[str], rows: list[list[Any]], tz: str) -> Response:
    return Response(registers_csv.write_csv(header, rows, tz), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _file_name(data: oversight.Overview, what: str) -> str:
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in data.scope.code)[:60]
    return f"oversight-{data.scope.kind}-{safe}-{what}-{data.month.isoformat()[:7]}.csv"


@bp.get("/oversight.csv")
def page_csv() -> Any:
    """The scope's Panchayats as CSV (one row each, in the order of the page's sort)."""
    user, session = me(), db_session()
    data = oversight.overview(session, oversight.scope_for(session, user, **_asked()))
    key, desc = _order(default_desc=True)
    try:
        data.rows = oversight.sort_rows(data.rows, key, desc)
    except Refused as refused:
        return Response(f"{localize(refused.message)}\n", status=422, mimetype="text/plain")
    header, rows = oversight.csv_panchayats(data)
    return _csv(_file_name(data, "panchayats"), header, rows, data.rows[0].timezone if data.rows else "Asia/Kolkata")


@bp.get("/oversight/past-deadline.csv")
def past_csv() -> Any:
    """Every task of the scope (or of ``?panchayat=CODE`` in it) past its legal deadline, as CSV."""
    user, session = me(), db_session()
    code = request.args.get("panchayat", "")[:40]
    scope = (oversight.panchayat_scope(session, user, code, **_asked()) if code
             else oversight.scope_for(session, user, **_asked()))
    data = oversight.overview(session, scope)
    header, rows = oversight.csv_past_deadline(data.past_deadline)
    return _csv(_file_name(data, "past-deadline"), header, rows, "Asia/Kolkata")
