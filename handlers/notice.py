"""Notice of clause (a), published with the conditional auction of clause (b)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler
from webapp.values import legal_time
from webapp.values.casefile import Auction, Notice


@handler("notice.publish", clause="Rule 130(a), (b)")
def publish(ctx: HandlerContext) -> dict[str, Any]:
    """Publish the notice (form ``publish_notice``: objection_period_days >= 30, full_price in rupees)
    and open the conditional auction the same day.

    Returns: ``{"published_at", "auction_opened_at": ISO instants, "objection_period_days": int}``
    for the diagram's timers.
    """
    form = ctx.form("publish_notice")
    cf = ctx.case_file
    days = int(form["objection_period_days"])
    cf.notice = Notice(published_at=ctx.now, published_on=ctx.today, objection_period_days=days,
                       full_price=Decimal(str(form["full_price"])),
                       last_day=legal_time.last_day(ctx.now, days, cf.timezone))
    cf.auctions.append(Auction(round=1, opened_at=ctx.now, opened_on=ctx.today,
                               last_day=legal_time.last_day(ctx.now, 2, cf.timezone)))
    return {"published_at": ctx.now.isoformat(), "objection_period_days": days,
            "auction_opened_at": ctx.now.isoformat()}
