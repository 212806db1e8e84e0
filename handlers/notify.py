"""Notifications the diagram sends by name."""

from __future__ import annotations

from typing import Any

from handlers.context import HandlerContext
from handlers.registry import handler
from handlers.service_level import due_day


@handler("notify.officers", clause="reading: officers are told of work and outcomes")
def officers(ctx: HandlerContext, roles: list[str] | str, template: str) -> dict[str, Any]:
    """Write an in-app notification from ``template`` to every officer of ``roles`` in scope.

    Params: ``roles`` (a role or a list of roles), ``template`` (a message key of
    :mod:`webapp.services.notify.notifications`).
    """
    ctx.notify([roles] if isinstance(roles, str) else list(roles), template)
    return {"sent": template}


def _attached(ctx: HandlerContext, operation: str) -> dict[str, Any]:
    if ctx.attached_to is None:
        raise ValueError(f"{operation} must follow a boundary timer on a user task (it tells that task's officers)")
    return ctx.attached_to


@handler("notify.task_overdue", clause="reading: service levels for officers' tasks (RULE130.md)")
def task_overdue(ctx: HandlerContext) -> dict[str, Any]:
    """Tell the officers of the overdue task's lane that it is past its due day (template
    ``task_overdue``). Runs on the path of a non-interrupting boundary timer; the task stays open.

    Returns ``{"sent": "task_overdue", "task": element id, "due": ISO day}``.
    Raises:
        ValueError: not on the path of a boundary event on a user task.
    """
    task = _attached(ctx, "notify.task_overdue")
    due = due_day(ctx, task["element_id"])
    ctx.notify([task["lane"]], "task_overdue", task=task["name"], due_day=due)
    return {"sent": "task_overdue", "task": task["element_id"], "due": due}


@handler("notify.task_escalated", clause="reading: service levels for officers' tasks (RULE130.md)")
def task_escalated(ctx: HandlerContext, to: list[str] | str = "sarpanch") -> dict[str, Any]:
    """Tell ``to`` (default the sarpanch) that a task of another role is still not done after its
    due day (template ``task_escalated``); "My tasks" shows the task as escalated from then on.

    Returns ``{"sent": "task_escalated", "task": element id, "due": ISO day}``.
    Raises:
        ValueError: not on the path of a boundary event on a user task.
    """
    task = _attached(ctx, "notify.task_escalated")
    due = due_day(ctx, task["element_id"])
    ctx.notify([to] if isinstance(to, str) else list(to), "task_escalated", task=task["name"],
               role=str(task["lane"]).replace("_", " "), due_day=due)
    return {"sent": "task_escalated", "task": task["element_id"], "due": due}
