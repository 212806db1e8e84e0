"""Notifications the diagram sends by name."""

from __future__ import annotations

from typing import Any

from . import handler
from .context import HandlerContext


@handler("notify.officers", clause="reading: officers are told of work and outcomes")
def officers(ctx: HandlerContext, roles: list[str] | str, template: str) -> dict[str, Any]:
    """Write an in-app notification from ``template`` to every officer of ``roles`` in scope.

    Params: ``roles`` (a role or a list of roles), ``template`` (a message key of
    :mod:`webapp.services.notifications`).
    """
    ctx.notify([roles] if isinstance(roles, str) else list(roles), template)
    return {"sent": template}
