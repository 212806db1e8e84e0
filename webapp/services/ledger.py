"""The case ledger: postings in exact rupees, balances, and the per-case invariants.

An entry moves ``amount`` from one account to another; it is never edited or deleted. Accounts
of the Panchayat are ``suspense``, ``pound_account`` and ``panchayat_fund``; every other name is a
party outside the Panchayat (owner, buyer, objector, receiving_officer, pound_keeper).
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import clock
from ..errors import EngineFailure
from ..store.models import Case, LedgerEntry

PANCHAYAT_ACCOUNTS = ("suspense", "pound_account", "panchayat_fund")
PARTIES = ("owner", "buyer", "objector", "receiving_officer", "pound_keeper")
ZERO = Decimal("0.00")


class CaseLedger:
    """Posts entries for one case inside the caller's transaction.

    Args:
        session: the unit of work the case is saved in.
        case: the case (its id and Panchayat are stamped on every entry).
        officer_id: the acting user, if any (None for timer firings).
    """

    def __init__(self, session: Session, case: Case, officer_id: int | None) -> None:
        self.session, self.case, self.officer_id = session, case, officer_id
        self.element_id: str | None = None
        self.posted_by: str | None = None  # the element of the latest posting (named by an incident)

    def post(self, from_account: str, to_account: str, amount: Decimal, *, kind: str, clause: str,
             memo: str = "") -> None:
        """Move ``amount`` rupees (Decimal, > 0, paise) from one account to another.

        Raises:
            EngineFailure: a non-positive or non-Decimal amount, or an unknown account.
        """
        known = PANCHAYAT_ACCOUNTS + PARTIES
        if from_account not in known or to_account not in known or from_account == to_account:
            raise EngineFailure(f"ledger: no posting from {from_account} to {to_account}")
        if not isinstance(amount, Decimal) or amount <= 0 or amount != amount.quantize(Decimal("0.01")):
            raise EngineFailure(f"ledger: {amount!r} is not a positive amount in paise")
        self.session.add(LedgerEntry(case_id=self.case.id, panchayat_id=self.case.panchayat_id, at=clock.now(),
                                     from_account=from_account, to_account=to_account, amount=amount, kind=kind,
                                     clause=clause, element_id=self.element_id, officer_id=self.officer_id,
                                     memo=memo))
        self.posted_by = self.element_id
        self.session.flush()

    def balance(self, account: str) -> Decimal:
        """Money into ``account`` minus money out of it, for this case."""
        return balances(self.session, self.case.id).get(account, ZERO)


def entries(session: Session, case_id: int) -> list[LedgerEntry]:
    """Every ledger entry of the case, in the order posted (amounts in rupees, Decimal)."""
    return list(session.scalars(select(LedgerEntry).where(LedgerEntry.case_id == case_id).order_by(LedgerEntry.id)))


def net(rows: list[LedgerEntry]) -> dict[str, Decimal]:
    """Net balance of every account in ``rows``: in minus out (parties go negative when they pay)."""
    totals: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for entry in rows:
        totals[entry.to_account] += entry.amount
        totals[entry.from_account] -= entry.amount
    return dict(totals)


def total_to(rows: list[LedgerEntry], account: str, kinds: tuple[str, ...] | None = None) -> Decimal:
    """Total paid to ``account`` in ``rows`` (optionally only entries of ``kinds``)."""
    return sum((e.amount for e in rows if e.to_account == account and (kinds is None or e.kind in kinds)), ZERO)


def balances(session: Session, case_id: int) -> dict[str, Decimal]:
    """Net balance of every account touched by the case (see :func:`net`)."""
    return net(entries(session, case_id))


def paid_to(session: Session, case_id: int, account: str, kinds: tuple[str, ...] | None = None) -> Decimal:
    """Total paid to ``account`` in the case (see :func:`total_to`)."""
    return total_to(entries(session, case_id), account, kinds)


def check_invariants(session: Session, case: Case, closed: bool) -> None:
    """Money is conserved; no Panchayat account below zero; suspense is zero when the case ends.

    Raises:
        EngineFailure: naming the invariant that would break (the transaction is rolled back).
    """
    totals = balances(session, case.id)
    if sum(totals.values(), ZERO) != ZERO:
        raise EngineFailure("ledger: money in and money out do not balance")
    for account in PANCHAYAT_ACCOUNTS:
        if totals.get(account, ZERO) < 0:
            raise EngineFailure(f"ledger: the {account.replace('_', ' ')} would go below zero ({totals[account]})")
    if closed and totals.get("suspense", ZERO) != ZERO:
        raise EngineFailure(f"ledger: the case would end with {totals['suspense']} in the suspense account")
