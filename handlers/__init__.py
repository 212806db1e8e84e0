"""Service-task handlers: the functions the Rule 130 diagram calls by name.

Each handler is ``fn(ctx, **params) -> dict``. ``ctx`` is a :class:`handlers.context.HandlerContext`
(the case file, the clock's instant, the submitted form of the task, ledger posting and
notifications); ``params`` are the service task's evaluated parameters. The returned dict is
stored in the task's result variable, where the diagram's gateways and timers read it.
Handlers are registered by operation name with :func:`handler`; the diagram checker refuses a
service task naming an operation that is not registered.
"""

from __future__ import annotations

# every handler module registers its operations on import (the registry is complete once imported)
from handlers import auction, case, decision, notice, notify, objections, service_level, settlement
from handlers.registry import CLAUSES, REGISTRY, Handler, handler


def names() -> list[str]:
    """Every registered operation name."""
    return sorted(REGISTRY)


def get(name: str) -> Handler:
    """The handler registered as ``name``.

    Raises:
        KeyError: no handler of that name.
    """
    return REGISTRY[name]


__all__ = [
    "CLAUSES",
    "REGISTRY",
    "Handler",
    "auction",
    "case",
    "decision",
    "get",
    "handler",
    "names",
    "notice",
    "notify",
    "objections",
    "service_level",
    "settlement",
]
