"""Oversight above the Panchayat: a Panchayat Samiti's or a District's Panchayats on one page, read-only.

For each Gram Panchayat of the scope: its running cases by stage (the open task each waits on, or
"waiting" for a case with none open: a legal period is running), the cases past a legal deadline
(the day after the deadline's last day and later: by how many calendar days, and whose act it is),
the head of cattle held in the pound now, the balance of each of its accounts (suspense, cattle
pound account, Panchayat fund: money in less money out over the whole ledger, rupees as Decimal)
and the receipts of the current calendar month in its time zone (the receipts register's entries:
money a party paid into one of its accounts, a reversed one not counted).

Scope (RULE130.md, "Roles, lanes and scope"): the appellate authority and a Samiti administrator
see their Samiti; a district officer their District (``panchayat.district``) and any Samiti in it;
an installation-wide administrator any District or Samiti. Other roles have no oversight (403); a
Samiti or District outside the user's scope answers 404, as if it did not exist. Training
Panchayats appear only in their own training Samiti, never in a District; a training Panchayat put
away by a reset nowhere.

It stays fast at State scale (tests/bench/oversight.py, docs/benchmarks.md): a handful of grouped
queries per page, each answered from an index or a summary (migration 0025_oversight) — running
cases and cattle from ``ix_case_oversight``, stages and deadlines from ``ix_case_task_oversight``,
the month's receipts from ``ix_ledger_oversight``, the balances from ``panchayat_balance`` (one row
per Panchayat, kept by a trigger on every ledger entry) — and no case file is read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, exists, func, select
from sqlalchemy.orm import Session, aliased

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.services.money import ledger
from webapp.store.models import Case, CaseTask, LedgerEntry, Panchayat, PanchayatBalance, User
from webapp.values import clock, legal_time

ZERO = Decimal("0.00")
ACCOUNTS = ledger.PANCHAYAT_ACCOUNTS  # suspense, pound_account, panchayat_fund
OVERSIGHT_ROLES = ("appellate_authority", "district_officer", "administrator")
WAITING = "waiting"  # the stage of a running case with no open task: a legal period is running
# the stages in the order of the rule (the diagram's user tasks), then "waiting"
STAGES = ("ut_release", "ut_publish_notice", "ut_record_bid", "ut_decide_objection", "ut_order_stand",
          "ut_decide_unsold", "ut_record_remittance", "ut_decide_appeal", "ut_return_by_buyer",
          "ut_return_by_objector", "ut_deliver_to_objector", "ut_pay_feeding_charges", WAITING)
# the stages' names: the diagram's names of its user tasks (translated as the task list translates them)
STAGE_TITLES = {"ut_release": "Release cattle to owner", "ut_publish_notice": "Publish notice and open conditional auction",
                "ut_record_bid": "Record bid", "ut_decide_objection": "Decide ownership claim",
                "ut_order_stand": "Order that the auction stand", "ut_decide_unsold": "Decide unsold cattle",
                "ut_record_remittance": "Record sale and remittance", "ut_decide_appeal": "Decide appeal",
                "ut_return_by_buyer": "Take cattle back from buyer",
                "ut_return_by_objector": "Take cattle back from objector",
                "ut_deliver_to_objector": "Deliver cattle to objector", "ut_pay_feeding_charges": "Pay feeding charges"}
SORTS = ("code", "name", "samiti", "running", "past_deadline", "most_days_past", "cattle_held", "pound_account",
         "suspense", "panchayat_fund", "receipts_month")
OVERDUE_SORTS = ("days_past", "case_number", "panchayat", "lane", "last_day")


# -- scope ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scope:
    """What one oversight page covers: ``kind`` ``samiti`` (``code`` the Samiti's code, within
    ``district`` when a district officer narrowed their District to it) or ``district`` (``code``
    the District's name) or ``panchayat`` (``code`` the Panchayat's, within ``parent``)."""

    kind: str
    code: str
    district: str | None = None
    parent: Scope | None = None

    def condition(self) -> ColumnElement[bool]:
        """The SQL condition on ``panchayat`` rows of this scope (live ones, or a training Samiti's)."""
        here: list[ColumnElement[bool]] = [Panchayat.archived_at.is_(None)]
        if self.kind == "panchayat":
            here.append(Panchayat.code == self.code)
            if self.parent is not None:
                here.append(self.parent.condition())
        elif self.kind == "samiti":
            here.append(Panchayat.samiti_code == self.code)
            if self.district is not None:
                here.append(Panchayat.district == self.district)
        else:
            here += [Panchayat.district == self.code, Panchayat.training.is_(False)]
        return and_(*here)


def require_oversight_role(user: User) -> None:
    """Refuse a role without oversight (pound keeper, secretary, sarpanch, receiving officer, a
    Panchayat's administrator).

    Raises:
        NotPermitted: HTTP 403, whatever Samiti or District was asked for.
    """
    panchayat_admin = user.role == "administrator" and user.panchayat_id is not None
    if user.role not in OVERSIGHT_ROLES or panchayat_admin or (user.role == "appellate_authority" and not user.samiti_code) \
            or (user.role == "district_officer" and not user.district):
        raise NotPermitted(M_("oversight of a Samiti or District is for the appellate authority, a district officer "
                              "and the Samiti's or installation's administrator; you are signed in as %(role)s",
                              role=M_(user.role.replace("_", " "))))


def default_scope(user: User) -> Scope | None:
    """The scope a user's oversight page opens on: their Samiti or District; None for an
    installation-wide administrator, who chooses one (:func:`choices`)."""
    require_oversight_role(user)
    if user.role in ("district_officer", "administrator") and user.district:  # a District's administrator too
        return Scope("district", user.district)
    if user.samiti_code:
        return Scope("samiti", user.samiti_code)
    return None


def scope_for(session: Session, user: User, *, samiti: str | None = None, district: str | None = None) -> Scope:
    """The scope asked for (a Samiti's code, or a District's name), if ``user`` may see it; neither:
    the user's own (:func:`default_scope`).

    Raises:
        NotPermitted: a role without oversight (403).
        NotFound: a Samiti or District without Panchayats, or outside the user's scope (404, never
            says which).
        Refused: an installation-wide administrator who named neither (field ``district``).
    """
    own = default_scope(user)
    samiti = (samiti or "").strip()[:100] or None
    district = (district or "").strip()[:100] or None
    if samiti is None and district is None:
        if own is None:
            raise Refused(M_("choose a District or a Samiti"), {"district": M_("choose a District or a Samiti")})
        return own
    if district is not None and samiti is None:
        asked = Scope("district", district)
        if own is not None and own != asked:
            raise NotFound(M_("no District %(district)s is open to you", district=district))
    else:
        assert samiti is not None
        within = district or (own.code if own is not None and own.kind == "district" else None)
        asked = Scope("samiti", samiti, district=within)
        if own is not None and own.kind == "samiti" and (samiti != own.code or district is not None):
            raise NotFound(M_("no Samiti %(samiti)s is open to you", samiti=samiti))
        if own is not None and own.kind == "district" and within != own.code:
            raise NotFound(M_("no Samiti %(samiti)s is open to you", samiti=samiti))
    if session.scalar(select(Panchayat.id).where(asked.condition()).limit(1)) is None:
        raise NotFound(M_("no Samiti %(samiti)s is open to you", samiti=samiti) if asked.kind == "samiti"
                       else M_("no District %(district)s is open to you", district=district))
    return asked


def panchayat_scope(session: Session, user: User, code: str, *, samiti: str | None = None,
                    district: str | None = None) -> Scope:
    """One Panchayat of the user's scope (narrowed as :func:`scope_for`).

    Raises:
        NotPermitted, NotFound: as :func:`scope_for`; NotFound also for a Panchayat outside it.
    """
    parent = None if (samiti is None and district is None and default_scope(user) is None) else \
        scope_for(session, user, samiti=samiti, district=district)
    asked = Scope("panchayat", str(code)[:40], parent=parent)
    if session.scalar(select(Panchayat.id).where(asked.condition()).limit(1)) is None:
        raise NotFound(M_("no Panchayat %(code)s is open to you", code=str(code)[:40]))
    return asked


@dataclass(frozen=True)
class Choice:
    """A District with its Samitis (codes), for the page's choice of scope."""

    district: str
    samitis: list[str]


def choices(session: Session, user: User) -> list[Choice]:
    """The Districts and Samitis ``user`` may open, by name: their own District's Samitis for a
    district officer; their Samiti for the appellate authority; every District for an
    installation-wide administrator (live Panchayats; a Panchayat without a District is under "")."""
    own = default_scope(user)
    query = select(Panchayat.district, Panchayat.samiti_code).where(Panchayat.archived_at.is_(None)).distinct()
    query = query.where(own.condition() if own is not None else Panchayat.training.is_(False))
    grouped: dict[str, set[str]] = defaultdict(set)
    for district, samiti in session.execute(query):
        grouped[district or ""].add(samiti)
    return [Choice(d, sorted(grouped[d])) for d in sorted(grouped)]


# -- the figures ------------------------------------------------------------------------------------

@dataclass
class PanchayatRow:
    """One Gram Panchayat's figures: cases (counts), head of cattle, rupees (Decimal)."""

    code: str
    name: str
    samiti: str
    district: str
    timezone: str
    today: date  # the Panchayat's local day the figures are for
    running: int = 0
    by_stage: dict[str, int] = field(default_factory=dict)  # stage (task element id or "waiting") -> cases
    past_deadline: int = 0  # cases with an open task past its legal deadline
    most_days_past: int = 0  # the most calendar days any of them is past (0: none)
    cattle_held: int = 0
    balances: dict[str, Decimal] = field(default_factory=lambda: {a: ZERO for a in ACCOUNTS})
    receipts_month: Decimal = ZERO
    receipts_month_count: int = 0

    def value(self, key: str) -> Any:
        """The value a column of :data:`SORTS` sorts by."""
        if key in ACCOUNTS:
            return self.balances[key]
        return {"code": self.code, "name": self.name.casefold(), "samiti": self.samiti}.get(key, getattr(self, key, None))


@dataclass(frozen=True)
class PastDeadline:
    """An open task past its legal deadline: the case, the task (its diagram element and title),
    whose act it is (the lane: a role), the deadline (``label``, one of webapp.values.vocabulary's
    DEADLINES) and its last day, and how many calendar days have passed since (1 on the day after)."""

    case_id: int
    case_number: str
    panchayat_code: str
    panchayat_name: str
    element_id: str
    title: str
    lane: str
    label: str | None
    last_day: date
    days_past: int


@dataclass
class Overview:
    """The page: the scope, the month the receipts are of, one row per Panchayat (by code), the
    totals over them, and every open task past its legal deadline (most days past first)."""

    scope: Scope
    month: date  # the first day of the current month (in the first Panchayat's zone)
    rows: list[PanchayatRow]
    totals: PanchayatRow
    past_deadline: list[PastDeadline]


@dataclass(frozen=True)
class _Place:
    """The columns of a Panchayat the figures need (read without building ORM objects)."""

    id: int
    code: str
    name: str
    samiti_code: str
    district: str | None
    timezone: str
    ahead: int  # seconds a training Panchayat's clock runs ahead (0 for a live one)


def overview(session: Session, scope: Scope) -> Overview:
    """The figures of every Panchayat of ``scope`` now (see the module's docstring), in six
    queries whatever the number of Panchayats.

    A case with two open tasks at once (a bid and an objection) counts under each task's stage, so
    the stages may add up to more than the running cases; ``waiting`` counts the running cases with
    no open task. Read-only: nothing is written.
    """
    panchayats = [_Place(*row) for row in session.execute(
        select(Panchayat.id, Panchayat.code, Panchayat.name, Panchayat.samiti_code, Panchayat.district,
               Panchayat.timezone, case((Panchayat.training.is_(True), Panchayat.clock_offset_seconds), else_=0))
        .where(scope.condition()).order_by(Panchayat.code))]
    now = clock.now()
    todays: dict[tuple[str, int], date] = {}
    rows: dict[int, PanchayatRow] = {}
    for p in panchayats:
        key = (p.timezone, int(p.ahead or 0))
        if key not in todays:
            todays[key] = legal_time.local_day(now + timedelta(seconds=key[1]), p.timezone)
        rows[p.id] = PanchayatRow(p.code, p.name, p.samiti_code, p.district or "", p.timezone, todays[key])
    in_scope = select(Panchayat.id).where(scope.condition())
    # running cases and cattle held (ix_case_oversight)
    for pid, running, cattle in session.execute(
            select(Case.panchayat_id, func.count(), func.coalesce(func.sum(Case.cattle_held), 0))
            .where(Case.status == "running", Case.panchayat_id.in_(in_scope)).group_by(Case.panchayat_id)):
        rows[pid].running, rows[pid].cattle_held = int(running), int(cattle)
    # stages and the cases with an open task, in one read of the open tasks (ix_case_task_oversight, index only)
    ready = and_(CaseTask.state == "ready", CaseTask.panchayat_id.in_(in_scope))
    with_task: dict[int, int] = defaultdict(int)
    for pid, element, cases, counted_here in session.execute(_open_tasks_by_stage(ready)):
        rows[pid].by_stage[element] = int(cases)
        with_task[pid] += int(counted_here or 0)
    for pid, row in rows.items():
        waiting = row.running - with_task[pid]
        if waiting > 0:
            row.by_stage[WAITING] = waiting
    # past a legal deadline: the last day is before the Panchayat's today
    past = _past_deadlines(session, ready, rows)
    # balances of the Panchayat's accounts: one row each, kept by the ledger's trigger (0025_oversight)
    for pid, suspense, pound_account, fund in session.execute(
            select(PanchayatBalance.panchayat_id, PanchayatBalance.suspense, PanchayatBalance.pound_account,
                   PanchayatBalance.panchayat_fund).where(PanchayatBalance.panchayat_id.in_(in_scope))):
        rows[pid].balances = {"suspense": Decimal(suspense).quantize(ledger.PAISE),
                              "pound_account": Decimal(pound_account).quantize(ledger.PAISE),
                              "panchayat_fund": Decimal(fund).quantize(ledger.PAISE)}
    _receipts_of_month(session, panchayats, rows)
    ordered = [rows[p.id] for p in panchayats]
    first = ordered[0] if ordered else None
    month = (first.today if first else legal_time.local_day(now, "Asia/Kolkata")).replace(day=1)
    return Overview(scope, month, ordered, _totals(scope, ordered, month), past)


def _open_tasks_by_stage(ready: ColumnElement[bool]) -> Select[Any]:
    """One query over the open tasks ``ready``: per Panchayat and stage (task element), the cases
    waiting on it (a case with two open tasks of a stage counts once), and how many of them have no
    open task of an earlier stage (by element id): their sum over a Panchayat's stages is its cases
    with an open task. Reads ``panchayat_id, state, element_id, case_id`` only, all of them in
    ``ix_case_task_oversight`` (migration 0026_oversight_tasks), so PostgreSQL answers from the index."""
    tasks = select(CaseTask.panchayat_id, CaseTask.element_id, CaseTask.case_id,
                   func.row_number().over(partition_by=CaseTask.case_id, order_by=CaseTask.element_id).label("nth")
                   ).where(ready).subquery()
    return (select(tasks.c.panchayat_id, tasks.c.element_id, func.count(tasks.c.case_id.distinct()),
                   func.sum(case((tasks.c.nth == 1, 1), else_=0)))
            .group_by(tasks.c.panchayat_id, tasks.c.element_id))


def _past_deadlines(session: Session, ready: ColumnElement[bool], rows: dict[int, PanchayatRow]) -> list[PastDeadline]:
    if not rows:
        return []
    latest_today = max(r.today for r in rows.values())
    found: list[PastDeadline] = []
    cases: dict[int, set[int]] = defaultdict(set)
    for task in session.execute(
            select(CaseTask.case_id, CaseTask.case_number, CaseTask.panchayat_id, CaseTask.element_id, CaseTask.title,
                   CaseTask.lane, CaseTask.deadline_label, CaseTask.deadline_on)
            .where(ready, CaseTask.deadline_on.is_not(None), CaseTask.deadline_on < latest_today)):
        row = rows[task.panchayat_id]
        if task.deadline_on >= row.today:
            continue
        days = (row.today - task.deadline_on).days
        found.append(PastDeadline(task.case_id, task.case_number, row.code, row.name, task.element_id, task.title,
                                  task.lane, task.deadline_label, task.deadline_on, days))
        cases[task.panchayat_id].add(task.case_id)
        row.most_days_past = max(row.most_days_past, days)
    for pid, ids in cases.items():
        rows[pid].past_deadline = len(ids)
    found.sort(key=lambda p: (-p.days_past, p.case_number, p.element_id))
    return found


def _receipts_of_month(session: Session, panchayats: list[_Place], rows: dict[int, PanchayatRow]) -> None:
    """Each Panchayat's receipts of its current month: one query per time zone (and training clock)."""
    by_month: dict[tuple[str, date], list[int]] = defaultdict(list)
    for p in panchayats:
        by_month[(p.timezone, rows[p.id].today.replace(day=1))].append(p.id)
    reversal = aliased(LedgerEntry)
    for (tz, first), ids in by_month.items():
        start = legal_time.day_start(first, tz)
        end = legal_time.day_start((first + timedelta(days=32)).replace(day=1), tz)
        undone = exists().where(reversal.reversal_of == LedgerEntry.id)
        for pid, count, total in session.execute(
                select(LedgerEntry.panchayat_id, func.count(), func.sum(LedgerEntry.amount))
                .where(LedgerEntry.panchayat_id.in_(ids), LedgerEntry.at >= start, LedgerEntry.at < end,
                       LedgerEntry.to_account.in_(ACCOUNTS), LedgerEntry.from_account.notin_(ACCOUNTS), ~undone)
                .group_by(LedgerEntry.panchayat_id)):
            rows[pid].receipts_month_count, rows[pid].receipts_month = int(count), Decimal(total).quantize(ledger.PAISE)


def _totals(scope: Scope, rows: list[PanchayatRow], month: date) -> PanchayatRow:
    total = PanchayatRow(scope.code, scope.code, scope.code if scope.kind == "samiti" else "",
                         scope.code if scope.kind == "district" else "", "", month)
    for row in rows:
        total.running += row.running
        total.past_deadline += row.past_deadline
        total.most_days_past = max(total.most_days_past, row.most_days_past)
        total.cattle_held += row.cattle_held
        total.receipts_month += row.receipts_month
        total.receipts_month_count += row.receipts_month_count
        for stage, cases in row.by_stage.items():
            total.by_stage[stage] = total.by_stage.get(stage, 0) + cases
        for account in ACCOUNTS:
            total.balances[account] += row.balances[account]
    return total


# -- sorting ----------------------------------------------------------------------------------------

def sort_rows(rows: list[PanchayatRow], key: str | None, descending: bool = False) -> list[PanchayatRow]:
    """The rows by column ``key`` (one of :data:`SORTS`; None: by code), ties by code.

    Raises:
        Refused: an unknown column (field ``sort``), naming the columns there are.
    """
    key = key or "code"
    if key not in SORTS:
        raise Refused(M_("cannot sort by %(key)s; sort by one of %(keys)s", key=repr(key[:40]), keys=", ".join(SORTS)),
                      {"sort": M_("unknown column")})
    by_code = sorted(rows, key=lambda r: r.code)
    return sorted(by_code, key=lambda r: r.value(key), reverse=descending)


def sort_past(items: list[PastDeadline], key: str | None, descending: bool = True) -> list[PastDeadline]:
    """The tasks past their deadline by ``key`` (one of :data:`OVERDUE_SORTS`; None: most days past).

    Raises:
        Refused: an unknown column (field ``sort``).
    """
    key = key or "days_past"
    if key not in OVERDUE_SORTS:
        raise Refused(M_("cannot sort by %(key)s; sort by one of %(keys)s", key=repr(key[:40]),
                         keys=", ".join(OVERDUE_SORTS)), {"sort": M_("unknown column")})
    value = {"days_past": lambda p: p.days_past, "case_number": lambda p: p.case_number,
             "panchayat": lambda p: p.panchayat_code, "lane": lambda p: p.lane, "last_day": lambda p: p.last_day}[key]
    return sorted(sorted(items, key=lambda p: (p.case_number, p.element_id)), key=value, reverse=descending)


# -- CSV --------------------------------------------------------------------------------------------

def csv_panchayats(data: Overview) -> tuple[list[str], list[list[Any]]]:
    """The per-Panchayat table for CSV: fixed English column names (as the API's keys), one column
    per stage (``stage_<element id>``, ``stage_waiting``), rupees as Decimal."""
    header = (["panchayat_code", "panchayat", "samiti", "district", "running"] + [f"stage_{s}" for s in STAGES]
              + ["past_deadline", "most_days_past", "cattle_held"] + list(ACCOUNTS)
              + ["receipts_month_count", "receipts_month", "month"])
    rows = [[r.code, r.name, r.samiti, r.district, r.running] + [r.by_stage.get(s, 0) for s in STAGES]
            + [r.past_deadline, r.most_days_past, r.cattle_held] + [r.balances[a] for a in ACCOUNTS]
            + [r.receipts_month_count, r.receipts_month, r.today.replace(day=1)] for r in data.rows]
    return header, rows


def csv_past_deadline(items: list[PastDeadline]) -> tuple[list[str], list[list[Any]]]:
    """The tasks past their legal deadline for CSV: one row per task."""
    return (["case_number", "panchayat_code", "panchayat", "task", "whose_act", "deadline", "last_day", "days_past"],
            [[p.case_number, p.panchayat_code, p.panchayat_name, p.title, p.lane, p.label, p.last_day, p.days_past]
             for p in items])


def as_json(data: Overview) -> dict[str, Any]:
    """The overview for the API: rupees as strings with two decimals (as the ledger's API), days as
    ``YYYY-MM-DD``."""
    def row(r: PanchayatRow) -> dict[str, Any]:
        return {"code": r.code, "name": r.name, "samiti": r.samiti, "district": r.district, "today": r.today.isoformat(),
                "running": r.running, "by_stage": dict(r.by_stage), "past_deadline": r.past_deadline,
                "most_days_past": r.most_days_past, "cattle_held": r.cattle_held,
                "balances": {a: f"{r.balances[a]:.2f}" for a in ACCOUNTS},
                "receipts_month": {"count": r.receipts_month_count, "total": f"{r.receipts_month:.2f}"}}
    totals = row(data.totals)
    for key in ("code", "name", "samiti", "district", "today"):
        totals.pop(key)
    return {"scope": {"kind": data.scope.kind, "code": data.scope.code}, "month": data.month.isoformat()[:7],
            "panchayats": [row(r) for r in data.rows], "totals": totals,
            "past_deadline": [{"case_number": p.case_number, "panchayat": p.panchayat_code, "task": p.element_id,
                               "title": p.title, "whose_act": p.lane, "deadline": p.label,
                               "last_day": p.last_day.isoformat(), "days_past": p.days_past}
                              for p in data.past_deadline]}

