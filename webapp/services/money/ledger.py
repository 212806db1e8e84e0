"""The case ledger: a double-entry journal in exact rupees, balances, reversals and the invariants.

An entry moves ``amount`` (Decimal rupees, > 0, whole paise) from one account to another and
carries the case, the Panchayat, the clause of Rule 130 it implements, the task (diagram element)
that posted it, the officer (None for a timer) and the instant (UTC). Accounts of the Panchayat
are ``suspense``, ``pound_account`` and ``panchayat_fund``; the parties are ``owner``, ``buyer``,
``objector``, ``receiving_officer`` and ``pound_keeper``. A party's balance is what it received
less what it paid (it goes negative when it pays in).

Entries are never edited or deleted (webapp/store/immutable.py and a database trigger refuse it).
A correction is a *reversing entry*: the same amount between the same accounts the other way,
with ``reversal_of`` naming the entry and a ``reason`` (:func:`reverse`, by the secretary, who
keeps the accounts in RULE130.md "Roles, lanes and scope"). An entry is reversed at most once,
and a reversal is not itself reversed.

After every posting the case's invariants are checked in the same transaction
(:func:`check_invariants`, called by ``CaseRun.save`` and :func:`reverse`):

1. money is conserved: what came in from the parties equals what went out to them plus the
   balances of the Panchayat's accounts (RULE130.md "Money");
2. no account of the Panchayat goes below zero;
3. the suspense account is zero when the case ends;
4. the shortfall (F + C not covered by the money of the case, RULE130.md (e): a reading) is never
   negative, and is more than zero only for the outcomes where the rule leaves fine and feeding
   unpaid: ``auction_final``, ``security_forfeited`` and ``closed_no_animals``;
5. when the case ends, the fine and feeding received into the cattle pound account, plus the
   shortfall recorded on the case, equal F + C; after (d), the feeding charges paid to the pound
   keeper plus the balance sent to the Panchayat fund equal C;
6. while the case runs, the ledger agrees with its file: the suspense account holds exactly the
   money the file says it holds for later steps (:func:`held_in_suspense`), and between delivery
   to the objector and the feeding charges the cattle pound account holds F + C — so no later step
   can fail for want of money.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from webapp.errors import CORRIGENDUM, INCIDENT_FIRST, EngineFailure, NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.i18n.formats import format_rupees as rupees
from webapp.services.people import scope
from webapp.store.models import Case, CaseEvent, LedgerEntry, User
from webapp.values import casefile, clock, fees, legal_time
from webapp.values.casefile import CaseFile

PANCHAYAT_ACCOUNTS = ("suspense", "pound_account", "panchayat_fund")
PARTIES = ("owner", "buyer", "objector", "receiving_officer", "pound_keeper")
ACCOUNTS = PANCHAYAT_ACCOUNTS + PARTIES
ZERO = Decimal("0.00")
PAISE = Decimal("0.01")
REVERSER_ROLES = ("secretary",)
SHORTFALL_OUTCOMES = ("auction_final", "security_forfeited", "closed_no_animals")
REASON_LIMIT = 500


class InvariantBroken(EngineFailure):
    """A posting would break an invariant of the case's ledger; ``invariant`` names which
    (``conservation``, ``below_zero``, ``suspense_at_end``, ``shortfall``, ``fine_and_feeding``,
    ``feeding_charges``). The unit of work is rolled back."""

    def __init__(self, message: str, invariant: str) -> None:
        super().__init__(message)
        self.invariant = invariant


class CaseLedger:
    """Posts entries for one case inside the caller's transaction.

    Args:
        session: the unit of work the case is saved in.
        case: the case (its id and Panchayat are stamped on every entry).
        officer_id: the acting user, if any (None for timer firings).
    """

    def __init__(self, session: Session, case: Case, officer_id: int | None) -> None:
        self.session, self.case, self.officer_id = session, case, officer_id
        self.element_id: str | None = None  # the task (diagram element) posting now
        self.posted_by: str | None = None  # the element of the latest posting (named by an incident)
        self.postings = 0  # entries posted through this ledger (in this unit of work)

    def post(self, from_account: str, to_account: str, amount: Decimal, *, kind: str, clause: str,
             memo: str = "", reversal_of: int | None = None, reason: str = "") -> LedgerEntry:
        """Move ``amount`` rupees (Decimal, > 0, whole paise) from one account to another, now.

        Returns the new entry, added to the caller's session; it gets its id at the next flush
        (:func:`entries` and the invariants see it before that).
        Raises:
            EngineFailure: a non-positive, non-Decimal or sub-paisa amount, or an unknown account.
        """
        if from_account not in ACCOUNTS or to_account not in ACCOUNTS or from_account == to_account:
            raise EngineFailure(f"ledger: no posting from {from_account} to {to_account}")
        if not isinstance(amount, Decimal) or not amount.is_finite() or amount <= 0 or amount != amount.quantize(PAISE):
            raise EngineFailure(f"ledger: {amount!r} is not a positive amount in paise")
        entry = LedgerEntry(case_id=self.case.id, panchayat_id=self.case.panchayat_id, at=clock.now(),
                            from_account=from_account, to_account=to_account, amount=amount, kind=kind,
                            clause=clause, element_id=self.element_id, officer_id=self.officer_id, memo=memo,
                            reversal_of=reversal_of, reason=reason)
        self.session.add(entry)
        self.posted_by = self.element_id
        self.postings += 1
        return entry

    def balance(self, account: str) -> Decimal:
        """Money into ``account`` minus money out of it, for this case (rupees)."""
        return balances(self.session, self.case.id).get(account, ZERO)


# -- reading ------------------------------------------------------------------------------------

_CASE_ENTRIES = select(LedgerEntry).where(LedgerEntry.case_id == bindparam("case_id")).order_by(LedgerEntry.id)  # built once


def entries(session: Session, case_id: int) -> list[LedgerEntry]:
    """Every ledger entry of the case, in the order posted (amounts in rupees, Decimal): those
    stored, then those posted in this transaction and not yet flushed (read without a flush, so
    the unit of work writes its rows once, at its end)."""
    with session.no_autoflush:
        stored = list(session.scalars(_CASE_ENTRIES, {"case_id": case_id}))
    return stored + [e for e in session.new if isinstance(e, LedgerEntry) and e.case_id == case_id]


def net(rows: Iterable[LedgerEntry]) -> dict[str, Decimal]:
    """Net balance of every account in ``rows``: in minus out (parties go negative when they pay)."""
    totals: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for entry in rows:
        totals[entry.to_account] += entry.amount
        totals[entry.from_account] -= entry.amount
    return dict(totals)


def effective(rows: Iterable[LedgerEntry]) -> list[LedgerEntry]:
    """``rows`` without the entries that were reversed and without their reversals: the movements
    that stand (a reversal and its entry cancel to zero in every account)."""
    rows = list(rows)
    reversed_ids = {e.reversal_of for e in rows if e.reversal_of is not None}
    return [e for e in rows if e.reversal_of is None and e.id not in reversed_ids]


def reversed_by(rows: Iterable[LedgerEntry]) -> dict[int, LedgerEntry]:
    """``{id of a reversed entry: its reversing entry}``."""
    return {e.reversal_of: e for e in rows if e.reversal_of is not None}


def reversible(rows: Iterable[LedgerEntry]) -> list[LedgerEntry]:
    """The entries a correction may still reverse: neither a reversal nor already reversed."""
    rows = list(rows)
    done = set(reversed_by(rows))
    return [e for e in rows if e.reversal_of is None and e.id not in done]


def total_to(rows: Iterable[LedgerEntry], account: str, kinds: tuple[str, ...] | None = None) -> Decimal:
    """Total paid to ``account`` in ``rows`` (optionally only entries of ``kinds``), net of
    reversals: a reversed entry and its reversal are left out."""
    return sum((e.amount for e in effective(rows) if e.to_account == account and (kinds is None or e.kind in kinds)),
               ZERO)


def balances(session: Session, case_id: int) -> dict[str, Decimal]:
    """Net balance of every account touched by the case (see :func:`net`)."""
    return net(entries(session, case_id))


def paid_to(session: Session, case_id: int, account: str, kinds: tuple[str, ...] | None = None) -> Decimal:
    """Total paid to ``account`` in the case (see :func:`total_to`)."""
    return total_to(entries(session, case_id), account, kinds)


# -- invariants ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Expected:
    """What the case file says the ledger must show (rupees, :func:`expectations`).

    A case that has ended: ``due`` = F + C at the end of custody and ``feeding`` = C. A running
    case: ``suspense_held``, the money the suspense account holds for later steps (auction money
    not yet repaid, a remittance, a security not yet refunded: :func:`held_in_suspense`), and
    ``pound_held``, F + C in the cattle pound account between delivery to the objector and the
    feeding charges (None otherwise).
    """

    due: Decimal | None = None
    feeding: Decimal | None = None
    suspense_held: Decimal | None = None
    pound_held: Decimal | None = None


def held_in_suspense(cf: CaseFile) -> Decimal:
    """What the suspense account holds for a running case by its file (rupees): the auction money
    until the buyer is repaid, the net remittance, and a security until it is refunded (a security
    forfeited while another objector's ownership is proved stays there for that owner; one forfeited
    in (e) is settled in the same step, which ends the case); nothing once the cattle were delivered
    to the objector (clause (d) paid it out)."""
    if cf.delivered_on is not None:
        return ZERO
    held = ZERO
    if cf.sale is not None and cf.sale.returned_on is None:
        held += cf.sale.amount
    if cf.dispatch is not None and cf.dispatch.net is not None and cf.dispatch.net > 0:
        held += cf.dispatch.net
    if cf.interim is not None and not cf.interim.refunded:
        held += cf.interim.security
    for owed in cf.owed:  # a corrigendum's refund still held, or its collection not yet received
        if owed.account == "suspense" and owed.settled_on is None:
            held += owed.amount if owed.direction == "refund" else -owed.amount
    return held


def _words(account: str) -> str:
    return account.replace("_", " ")


def problems(rows: list[LedgerEntry], *, closed: bool, outcome: str, shortfall: Decimal,
             expected: Expected | None = None) -> list[InvariantBroken]:
    """Every invariant of the module docstring that ``rows`` (the case's entries) break.

    Args:
        closed: the case has ended (suspense must be zero; the end-of-case sums are checked).
        outcome: the case's outcome (which decides whether a shortfall is allowed).
        shortfall: the shortfall recorded on the case (rupees, Decimal).
        expected: F + C and C at the end of custody, for a case that has ended (None: not checked).
    Returns:
        the broken invariants, in the order listed (empty when the ledger is sound); their amounts
        are printed as the receipt prints them (``₹12,500.00``, ``-₹250.00``).
    """
    found: list[InvariantBroken] = []
    totals = net(rows)
    came_in = sum((e.amount for e in rows if e.from_account in PARTIES and e.to_account not in PARTIES), ZERO)
    went_out = sum((e.amount for e in rows if e.to_account in PARTIES and e.from_account not in PARTIES), ZERO)
    held = sum((totals.get(a, ZERO) for a in PANCHAYAT_ACCOUNTS), ZERO)
    if came_in != went_out + held or sum(totals.values(), ZERO) != ZERO:
        found.append(InvariantBroken(
            M_("ledger: money in (%(came_in)s) does not equal money out (%(went_out)s) plus the balances (%(held)s)",
               came_in=rupees(came_in), went_out=rupees(went_out), held=rupees(held)), "conservation"))
    for account in PANCHAYAT_ACCOUNTS:
        if totals.get(account, ZERO) < 0:
            found.append(InvariantBroken(
                M_("ledger: the %(account)s would go below zero (%(amount)s)", account=M_(_words(account)),
                   amount=rupees(totals[account])), "below_zero"))
    if closed and totals.get("suspense", ZERO) != ZERO:
        found.append(InvariantBroken(
            M_("ledger: the case would end with %(amount)s in the suspense account", amount=rupees(totals["suspense"])),
            "suspense_at_end"))
    if shortfall < 0 or (shortfall > 0 and outcome not in SHORTFALL_OUTCOMES):
        found.append(InvariantBroken(
            M_("ledger: a shortfall of %(shortfall)s is not allowed for the outcome %(outcome)s", shortfall=rupees(shortfall),
               outcome=M_(outcome.replace("_", " "))), "shortfall"))
    if not closed and expected is not None:
        if expected.suspense_held is not None and totals.get("suspense", ZERO) != expected.suspense_held:
            found.append(InvariantBroken(
                M_("ledger: the suspense account must hold %(held)s for this case's later steps (the auction money, "
                   "remittance or security on its file), not %(amount)s", held=rupees(expected.suspense_held),
                   amount=rupees(totals.get("suspense", ZERO))), "suspense_held"))
        if expected.pound_held is not None and totals.get("pound_account", ZERO) != expected.pound_held:
            found.append(InvariantBroken(
                M_("ledger: the cattle pound account must hold F + C (%(held)s) until the feeding charges are paid, "
                   "not %(amount)s", held=rupees(expected.pound_held), amount=rupees(totals.get("pound_account", ZERO))),
                "pound_held"))
    if closed and expected is not None and expected.due is not None:
        standing = effective(rows)
        received = sum((e.amount for e in standing if e.to_account == "pound_account" and e.kind == "fine_and_feeding"),
                       ZERO)
        if received + shortfall != expected.due:
            found.append(InvariantBroken(
                M_("ledger: fine and feeding received (%(received)s) plus the shortfall (%(shortfall)s) do not equal "
                   "F + C (%(due)s)", received=rupees(received), shortfall=rupees(shortfall), due=rupees(expected.due)), "fine_and_feeding"))
        if outcome == "returned_to_objector" and expected.feeding is not None:
            charges = sum((e.amount for e in standing if e.kind in ("feeding_charges", "feeding_balance")), ZERO)
            if charges != expected.feeding:
                found.append(InvariantBroken(
                    M_("ledger: feeding charges and their balance (%(charges)s) do not equal the pound feeding C "
                       "(%(feeding)s)", charges=rupees(charges), feeding=rupees(expected.feeding)), "feeding_charges"))
    return found


def check_invariants(session: Session, case: Case, closed: bool, expected: Expected | None = None) -> None:
    """Check the case's ledger (see :func:`problems`), with the outcome and shortfall on ``case``.

    Raises:
        InvariantBroken: the first invariant broken (the caller's transaction is rolled back).
    """
    found = problems(entries(session, case.id), closed=closed, outcome=case.outcome or "pending",
                     shortfall=case.shortfall if case.shortfall is not None else ZERO, expected=expected)
    if found:
        raise found[0]


def expectations(case: Case, cf: CaseFile | None = None) -> Expected:
    """What the case's file says its ledger must show (RULE130.md "Money"), for the ledger's
    invariants: for a case that has ended, F + C and C on the local day it ended; for a running
    case, the money held in suspense and, between delivery to the objector and the feeding
    charges, F + C in the cattle pound account (rupees, Decimal)."""
    cf = cf or casefile.load(case.file_json)
    if case.status == "completed":
        day = legal_time.local_day(case.closed_at or clock.now(), cf.timezone)
        return Expected(due=fees.fine_and_feeding(cf, day), feeding=fees.pound_feeding(cf, day))
    pound = None
    if cf.delivered_on is not None and cf.feeding_charges is None:
        pound = fees.fine_and_feeding(cf, cf.delivered_on)
    return Expected(suspense_held=held_in_suspense(cf), pound_held=pound)


# -- corrections ----------------------------------------------------------------------------------

def check_reverser(user: User) -> None:
    """Refuse anyone but the secretary, who keeps the accounts (RULE130.md "Roles, lanes and scope").

    Raises:
        NotPermitted: another role (HTTP 403).
    """
    if user.role not in REVERSER_ROLES:
        raise NotPermitted(M_("only the secretary, who keeps the accounts, reverses a ledger entry; "
                              "you are signed in as %(role)s", role=M_(user.role.replace("_", " "))))


def reverse(session: Session, user: User, case_id: int | str, entry_id: int, reason: str) -> LedgerEntry:
    """Correct the ledger: post the reversing entry of entry ``entry_id`` of the case, with a reason.

    The reversal moves the same amount between the same accounts the other way, under the same
    clause and task, by ``user`` now; the case history records it (and with it the audit trail).
    The invariants are checked before anything is kept.
    Args:
        reason: why (1 to 500 characters), e.g. "bid entered twice".
    Returns:
        the reversing entry.
    Raises:
        NotFound: no such case in the user's scope, or no such entry in the case.
        NotPermitted: the user is not the secretary.
        Refused: no reason; the entry is a reversal or was already reversed; the case is held by
            an incident; or the reversal would break an invariant (named).
    """
    case = scope.get_case(session, user, case_id)
    check_reverser(user)
    entry = session.get(LedgerEntry, entry_id) if 0 < entry_id < 2**63 else None
    if entry is None or entry.case_id != case.id:
        raise NotFound(M_("no ledger entry %(id)s in case %(number)s", id=entry_id, number=case.case_number))
    if reason is not None and not isinstance(reason, str):
        raise Refused(M_("the reason must be text"), {"reason": M_("not text")})
    reason = (reason or "").strip()
    if not reason:
        raise Refused(M_("give the reason for the reversal"), {"reason": M_("this field is required")})
    if len(reason) > REASON_LIMIT:
        raise Refused(M_("the reason is longer than %(limit)s characters", limit=REASON_LIMIT), {"reason": M_("too long")})
    if entry.reversal_of is not None:
        raise Refused(M_("entry %(id)s is itself the reversal of entry %(of)s; it cannot be reversed",
                         id=entry.id, of=entry.reversal_of),
                      then=M_("Nothing more can be done: a reversal stands in the ledger as it is; a corrigendum can "
                              "amend the names and amounts."))
    done = session.scalar(select(LedgerEntry).where(LedgerEntry.reversal_of == entry.id))
    if done is not None:
        raise Refused(M_("entry %(id)s was already reversed by entry %(by)s", id=entry.id, by=done.id),
                      then=M_("Nothing more is needed: the entry was reversed once; the ledger shows both."))
    if case.held_incident_id is not None:
        raise Refused(M_("case %(number)s is held by an incident; an administrator must handle it first",
                         number=case.case_number), then=INCIDENT_FIRST)
    book = CaseLedger(session, case, user.id)
    book.element_id = entry.element_id
    reversal = book.post(entry.to_account, entry.from_account, entry.amount, kind="reversal", clause=entry.clause,
                         memo=f"reversal of entry {entry.id} ({entry.kind})", reversal_of=entry.id, reason=reason)
    try:
        check_invariants(session, case, case.status == "completed", expectations(case))
    except InvariantBroken as broken:
        raise Refused(M_("entry %(id)s cannot be reversed: %(why)s", id=entry.id, why=broken.message),
                      then=CORRIGENDUM) from None
    session.flush()  # the reversal's id, for the history
    now = clock.now()
    session.add(CaseEvent(case_id=case.id, at=now, kind="act", name="Ledger entry reversed", element_id=None,
                          actor_role=user.role, actor_user_id=user.id,
                          detail_json=json.dumps({"entry": entry.id, "reversal": reversal.id,
                                                  "amount": f"{entry.amount:.2f}",
                                                  "from": entry.from_account, "to": entry.to_account,
                                                  "reason": reason})))
    case.updated_at = now  # the case's version moves: a reversal races other acts on the case
    session.flush()
    return reversal
