"""Where the money ends: release, clause (d), clause (e), security, shortfall.

Accounts of the Panchayat: ``suspense``, ``pound_account``, ``panchayat_fund``. Parties:
``owner``, ``buyer``, ``objector``, ``receiving_officer``, ``pound_keeper``. Every posting moves
rupees (Decimal) from one account to another and names its clause.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from handlers.auction import open_new_auction
from handlers.context import HandlerContext
from handlers.registry import handler
from webapp.values import fees
from webapp.values.casefile import Release, present

ZERO = Decimal("0.00")


@handler("settlement.release_to_owner", clause="reading: release within the 3-day window")
def release_to_owner(ctx: HandlerContext) -> dict[str, Any]:
    """The owner (form ``release_by_owner``) pays F + C into the cattle pound account.

    The form's ``amount_received`` (rupees, Decimal, already checked to be at least F + C by
    ``webapp.services.tasks.rules``) is recorded on the release with the change returned; the ledger
    receives exactly F + C, whatever was handed over (the pound account reconciles to the dues).

    Returns: ``{"paid": rupees as text}`` (and ``received``, ``change`` when an amount was given).
    """

    cf = ctx.case_file
    form = ctx.form("release_by_owner")
    cf.release = Release(owner=str(form["owner"]), day=ctx.today)
    due = fees.fine_and_feeding(cf, ctx.today)
    result = {"paid": f"{due:.2f}"}
    received = None if form.get("amount_received") in (None, "") else Decimal(str(form["amount_received"]))
    if received is not None:
        cf.release.received, cf.release.change = received, received - due
        result.update(received=f"{received:.2f}", change=f"{received - due:.2f}")
    owner = cf.release.owner
    ctx.ledger.post("owner", "pound_account", due, kind="fine_and_feeding", clause="reading: release",
                    memo=f"fine and feeding paid by {owner}" if received is None
                    else f"fine and feeding paid by {owner}; received {received:.2f}, change returned {received - due:.2f}")
    cf.outcome = "released_by_owner"
    return result


def _settle(ctx: HandlerContext, money: Decimal, outcome: str, clause: str) -> dict[str, Any]:
    """Fine and feeding to the pound account, the balance to the fund; record any shortfall."""
    cf = ctx.case_file
    due = fees.fine_and_feeding(cf, ctx.today)
    to_pound = min(money, due)
    if to_pound > 0:
        ctx.ledger.post("suspense", "pound_account", to_pound, kind="fine_and_feeding", clause=clause)
    if money > to_pound:
        ctx.ledger.post("suspense", "panchayat_fund", money - to_pound, kind="balance", clause=clause)
    cf.shortfall = max(ZERO, due - money)
    cf.outcome = outcome
    return {"to_pound": f"{to_pound:.2f}", "to_fund": f"{money - to_pound:.2f}", "shortfall": f"{cf.shortfall:.2f}"}


@handler("settlement.settle_auction", clause="Rule 130(e)")
def settle_auction(ctx: HandlerContext) -> dict[str, Any]:
    """(e): from the auction money in suspense, F + C to the pound account, the balance to the fund."""
    return _settle(ctx, ctx.ledger.balance("suspense"), "auction_final", "Rule 130(e)")


@handler("settlement.forfeit_security", clause="Rule 130(c) Explanation (reading)")
def forfeit_security(ctx: HandlerContext) -> dict[str, Any]:
    """The objector did not return the cattle: the security stands as the auction money of (e)."""
    present(ctx.case_file.interim, "interim delivery").forfeited = True
    return _settle(ctx, ctx.ledger.balance("suspense"), "security_forfeited",
                   "Rule 130(c) Explanation, (e)")


@handler("settlement.close_no_animals", clause="reading: no animals left in the pound")
def close_no_animals(ctx: HandlerContext) -> dict[str, Any]:
    """Every animal died or escaped in the pound, before or after the notice (RULE130.md clause 0):
    F + C to the day of the last death or escape is recorded as a shortfall and the case closes."""
    return _settle(ctx, ZERO, "closed_no_animals", "reading: no animals left")


@handler("settlement.repay_buyer", clause="Rule 130(b)(ii)")
def repay_buyer(ctx: HandlerContext) -> dict[str, Any]:
    """The buyer returns the cattle today and is repaid the auction money from suspense."""
    sale = present(ctx.case_file.sale, "sale")
    sale.returned_on = ctx.today
    ctx.ledger.post("suspense", "buyer", sale.amount, kind="auction_money_repaid", clause="Rule 130(b)(ii)",
                    memo=f"auction money repaid to {sale.buyer}")
    return {"repaid": f"{sale.amount:.2f}"}


@handler("settlement.deliver_to_objector", clause="Rule 130(d)")
def deliver_to_objector(ctx: HandlerContext) -> dict[str, Any]:
    """(d): the objector pays F + C (+ Cb, passed on to the buyer); the security is refunded.

    Where a receiving officer sold the cattle, the objector is paid the remittance less F + C
    instead (reading). Returns: ``{"fine_and_feeding", "buyer_feeding": rupees as text}``.
    """
    cf = ctx.case_file
    due = fees.fine_and_feeding(cf, ctx.today)
    buyer_feeding = fees.buyer_feeding(cf)
    forfeited = cf.interim is not None and cf.interim.forfeited and not cf.interim.refunded
    if (cf.dispatch is not None and cf.dispatch.net is not None) or forfeited:
        # the cattle cannot be delivered: the remittance, or the forfeited security of the objector
        # who kept them, stands in for them (reading)
        held = ctx.ledger.balance("suspense") - (cf.interim.security if cf.interim and not cf.interim.refunded
                                                 and not forfeited else ZERO)
        to_pound = min(held, due)
        if to_pound > 0:
            ctx.ledger.post("suspense", "pound_account", to_pound, kind="fine_and_feeding", clause="Rule 130(d)")
        if held > to_pound:
            ctx.ledger.post("suspense", "objector", held - to_pound, kind="remittance_balance",
                            clause="Rule 130(d) (reading)",
                            memo=(f"forfeited security of {present(cf.interim, 'interim delivery').objector} "
                                  f"less fine and feeding, to "
                                  f"{cf.winning_objector}") if forfeited else "remittance less fine and feeding")
        if due > to_pound:
            ctx.ledger.post("objector", "pound_account", due - to_pound, kind="fine_and_feeding",
                            clause="Rule 130(d)")
    else:
        ctx.ledger.post("objector", "pound_account", due, kind="fine_and_feeding", clause="Rule 130(d)",
                        memo=f"fine and feeding paid by {cf.winning_objector}")
        if buyer_feeding > 0:
            ctx.ledger.post("objector", "suspense", buyer_feeding, kind="buyer_feeding", clause="Rule 130(b)(ii), (d)")
            ctx.ledger.post("suspense", "buyer", buyer_feeding, kind="buyer_feeding", clause="Rule 130(b)(ii)",
                            memo=f"buyer's feeding to {present(cf.sale, 'sale').buyer}")
    if cf.interim is not None and not cf.interim.refunded and not cf.interim.forfeited:
        _refund_security(ctx)
    cf.delivered_on = ctx.today
    return {"fine_and_feeding": f"{due:.2f}", "buyer_feeding": f"{buyer_feeding:.2f}"}


@handler("settlement.pay_feeding_charges", clause="Rule 130(d)")
def pay_feeding_charges(ctx: HandlerContext) -> dict[str, Any]:
    """Pay the pound keeper P (form ``pay_feeding_charges``, 0 <= P <= C) from the pound account;
    C - P goes to the Panchayat fund and the case ends."""
    cf = ctx.case_file
    paid = Decimal(str(ctx.form("pay_feeding_charges")["amount"]))
    feeding = fees.pound_feeding(cf, ctx.today)
    if paid > 0:
        ctx.ledger.post("pound_account", "pound_keeper", paid, kind="feeding_charges", clause="Rule 130(d)")
    if feeding > paid:
        ctx.ledger.post("pound_account", "panchayat_fund", feeding - paid, kind="feeding_balance", clause="Rule 130(d)")
    cf.feeding_charges = paid
    cf.outcome = "returned_to_objector"
    return {"paid": f"{paid:.2f}", "to_fund": f"{feeding - paid:.2f}"}


@handler("settlement.cattle_returned_by_objector", clause="Rule 130(c) Explanation (reading)")
def cattle_returned_by_objector(ctx: HandlerContext) -> dict[str, Any]:
    """The objector who lost returned the cattle: refund the security and open a new auction.

    Returns the notice dict with ``auction_opened_at`` set to now, for the new auction's timer.
    """
    interim = present(ctx.case_file.interim, "interim delivery")
    interim.returned_on = ctx.today
    if not interim.refunded:
        _refund_security(ctx)
    return open_new_auction(ctx)


def _refund_security(ctx: HandlerContext) -> None:
    """Refund the interim delivery's security from suspense to the objector who gave it."""
    interim = present(ctx.case_file.interim, "interim delivery")
    ctx.ledger.post("suspense", "objector", interim.security, kind="security_refund",
                    clause="Rule 130(c) Explanation (reading)", memo=f"security refunded to {interim.objector}")
    interim.refunded = True


