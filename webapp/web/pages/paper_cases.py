"""The page that brings a running paper case in at its stage (issue 31, item 2): the impoundment and
the cattle as on a new case, then the past facts in the order they happened, one row each
(:data:`webapp.services.intake.paper_cases.ROW_COLUMNS`); Check shows what would be recorded —
the step the case will stand at, the periods already run out, the overdue acts, the documents with
the paper's numbers and the paper receipts — and Confirm records it, all or nothing. A refusal comes
back beside the row and field it names (HTTP 422).

Several paper cases come from one CSV file (:func:`upload`, read by
:mod:`webapp.services.intake.paper_csv`): its check step lists every case as it would stand, or the
refusal naming its row and column; the file waits for Confirm in a temporary file of the server
named by a random token (bound to the officer, removed on Confirm or after a day), and Confirm
brings them all in or none. Views of the officers' blueprint, added when this module is imported
(webapp.web).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from flask import redirect, render_template, request, url_for
from flask_babel import gettext as _

from webapp.errors import NotPermitted, Refused
from webapp.i18n import M_, Message
from webapp.i18n.formats import format_day, format_instant, format_rupees
from webapp.services.intake import paper_cases, paper_csv
from webapp.services.running import uow
from webapp.services.running.follows import Follow
from webapp.values import clock
from webapp.values.tariff import SPECIES
from webapp.web.context import db_session, sessions
from webapp.web.pages import check
from webapp.web.pages.officer import bp, me
from webapp.web.pages.public import DEFAULT_TZ, fmt_words, panchayat_of

ANIMAL_ROWS = 3
FACT_ROWS = 8
MAX_ROWS = 60
PLACES = ("impounded_at", "place_seized", "place_impounded", "nearest_village")


def allowed() -> Any:
    """The signed-in secretary or sarpanch of a Panchayat (else NotPermitted, 403)."""
    user = me()
    if user.role not in paper_cases.BRINGERS or user.panchayat_id is None:
        raise NotPermitted(_("only the secretary or the sarpanch of a Panchayat brings in a paper case; you are "
                             "signed in as %(role)s", role=fmt_words(user.role)))
    return user


def _count(name: str, default: int) -> int:
    try:
        return max(1, min(int(request.values.get(name, default)), MAX_ROWS))
    except ValueError:
        return default


def brought_follows(brought: paper_cases.Brought, tz: str) -> list[Follow]:
    """What followed (or would follow) from a paper case brought in, in words for the check page and
    the flash messages: each period already run out, each overdue act, the documents with their
    paper numbers and the paper receipts."""
    said = [Follow(M_("Case %(number)s opens from the paper file with %(num)s past facts, replayed at their own "
                      "dates", number=brought.case_number, num=brought.facts))]
    for run_out in brought.ran_out:
        said.append(Follow(M_("The legal period has already run out: %(name)s on %(when)s; it falls due at once",
                              name=Message(run_out["name"]), when=run_out["due"])))
    for task in brought.open_tasks:
        if task["overdue"]:
            said.append(Follow(M_("Overdue: %(task)s (the %(lane)s), to be done by %(day)s", task=Message(task["title"]),
                                  lane=Message(task["lane"].replace("_", " ")), day=task["act_by"])))
        else:
            said.append(Follow(M_("Open: %(task)s (the %(lane)s)", task=Message(task["title"]),
                                  lane=Message(task["lane"].replace("_", " ")))))
    for doc in brought.documents:
        said.append(Follow(M_("%(title)s, No. %(number)s, entered from the paper file", title=Message(doc["title"]),
                              number=doc["number"])))
    for receipt in brought.receipts:
        said.append(Follow(M_("Paper receipt %(number)s: %(amount)s (%(kind)s) in the ledger", number=receipt["number"],
                              amount=format_rupees(receipt["amount"]), kind=Message(receipt["kind"].replace("_", " ")))))
    if brought.status != "running":
        said.append(Follow(M_("The case closes: %(outcome)s", outcome=Message(brought.outcome.replace("_", " ")))))
    return said


@bp.route("/paper-cases/new", methods=["GET", "POST"])
def new_paper_case() -> Any:
    """Bring in a running paper case: the form, its check step, and the case recorded on Confirm."""
    user = allowed()
    panchayat = panchayat_of(db_session(), user.panchayat_id)
    tz = panchayat.timezone if panchayat and panchayat.timezone else DEFAULT_TZ
    animal_rows, fact_rows = _count("animal_rows", ANIMAL_ROWS), _count("fact_rows", FACT_ROWS)
    context = {"species": SPECIES, "tz": tz, "panchayat": panchayat, "kinds": list(paper_cases.FACTS),
               "labels": {k: v.label for k, v in paper_cases.FACTS.items()}, "max_rows": MAX_ROWS,
               "today": format_day(clock.now().astimezone(ZoneInfo(tz)).date())}
    if request.method == "GET":
        values = dict.fromkeys(PLACES, "")
        animals = [dict.fromkeys(("species", "description", "tag"), "") for _ in range(animal_rows)]
        facts = [dict.fromkeys(paper_cases.ROW_COLUMNS, "") for _ in range(fact_rows)]
        return render_template("officer/paper_case.html", values=values, animals=animals, facts=facts, error=None,
                               field_errors={}, **context)
    values = {k: request.form.get(k, "") for k in PLACES}
    animals = [{k: request.form.get(f"{k}-{n}", "") for k in ("species", "description", "tag")}
               for n in range(1, animal_rows + 1)]
    facts = [{k: request.form.get(f"{k}-{n}", "") for k in paper_cases.ROW_COLUMNS} for n in range(1, fact_rows + 1)]
    asked = check.step()

    def form(error: str | None = None, field_errors: dict[str, Any] | None = None, status: int = 200) -> Any:
        return render_template("officer/paper_case.html", values=values, animals=animals, facts=facts, error=error,
                               field_errors=field_errors or {}, **context), status

    if asked == check.CHANGE:
        return form()
    given_animals = [{k: v.strip() for k, v in a.items()} for a in animals if any(v.strip() for v in a.values())]
    try:
        parsed = [paper_cases.fact_from_row(row, M_("fact %(num)s", num=n), tz, _label)
                  for n, row in enumerate(facts, start=1) if any(v.strip() for v in row.values())]
        impounded_at = paper_cases.local_instant(values["impounded_at"], tz)
        act: dict[str, Any] = {"impounded_at": impounded_at, "place_seized": values["place_seized"],
               "place_impounded": values["place_impounded"], "nearest_village": values["nearest_village"],
               "animals": given_animals, "facts": parsed, "where": M_("the impoundment")}
        if asked == check.CHECK:
            brought = uow.rehearse(sessions(), "bring_in_paper_case", paper_cases.bring_in, user, user=user, **act)
            printed = [(_("Impounded on"), format_instant(impounded_at, tz) if not isinstance(impounded_at, str)
                        else impounded_at), (_("Place seized"), values["place_seized"]),
                       (_("Past facts"), str(len(parsed)))]
            hidden: dict[str, Any] = dict(values, animal_rows=animal_rows, fact_rows=fact_rows)
            for n, row in enumerate(animals, start=1):
                hidden.update({f"{k}-{n}": v for k, v in row.items()})
            for n, row in enumerate(facts, start=1):
                hidden.update({f"{k}-{n}": v for k, v in row.items()})
            return check.render(title=M_("bring in the paper case"), printed=printed,
                                follows=brought_follows(brought, tz), hidden=hidden,
                                back=url_for("officer.new_paper_case"), case_number=_("Paper case"))
        brought = uow.perform(sessions(), "bring_in_paper_case", paper_cases.bring_in, user, user=user, **act)
    except Refused as refused:
        return form(refused.message, _row_errors(refused.field_errors), 422)
    check.tell(M_("Case %(number)s brought in from the paper file.", number=brought.case_number),
               brought_follows(brought, tz), brought.case_id)
    return redirect(url_for("officer.case", case_id=brought.case_id))


def _label(column: str) -> str:
    """A column of a fact row as the page's refusals name it (its label)."""
    return str(COLUMN_LABELS.get(column, column))


