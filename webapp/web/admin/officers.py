"""Administrators' officers pages and API (issue 31, item 1): the officers of the administrator's
scope; a new officer; deactivate, reactivate, reset a password, change a role, transfer naming a
successor; bulk import from a CSV file. Every act is checked first (Check → Confirm: the same
service function run and rolled back, :func:`webapp.services.panchayats.officers.check`), then
done in one transaction (:func:`~webapp.services.panchayats.officers.perform`). The pages, the API
and ``rule130`` share those functions. Administrators only (others 403); an officer outside the
scope answers 404, a Panchayat outside it 403. Every form carries a CSRF token.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, abort, g, jsonify, make_response, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.errors import NotPermitted, Refused, Rule130Error
from webapp.i18n import M_, flash_message, localize
from webapp.services.panchayats import officers as service
from webapp.services.panchayats import officers_csv
from webapp.services.people import users
from webapp.store.models import User
from webapp.web.api import calls as api_request
from webapp.web.api import errors as api_errors
from webapp.web.context import csrf, db_session, sessions, unauthorized

bp = Blueprint("admin_officers", __name__, url_prefix="/admin/officers")
api_bp = Blueprint("api_officers", __name__, url_prefix="/api/v1/officers")
csrf.exempt(api_bp)  # bearer tokens, as the rest of the API

NEW_FIELDS = ("username", "display_name", "role", "panchayat_code", "samiti_code", "district")
ACT_FIELDS = {"deactivate": ("successor",), "reactivate": (), "reset_password": (), "change_role": ("role", "successor"),
              "transfer": ("panchayat_code", "successor")}
ACT_TITLES = {"create": M_("New officer"), "deactivate": M_("Deactivate the officer"),
              "reactivate": M_("Reactivate the officer"), "reset_password": M_("Reset the password"),
              "change_role": M_("Change the role"), "transfer": M_("Transfer to another Panchayat")}
ACT_DONE = {"deactivate": M_("%(name)s is deactivated."), "reactivate": M_("%(name)s is active again."),
            "change_role": M_("%(name)s has a new role."), "transfer": M_("%(name)s is transferred.")}
URL_ACTS = {"deactivate": "deactivate", "reactivate": "reactivate", "reset-password": "reset_password",
            "role": "change_role", "transfer": "transfer"}


def _admin() -> User:
    user: User = current_user.user
    return user


@bp.before_request
def _only_administrators() -> Any:
    if not current_user.is_authenticated:
        return unauthorized()
    if current_user.user.role != "administrator":
        raise NotPermitted(M_("only an administrator manages officers; you are signed in as %(role)s",
                              role=M_(current_user.user.role.replace("_", " "))))
    return None


def _no_store(response: Any) -> Response:
    """A page with a first password: kept by no cache, shown once."""
    made = make_response(response)
    made.headers["Cache-Control"] = "no-store"
    return made


def _list_page(*, values: dict[str, str] | None = None, error: str | None = None,
               field_errors: dict[str, str] | None = None, status: int = 200) -> Any:
    session, admin = db_session(), _admin()
    search, code = request.args.get("q", "")[:80], request.args.get("panchayat", "")[:16]
    found = service.officers(session, admin, search=search, panchayat_code=code)
    names = {p.id: p for p in service.managed_panchayats(session, admin)}
    return render_template("admin/officers.html", officers=found, panchayats=names, scope=service.scope_name(session, admin),
                           roles=users.ROLES, values=values or {}, error=error, field_errors=field_errors or {},
                           search=search, code=code, me_id=admin.id), status


@bp.get("")
def listing() -> Any:
    """The officers of the scope (``?q=`` a name, ``?panchayat=CODE``), and the form for a new one."""
    return _list_page()


@bp.post("/new")
def create() -> Any:
    """A new officer: ``step=check`` shows what follows; ``step=confirm`` creates them and shows their
    first password once. A refusal comes back on the list page with 422 and the field named."""
    values = {key: request.form.get(key, "")[:300] for key in NEW_FIELDS}
    kwargs = {k: values[k] for k in ("display_name", "panchayat_code", "samiti_code", "district")}
    try:
        if request.form.get("step") != "confirm":
            outcome = service.check(sessions(), service.create, _admin(), values["username"], values["role"], **kwargs)
            return _check_page("create", outcome, values, url_for("admin_officers.create"))
        outcome = service.perform(sessions(), service.create, _admin(), values["username"], values["role"],
                                  password_method=_method(), **kwargs)
    except Refused as refused:
        return _list_page(values=values, error=refused.message, field_errors=refused.field_errors, status=422)
    return _no_store(render_template("admin/officer_password.html", outcome=outcome, title=ACT_TITLES["create"]))


def _method() -> str:
    from flask import current_app

    method: str = current_app.config.get("PASSWORD_HASH_METHOD", users.PASSWORD_METHOD)
    return method


def _check_page(act: str, outcome: service.Outcome, values: dict[str, str], action: str) -> Any:
    return render_template("admin/officer_check.html", title=ACT_TITLES[act], outcome=outcome, hidden=values,
                           action=action, back=url_for("admin_officers.listing"))


def _officer_page(username: str, *, error: str | None = None, field_errors: dict[str, str] | None = None,
                  act: str | None = None, status: int = 200) -> Any:
    session, admin = db_session(), _admin()
    officer = service.get_officer(session, admin, username)
    panchayats = service.managed_panchayats(session, admin)
    peers = [u for u in service.officers(session, admin, include_inactive=False)
             if u.role == officer.role and u.id != officer.id and u.panchayat_id == officer.panchayat_id]
    return render_template("admin/officer.html", officer=officer, panchayats=panchayats,
                           home=next((p for p in panchayats if p.id == officer.panchayat_id), None),
                           peers=peers, open_cases=service.open_cases(session, officer), roles=service.ROLE_CHANGES,
                           error=error, field_errors=field_errors or {}, act=act, me_id=admin.id,
                           scope=service.scope_name(session, admin)), status


@bp.get("/<username>")
def officer(username: str) -> Any:
    """One officer: their role, Panchayat, state and open tasks, with a form for each act."""
    return _officer_page(username)


@bp.post("/<username>/<act_path>")
def act(username: str, act_path: str) -> Any:
    """Deactivate, reactivate, reset-password, role, transfer: ``step=check`` shows what follows,
    ``step=confirm`` does it. A refusal comes back on the officer's page with 422."""
    name = URL_ACTS.get(act_path)
    if name is None:
        abort(404)
    fields = {key: request.form.get(key, "")[:300] for key in ACT_FIELDS[name]}
    args: list[Any] = [username]
    kwargs: dict[str, Any] = {}
    if name == "change_role":
        args.append(fields["role"])
        kwargs["successor"] = fields["successor"]
    elif name == "transfer":
        args.append(fields["panchayat_code"])
        kwargs["successor"] = fields["successor"]
    elif name == "deactivate":
        kwargs["successor"] = fields["successor"]
    if name == "reset_password" and request.form.get("step") == "confirm":
        kwargs["password_method"] = _method()
    fn = service.ACT_FUNCTIONS[name]
    try:
        if request.form.get("step") != "confirm":
            outcome = service.check(sessions(), fn, _admin(), *args, **kwargs)
            return _check_page(name, outcome, fields, url_for("admin_officers.act", username=username,
                                                              act_path=act_path))
        outcome = service.perform(sessions(), fn, _admin(), *args, **kwargs)
    except Refused as refused:
        return _officer_page(username, error=refused.message, field_errors=refused.field_errors, act=name, status=422)
    if outcome.first_password:
        return _no_store(render_template("admin/officer_password.html", outcome=outcome, title=ACT_TITLES[name]))
    flash_message(M_(ACT_DONE[name].template, name=outcome.officer), "success")
    for line in outcome.follows[1:]:
        flash_message(line, "follow")
    return redirect(url_for("admin_officers.officer", username=outcome.officer))


