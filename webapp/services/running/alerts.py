"""The notification triggers that the service layer raises around each engine run of a case.

The diagram's own service tasks (``notify.officers``) tell officers of work and outcomes, and its
non-interrupting boundary timers tell them of overdue tasks. This module adds what follows from
the case's state rather than from one element:

- **task ready** — a user task became READY in this unit of work: the officers of its lane are told
  (not the officer whose own act made it ready; not a role the diagram already notified in this
  unit of work, whose message already says what to do);
- **deadline near** — ``RULE130_NOTIFY_DEADLINE_DAYS`` calendar days (default 3; 0 = off) before
  the last day of the objection period (Rule 130(a)), the conditional auction (b) and the appeal
  period ((e) proviso), computed from the case's armed timers, once per timer and due instant
  (a re-armed timer with a new instant is a new deadline); the case's ``next_alert_at`` holds the
  next reminder instant, and :func:`remind_due` (run by the delivery loop) sends those that fall
  due between acts and timer firings;
- **legal period ended** — one of those timers (or the return period of an interim delivery) fired.

Every notice is written with the case change (same transaction) and its deliveries are queued.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from webapp.engine.execution import runtime
from webapp.i18n import N_
from webapp.services.notify import notifications
from webapp.store import json_rows, txcache
from webapp.store.models import DeadlineReminder
from webapp.values import clock, legal_time

if TYPE_CHECKING:  # pragma: no cover
    from webapp.services.running.case_run import (
        CaseRun,  # the type of the run each function reads (case_run imports this module)
    )

DEFAULT_DEADLINE_DAYS = 3
log = logging.getLogger("rule130.notify")


@dataclass(frozen=True)
class LegalPeriod:
    """A legal period ended by a timer of the diagram: its name, who is told, and what its end means."""

    name: str
    roles: tuple[str, ...]
    consequence: str


# names and consequences are catalogue texts: each reader sees them in their language (i18n.render_for)
DEADLINES: dict[str, LegalPeriod] = {
    "n_ice_period_ends": LegalPeriod(N_("the objection period"), ("secretary", "sarpanch"),
                                     N_("no objection is entertained after it (Rule 130(a)).")),
    "bt_auction_closes": LegalPeriod(N_("the conditional auction"), ("secretary",),
                                     N_("no bid is taken after it (Rule 130(b)).")),
    "ice_appeal_window_ends": LegalPeriod(N_("the appeal period"), ("secretary", "sarpanch"),
                                          N_("after it the Panchayat's decision is final (Rule 130(e) proviso).")),
}
ENDED: dict[str, LegalPeriod] = {
    **DEADLINES,
    "bt_return_deadline": LegalPeriod(N_("the return period"), ("sarpanch", "secretary"),
                                      N_("the objector's security is forfeited (Rule 130(d)).")),
}


def deadline_days() -> int:
    """``RULE130_NOTIFY_DEADLINE_DAYS`` (calendar days before a last day to remind; 0 = never).

    Raises:
        ValueError: not a whole number from 0 to 60.
    """
    raw = os.environ.get("RULE130_NOTIFY_DEADLINE_DAYS", str(DEFAULT_DEADLINE_DAYS)).strip()
    if not raw.isdigit() or int(raw) > 60:
        raise ValueError(f"RULE130_NOTIFY_DEADLINE_DAYS must be a whole number of days from 0 to 60, not {raw!r}")
    return int(raw)


def send(run: CaseRun, roles: list[str], template: str, **params: Any) -> None:
    """Write ``template`` to the officers of ``roles`` and record it in the case history (when
    anyone was notified)."""
    run._sync_columns()  # the receiving officer of a dispatch is a recipient from the act on
    with run.session.no_autoflush:  # the case row is written once, at save
        rows = notifications.notify(run.session, run.case, roles, template, **params)
    if rows:  # the acting officer alone in the role: nobody else to tell
        run.event("notification", template, actor_role=",".join(roles), detail={"recipients": len(rows)})


def ready_ids(run: CaseRun) -> set[str]:
    """The ids of the READY user tasks of the case now."""
    return {str(task.id) for task in runtime.ready_user_tasks(run.wf)}


def tasks_ready(run: CaseRun, before: set[str], diagram_roles: set[str]) -> None:
    """Tell each lane of a user task that became READY since ``before`` (see the module text)."""
    for task in runtime.ready_user_tasks(run.wf):
        lane = task.task_spec.lane
        if str(task.id) in before or not lane or lane in diagram_roles:
            continue
        send(run, [lane], "task_ready", task=task.task_spec.bpmn_name or task.task_spec.bpmn_id,
             exclude_user_id=run.user.id if run.user is not None else None)


def periods_ended(run: CaseRun, fired: list[runtime.ArmedTimer]) -> None:
    """Tell the roles concerned that a legal period ended (one notice per fired timer)."""
    for timer in fired:
        period = ENDED.get(timer.bpmn_id)
        if period is None:
            continue
        last = legal_time.day_before_instant(timer.due, run.cf.timezone)
        send(run, list(period.roles), "period_ended", period=period.name, last_day=last.isoformat())


def _remind_at(due: datetime, tz: str, days: int) -> tuple[datetime, Any]:
    last = legal_time.day_before_instant(due, tz)
    return legal_time.day_start(last - timedelta(days=days - 1), tz), last


def deadlines_near(run: CaseRun) -> None:
    """Send the "deadline near" notices now due for the case's armed legal timers (once each)."""
    days = deadline_days()
    if days <= 0:
        return
    now, tz = clock.now(), run.cf.timezone
    for timer in runtime.armed_timers(run.wf):
        period = DEADLINES.get(timer.bpmn_id)
        if period is None or timer.due <= now:
            continue
        remind_at, last = _remind_at(timer.due, tz, days)
        if remind_at > now:
            continue
        if _reminded(run, timer):
            continue
        run.session.add(DeadlineReminder(case_id=run.case.id, element_id=timer.bpmn_id, due_at=timer.due,
                                         sent_at=now))
        _sent(run)[run.case.id].add((timer.bpmn_id, timer.due))  # flushed or not, it counts as sent
        left = (last - legal_time.local_day(now, tz)).days + 1
        send(run, list(period.roles), "deadline_near", period=period.name, last_day=last.isoformat(),
             days_left=left, consequence=period.consequence)


