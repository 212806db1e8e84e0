"""The report and file (Rule 130, opening words)."""

from __future__ import annotations

from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler


@handler("case.raise_report", clause="Rule 130 (opening words)")
def raise_report(ctx: HandlerContext) -> dict[str, Any]:
    """The release window passed: the report is raised and the file opened (the diagram then tells the secretary).

    Returns: ``{"raised_at": ISO instant}``.
    """
    ctx.case_file.report_raised_at = ctx.now
    return {"raised_at": ctx.now.isoformat()}