@bp.get("/export.csv")
def export_csv() -> Any:
    """The officers of the scope as CSV (UTF-8 with BOM, for spreadsheets): every cell a spreadsheet
    would read as a formula is written as text (:func:`webapp.services.panchayats.officers_csv.cell`)."""
    session, admin = db_session(), _admin()
    body = officers_csv.export(session, service.officers(session, admin))
    response = make_response(body)
    response.headers["Content-Type"] = "text/csv; charset=utf-8"
    response.headers["Content-Disposition"] = "attachment; filename=officers.csv"
    return response


@bp.route("/import", methods=["GET", "POST"])
def import_csv() -> Any:
    """GET: the upload form. POST with a file (``step=check``): every row checked, errors by row and
    column, nothing created. POST ``step=confirm`` (the checked text sent back): all rows created
    in one transaction, or none; the first passwords shown once."""
    if request.method == "GET":
        return render_template("admin/officers_import.html", report=None, error=None, text="")
    try:
        text = officers_csv.read_upload(request.files.get("file"), request.form.get("text"))
        if request.form.get("step") != "confirm":
            report = officers_csv.check_rows(sessions(), _admin(), text)
            return render_template("admin/officers_import.html", report=report, error=None, text=text), (
                422 if report.errors else 200)
        made = officers_csv.import_rows(sessions(), _admin(), text, password_method=_method())
    except Refused as refused:
        return render_template("admin/officers_import.html", report=getattr(refused, "report", None),
                               error=refused.message,
                               text=""), 422
    return _no_store(render_template("admin/officers_imported.html", made=made))


