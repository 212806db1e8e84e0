"""The task table (``case_task``): "My tasks" without loading any case's engine state.

Each row is one SpiffWorkflow user task that was READY at some point: its case, Panchayat, lane
(= role), title, the service-level due date and the legal deadline it serves (RULE130.md,
"Service levels for officers' tasks"), who holds it (claim) and who the sarpanch assigned it to.

The rows are kept in step with the engine by :func:`webapp.services.running.task_table.sync_case`, which
:mod:`webapp.services.running.uow` calls on every flush that changes a case's engine state or case file,
in the same transaction: a task completed, a timer fired, a message delivered, a case started or
an instance moved all go through it, and no service has to remember to. Tasks that left the
READY state become ``completed`` (the engine ran them) or ``cancelled`` (a boundary timer or the
end of the process closed them).

Reading (:func:`task_list`, :func:`overdue_count`) touches this table only (plus the small
Panchayat and user tables), through the ``ix_case_task_scope`` and ``ix_case_task_receiver``
indexes, so its cost does not grow with the number of cases in other Panchayats.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from webapp.errors import CONFLICT_MESSAGE, Conflict, NotFound, NotPermitted, Refused
from webapp.i18n import M_, N_, message_list
from webapp.services.people import users
from webapp.services.people.scope import get_case
from webapp.services.running.task_table import CANCELLED as CANCELLED
from webapp.services.running.task_table import COMPLETED as COMPLETED
from webapp.services.running.task_table import ESCALATION_OPERATION as ESCALATION_OPERATION
from webapp.services.running.task_table import READY as READY
from webapp.services.running.task_table import engine_ready_tasks as engine_ready_tasks
from webapp.services.running.task_table import hold_ready
from webapp.services.running.task_table import sync_case as sync_case
from webapp.services.running.task_table import table_ready_tasks as table_ready_tasks
from webapp.store import db
from webapp.store.db import rows_matched
from webapp.store.models import Case, CaseEvent, CaseTask, Panchayat, User
from webapp.values import clock
from webapp.values.casefile import name_key

# the table's states and its sync, and the due days, re-exported: callers read them here
from webapp.values.deadlines import service_level as service_level

# Statements run by every unit of work, built once: SQLAlchemy then reuses their compiled form
# without building the expression and its cache key again (values are bound per call).
STATUSES = (N_("ready"), N_("overdue"), N_("escalated"), N_("mine"), N_("unclaimed"), N_("completed"),
            N_("cancelled"))  # marked for the catalogue: a refusal lists them, translated
DEFAULT_TZ = "Asia/Kolkata"
PAGE_SIZE = 100

# What each task asks for, in plain words ({subject}: the objector, appellant or buyer concerned).
TODO = {  # N_: translated where shown (todo_text makes a Message)
    "ut_release": N_("Release the cattle to their owner once the fine and feeding expenses are paid"),
    "ut_publish_notice": N_("Publish the notice of the impounded cattle and open the three-day conditional auction"),
    "ut_record_bid": N_("Record the bids of the conditional auction (a bid at full price closes it)"),
    "ut_decide_objection": N_("Decide whether %(subject)s proved ownership of the cattle (proved or not proved)"),
    "ut_order_stand": N_("Order that the auction stand: no objection was filed in the notice period"),
    "ut_decide_unsold": N_("Decide what happens to the unsold cattle: accept the highest bid or send them for sale"),
    "ut_record_remittance": N_("Record the sale price and expenses of the cattle sent to you, and remit the money"),
    "ut_decide_appeal": N_("Decide the appeal of %(subject)s: uphold or reverse the Panchayat's decision"),
    "ut_return_by_buyer": N_("Take the cattle back from the buyer %(subject)s and repay the auction money"),
    "ut_deliver_to_objector": N_("Deliver the cattle to %(subject)s, whose ownership is proved, on payment of the dues"),
    "ut_return_by_objector": N_("Take the cattle back from %(subject)s, or record that they were not returned"),
    "ut_pay_feeding_charges": N_("Pay the pound keeper the feeding charges you think fit (at most the feeding expenses)"),
}


# -- reading: my tasks ----------------------------------------------------------------------------------

@dataclass
class TaskRow:
    """One row of the task list: what to do, by when, and who holds it."""

    case_id: int
    case_number: str
    panchayat_id: int
    task_id: str
    element_id: str
    process_version_id: int
    title: str
    lane: str
    subject: str | None  # the objector, appellant or buyer the task concerns
    todo: str  # plain words: what is to be done
    state: str
    ready_since: datetime
    due: date | None
    deadline_label: str | None
    deadline: date | None
    act_by: date | None
    overdue: bool
    days_left: int | None  # act_by minus today (negative: overdue by that many days)
    claimed_by: str | None  # display name of the holder
    claimed_by_id: int | None
    claimed_at: datetime | None
    assigned_to: str | None
    yours: bool  # your role's lane
    ended_at: datetime | None
    escalated_at: datetime | None = None  # when the escalation timer told the sarpanch (still open)


@dataclass
class TaskList:
    """A page of the task list with the counts the page shows."""

    rows: list[TaskRow]
    total: int  # rows matching the filters (the page holds at most PAGE_SIZE)
    overdue: int  # ready tasks of the listed lanes in your scope whose act-by day has passed
    today: date
    lanes: tuple[str, ...]  # the lanes listed

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def visible_lanes(user: User) -> tuple[str, ...]:
    """The lanes whose tasks a user may list: their own role; the sarpanch also the Panchayat's
    other officers' (to reassign them); an administrator every lane."""
    if user.role == "sarpanch":
        return users.PANCHAYAT_ROLES
    if user.role == "administrator":
        return ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
    return (user.role,)


