"""The corrigendum in the API (webapp.services.cases.corrigenda; docs/RULE130.md "The corrigendum"):
the facts an act recorded, a corrigendum issued (or, with ``?dry_run=true``, what it would do),
and money a corrigendum found owed recorded as paid or received. The views; ``webapp.web.api.routes``
adds them to the API blueprint (:data:`ROUTES`)."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from webapp.errors import Refused
from webapp.services.cases import cases, corrigenda
from webapp.services.running import uow
from webapp.values import casefile, clock
from webapp.web.api.calls import (
    api_user,
    dry_run,
    json_body,
    only_fields,
    optional_text,
    perform,
    render_case,
    resolve_case,
)
from webapp.web.api.shapes import case_json
from webapp.web.context import db_session, sessions


def _act_ref(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or str(value) == "":
        raise Refused("give the act to amend: its id (GET .../corrections lists them) or \"opening\" for the "
                      "opening record", {"act": "required"})
    return str(value)


def corrigendum_facts(case_ref: str, act_ref: str) -> Response:
    """What act ``act_ref`` (an id, or ``opening``) recorded: ``{"act", "facts": {field: text},
    "last_day"}`` — the facts a corrigendum may amend, and the last day to issue one."""
    case = resolve_case(case_ref)
    session = db_session()
    facts = corrigenda.recorded_facts(session, api_user(), case.id, act_ref)
    act = corrigenda.act_of(session, case, act_ref)
    last = corrigenda.last_day(act, casefile.load(case.file_json))
    return jsonify({"act": act_ref, "facts": facts, "last_day": last.isoformat()})


def issue_corrigendum(case_ref: str) -> Response:
    """Issue a corrigendum ``{"act": id | "opening", "values": {field: text}, "reason": "..."}``:
    201 ``{"corrigendum": {...}, "case": {...}}``; with ``?dry_run=true`` 200 ``{"dry_run": true,
    "corrigendum": {...}}`` (nothing recorded), or the refusal it would meet."""
    case = resolve_case(case_ref)
    body = json_body()
    only_fields(body, ("act", "values", "reason"), "a corrigendum")
    act_ref = _act_ref(body.get("act"))
    reason = optional_text(body, "reason")
    values = body.get("values")
    user = api_user()
    if dry_run():
        with sessions()() as session, clock.fixed():
            corrigenda.clean_reason(reason)
            found = corrigenda.plan(session, user, case.id, act_ref, values)
            answer = found.as_json()
            session.rollback()
        return jsonify({"dry_run": True, "corrigendum": answer})
    done = uow.perform(sessions(), "corrigendum", corrigenda.issue, user, case.id, act_ref, values, reason,
                       case_id=case.id, user=user)
    session = db_session()
    session.rollback()
    response = jsonify({"corrigendum": done, "case": case_json(cases.get_case(session, user, case.id),
                                                                user)})
    response.status_code = 201
    return response


def settle_owed(case_ref: str, index: str) -> Response:
    """The secretary records money owed item ``index`` (from 1, ``owed`` of the case) paid to the
    party (a refund) or received from it (a collection); 201 with the case."""
    case = resolve_case(case_ref)
    case_id = perform("settle_owed", case.id, corrigenda.settle, api_user(), case.id, index)
    return render_case(case_id, 201)


# (rule, view, methods): added to the API blueprint by webapp.web.api.routes
ROUTES = (("/cases/<path:case_ref>/corrigenda/<act_ref>", corrigendum_facts, ("GET",)),
          ("/cases/<path:case_ref>/corrigenda", issue_corrigendum, ("POST",)),
          ("/cases/<path:case_ref>/owed/<index>/settle", settle_owed, ("POST",)))
