"""``POST /api/v1/paper-cases``: a running paper case brought in at its stage (issue 31, item 2),
added to the API's blueprint before it is registered (webapp.web.register).

The body is a new case's (``impounded_at``, ``place_seized``, ``place_impounded``, ``nearest_village``,
``animals``) with ``facts``: the past facts in the order they happened (``[{"do", "at", ...}]``,
:data:`webapp.services.intake.paper_cases.FACTS`). 201 with ``{"case": the case, "brought": what
followed}``; with ``?dry_run=true`` 200 ``{"dry_run": true, "brought": ...}`` and nothing recorded.
A refusal is 422 naming ``facts[i].field`` in ``fields``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import Response, jsonify

from webapp.errors import NotPermitted, Refused
from webapp.services.cases import cases
from webapp.services.intake import paper_cases
from webapp.services.running import uow
from webapp.store.models import Panchayat
from webapp.web.api.calls import API_ROOT, api_user, dry_run, json_body, only_fields, optional_text
from webapp.web.api.routes import bp
from webapp.web.api.shapes import case_json
from webapp.web.context import db_session, sessions


def brought_json(brought: paper_cases.Brought, tz: str) -> dict[str, Any]:
    """What followed from a paper case brought in, in the API's shapes (days ``YYYY-MM-DD``, instants
    with the Panchayat's offset, rupees as text with two decimals)."""
    zone = ZoneInfo(tz)

    def instant(value: datetime) -> str:
        return value.astimezone(zone).isoformat()

    return {
        "case_number": brought.case_number, "status": brought.status, "outcome": brought.outcome,
        "facts": brought.facts,
        "open_tasks": [{"title": t["title"], "lane": t["lane"], "subject": t["subject"],
                        "act_by": paper_cases.day_text(t["act_by"]), "overdue": t["overdue"]}
                       for t in brought.open_tasks],
        "ran_out": [{"name": r["name"], "element_id": r["element_id"], "due": instant(r["due"])}
                    for r in brought.ran_out],
        "documents": [{"kind": d["kind"], "title": d["title"], "number": d["number"]} for d in brought.documents],
        "receipts": [{"number": r["number"], "amount": f"{r['amount']:.2f}", "kind": r["kind"],
                      "received_at": instant(r["received_at"])} for r in brought.receipts],
    }


@bp.post("/paper-cases")
def bring_in_paper_case() -> Response:
    """Bring in a running paper case (the secretary or sarpanch of its Panchayat); see the module."""
    user = api_user()
    if user.role not in paper_cases.BRINGERS or user.panchayat_id is None:
        raise NotPermitted("only the secretary or the sarpanch of a Panchayat brings in a paper case; you are "
                           f"signed in as {user.role.replace('_', ' ')}")
    body = json_body()
    only_fields(body, paper_cases.CASE_FIELDS, "a paper case")
    panchayat = db_session().get(Panchayat, user.panchayat_id)
    tz = panchayat.timezone if panchayat is not None else "Asia/Kolkata"
    animals = body.get("animals")
    if not isinstance(animals, list) or not all(isinstance(a, dict) for a in animals):
        raise Refused("animals must be a list of objects with species, description and optionally tag",
                      {"animals": "a list of objects"})
    for name in ("impounded_at", "place_seized", "place_impounded", "nearest_village"):
        optional_text(body, name)
    for position, animal in enumerate(animals, start=1):
        for name in ("species", "description", "tag"):
            optional_text(animal, name, f"animals[{position}].{name}")
    facts = paper_cases.read_facts(body.get("facts"), tz)
    fields = {name: body.get(name) for name in ("impounded_at", "place_seized", "place_impounded", "nearest_village")}
    check = dry_run()
    run = uow.rehearse if check else uow.perform
    brought = run(sessions(), "bring_in_paper_case", paper_cases.bring_in, user, user=user, animals=animals,
                  facts=facts, **fields)
    if check:
        return jsonify({"dry_run": True, "brought": brought_json(brought, tz)})
    session = db_session()
    session.rollback()
    case = cases.get_case(session, user, brought.case_id)
    response = jsonify({"case": case_json(case, user), "brought": brought_json(brought, tz)})
    response.status_code = 201
    response.headers["Location"] = f"{API_ROOT}/cases/{case.id}"
    return response
