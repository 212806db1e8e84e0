"""Cases: the summary of a case that pages, the API and the simulator show (deadlines, sale, fees,
ledger, payments) and its history in order; and, re-exported so that callers ask one module, what
the case modules do: running a case (:mod:`.case_run`), starting one (:mod:`.case_start`),
objections and appeals (:mod:`.claims`), deaths, escapes and births (:mod:`.animal_events`).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from webapp.services.cases.animal_events import record_animal_event as record_animal_event
from webapp.services.cases.case_start import MAX_AGE_DAYS as MAX_AGE_DAYS
from webapp.services.cases.case_start import SUBMISSION_KEY as SUBMISSION_KEY
from webapp.services.cases.case_start import TypedTime as TypedTime
from webapp.services.cases.case_start import case_for_submission as case_for_submission
from webapp.services.cases.case_start import next_case_sequence as next_case_sequence
from webapp.services.cases.case_start import start_case as start_case
from webapp.services.cases.claims import file_appeal as file_appeal
from webapp.services.cases.claims import file_objection as file_objection
from webapp.services.money import ledger
from webapp.services.money.ledger import expectations as expectations
from webapp.services.people.scope import get_case as get_case
from webapp.services.running.case_run import CaseRun as CaseRun
from webapp.services.running.case_run import check_after_impoundment as check_after_impoundment
from webapp.services.running.case_run import fire_due_first as fire_due_first
from webapp.services.running.case_run import scoped as scoped
from webapp.services.running.case_run import visible_cases as visible_cases
from webapp.store.models import Case, CaseEvent
from webapp.values import casefile, clock, fees, legal_time

# re-exported: the services and pages ask cases for a case's deadlines, its ledger's expectations and
# the case itself within scope, whichever module computes them
from webapp.values.deadlines import appeal_last_day as appeal_last_day
from webapp.values.deadlines import deadlines as deadlines
from webapp.values.deadlines import transfer_lock_until as transfer_lock_until

ZERO = Decimal("0.00")


# -- the summary the pages, the API and the simulator show -----------------------------------------

def _money(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:.2f}"


def summary(session: Session, case: Case) -> dict[str, Any]:
    """The case as the simulator's result shape (RULE130 scenarios FORMAT.md): outcome, deadlines,
    sale, fees, ledger balances and payments; dates as local dates, amounts as Decimal."""
    cf = casefile.load(case.file_json)
    as_of = legal_time.local_day(case.closed_at or clock.now(), cf.timezone)
    rows = ledger.entries(session, case.id)
    totals = ledger.net(rows)
    dl = deadlines(cf)
    sale = None
    if cf.sale is not None:
        sale = {"buyer": cf.sale.buyer, "amount": cf.sale.amount, "day": cf.sale.day,
                "transfer_lock_until": dl["transfer_lock_until"]}
    return {
        "case_number": case.case_number,
        "outcome": cf.outcome,
        "deadlines": {k: v for k, v in dl.items() if k != "transfer_lock_until"},
        "sale": sale,
        "fees": {"fine": fees.fine(cf), "pound_feeding": fees.pound_feeding(cf, as_of),
                 "buyer_feeding": fees.buyer_feeding(cf), "shortfall": cf.shortfall},
        "ledger": {account: totals.get(account, ZERO) for account in ledger.PANCHAYAT_ACCOUNTS},
        "paid": {"buyer": ledger.total_to(rows, "buyer"),
                 "pound_keeper": ledger.total_to(rows, "pound_keeper"),
                 "objector_security_refund": ledger.total_to(rows, "objector", ("security_refund",)),
                 "objector": ledger.total_to(rows, "objector", ("remittance_balance",))},
    }


def history(session: Session, case: Case) -> list[CaseEvent]:
    """The case's history rows (:class:`CaseEvent`) in the order of :func:`in_order`."""
    return in_order(session.scalars(select(CaseEvent).where(CaseEvent.case_id == case.id)))


def in_order(rows: Iterable[CaseEvent]) -> list[CaseEvent]:
    """History rows in time order by the whole second (UTC), and within one second in the order
    they were written (their ids).

    Rows are written as things happen, so within a second the order of writing is the true order:
    a timer before what its firing caused (:meth:`CaseRun.run`), and a timer fired just past its
    due instant before an act at that very instant (the simulator fires a timer due at a step's
    ``at`` with its clock a microsecond past the due instant, then sets the clock back to ``at``
    for the step, scenarios/FORMAT.md)."""
    return sorted(rows, key=lambda row: (row.at.replace(microsecond=0), row.id))