IMPORT_PATHS = ("/admin/officers/import", "/api/v1/officers/import")


def _allow_a_file() -> None:
    """An import may carry a CSV file of up to the import's limit (the app's limit is lower), so that
    a file just over it is refused naming the limit (webapp.services.panchayats.officers_csv). Runs
    before every other hook of the app (:func:`init_app`): the first to read the body fixes its limit."""
    if request.path in IMPORT_PATHS and request.method == "POST":
        request.max_content_length = 2 * officers_csv.MAX_BYTES + 1024 * 1024
        request.max_form_memory_size = officers_csv.MAX_BYTES + 1024 * 1024


def init_app(app: Any) -> None:
    """Register the blueprints, and :func:`_allow_a_file` ahead of the app's other request hooks."""
    app.register_blueprint(bp)
    app.register_blueprint(api_bp)
    app.before_request_funcs.setdefault(None, []).insert(0, _allow_a_file)


# -- JSON API (docs/api.md) ---------------------------------------------------------------------------

@api_bp.before_request
def _api_admin() -> Any:
    failure = api_request.authenticate()
    if failure is not None:
        return failure
    if g.api_user.role != "administrator":
        return api_errors.error_response(403, "forbidden", "only an administrator manages officers; you are signed in "
                                         f"as {g.api_user.role.replace('_', ' ')}")
    return None


@api_bp.errorhandler(Rule130Error)
def _api_error(error: Rule130Error) -> Any:
    return api_errors.rule130_error(error)


def officer_json(user: User) -> dict[str, Any]:
    """An officer as the API shows them (never a password or its hash)."""
    session = db_session()
    panchayat = users.panchayat(session, user.panchayat_id) if user.panchayat_id is not None else None
    return {"username": user.username, "display_name": user.display_name, "role": user.role,
            "panchayat": panchayat.code if panchayat else None,
            "samiti": None if user.samiti_code == users.DISTRICT_SCOPE else user.samiti_code,
            "district": user.district, "active": user.active, "must_change_password": user.must_change_password}


def _outcome_json(outcome: service.Outcome, dry_run: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"officer": outcome.officer, "act": outcome.act, "dry_run": dry_run,
                           "follows": [localize(line) for line in outcome.follows],
                           "handed_over": [{"case": case, "task": title} for case, title in outcome.handed_over]}
    if outcome.first_password:
        out["first_password"] = outcome.first_password
    return out


def _body() -> dict[str, Any]:
    body = request.get_json(force=True, silent=True)
    if body is None and not request.get_data(cache=True):
        body = {}  # an act with nothing to say (reactivate, reset-password)
    if not isinstance(body, dict):
        raise Refused("the request body must be a JSON object", {"body": "not a JSON object"})
    dry = body.get("dry_run", False)
    if not isinstance(dry, bool):
        raise Refused("dry_run must be true or false", {"dry_run": "not a boolean"})
    if _dry_query():
        body["dry_run"] = True
    return body


