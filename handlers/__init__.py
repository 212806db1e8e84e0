"""Service-task handlers: the functions the Rule 130 diagram calls by name.

Each handler is ``fn(ctx, **params) -> dict``. ``ctx`` is a :class:`handlers.context.HandlerContext`
(the case file, the clock's instant, the submitted form of the task, ledger posting and
notifications); ``params`` are the service task's evaluated parameters. The returned dict is
stored in the task's result variable, where the diagram's gateways and timers read it.
Handlers are registered by operation name with :func:`handler`; the diagram checker refuses a
service task naming an operation that is not registered.
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


def names() -> list[str]:
    """Every registered operation name."""
    _load()
    return sorted(REGISTRY)


def get(name: str) -> Handler:
    """The handler registered as ``name``.

    Raises:
        KeyError: no handler of that name.
    """
    _load()
    return REGISTRY[name]


def _load() -> None:
    from . import auction, case, decision, notice, notify, objections, service_level, settlement  # noqa: F401
