"""The Panchayat's registers and statements as pages (printable: the print stylesheet leaves the
menus out) and as CSV (webapp.services.reports.registers).

``/registers`` lists the Panchayats whose books the user may open (their own; a Samiti
administrator's Samiti's; all for an installation-wide administrator); ``/registers/<code>``
links the registers of one; ``/registers/<code>/<register>`` shows one for the period ``from`` ..
``to`` (local days, ``YYYY-MM-DD``), and ``/registers/<code>/<register>.csv`` downloads it. Another
Panchayat's registers answer 404, a role that keeps no registers 403; a bad period comes back on
the page with 422 (as text for CSV) and nothing else happens.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from webapp.errors import NotFound, Refused
from webapp.i18n import localize
from webapp.services.reports import registers, registers_csv
from webapp.store.models import Panchayat, User
from webapp.web.context import db_session, unauthorized

bp = Blueprint("registers", __name__, url_prefix="/registers")


@bp.before_request
def require_login() -> Any:
    """Every register needs a signed-in user (anonymous: the sign-in page)."""
    if not current_user.is_authenticated:
        return unauthorized()
    return None


def me() -> User:
    user: User = current_user.user  # a LoginUser (officer_sessions) wraps the row
    return user


def titles() -> dict[str, str]:
    """The registers' names in the page's language."""
    return {"pound": _("Pound register"), "receipts": _("Receipts issued"),
            "charges": _("Account of charges and sale proceeds"), "suspense": _("Suspense account statement"),
            "statement": _("Statement of accounts")}


@bp.get("")
def index() -> Any:
    """The Panchayats whose registers the user may open; with exactly one, straight to it."""
    user = me()
    registers.require_register_role(user)
    found = registers.panchayats_in_scope(db_session(), user)
    if len(found) == 1:
        return redirect(url_for("registers.panchayat", code=found[0].code))
    return render_template("registers/index.html", panchayats=found, me=user)


def _period(panchayat: Panchayat) -> tuple[registers.Period | None, str | None, dict[str, str]]:
    values = {"from": request.args.get("from", "")[:40], "to": request.args.get("to", "")[:40]}
    try:
        return registers.period(panchayat, values["from"], values["to"]), None, values
    except Refused as refused:
        return None, localize(refused.message), values


@bp.get("/<code>")
def panchayat(code: str) -> Any:
    """One Panchayat's registers, with the period form."""
    found = registers.register_panchayat(db_session(), me(), code)
    period, error, values = _period(found)
    return render_template("registers/panchayat.html", panchayat=found, period=period, error=error, values=values,
                           me=me(), register=None, titles=titles()), (422 if error else 200)


def _data(name: str, found: Panchayat, period: registers.Period) -> Any:
    session = db_session()
    if name == "pound":
        return registers.pound_register(session, found, period)
    if name == "receipts":
        return registers.receipts(session, found, period)
    if name == "charges":
        return registers.charges(session, found, period)
    if name == "suspense":
        return registers.statement(session, found, period, ("suspense",))
    return registers.statement(session, found, period)


@bp.get("/<code>/<register>")
def register(code: str, register: str) -> Any:
    """One register of one Panchayat over the period, as a printable page."""
    if register not in registers.REGISTERS:
        raise NotFound(f"no register {register}")
    found = registers.register_panchayat(db_session(), me(), code)
    period, error, values = _period(found)
    data = None if period is None else _data(register, found, period)
    return render_template(f"registers/{register}.html", panchayat=found, period=period, error=error, values=values,
                           me=me(), register=register, data=data, tz=found.timezone,
                           titles=titles()), (422 if error else 200)


@bp.get("/<code>/<register>.csv")
def register_csv(code: str, register: str) -> Any:
    """One register as CSV (UTF-8, a file named after the Panchayat, register and period)."""
    if register not in registers.REGISTERS:
        raise NotFound(f"no register {register}")
    found = registers.register_panchayat(db_session(), me(), code)
    period, error, _values = _period(found)
    if period is None:
        return Response(f"{error}\n", status=422, mimetype="text/plain")
    header, rows = registers_csv.csv_table(register, found, _data(register, found, period))
    name = f"{found.code}-{register}-{period.first_day.isoformat()}-{period.last_day.isoformat()}.csv"
    return Response(registers_csv.write_csv(header, rows, found.timezone), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})