COLUMN_LABELS: dict[str, Message] = {
    "do": M_("fact"), "at": M_("date and time"), "name": M_("name"), "amount": M_("amount"),
    "days": M_("objection period (days)"), "decision": M_("decision"), "animal": M_("animal (number or tag)"),
    "reason": M_("reason"), "paper_number": M_("paper number"), "receipt_number": M_("receipt number"),
    "amount_received": M_("amount received"),
}


def _row_errors(field_errors: dict[str, Any]) -> dict[str, Any]:
    """The refusal's fields as the form's inputs: ``fact 3.amount`` -> ``amount-3``; the impoundment's
    fields by their own names."""
    found: dict[str, Any] = {}
    labels = {str(label): column for column, label in COLUMN_LABELS.items()}
    for key, problem in field_errors.items():
        where, _dot, name = str(key).rpartition(".")
        digits = "".join(ch for ch in where if ch.isdigit())
        if digits and name in labels:
            found[f"{labels[name]}-{digits}"] = problem
        else:
            found[name or key] = problem
    return found


# -- several cases from a CSV file -----------------------------------------------------------------

UPLOADS = Path(tempfile.gettempdir()) / "rule130-paper-csv"
KEEP_SECONDS = 24 * 3600


def _held(token: str, user_id: int) -> Path:
    """The temporary file of an upload awaiting Confirm (its name binds it to the officer)."""
    name = hashlib.sha256(f"{user_id}:{token}".encode()).hexdigest()
    return UPLOADS / f"{name}.csv"


