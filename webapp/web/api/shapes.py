"""The JSON shapes of the API (docs/api.md): a task, a case and its brief, its history, a ledger
entry and a task-table row; money as strings with two decimals, legal dates as ``YYYY-MM-DD`` in the
Panchayat's time zone, instants as ISO 8601 with the Panchayat's offset.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from webapp.engine.execution import runtime
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.money import ledger
from webapp.services.tasks import tasklist, tasks
from webapp.store.models import Case, CaseEvent, Panchayat, ProcessVersion, User
from webapp.values import casefile
from webapp.web.context import db_session

log = logging.getLogger("rule130.api")


# -- rendering --------------------------------------------------------------------------------------

def jsonable(value: Any, tz: ZoneInfo | None) -> Any:
    """Money as "0.00", dates as YYYY-MM-DD, instants in the Panchayat's zone with their offset."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), tz) for f in dataclasses.fields(value)}
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, datetime):
        return (value.astimezone(tz) if tz else value).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v, tz) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, tz) for v in value]
    return value


def task_json(view: tasks.TaskView, user: User, tz: ZoneInfo | None) -> dict[str, Any]:
    return {
        "case_id": view.case_id,
        "case_number": view.case_number,
        "task_id": view.task_id,
        "element_id": view.element_id,
        "name": view.name,
        "lane": view.lane,
        "yours": view.lane == user.role,
        "due": jsonable(view.due, tz),
        "deadline_label": view.deadline_label,
        "deadline_last_day": jsonable(view.deadline, tz),
        "form_key": view.form_key,
        "schema": view.schema,
        "context": jsonable(view.data, tz),
        "lock_version": view.lock_version,
    }


def case_brief(case: Case) -> dict[str, Any]:
    return {"id": case.id, "number": case.case_number, "status": case.status, "outcome": case.outcome}


def history_json(session: Any, events: list[CaseEvent], tz: ZoneInfo) -> list[dict[str, Any]]:
    names: dict[int, str] = {}
    out = []
    for event in events:
        actor = None
        if event.actor_user_id is not None:
            if event.actor_user_id not in names:
                person = session.get(User, event.actor_user_id)
                names[event.actor_user_id] = person.username if person else str(event.actor_user_id)
            actor = names[event.actor_user_id]
        try:
            detail = json.loads(event.detail_json or "{}")
        except ValueError:
            detail = {}
        if isinstance(detail, dict):
            detail.pop("message_i18n", None)  # the page's translation of a refusal; the API keeps the English
        item = {"at": event.at.astimezone(tz).isoformat(), "kind": event.kind, "name": event.name,
                "element_id": event.element_id, "actor_role": event.actor_role, "actor": actor, "detail": detail}
        if event.kind == "notification":
            # the service stores the notified roles in actor_role (comma-separated): say so
            item["actor_role"] = None
            item["notified_roles"] = [r for r in (event.actor_role or "").split(",") if r]
        out.append(item)
    return out


def entry_json(entry: Any, tz: ZoneInfo) -> dict[str, Any]:
    """One ledger entry (docs/api.md): amount as text, instant in the Panchayat's zone."""
    return {"id": entry.id, "at": entry.at.astimezone(tz).isoformat(), "from": entry.from_account,
            "to": entry.to_account, "amount": f"{entry.amount:.2f}", "kind": entry.kind, "clause": entry.clause,
            "element_id": entry.element_id, "officer_id": entry.officer_id, "memo": entry.memo,
            "reversal_of": entry.reversal_of, "reason": entry.reason or None}


def case_json(case: Case, user: User) -> dict[str, Any]:
    """The whole case: file facts, summary, ready tasks (any lane) and history."""
    session = db_session()
    cf = casefile.load(case.file_json)
    tz = ZoneInfo(cf.timezone)
    panchayat = session.get(Panchayat, case.panchayat_id)
    facts = {f.name: jsonable(getattr(cf, f.name), tz) for f in dataclasses.fields(cf)
             if f.name not in ("case_number", "timezone", "timers")}
    summary = jsonable({k: v for k, v in cases.summary(session, case).items() if k != "case_number"}, tz)
    return {
        **case_brief(case),
        "panchayat": {"code": panchayat.code, "name": panchayat.name, "samiti": panchayat.samiti_code}
        if panchayat else None,
        "timezone": cf.timezone,
        "lock_version": case.lock_version,
        "created_at": case.created_at.astimezone(tz).isoformat(),
        "closed_at": case.closed_at.astimezone(tz).isoformat() if case.closed_at else None,
        "file": facts,
        "summary": summary,
        "ledger_entries": [entry_json(e, tz) for e in ledger.entries(session, case.id)],
        "tasks": [task_json(v, user, tz) for v in tasks.case_tasks(session, case)],
        "history": history_json(session, cases.history(session, case), tz),
    }


def row_json(row: tasklist.TaskRow, user: User, tz: ZoneInfo | None, lock_version: int | None) -> dict[str, Any]:
    """A task-table row in the list's shape (docs/api.md, ``GET /tasks``)."""
    version = db_session().get(ProcessVersion, row.process_version_id)
    loaded = repository.load(version) if version is not None else None
    spec = runtime.task_spec_by_id(loaded.parsed, row.element_id) if loaded else None
    form = runtime.spec_form_name(spec) if spec is not None else None
    context: dict[str, Any] = {}
    if row.element_id == "ut_decide_objection" and row.subject:
        context = {"objection": {"objector": row.subject}}
    elif row.element_id == "ut_decide_appeal" and row.subject:
        context = {"appeal": {"appellant": row.subject}}
    return {
        "case_id": row.case_id, "case_number": row.case_number, "task_id": row.task_id,
        "element_id": row.element_id, "name": row.title, "lane": row.lane, "yours": row.lane == user.role,
        "state": row.state, "todo": row.todo,
        "due": jsonable(row.due, tz), "deadline_label": row.deadline_label,
        "deadline_last_day": jsonable(row.deadline, tz), "act_by": jsonable(row.act_by, tz),
        "overdue": row.overdue, "days_left": row.days_left, "escalated_at": jsonable(row.escalated_at, tz),
        "ready_since": jsonable(row.ready_since, tz), "ended_at": jsonable(row.ended_at, tz),
        "claimed_by": row.claimed_by, "claimed_by_you": row.claimed_by_id == user.id,
        "claimed_at": jsonable(row.claimed_at, tz), "assigned_to": row.assigned_to,
        "form_key": form.split(".")[0] if form else None,
        "schema": loaded.parsed.forms.get(form) if loaded and form else None,
        "context": context, "lock_version": lock_version,
    }
