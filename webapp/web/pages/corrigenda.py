"""The corrigendum on the pages (webapp.services.cases.corrigenda; docs/RULE130.md "The corrigendum"):
the facts an act recorded beside the amended values, a check step with the old and new values side
by side and what follows (the documents reissued, the money owed, the notice), then Confirm; and
the secretary's record of money owed paid or received (through the check step of the case page).

Views of the officers' blueprint (:data:`webapp.web.pages.officer.bp`), added when this module is
imported (webapp.web, with the case pages)."""

from __future__ import annotations

from typing import Any

from flask import redirect, render_template, request, url_for
from flask_babel import gettext as _

from webapp.errors import Refused
from webapp.i18n import M_, flash_message, localize
from webapp.services.cases import cases, corrigenda
from webapp.services.running import acts, uow
from webapp.store.models import Case
from webapp.values import casefile, clock
from webapp.web.context import db_session, sessions
from webapp.web.pages import check
from webapp.web.pages.cases import _case_act
from webapp.web.pages.officer import bp, me

ISSUER_ROLES = ("secretary", "sarpanch", "appellate_authority")


@bp.app_template_global("corrigendum_choices")
def corrigendum_choices(case: Case) -> list[tuple[str, str, Any]]:
    """The acts of ``case`` whose facts a corrigendum may amend, latest first: (reference, name,
    instant) — each task completed and not corrected, then the opening record."""
    session = db_session()
    listed: list[tuple[str, str, Any]] = [(str(a.id), a.name, a.at) for a in reversed(acts.of_case(session, case.id))
                                          if a.corrected_at is None and (a.element_id or "").startswith("ut_")]
    cf = casefile.load(case.file_json)
    listed.append((corrigenda.OPENING, "Cattle impounded", cf.impounded_at))
    return listed


def _form(case_id: int, act_ref: str, *, status: int = 200, error: str | None = None,
          values: dict[str, str] | None = None, reason: str = "") -> Any:
    session, user = db_session(), me()
    case = cases.get_case(session, user, case_id)
    cf = casefile.load(case.file_json)
    facts = corrigenda.recorded_facts(session, user, case_id, act_ref)
    act = corrigenda.act_of(session, case, act_ref)
    return render_template("officer/corrigendum.html", case=case, tz=cf.timezone, act_ref=act_ref,
                           act_name=act.name if act is not None else "Cattle impounded",
                           act_at=act.at if act is not None else cf.impounded_at, facts=facts,
                           values=values or {}, reason=reason, error=error,
                           last_day=corrigenda.last_day(act, cf)), status


@bp.route("/cases/<int:case_id>/corrigenda/<act_ref>", methods=["GET", "POST"])
def corrigendum(case_id: int, act_ref: str) -> Any:
    """The corrigendum of act ``act_ref`` (an id, or ``opening``): the form (GET), the check step
    (``step=check``: the plan, nothing recorded), Confirm (the corrigendum issued) or Change."""
    if request.method == "GET":
        return _form(case_id, act_ref)
    session, user = db_session(), me()
    recorded = corrigenda.recorded_facts(session, user, case_id, act_ref)
    typed = {name: request.form.get(f"new.{name}", value).strip() for name, value in recorded.items()}
    values = {name: value for name, value in typed.items() if value != recorded[name]}
    reason = request.form.get("reason", "")
    asked = check.step()
    if asked == check.CHANGE:
        return _form(case_id, act_ref, values=typed, reason=reason)
    hidden = {f"new.{name}": value for name, value in values.items()} | {"reason": reason}
    try:
        if asked == check.CHECK:
            with sessions()() as dry, clock.fixed():
                corrigenda.clean_reason(reason)
                found = corrigenda.plan(dry, user, case_id, act_ref, values)
                dry.rollback()
            case = cases.get_case(session, user, case_id)
            return render_template("officer/corrigendum_check.html", case=case, plan=found,
                                   tz=casefile.load(case.file_json).timezone, hidden=hidden, reason=reason,
                                   back=url_for("officer.case", case_id=case_id))
        done = uow.perform(sessions(), "corrigendum", corrigenda.issue, user, case_id, act_ref, values, reason,
                           case_id=case_id, user=user)
    except Refused as refused:
        return _form(case_id, act_ref, status=422, error=refused.message, values=typed, reason=reason)
    flash_message(M_("Corrigendum %(number)s was issued.", number=done["number"]), "success")
    for pair in done["documents_reissued"]:
        flash_message(M_("Document %(new)s was issued in place of %(old)s.", new=pair["new"], old=pair["old"]), "follow")
    return redirect(url_for("officer.case", case_id=case_id))


@bp.route("/cases/<int:case_id>/owed/<int:index>", methods=["POST"])
def settle_owed(case_id: int, index: int) -> Any:
    """The secretary records money a corrigendum found owed as paid (a refund) or received (a
    collection), through the check step."""
    cf = casefile.load(cases.get_case(db_session(), me(), case_id).file_json)
    owed = cf.owed[index - 1] if 0 < index <= len(cf.owed) else None
    what = localize(corrigenda.owed_words(owed)) if owed is not None else str(index)
    return _case_act(case_id, "settle_owed", corrigenda.settle, index,
                     done=M_("Recorded as settled: %(what)s.", what=what), values={},
                     title=M_("Record money owed under a corrigendum as settled"),
                     printed=[(_("Money owed"), what)])


__all__ = ["corrigendum", "corrigendum_choices", "settle_owed"]
