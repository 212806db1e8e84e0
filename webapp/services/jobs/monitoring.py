"""What administrators and Prometheus see of the timer workers: recent firings and their lag,
overdue timers, and the counts ``/metrics`` exposes.

Everything here is read from the database (``timer_firing``, ``case_event``, ``case_instance``),
so the figures are the same whichever process answers — a gunicorn web worker, ``rule130 serve``
— and include the firings of every timer worker process, past restarts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Select, case, func, select
from sqlalchemy.orm import Session

from webapp.services.cases import overview
from webapp.services.jobs.incidents import open_count
from webapp.store.models import Case, CaseEvent, Panchayat, ProcessVersion, TimerFiring, User

LAG = func.coalesce(TimerFiring.lag_seconds, TimerFiring.lateness_seconds)
"""A firing's worker lag in seconds: fired minus the later of due and armed; firings recorded before
migration 0016 have only their lateness, which stands in."""

LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 3600.0, 86400.0)
"""Upper bounds (seconds) of the timer lag histogram's buckets (plus +Inf)."""


@dataclass
class Firing:
    """One recorded firing, for the admin page: instants in UTC, the Panchayat's zone to show them in."""

    case_id: int
    case_number: str
    element_id: str
    due_at: datetime
    fired_at: datetime
    lateness_seconds: float
    timezone: str
    name: str = ""  # the timer event's name in its process version ("Release window ends"), else ""
    lag_seconds: float | None = None  # the worker's lag (None: as the lateness, recorded before 0016)


@dataclass
class LagReport:
    """The timer lag page: the latest firings, the last hour's percentiles, what is overdue now.

    ``p50_seconds``/``p99_seconds`` are None when nothing fired in the last hour.
    """

    recent: list[Firing]
    hour_count: int
    p50_seconds: float | None
    p99_seconds: float | None
    max_seconds: float | None
    overdue_count: int
    oldest_overdue_seconds: float


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest-rank method; ``values`` must not be empty."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100), at least 1
    return ordered[int(min(rank, len(ordered))) - 1]


AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")

def _scoped(query: AnySelect, user: User) -> AnySelect:
    """Limit a query that joins ``case_instance`` to the administrator's scope (RULE: users.can_see)."""
    if user.panchayat_id is not None:
        return query.where(Case.panchayat_id == user.panchayat_id)
    if user.samiti_code is not None:
        return query.where(Panchayat.samiti_code == user.samiti_code)
    return query


def lag_report(session: Session, user: User, now: datetime, *, limit: int = 50) -> LagReport:
    """Recent firings (newest first, at most ``limit``), p50/p99 of the workers' lag of firings in
    the hour before ``now``, and running cases whose next timer is due but not yet fired — within
    the administrator's scope (installation, Samiti or Panchayat).

    Lateness is ``fired_at - due_at`` in seconds as each firing recorded it; lag (:data:`LAG`) is the
    firing instant minus the later of the due instant and the instant the timer was armed.
    """
    base = (select(TimerFiring, Case.case_number, Panchayat.timezone, Case.process_version_id)
            .join(Case, Case.id == TimerFiring.case_id).join(Panchayat, Panchayat.id == Case.panchayat_id))
    base = _scoped(base, user)
    rows = session.execute(base.order_by(TimerFiring.fired_at.desc(), TimerFiring.id.desc()).limit(limit)).all()
    diagrams = {v.id: v.bpmn_xml for v in session.scalars(
        select(ProcessVersion).where(ProcessVersion.id.in_({version_id for *_, version_id in rows})))}
    recent = [Firing(f.case_id, number, f.element_id, f.due_at, f.fired_at, f.lateness_seconds, tz,
                     overview.elements(diagrams[version_id]).get(f.element_id, ("", ""))[0] if version_id in diagrams else "",
                     f.lag_seconds)
              for f, number, tz, version_id in rows]
    hour = _scoped(select(LAG).join(Case, Case.id == TimerFiring.case_id)
                   .join(Panchayat, Panchayat.id == Case.panchayat_id)
                   .where(TimerFiring.fired_at > now - timedelta(hours=1), TimerFiring.fired_at <= now), user)
    lags = list(session.scalars(hour))
    overdue = _scoped(select(Case.next_timer_due).join(Panchayat, Panchayat.id == Case.panchayat_id)
                      .where(Case.status == "running", Case.held_incident_id.is_(None),
                             Case.next_timer_due.is_not(None), Case.next_timer_due < now),
                      user)
    due = list(session.scalars(overdue))
    return LagReport(recent=recent, hour_count=len(lags),
                     p50_seconds=percentile(lags, 50) if lags else None,
                     p99_seconds=percentile(lags, 99) if lags else None,
                     max_seconds=max(lags) if lags else None,
                     overdue_count=len(due),
                     oldest_overdue_seconds=max(((now - d).total_seconds() for d in due if d is not None), default=0.0))