@handler("settlement.cattle_returned_for_owner", clause="Rule 130(c) Explanation (reading)")
def cattle_returned_for_owner(ctx: HandlerContext) -> dict[str, Any]:
    """The objector who held the cattle on security, whose claim failed, returned them while another
    objector's ownership is proved: the security is refunded to the holder today; the cattle are
    delivered to the owner under (d), fed by the pound from today until then.

    Returns: ``{"refunded": rupees as text, "to": the holder's name}``.
    """
    interim = present(ctx.case_file.interim, "interim delivery")
    interim.returned_on = ctx.today
    if not interim.refunded:
        _refund_security(ctx)
    return {"refunded": f"{interim.security:.2f}", "to": interim.objector}


@handler("settlement.forfeit_for_owner", clause="Rule 130(c) Explanation (reading)")
def forfeit_for_owner(ctx: HandlerContext) -> dict[str, Any]:
    """The objector who held the cattle on security did not return them within the return period,
    while another objector's ownership is proved: the security is forfeited and stays in suspense,
    to stand in for the cattle when the owner is settled with under (d) (paid the security less the
    fine and feeding, or paying what it does not cover), as a receiving officer's remittance does.

    Returns: ``{"forfeited": rupees as text, "by": the holder's name}``.
    """
    interim = present(ctx.case_file.interim, "interim delivery")
    interim.forfeited = True
    return {"forfeited": f"{interim.security:.2f}", "by": interim.objector}