def _scoped(query: Any, user: User) -> Any:
    """Limit a query on CaseTask to the user's scope (RULE130.md "Roles, lanes and scope")."""
    if user.role == "receiving_officer":
        return query.where(CaseTask.receiver_id == user.id)
    if user.panchayat_id is not None:
        return query.where(CaseTask.panchayat_id == user.panchayat_id)
    if user.samiti_code:
        return query.where(CaseTask.panchayat_id.in_(
            select(Panchayat.id).where(Panchayat.samiti_code == user.samiti_code).scalar_subquery()))
    if user.role == "administrator":
        return query
    return query.where(CaseTask.id.is_(None))  # no scope: nothing


def user_today(session: Session, user: User) -> date:
    """Today in the user's Panchayat's time zone (Asia/Kolkata without one)."""
    tz = DEFAULT_TZ
    if user.panchayat_id is not None:
        panchayat = session.get(Panchayat, user.panchayat_id)
        tz = panchayat.timezone if panchayat and panchayat.timezone else DEFAULT_TZ
    return clock.now().astimezone(ZoneInfo(tz)).date()


def todo_text(element_id: str, subject: str | None, title: str) -> str:
    """What the task asks for, in plain words (the task's title when the element is not known)."""
    text = TODO.get(element_id)
    if text is None:
        return title
    return M_(text, subject=subject or M_("the claimant"))


def task_list(session: Session, user: User, *, role: str | None = None, status: str = "ready",
              case: str | None = None, limit: int = PAGE_SIZE) -> TaskList:
    """The user's task list from the task table alone, most urgent first.

    Args:
        role: one lane among :func:`visible_lanes` (default: the user's own role; an
            administrator's default is every lane).
        status: ``ready`` (default), ``overdue`` (act-by day passed), ``escalated`` (still open
            after the diagram's escalation timer told the sarpanch), ``mine`` (claimed by you),
            ``unclaimed``, ``completed`` or ``cancelled`` (newest first).
        case: a case number (``RMP/2026/0001``) or id, to list one case's tasks.
    Returns:
        a :class:`TaskList`: ready rows ordered by act-by day (earliest of the service-level due
        date and the legal deadline; none last), then the legal deadline, then case number.
    Raises:
        Refused: an unknown status, or a role the user may not list (the message says which).
    """
    allowed = visible_lanes(user)
    lanes = allowed if user.role == "administrator" else (user.role,)
    if role:
        if role not in allowed:
            raise Refused(M_("you may list the tasks of %(lanes)s; not of %(role)s",
                             lanes=message_list([M_(r.replace("_", " ")) for r in allowed]),
                             role=M_(role.replace("_", " "))), {"role": M_("not one of your lanes")})
        lanes = (role,)
    if status not in STATUSES:
        raise Refused(M_("unknown status %(status)s; choose one of %(statuses)s", status=repr(status),
                         statuses=message_list([M_(s) for s in STATUSES])), {"status": M_("unknown status")})
    today = user_today(session, user)
    base = _scoped(select(CaseTask), user).where(CaseTask.lane.in_(lanes))
    if case:
        text = str(case).strip()
        base = base.where(CaseTask.case_id == int(text) if text.isascii() and text.isdigit() and len(text) <= 18
                          else CaseTask.case_number == text)
    if status in ("completed", "cancelled"):
        query = base.where(CaseTask.state == status).order_by(CaseTask.ended_at.desc(), CaseTask.id.desc())
    else:
        query = base.where(CaseTask.state == READY)
        if status == "overdue":
            query = query.where(CaseTask.act_by < today)
        elif status == "escalated":
            query = query.where(CaseTask.escalated_at.is_not(None))
        elif status == "mine":
            query = query.where(CaseTask.claimed_by == user.id)
        elif status == "unclaimed":
            query = query.where(CaseTask.claimed_by.is_(None))
        query = query.order_by(CaseTask.act_by.is_(None), CaseTask.act_by, CaseTask.deadline_on.is_(None),
                               CaseTask.deadline_on, CaseTask.case_number, CaseTask.id)
    found = list(session.scalars(query.limit(limit)))
    total = len(found) if len(found) < limit else session.scalar(
        query.order_by(None).with_only_columns(func.count(CaseTask.id)))
    return TaskList(rows=_rows(session, user, found, today), total=total,
                    overdue=overdue_count(session, user, lanes=lanes, today=today), today=today, lanes=lanes)


