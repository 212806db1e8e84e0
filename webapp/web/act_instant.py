"""The legal instant of a request: the moment it arrived (RULE130.md, "One instant per act").

:class:`ArrivalInstant` wraps the WSGI application. The first thing it does with a request is read
the product's clock; that instant is fixed (:func:`webapp.values.clock.fixed`) for everything the request
does: every deadline check, every history row, document and ledger entry it writes, and the timers
the engine fires while it applies the act (none due after the instant). An act that arrived before a
deadline is judged before it, however long the server then takes to apply it, and never races a
timer of the same request that the passing time would otherwise have made due.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from webapp.values import clock

ENVIRON_KEY = "rule130.arrived_at"
"""The WSGI environ key holding the request's arrival instant (offset-aware UTC datetime)."""


class ArrivalInstant:
    """WSGI middleware: fix the clock at the request's arrival for the whole request.

    Args:
        app: the WSGI application to wrap (Flask's ``app.wsgi_app``).
    """

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with clock.fixed() as arrived:
            environ[ENVIRON_KEY] = arrived
            return self.app(environ, start_response)


def arrived_at(environ: dict[str, Any]) -> datetime | None:
    """The arrival instant :class:`ArrivalInstant` fixed for the request of ``environ``, if any."""
    return environ.get(ENVIRON_KEY)
