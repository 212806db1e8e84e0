"""The Panchayat's decision, the appeal against it, and the day the outcome becomes final."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler
from webapp.values.casefile import present


@handler("decision.take_last_ownership_decision", clause="Rule 130(c)")
def take_last_ownership_decision(ctx: HandlerContext) -> dict[str, Any]:
    """Objections were filed: the Panchayat's decision is its last ownership decision.

    Returns: ``{"decided_at": ISO instant, "owner_proved": bool}``.
    """
    cf = ctx.case_file
    decided = [(o.decided_at, o) for o in cf.objections if o.decided_at is not None]
    decided_at, last = max(decided, key=lambda pair: pair[0])
    proved = next((o for o in cf.objections if o.decision == "proved"), None)
    cf.decision_on, cf.decision_at = last.decided_on, decided_at
    cf.owner_proved, cf.winning_objector = proved is not None, proved.objector if proved else None
    return {"decided_at": decided_at.isoformat(), "owner_proved": cf.owner_proved}


@handler("decision.record_order_auction_stand", clause="Rule 130(e)")
def record_order_auction_stand(ctx: HandlerContext) -> dict[str, Any]:
    """No objection was filed: the sarpanch's order that the auction stand is the decision.

    Returns: ``{"decided_at": ISO instant}``.
    """
    cf = ctx.case_file
    cf.order_auction_stand_on = ctx.today
    cf.decision_on, cf.decision_at = ctx.today, ctx.now
    cf.owner_proved, cf.winning_objector = False, None
    return {"decided_at": ctx.now.isoformat(), "owner_proved": False}


@handler("appeal.open_window", clause="Rule 130(e) proviso")
def open_window(ctx: HandlerContext) -> dict[str, Any]:
    """The appeal period runs from the decision day.

    Returns: ``{"decided_at": ISO instant of the decision, "appeal_pending": bool}`` (an appeal
    filed before this point is decided at once).
    """
    cf = ctx.case_file
    return {"decided_at": present(cf.decision_at, "decision").isoformat(), "appeal_pending": cf.pending_appeal() is not None}


@handler("appeal.apply_decision", clause="Rule 130(e) proviso")
def apply_decision(ctx: HandlerContext) -> dict[str, Any]:
    """Apply the appellate authority's decision (form ``decide_appeal``: upheld or reversed).

    A reversed "not proved" or a reversed order that the auction stand makes the appellant the
    owner; a reversed "proved" makes the claim not proved (RULE130.md, "Decision and appeal"). An
    objector's appeal is against the decision on their own claim: reversed, their claim is proved
    and a claim proved before it is not (at most one claim stands proved).

    The outcome is final with this decision unless the Panchayat decided again after the appeal was
    filed (an objection filed after a decision is decided too, and the appeal period runs again from
    that later decision, RULE130.md): while that period runs, others may still appeal.
    Returns: ``{"owner_proved": bool, "window_open": bool}`` (``window_open``: wait for appeals
    until the end of day D + M of the later decision D).
    """
    cf = ctx.case_file
    appeal = present(cf.pending_appeal(), "appeal waiting for a decision")
    decision = ctx.form("decide_appeal")["decision"]
    appeal.decision, appeal.decided_on = decision, ctx.today
    if decision == "reversed":
        own = cf.objection_of(appeal.appellant)  # an objector appeals against the decision on their claim
        if cf.owner_proved and (own is None or own.decision == "proved"):
            # against the proved claim: it is not proved
            for objection in cf.objections:
                if objection.decision == "proved":
                    objection.decision = "not_proved"
            cf.owner_proved, cf.winning_objector = False, None
        else:
            # against "not proved" on the appellant's own claim, or against the order that the auction
            # stand: the appellant is the owner, and any other claim proved falls (at most one stands)
            for objection in cf.objections:
                if objection.decision == "proved" and objection is not own:
                    objection.decision = "not_proved"
            # an appellant who objected is named as the objection was filed
            cf.owner_proved, cf.winning_objector = True, own.objector if own else appeal.appellant
            if own is not None:
                own.decision = "proved"
    later = cf.decision_at is not None and cf.decision_at > appeal.filed_at
    window_open = later and cf.decision_on is not None and \
        ctx.today <= cf.decision_on + timedelta(days=cf.appeal_period_days)
    return {"owner_proved": bool(cf.owner_proved), "window_open": bool(window_open)}


def _outcome_flags(cf: Any) -> dict[str, bool]:
    """Where the cattle and the money are, for the gateways that carry out the final outcome:
    ``owner_proved``, ``buyer_holds_cattle``, ``interim_delivered``, ``other_holder`` (the cattle
    are on interim delivery with an objector other than the one whose ownership is proved, who
    returns them first: RULE130.md (c) Explanation, reading) and ``unsold_in_pound``."""
    buyer_holds = cf.sale is not None and cf.sale.returned_on is None
    interim = cf.interim is not None and cf.interim.returned_on is None
    other_holder = bool(interim and cf.owner_proved and cf.held_by_another_objector())
    unsold_in_pound = (cf.sale is None and cf.dispatch is None and not interim and cf.release is None
                       and bool(cf.living_animals()))
    return {"owner_proved": bool(cf.owner_proved), "buyer_holds_cattle": buyer_holds, "interim_delivered": interim,
            "other_holder": other_holder, "unsold_in_pound": unsold_in_pound}


@handler("decision.make_final", clause="Rule 130(e) proviso")
def make_final(ctx: HandlerContext) -> dict[str, Any]:
    """The outcome is final today: the appeal period ended without appeal, or the appeal is decided.

    Returns: ``{"final_at": ISO instant, **flags}`` (:func:`_outcome_flags`) for the diagram's
    gateways and the return timer.
    """
    cf = ctx.case_file
    cf.final_on = ctx.today
    return {"final_at": ctx.now.isoformat(), **_outcome_flags(cf)}


@handler("decision.route_outcome", clause="Rule 130(d), (e)")
def route_outcome(ctx: HandlerContext) -> dict[str, Any]:
    """The outcome is final and the sarpanch's decision on unsold cattle and any remittance are in
    (they run beside the decision): where the cattle and the money are now.

    Returns: ``{"final_at": the instant the outcome became final (as make_final gave it), **flags}``.
    """
    return {"final_at": (ctx.task_data.get("final") or {}).get("final_at"), **_outcome_flags(ctx.case_file)}