_SENT = "reminders"  # txcache: case id -> {(element id, due instant)} of the reminders sent
_REMINDERS = select(DeadlineReminder.element_id, DeadlineReminder.due_at).where(
    DeadlineReminder.case_id == bindparam("case_id"))  # built once: run by most units of work


def loaded_reminders(session: Session, case_id: int, value: Any) -> None:
    """Note the reminders of case ``case_id`` read with its row (``[[element id, due instant], ...]``,
    :func:`webapp.store.json_rows.parsed`; :func:`webapp.services.running.case_rows.load`): the
    first statement of the unit of work, and only :func:`deadlines_near` adds reminders, which it
    notes here too, so they stand for the rest of the transaction."""
    txcache.of(session, _SENT)[case_id] = {(element_id, json_rows.instant(due))
                                                 for element_id, due in json_rows.parsed(value)}


def forget_reminders(session: Session, case_id: int) -> None:
    """Have the next :func:`deadlines_near` of case ``case_id`` in this transaction read its
    reminders sent again (a corrigendum's replay deleted some in its savepoint)."""
    txcache.of(session, _SENT).pop(case_id, None)


def _sent(run: CaseRun) -> dict[int, set[tuple[str, datetime]]]:
    """The (element, due instant) of the case's reminders sent: those stored, read once per
    transaction (no autoflush: an early flush would write the case row twice), and those this
    transaction added (:func:`deadlines_near` notes each)."""
    sent = txcache.of(run.session, _SENT)
    if run.case.id not in sent:
        with run.session.no_autoflush:
            sent[run.case.id] = {(element_id, due_at) for element_id, due_at in run.session.connection().execute(
                _REMINDERS, {"case_id": run.case.id})}  # Core: plain columns, no ORM result
    return sent


def _reminded(run: CaseRun, timer: runtime.ArmedTimer) -> bool:
    """Whether the reminder of this timer and due instant was sent (stored, or added in this unit of work)."""
    return (timer.bpmn_id, timer.due) in _sent(run)[run.case.id]  # aware instants: equal in any zone


def next_reminder(run: CaseRun) -> datetime | None:
    """The earliest future instant at which a "deadline near" notice of the case falls due."""
    days = deadline_days()
    if days <= 0:
        return None
    now = clock.now()
    instants = []
    for timer in runtime.armed_timers(run.wf):
        if timer.bpmn_id in DEADLINES and timer.due > now:
            remind_at, _ = _remind_at(timer.due, run.cf.timezone, days)
            if remind_at > now:
                instants.append(remind_at)
    return min(instants) if instants else None
