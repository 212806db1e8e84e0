"""Service levels of officers' tasks: when a task is overdue, for the diagram's overdue timers.

RULE130.md, "Service levels for officers' tasks": each officer task has a due day (e.g. publish
the notice 1 day after the file opens). These are the project's settings, not legal periods: a
task past its due day stays open and nothing in the case changes, but its role is reminded and,
later, the sarpanch is told. The diagram models this with non-interrupting boundary timers whose
``timeDate`` is ``service_level_end("<the task's id>", <days after>, timezone)`` (the only timer
form besides ``period_end``; see :mod:`webapp.engine.diagrams.parser`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler
from webapp.values import legal_time
from webapp.values.deadlines import service_level  # the one table of due days

MAX_DAYS_AFTER = 60


@handler("service_level.end", clause="reading: service levels for officers' tasks (RULE130.md)")
def end(ctx: HandlerContext, element_id: str, days_after: int, timezone: str) -> dict[str, Any]:
    """The instant a task becomes overdue, plus ``days_after`` calendar days.

    Args:
        element_id: the user task's BPMN id (``ut_publish_notice`` ...).
        days_after: whole calendar days after the task became overdue (0: the overdue instant).
        timezone: the Panchayat's IANA zone (the diagram passes ``timezone``).
    Returns:
        ``{"instant": ISO text}``: 00:00 local of (due day + 1 + days_after), offset-aware, UTC;
        at that instant "My tasks" starts showing the task overdue (days_after 0).
    Raises:
        ValueError: a negative or too large ``days_after``, or a task with no due day (yet).
    """
    if isinstance(days_after, bool) or not isinstance(days_after, int) or not 0 <= days_after <= MAX_DAYS_AFTER:
        raise ValueError(f"days after the due day must be a whole number from 0 to {MAX_DAYS_AFTER}, "
                         f"not {days_after!r}")
    due, _, _ = service_level(ctx.case_file, element_id)
    if due is None:
        raise ValueError(f"the task {element_id} has no service-level due day in this case (RULE130.md, "
                         "'Service levels for officers' tasks')")
    return {"instant": legal_time.day_start(due + timedelta(days=1 + days_after), timezone).isoformat()}


def due_day(ctx: HandlerContext, element_id: str) -> str:
    """The task's due day as ISO text (for the notices), or '' when not known."""
    due, _, _ = service_level(ctx.case_file, element_id)
    return due.isoformat() if due else ""