def _dry_query() -> bool:
    """``?dry_run=true`` (as the other acts of the API take it)."""
    return request.args.get("dry_run", "").lower() in ("1", "true", "yes")


@api_bp.get("")
def api_officers() -> Any:
    """The officers of the token's scope (``?q=`` a name, ``?panchayat=CODE``)."""
    found = service.officers(db_session(), g.api_user, search=request.args.get("q", "")[:80],
                             panchayat_code=request.args.get("panchayat", "")[:16])
    return jsonify({"officers": [officer_json(u) for u in found]})


@api_bp.post("")
def api_create() -> Any:
    """A new officer ``{"username", "role", "display_name"?, "panchayat"?, "samiti"?, "district"?,
    "dry_run"?}``: 201 with the first password (shown once), or 200 with what would follow."""
    body = _body()
    kwargs = {"display_name": body.get("display_name", ""), "panchayat_code": body.get("panchayat", ""),
              "samiti_code": body.get("samiti", ""), "district": body.get("district", "")}
    if body.get("dry_run"):
        outcome = service.check(sessions(), service.create, g.api_user, body.get("username"), body.get("role"), **kwargs)
        return jsonify(_outcome_json(outcome, True))
    outcome = service.perform(sessions(), service.create, g.api_user, body.get("username"), body.get("role"),
                              password_method=_method(), **kwargs)
    response = jsonify(_outcome_json(outcome, False))
    response.headers["Cache-Control"] = "no-store"
    return response, 201


@api_bp.post("/<username>/<act_path>")
def api_act(username: str, act_path: str) -> Any:
    """``deactivate`` ``{"successor"?}``, ``reactivate``, ``reset-password``, ``role`` ``{"role",
    "successor"?}``, ``transfer`` ``{"panchayat", "successor"?}``; each with ``"dry_run"?``."""
    name = URL_ACTS.get(act_path)
    if name is None:
        return api_errors.error_response(404, "not_found", f"no act {act_path}; acts are {', '.join(URL_ACTS)}")
    body = _body()
    args: list[Any] = [username]
    kwargs: dict[str, Any] = {}
    if name == "change_role":
        args.append(body.get("role"))
    if name == "transfer":
        args.append(body.get("panchayat"))
    if name in ("deactivate", "change_role", "transfer"):
        kwargs["successor"] = body.get("successor", "")
    fn = service.ACT_FUNCTIONS[name]
    if body.get("dry_run"):
        return jsonify(_outcome_json(service.check(sessions(), fn, g.api_user, *args, **kwargs), True))
    if name == "reset_password":
        kwargs["password_method"] = _method()
    response = jsonify(_outcome_json(service.perform(sessions(), fn, g.api_user, *args, **kwargs), False))
    response.headers["Cache-Control"] = "no-store"
    return response


@api_bp.post("/import")
def api_import() -> Any:
    """Officers from a CSV (the body, ``text/csv``, or a multipart ``file``), at most
    :data:`~webapp.services.panchayats.officers_csv.MAX_BYTES` and
    :data:`~webapp.services.panchayats.officers_csv.MAX_ROWS` rows. ``?dry_run=true``: every row
    checked (200; 422 with the errors by row and column); otherwise all rows created (201, with the
    first passwords) or none (422)."""
    upload = request.files.get("file")
    text = officers_csv.read_upload(upload, None) if upload is not None else officers_csv.decode(
        request.get_data(cache=False))
    if _dry_query():
        report = officers_csv.check_rows(sessions(), g.api_user, text)
        return jsonify(officers_csv.report_json(report)), (422 if report.errors else 200)
    try:
        made = officers_csv.import_rows(sessions(), g.api_user, text, password_method=_method())
    except Refused as refused:
        checked = getattr(refused, "report", None)
        if checked is None:
            raise
        return jsonify({"error": {"code": "refused", "message": refused.message},
                        **officers_csv.report_json(checked)}), 422
    response = jsonify({"created": [{"username": o.officer, "first_password": o.first_password} for o in made]})
    response.headers["Cache-Control"] = "no-store"
    return response, 201