def overdue_count(session: Session, user: User, *, lanes: Iterable[str] | None = None,
                  today: date | None = None) -> int:
    """How many ready tasks in the user's scope and lanes are past their act-by day."""
    today = today or user_today(session, user)
    query = _scoped(select(func.count(CaseTask.id)), user).where(
        CaseTask.state == READY, CaseTask.lane.in_(tuple(lanes or visible_lanes(user))), CaseTask.act_by < today)
    return session.scalar(query) or 0


def _names(session: Session, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(session.execute(select(User.id, User.display_name).where(User.id.in_(ids))).all())


def _rows(session: Session, user: User, found: list[CaseTask], today: date) -> list[TaskRow]:
    names = _names(session, {i for r in found for i in (r.claimed_by, r.assigned_to) if i})
    return [TaskRow(case_id=r.case_id, case_number=r.case_number, panchayat_id=r.panchayat_id, task_id=r.task_id, element_id=r.element_id,
                    process_version_id=r.process_version_id, title=r.title, lane=r.lane, subject=r.subject, todo=todo_text(r.element_id, r.subject, r.title), state=r.state,
                    ready_since=r.ready_since, due=r.due_on, deadline_label=r.deadline_label,
                    deadline=r.deadline_on, act_by=r.act_by,
                    overdue=r.state == READY and r.act_by is not None and r.act_by < today,
                    days_left=(r.act_by - today).days if r.act_by else None,
                    claimed_by=names.get(r.claimed_by) if r.claimed_by else None, claimed_by_id=r.claimed_by,
                    claimed_at=r.claimed_at, assigned_to=names.get(r.assigned_to) if r.assigned_to else None,
                    yours=r.lane == user.role, ended_at=r.ended_at, escalated_at=r.escalated_at)
            for r in found]


def task_row(session: Session, user: User, case_id: int, task_id: str) -> TaskRow:
    """One ready task of the table as the list shows it (scope checked by the caller)."""
    row = _ready_row(session, case_id, task_id)
    return _rows(session, user, [row], user_today(session, user))[0]


# -- claim, release, reassign --------------------------------------------------------------------------

def _ready_row(session: Session, case_id: int, task_id: str) -> CaseTask:
    row = session.scalar(select(CaseTask).where(CaseTask.case_id == case_id, CaseTask.task_id == str(task_id)))
    if row is None:
        raise NotFound(M_("no task %(task)s in this case", task=task_id))
    if row.state != READY:
        raise Conflict(_no_longer_open(row))
    return row


def _no_longer_open(row: CaseTask) -> str:
    return M_("the task '%(task)s' is no longer open: it was %(state)s", task=M_(row.title), state=M_(row.state))


HELD = M_("The officer who holds it can release it, or the sarpanch can give it to another officer of its role.")


def _holder_message(session: Session, row: CaseTask, tz: str) -> str:
    holder = session.get(User, row.claimed_by)
    name = f"{holder.display_name} ({holder.username})" if holder else str(row.claimed_by)
    if row.claimed_at is None:
        return M_("the task '%(task)s' of case %(case)s is held by %(name)s; ask them to release it, or the "
                  "sarpanch to reassign it. Nothing was saved.", task=M_(row.title), case=row.case_number, name=name)
    return M_("the task '%(task)s' of case %(case)s is held by %(name)s since %(since)s; ask them to release it, "
              "or the sarpanch to reassign it. Nothing was saved.", task=M_(row.title), case=row.case_number,
              name=name, since=row.claimed_at.astimezone(ZoneInfo(tz)).strftime("%d-%m-%Y %H:%M"))


def _case_tz(session: Session, row: CaseTask) -> str:
    panchayat = session.get(Panchayat, row.panchayat_id)
    return panchayat.timezone if panchayat and panchayat.timezone else DEFAULT_TZ


def _visible_row(session: Session, user: User, case_id: int | str, task_id: str) -> tuple[Case, CaseTask]:

    case = get_case(session, user, case_id)
    db.lock_case(session, case.id)  # the order every writer of a case follows (no deadlock)
    return case, _ready_row(session, case.id, task_id)


def check_holder(session: Session, case: Case, task_id: str, user: User) -> None:
    """Refuse to complete a task another officer holds; otherwise lock its row until commit.

    The conditional write is the check: the case's ready rows are read with a write that changes
    nothing (:func:`webapp.services.running.task_table.hold_ready`), which on PostgreSQL takes
    their row locks, so a claim made at the same moment waits for this transaction and then finds
    the task completed; the task table's sync of this unit of work takes the same rows.
    Raises:
        Conflict: held by another officer (the message names them), or completed or cancelled by
            another transaction since this one read the case.
    """
    ready = {row.task_id: row for row in hold_ready(session, case.id)}
    held = ready.get(str(task_id))
    if held is not None and held.claimed_by in (None, user.id):
        return
    row = session.scalar(select(CaseTask).where(CaseTask.case_id == case.id, CaseTask.task_id == str(task_id)))
    if row is None:  # no row for the task (a state the table never saw): nothing to check against
        return
    if row.state != READY:
        # completed or cancelled by a transaction that committed after this one read the case (two
        # submissions at the same moment): this one must not complete it again
        raise Conflict(CONFLICT_MESSAGE)
    if row.claimed_by not in (None, user.id):
        raise Conflict(_holder_message(session, row, _case_tz(session, row)), holder_id=row.claimed_by,
                       then=HELD)


def claim(session: Session, user: User, case_id: int | str, task_id: str) -> CaseTask:
    """Claim a ready task of your lane so no other officer works on it.

    Returns the row (claimed by you; claiming your own task again changes nothing).
    Raises:
        NotFound: no such case or task in your scope. NotPermitted: another role's task.
        Conflict: held by another officer (named), or no longer open.
    """
    _case, row = _visible_row(session, user, case_id, task_id)
    users.check_lane(user, row.lane)
    now = clock.now()
    hit = rows_matched(
        session, update(CaseTask).where(CaseTask.id == row.id, CaseTask.state == READY,
                               or_(CaseTask.claimed_by.is_(None), CaseTask.claimed_by == user.id))
        .values(claimed_by=user.id, claimed_at=func.coalesce(CaseTask.claimed_at, now))
        .execution_options(synchronize_session=False))
    session.refresh(row)
    if not hit:
        if row.state != READY:
            raise Conflict(_no_longer_open(row))
        raise Conflict(_holder_message(session, row, _case_tz(session, row)), holder_id=row.claimed_by,
                       then=HELD)
    return row


def release(session: Session, user: User, case_id: int | str, task_id: str) -> CaseTask:
    """Give back a task you hold, so any officer of its lane may take it.

    Raises:
        NotFound: no such case or task in your scope. Conflict: held by another officer (named).
        Refused: you do not hold it.
    """
    _case, row = _visible_row(session, user, case_id, task_id)
    if row.claimed_by is None:
        raise Refused(M_("you do not hold the task '%(task)s'; nobody has claimed it", task=M_(row.title)),
                      then=M_("Nothing more is needed: the task is open to every officer of its role; claim it to "
                              "hold it."))
    hit = rows_matched(
        session, update(CaseTask).where(CaseTask.id == row.id, CaseTask.claimed_by == user.id)
        .values(claimed_by=None, claimed_at=None).execution_options(synchronize_session=False))
    session.refresh(row)
    if not hit:
        raise Conflict(_holder_message(session, row, _case_tz(session, row)), holder_id=row.claimed_by,
                       then=HELD)
    return row


def reassign(session: Session, user: User, case_id: int | str, task_id: str, officer: str) -> CaseTask:
    """The sarpanch gives a task of the Panchayat to a named officer of the task's role.

    Args:
        officer: the user name or display name of an active officer of the same Panchayat whose
            role is the task's lane (never a user the simulator made: such a user cannot sign in).
    Returns the row, now claimed by and assigned to that officer; the case history records it.
    Raises:
        NotPermitted: not a sarpanch. NotFound: no such case or task in your Panchayat.
        Refused: the task is not a Panchayat officer's (appeals, receiving officers), no such
            officer (the message lists those who may take it), or a display name that two or more
            officers share (the message lists their user names). Conflict: no longer open.
    """
    case, row = _visible_row(session, user, case_id, task_id)  # scope first: another Panchayat's is not found
    if user.role != "sarpanch":
        raise NotPermitted(M_("only the sarpanch may reassign a task; you are signed in as %(role)s",
                              role=M_(user.role.replace("_", " "))))
    if row.lane not in users.PANCHAYAT_ROLES:
        raise Refused(M_("the task '%(task)s' belongs to the %(lane)s, not to an officer of the Panchayat; it "
                         "cannot be reassigned", task=M_(row.title), lane=M_(row.lane.replace("_", " "))),
                      {"officer": M_("not a Panchayat task")})
    name = (officer or "").strip()
    candidates = list(session.scalars(select(User).where(User.panchayat_id == case.panchayat_id,
                                                         User.role == row.lane, User.active.is_(True),
                                                         User.simulated.is_(False))  # they never sign in
                                      .order_by(User.username)))
    # a user name names one officer; a display name may be shared, and then names nobody in particular
    target = next((u for u in candidates if name and name == u.username), None)
    if target is None:
        named = [u for u in candidates if name and name_key(name) == name_key(u.display_name)]
        if len(named) > 1:
            raise Refused(M_("%(count)s officers are called %(name)s; give the user name of the one to take "
                             "the task: %(choices)s", count=len(named), name=name,
                             choices=", ".join(u.username for u in named)),
                          {"officer": M_("more than one officer has this name")})
        target = named[0] if named else None
    if target is None:
        choices = ", ".join(f"{u.display_name} ({u.username})" for u in candidates) or M_("nobody")
        role = M_(row.lane.replace("_", " "))
        raise Refused(M_("no active %(role)s named %(name)s in this Panchayat; the task can go to: %(choices)s",
                         role=role, name=name or "—", choices=choices),
                      {"officer": M_("not a %(role)s of this Panchayat", role=role)})
    now = clock.now()
    previous = session.get(User, row.claimed_by) if row.claimed_by else None
    row.claimed_by, row.claimed_at = target.id, now
    row.assigned_to, row.assigned_by, row.assigned_at = target.id, user.id, now
    session.add(CaseEvent(case_id=case.id, at=now, kind="act", name="Task reassigned", element_id=row.element_id,
                          actor_role=user.role, actor_user_id=user.id,
                          detail_json=_json({"task": row.title, "to": target.display_name,
                                             "from": previous.display_name if previous else None})))
    session.flush()
    return row


def _json(value: dict[str, Any]) -> str:
    import json

    return json.dumps(value)


def officers_by_lane(session: Session, user: User) -> dict[str, list[User]]:
    """For the sarpanch: the active officers of the Panchayat by role, to whom a task may be
    reassigned (not the users the simulator made, who never sign in); for anyone else an empty dict."""
    if user.role != "sarpanch" or user.panchayat_id is None:
        return {}
    found: dict[str, list[User]] = {}
    for officer in session.scalars(select(User).where(User.panchayat_id == user.panchayat_id,
                                                      User.role.in_(users.PANCHAYAT_ROLES), User.active.is_(True),
                                                      User.simulated.is_(False))
                                   .order_by(User.display_name)):
        found.setdefault(officer.role, []).append(officer)
    return found
