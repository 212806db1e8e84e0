"""The registry of service-task handlers: the operation names the diagram may call.

Kept apart from the package so that each handler module registers itself (``from .registry
import handler``) without importing the package that imports it (:mod:`handlers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Handler = Callable[..., dict[str, Any]]
REGISTRY: dict[str, Handler] = {}
CLAUSES: dict[str, str] = {}


def handler(name: str, clause: str) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the service operation ``name``, implementing ``clause`` of Rule 130."""

    def register(fn: Handler) -> Handler:
        if name in REGISTRY:
            raise ValueError(f"handler {name} is registered twice")
        REGISTRY[name] = fn
        CLAUSES[name] = clause
        fn.clause = clause  # type: ignore[attr-defined]
        return fn

    return register
