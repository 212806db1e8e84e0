"""Objections and ownership decisions of clause (c), with interim delivery (Explanation)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler
from webapp.values.casefile import InterimDelivery, MissingFact, Objection


def _objection(ctx: HandlerContext) -> Objection:
    objector = (ctx.task_data.get("objection") or {}).get("objector")
    objection = ctx.case_file.objection_of(str(objector)) if objector is not None else None
    if objection is None:
        raise MissingFact(f"no objection by {objector!r} is on the file")
    return objection


@handler("objections.record_decision", clause="Rule 130(c)")
def record_decision(ctx: HandlerContext) -> dict[str, Any]:
    """Record the sarpanch's decision on one claim (form ``decide_objection``: decision is
    ``proved``, ``not_proved`` or ``interim_delivery``).

    Returns: ``{"interim_delivery": bool, "withdraw_auction": bool}``: true interim delivery means
    deliver on security, the claim still open; ``withdraw_auction`` is true when the claim is proved
    while the cattle are unsold in the pound (they go to the owner, not to a buyer).
    """
    form = ctx.form("decide_objection")
    if form["decision"] == "interim_delivery":
        return {"interim_delivery": True, "withdraw_auction": False}
    cf = ctx.case_file
    objection = _objection(ctx)
    objection.decision, objection.decided_on, objection.decided_at = form["decision"], ctx.today, ctx.now
    cf.decision_on, cf.decision_at = ctx.today, ctx.now
    unsold_in_pound = (cf.sale is None and cf.dispatch is None and cf.interim is None and cf.auction is not None
                       and cf.auction.status in ("open", "unsold"))
    return {"interim_delivery": False, "withdraw_auction": form["decision"] == "proved" and unsold_in_pound}


@handler("objections.interim_delivery", clause="Rule 130(c) Explanation")
def interim_delivery(ctx: HandlerContext) -> dict[str, Any]:
    """Deliver the cattle to the objector on security held in the suspense account.

    Returns: ``{"security": rupees as text}``.
    """
    form = ctx.form("decide_objection")
    objection = _objection(ctx)
    security = Decimal(str(form["security"]))
    ctx.case_file.interim = InterimDelivery(objector=objection.objector, security=security, day=ctx.today,
                                            reason=form.get("reason") or None)
    ctx.ledger.post("objector", "suspense", security, kind="security", clause="Rule 130(c) Explanation",
                    memo=f"security from {objection.objector}")
    return {"security": f"{security:.2f}"}


@handler("objections.review", clause="Rule 130(c), (e)")
def review(ctx: HandlerContext) -> dict[str, Any]:
    """Were objections filed? Returns: ``{"filed": bool, "count": int}``."""
    return {"filed": bool(ctx.case_file.objections), "count": len(ctx.case_file.objections)}