def _hold(data: bytes, user_id: int) -> str:
    UPLOADS.mkdir(mode=0o700, exist_ok=True)
    for old in UPLOADS.glob("*.csv"):  # uploads never confirmed
        try:
            if old.stat().st_mtime < time.time() - KEEP_SECONDS:
                old.unlink()
        except OSError:
            pass
    token = secrets.token_urlsafe(24)
    path = _held(token, user_id)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return token


@bp.route("/paper-cases/upload", methods=["GET", "POST"])
def paper_case_upload() -> Any:
    """Several running paper cases from one CSV file: the form, the check step (every case as it would
    stand), and all of them recorded on Confirm, or none."""
    user = allowed()
    panchayat = panchayat_of(db_session(), user.panchayat_id)
    tz = panchayat.timezone if panchayat and panchayat.timezone else DEFAULT_TZ
    context = {"tz": tz, "columns": paper_csv.COLUMNS, "max_rows": f"{paper_csv.MAX_ROWS:,}",
               "kinds": ["impound", "animal", *paper_cases.FACTS]}
    if request.method == "GET":
        return render_template("officer/paper_csv.html", error=None, field_errors={}, **context)
    request.max_content_length = paper_csv.MAX_BYTES + 256 * 1024  # the file's limit is named below
    asked = check.step()
    token = request.form.get("token", "")
    path: Path | None = None
    try:
        if asked == check.CONFIRM:
            path = _held(token, user.id) if token.isascii() and 16 <= len(token) <= 64 else None
            if path is None or not path.is_file():
                raise Refused(M_("the file to confirm is no longer held; upload it again"), {"file": M_("upload again")})
            data = path.read_bytes()
        else:
            upload = request.files.get("file")
            data = upload.read(paper_csv.MAX_BYTES + 1) if upload is not None else b""
            if not data:
                raise Refused(M_("choose a CSV file to upload"), {"file": M_("no file")})
        papers = paper_csv.read(data, tz)
        if asked == check.CONFIRM:
            brought = uow.perform(sessions(), "bring_in_paper_cases", paper_cases.bring_in_many, user, papers,
                                  user=user)
            if path is not None:
                path.unlink(missing_ok=True)
            for one in brought:
                check.tell(M_("Case %(number)s brought in from the paper file.", number=one.case_number),
                           brought_follows(one, tz), one.case_id)
            return redirect(url_for("officer.case_list"))
        brought = uow.rehearse(sessions(), "bring_in_paper_cases", paper_cases.bring_in_many, user, papers, user=user)
    except Refused as refused:
        return render_template("officer/paper_csv.html", error=refused.message, field_errors=refused.field_errors,
                               **context), 422
    follows = [follow for one in brought for follow in brought_follows(one, tz)]
    printed = [(_("Cases"), str(len(brought))), (_("Past facts"), str(sum(one.facts for one in brought)))]
    return check.render(title=M_("bring in the paper cases of the file"), printed=printed, follows=follows,
                        hidden={"token": _hold(data, user.id)}, back=url_for("officer.paper_case_upload"),
                        case_number=_("Paper cases"))