# -- Prometheus: computed from the database at scrape time ----------------------------------------

def timer_lag_histogram(session: Session) -> tuple[list[tuple[str, int]], float, int]:
    """Cumulative bucket counts of every recorded firing's worker lag (:data:`LAG`; one query).

    Returns:
        ([(upper bound as text, count <= bound), ..., ("+Inf", total)], sum of lag (s), total).
    """
    columns = [func.coalesce(func.sum(case((bound >= LAG, 1), else_=0)), 0) for bound in LAG_BUCKETS]
    row = session.execute(select(*columns, func.count(TimerFiring.id),
                                 func.coalesce(func.sum(LAG), 0.0))).one()
    total, total_sum = int(row[-2]), float(row[-1])
    buckets = [(repr(float(bound)), int(count)) for bound, count in zip(LAG_BUCKETS, row[:-2], strict=False)]
    return [*buckets, ("+Inf", total)], total_sum, total


def counts(session: Session, now: datetime) -> dict[str, float]:
    """Totals for ``/metrics``: timers fired, tasks completed (history events of kind ``task``),
    running cases with an overdue timer and the oldest overdue lag (seconds)."""
    fired = session.scalar(select(func.count(TimerFiring.id))) or 0
    tasks = session.scalar(select(func.count(CaseEvent.id)).where(CaseEvent.kind == "task")) or 0
    overdue = session.execute(select(func.count(Case.id), func.min(Case.next_timer_due))
                              .where(Case.status == "running", Case.held_incident_id.is_(None),
                                     Case.next_timer_due.is_not(None), Case.next_timer_due < now)).one()
    oldest = 0.0
    if overdue[1] is not None:
        earliest = overdue[1] if overdue[1].tzinfo else overdue[1].replace(tzinfo=now.tzinfo)
        oldest = max(0.0, (now - earliest).total_seconds())
    return {"timers_fired": fired, "tasks_completed": tasks, "overdue": overdue[0] or 0, "oldest_overdue": oldest}


def metric_families(session: Session, now: datetime) -> Iterator[Any]:
    """The database-derived Prometheus metric families (prometheus_client ``*MetricFamily``)."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

    buckets, total_sum, _total = timer_lag_histogram(session)
    yield HistogramMetricFamily("rule130_timer_lag_seconds",
                                "Timer worker lag of every firing recorded (firing instant minus the later of "
                                "the due instant and the instant the timer was armed)",
                                buckets=buckets, sum_value=total_sum)
    totals = counts(session, now)
    yield CounterMetricFamily("rule130_timers_fired", "Timer firings recorded", value=totals["timers_fired"])
    yield CounterMetricFamily("rule130_tasks_completed", "Tasks and acts completed on cases (history events)",
                              value=totals["tasks_completed"])
    yield GaugeMetricFamily("rule130_timers_overdue", "Running cases whose next timer is due but not fired",
                            value=totals["overdue"])
    yield GaugeMetricFamily("rule130_open_incidents", "Incidents holding a case, not yet retried or skipped",
                            value=open_count(session))
    yield GaugeMetricFamily("rule130_timer_oldest_overdue_seconds", "How long the oldest overdue timer has waited",
                            value=totals["oldest_overdue"])
