"""The conditional auction of clause (b) and the proviso for unsold cattle."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler
from webapp.values.casefile import Auction, Bid, Dispatch, Sale, present


def _auction(ctx: HandlerContext) -> Auction:
    return present(ctx.case_file.auction, "conditional auction")


@handler("auction.evaluate_bid", clause="Rule 130(b) Note")
def evaluate_bid(ctx: HandlerContext) -> dict[str, Any]:
    """Record the bid of form ``record_bid`` (bidder, amount in rupees) and compare it with the full price.

    Returns: ``{"full_price_reached": bool}``; true closes the auction at once (Note to (b)).
    """
    form = ctx.form("record_bid")
    bid = Bid(bidder=str(form["bidder"]), amount=Decimal(str(form["amount"])), at=ctx.now, day=ctx.today)
    _auction(ctx).bids.append(bid)
    full_price = present(ctx.case_file.notice, "notice").full_price
    return {"full_price_reached": bid.amount >= full_price}


def _sell(ctx: HandlerContext, bid: Bid, kind: str, day: date) -> dict[str, Any]:
    cf = ctx.case_file
    auction = _auction(ctx)
    auction.status = "sold"
    auction.closed_on = auction.closed_on or day  # an unsold auction closed on its third day, not on acceptance
    cf.sale = Sale(buyer=bid.bidder, amount=bid.amount, day=day, kind=kind, auction_round=auction.round)
    ctx.ledger.post("buyer", "suspense", bid.amount, kind="auction_money", clause="Rule 130(b)",
                    memo=f"auction money from {bid.bidder}")
    return {"buyer": bid.bidder, "amount": f"{bid.amount:.2f}", "day": day.isoformat()}


@handler("auction.conclude_sale", clause="Rule 130(b)")
def conclude_sale(ctx: HandlerContext) -> dict[str, Any]:
    """The bid at full price is the conditional sale; its money goes to the suspense account.

    Returns: ``{"buyer", "amount" (rupees, text), "day" (local date)}``.
    """
    bid = _auction(ctx).bids[-1]
    return _sell(ctx, bid, "full_price", bid.day)


@handler("auction.close_unsold", clause="Rule 130(b) proviso")
def close_unsold(ctx: HandlerContext) -> dict[str, Any]:
    """The third day ended without a bid at full price: the auction closes unsold; the sarpanch decides.

    Returns: ``{"has_bids": bool}``.
    """
    auction = _auction(ctx)
    auction.status, auction.closed_on = "unsold", auction.last_day
    return {"has_bids": bool(auction.bids)}


@handler("auction.accept_highest_bid", clause="Rule 130(b) proviso (reading)")
def accept_highest_bid(ctx: HandlerContext) -> dict[str, Any]:
    """The sarpanch accepts the highest bid; the day of acceptance is the sale day."""
    bid = _auction(ctx).highest_bid()
    if bid is None:
        raise RuntimeError("there is no bid to accept")
    return _sell(ctx, bid, "accepted_highest_bid", ctx.today)


@handler("auction.dispatch", clause="Rule 130(b) proviso")
def dispatch(ctx: HandlerContext) -> dict[str, Any]:
    """Send the unsold cattle (form ``decide_unsold``: choice, receiver) to the receiving officer.

    The dispatch day ends the pound's custody. Returns: ``{"receiver", "day"}``.
    """
    form = ctx.form("decide_unsold")
    auction = _auction(ctx)
    auction.status = "dispatched"
    ctx.case_file.dispatch = Dispatch(send_to=form["choice"], receiver=form["receiver"],
                                      receiver_user_id=form.get("receiver_user_id"), day=ctx.today)
    return {"receiver": form["receiver"], "day": ctx.today.isoformat()}


@handler("auction.credit_remittance", clause="Rule 130(b) proviso")
def credit_remittance(ctx: HandlerContext) -> dict[str, Any]:
    """Credit the suspense account with the gross price less the expenses of sale
    (form ``record_remittance``: proceeds, expenses in rupees).

    Returns: ``{"net": rupees as text}``.
    """
    form = ctx.form("record_remittance")
    dispatch = present(ctx.case_file.dispatch, "dispatch to a receiving officer")
    dispatch.proceeds = Decimal(str(form["proceeds"]))
    dispatch.expenses = Decimal(str(form["expenses"]))
    dispatch.remitted_on = ctx.today
    net = dispatch.proceeds - dispatch.expenses
    if net > 0:
        ctx.ledger.post("receiving_officer", "suspense", net, kind="remittance",
                        clause="Rule 130(b) proviso", memo=f"remitted by {dispatch.receiver}")
    return {"net": f"{net:.2f}"}


@handler("auction.unsold_route", clause="Rule 130(b) proviso")
def unsold_route(ctx: HandlerContext) -> dict[str, Any]:
    """The auction is over: did it close without a sale, leaving the cattle in the pound for the
    sarpanch to decide on (``rule130_unsold``, beside the Panchayat's decision)?

    Returns: ``{"unsold": bool}``.
    """
    cf = ctx.case_file
    auction = cf.auctions[-1] if cf.auctions else None
    return {"unsold": auction is not None and auction.status == "unsold" and cf.sale is None and cf.dispatch is None}


@handler("auction.remittance_due", clause="Rule 130(b) proviso")
def remittance_due(ctx: HandlerContext) -> dict[str, Any]:
    """The auction is over: were the unsold cattle sent to a receiving officer whose sale and
    remittance are still to be recorded (``rule130_remittance``, beside the Panchayat's decision)?

    Returns: ``{"due": bool}``.
    """
    dispatch = ctx.case_file.dispatch
    return {"due": dispatch is not None and dispatch.remitted_on is None}


@handler("auction.withdraw", clause="Rule 130(c) and its Explanation")
def withdraw(ctx: HandlerContext) -> dict[str, Any]:
    """Interim delivery, or a claim proved while the cattle are unsold in the pound, withdrew the
    conditional auction; later bids are refused."""
    auction = _auction(ctx)
    auction.status, auction.closed_on = "withdrawn", ctx.today
    return {"withdrawn_on": ctx.today.isoformat()}


@handler("auction.reopen", clause="Rule 130(b), (e) (reading)")
def reopen(ctx: HandlerContext) -> dict[str, Any]:
    """The cattle are unsold in the pound when the outcome falls under (e): open a new three-day
    conditional auction today.

    Returns the notice dict with ``auction_opened_at`` set to now, for the new auction's timer.
    """
    return open_new_auction(ctx)


def open_new_auction(ctx: HandlerContext) -> dict[str, Any]:
    """Open another three-day conditional auction today (days A, A+1, A+2; Rule 130(b) Note).

    Returns the task's notice dict with ``auction_opened_at`` set to now (the auction timer reads it).
    """
    cf = ctx.case_file
    cf.auctions.append(Auction(round=len(cf.auctions) + 1, opened_at=ctx.now, opened_on=ctx.today,
                               last_day=ctx.today + timedelta(days=2)))
    notice = dict(ctx.task_data.get("notice") or {})
    notice["auction_opened_at"] = ctx.now.isoformat()
    return notice
