"""Watching the system: the timer lag page for administrators, ``/metrics`` for Prometheus, and
the request latency every request records.

``/metrics`` (Prometheus text format, prometheus-client) mixes two sources, chosen so that the
figures are right with several gunicorn web workers and separate timer worker processes:

- computed from the database at scrape time (:mod:`webapp.services.jobs.monitoring`): the timer lag
  histogram, timers fired, tasks completed, overdue timers (and open incidents) — the timer
  workers serve no HTTP, and every process would otherwise count only its own;
- request latency by endpoint, recorded in each web process: with ``PROMETHEUS_MULTIPROC_DIR``
  set (gunicorn), prometheus-client's multiprocess mode sums the files of every worker process;
  without it (``rule130 serve``, one process) the in-memory histogram is exposed.

Access: ``Authorization: Bearer <METRICS_TOKEN>`` when the ``METRICS_TOKEN`` setting (env
``RULE130_METRICS_TOKEN``) is set, or a signed-in installation-wide administrator's session; an
administrator of a Samiti or a Panchayat gets 403 (the figures are the installation's: their own
scope's are on ``/admin/timers``); anyone else gets 401.
"""

from __future__ import annotations

import hmac
import os
import time
from datetime import datetime
from typing import Any

from flask import Blueprint, Response, current_app, g, render_template, request
from flask_login import current_user
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest

from webapp import logs
from webapp.errors import NotPermitted
from webapp.i18n import M_, N_, translate
from webapp.i18n.formats import format_instant_ms
from webapp.services.jobs import monitoring
from webapp.values import clock
from webapp.web.context import db_session, sessions, unauthorized

bp = Blueprint("monitor", __name__)

REQUEST_REGISTRY = CollectorRegistry()
REQUEST_LATENCY = Histogram("rule130_request_duration_seconds", "Time to answer an HTTP request, by endpoint",
                            ["endpoint", "method"], registry=REQUEST_REGISTRY,
                            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))


@bp.before_app_request
def _start_timing() -> None:
    g.rule130_started = time.perf_counter()
    logs.bind_case(None)  # a waitress/gunicorn thread serves many requests: no case carried over


@bp.teardown_app_request
def _unbind_case(_error: BaseException | None) -> None:
    """After every request: no case is carried to the next request this thread serves, even one that
    a check running before :func:`_start_timing` refuses (Flask-WTF's CSRF check logs before it)."""
    logs.bind_case(None)


@bp.after_app_request
def _record_latency(response: Response) -> Response:
    started = g.pop("rule130_started", None)
    if started is not None:
        REQUEST_LATENCY.labels(request.endpoint or "unmatched", request.method).observe(time.perf_counter() - started)
    return response


@bp.app_template_filter("instant_ms")
def fmt_instant_ms(value: datetime | None, tz: str | None = None) -> str:
    """An instant in zone ``tz`` to the millisecond, day first with the weekday, through Babel
    (webapp.i18n.formats.format_instant_ms): Friday, 9 January 2026 00:00:00.042."""
    return format_instant_ms(value, tz)


@bp.app_template_filter("seconds")
def fmt_seconds(value: float | None) -> str:
    """A duration: 0.042 s, 12.3 s, 3 h 05 min."""
    if value is None:
        return "—"
    if value < 60:
        return translate(N_("%(seconds)s s")) % {"seconds": f"{value:.3f}" if value < 10 else f"{value:.1f}"}
    minutes = int(value // 60)
    if minutes < 60:
        return translate(N_("%(minutes)s min %(seconds)s s")) % {"minutes": minutes, "seconds": f"{int(value % 60):02d}"}
    return translate(N_("%(hours)s h %(minutes)s min")) % {"hours": minutes // 60, "minutes": f"{minutes % 60:02d}"}


@bp.get("/admin/timers")
def timer_lag() -> Any:
    """Administrators: recent timer firings (case, timer, due, fired, lateness), p50/p99 of the last
    hour, and how many timers are overdue and not yet fired — within the administrator's scope."""
    if not current_user.is_authenticated:
        return unauthorized()
    user = current_user.user
    if user.role != "administrator":
        raise NotPermitted(M_("only an administrator may see the timer workers' lag"))
    report = monitoring.lag_report(db_session(), user, clock.now())
    return render_template("monitor/timers.html", report=report)


def _metrics_allowed() -> bool:
    """True for the bearer token or an installation-wide administrator's session; False for anyone
    else but a scoped administrator.

    Raises:
        NotPermitted: an administrator of a Samiti or a Panchayat (the figures are installation-wide).
    """
    token = current_app.config.get("METRICS_TOKEN") or os.environ.get("RULE130_METRICS_TOKEN")
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip().encode(), token.encode()):
        return True
    if not (current_user.is_authenticated and current_user.user.role == "administrator"):
        return False
    user = current_user.user
    if user.panchayat_id is not None or user.samiti_code is not None:
        raise NotPermitted(M_("/metrics shows the figures of the whole installation, which only an installation "
                              "administrator may see; the timers of your Samiti or Panchayat are on the Timers page"))
    return True


class _DatabaseCollector:
    def collect(self) -> Any:
        with sessions()() as session:
            yield from monitoring.metric_families(session, clock.now())


@bp.get("/metrics")
def metrics() -> Any:
    """Prometheus text format (see the module docstring for sources and access). 401 without the
    bearer token or an administrator's session; 403 for an administrator of a Samiti or Panchayat."""
    if not _metrics_allowed():
        return Response("401: /metrics needs 'Authorization: Bearer <METRICS_TOKEN>' or an administrator's "
                        "session\n", status=401, mimetype="text/plain",
                        headers={"WWW-Authenticate": 'Bearer realm="rule130 metrics"'})
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # its __init__ has no annotations
        body = generate_latest(registry)
    else:
        body = generate_latest(REQUEST_REGISTRY)
    database = CollectorRegistry()
    database.register(_DatabaseCollector())
    return Response(body + generate_latest(database), content_type=CONTENT_TYPE_LATEST)
