"""The Panchayat's registers and statements (Rule 115 of the Rajasthan Panchayati Raj Rules and
the money of Rule 130): the pound register, the receipts issued, the account of charges and sale
proceeds per case, the suspense account statement, and the statement of the Panchayat's three
accounts over a period that an auditor can reconcile (opening + in - out = closing, to the paisa).

Read-only. Every query is narrowed to one Panchayat (``panchayat_id``), which
:func:`register_panchayat` gives only within the user's scope (RULE130.md, "Roles, lanes and
scope"). Money is ``Decimal`` rupees with paise; instants are offset-aware UTC datetimes; a
:class:`Period` is a run of calendar days in the Panchayat's time zone (Rule 2: midnight to
midnight), turned into the UTC instants [start, end) that the stored instants are compared with.
The statements include every ledger entry of the period as it was posted (reversing entries too:
an entry is never edited, so a correction is one more line).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.services.money import ledger
from webapp.services.running import acts
from webapp.store.models import Case, CaseDocument, LedgerEntry, Panchayat, PaperReceipt, User
from webapp.values import casefile, clock, fees, legal_time
from webapp.values.casefile import Animal, CaseFile

ZERO = Decimal("0.00")
ACCOUNTS = ledger.PANCHAYAT_ACCOUNTS  # suspense, pound_account, panchayat_fund
REGISTER_ROLES = ("pound_keeper", "secretary", "sarpanch", "administrator")
REGISTERS = ("pound", "receipts", "charges", "suspense", "statement")
MAX_PERIOD_DAYS = 3660  # ten years: longer is surely a typing mistake
MAX_CASE_AGE_DAYS = 366  # a case is opened within a year of the impoundment (services.cases.MAX_AGE_DAYS)


# -- scope ------------------------------------------------------------------------------------------

def panchayats_in_scope(session: Session, user: User) -> list[Panchayat]:
    """The Panchayats whose registers ``user`` may open, by code: a pound keeper's, secretary's,
    sarpanch's or Panchayat administrator's own; a Samiti administrator's Samiti's; every one for an
    installation-wide administrator. None for the appellate authority and the receiving officer,
    whose scope is appeals and dispatched cases, not the Panchayat's books."""
    if user.role not in REGISTER_ROLES:
        return []
    query = select(Panchayat).order_by(Panchayat.code)
    if user.panchayat_id is not None:
        query = query.where(Panchayat.id == user.panchayat_id)
    elif user.samiti_code:
        query = query.where(Panchayat.samiti_code == user.samiti_code)
    elif user.role != "administrator":
        return []
    return list(session.scalars(query))


def require_register_role(user: User) -> None:
    """Refuse a role that keeps no registers (appellate authority, receiving officer).

    Raises:
        NotPermitted: HTTP 403, whatever Panchayat was asked for (so it tells nothing about codes).
    """
    if user.role not in REGISTER_ROLES:
        raise NotPermitted(M_("the registers are kept by the Panchayat's pound keeper, secretary and sarpanch; "
                              "you are signed in as %(role)s", role=M_(user.role.replace("_", " "))))


def register_panchayat(session: Session, user: User, code: str) -> Panchayat:
    """The Panchayat of code ``code`` if ``user`` may open its registers.

    Raises:
        NotPermitted: the user's role keeps no registers (appellate authority, receiving officer):
            HTTP 403, the same for every code.
        NotFound: no such Panchayat, or another Panchayat than the user's scope (HTTP 404; never
            says which).
    """
    require_register_role(user)
    found = next((p for p in panchayats_in_scope(session, user) if p.code == code), None)
    if found is None:
        raise NotFound(M_("no Panchayat %(code)s is open to you", code=str(code)[:40]))
    return found


# -- the period -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Period:
    """Calendar days ``first_day`` .. ``last_day`` (both included) in the zone ``timezone``."""

    first_day: date
    last_day: date
    timezone: str

    @property
    def start(self) -> datetime:
        """00:00 local of the first day, as a UTC instant (included)."""
        return legal_time.day_start(self.first_day, self.timezone)

    @property
    def end(self) -> datetime:
        """00:00 local of the day after the last day, as a UTC instant (excluded)."""
        return legal_time.day_start(self.last_day + timedelta(days=1), self.timezone)

    def contains(self, instant: datetime) -> bool:
        return self.start <= instant < self.end


def _day(text: str, name: str) -> date:
    try:
        day = legal_time.parse_day(text)  # Devanagari digits too (webapp.values.digits)
    except ValueError:
        raise Refused(M_("%(field)s: %(text)s is not a date; write it as YYYY-MM-DD, e.g. 2026-04-01",
                         field=name, text=text[:40]), {name: M_("not a date")}) from None
    if not 1900 <= day.year <= 9000:
        raise Refused(M_("%(field)s: the year %(year)s is out of range", field=name, year=day.year), {name: M_("year")})
    return day


def financial_year_start(day: date) -> date:
    """1 April of the Indian financial year that ``day`` falls in."""
    return date(day.year if day.month >= 4 else day.year - 1, 4, 1)


def period(panchayat: Panchayat, first: str | None = None, last: str | None = None) -> Period:
    """The period of a register from the texts ``first`` and ``last`` (``YYYY-MM-DD``, local days of
    the Panchayat; either may be empty). Defaults: from 1 April of the current financial year to
    today (the Panchayat's today, by the product's clock).

    Raises:
        Refused: a text that is not a date, the first day after the last, or more than ten years.
    """
    today = legal_time.local_day(clock.now(), panchayat.timezone)
    last_day = _day(last, "to") if last and last.strip() else today
    first_day = _day(first, "from") if first and first.strip() else financial_year_start(last_day)
    if first_day > last_day:
        raise Refused(M_("the first day (%(first)s) is after the last day (%(last)s)", first=first_day, last=last_day),
                      {"from": M_("after the last day")})
    if (last_day - first_day).days >= MAX_PERIOD_DAYS:
        raise Refused(M_("a period of at most %(days)s days, please", days=MAX_PERIOD_DAYS), {"from": M_("too long")})
    return Period(first_day, last_day, panchayat.timezone)


# -- who paid or was paid -----------------------------------------------------------------------------

def party_name(cf: CaseFile, account: str, kind: str) -> str | None:
    """The person behind a party account in a case's entry (owner, buyer, objector, receiving
    officer), from the case file; None for the pound keeper and when the file does not name one."""
    if account == "owner":
        return cf.release.owner if cf.release else None
    if account == "buyer":
        return cf.sale.buyer if cf.sale else None
    if account == "objector":
        if kind in ("security", "security_refund") and cf.interim:
            return cf.interim.objector
        return cf.winning_objector or (cf.interim.objector if cf.interim else None)
    if account == "receiving_officer":
        return cf.dispatch.receiver if cf.dispatch else None
    return None


def _files(session: Session, case_ids: Iterable[int]) -> dict[int, tuple[str, CaseFile]]:
    ids = sorted(set(case_ids))
    if not ids:
        return {}
    rows = session.execute(select(Case.id, Case.case_number, Case.file_json).where(Case.id.in_(ids)))
    return {row.id: (row.case_number, casefile.load(row.file_json)) for row in rows}


# -- statements ---------------------------------------------------------------------------------------

@dataclass
class StatementLine:
    entry: LedgerEntry
    case_number: str
    direction: str  # "in" | "out"
    counterparty: str  # the other account of the entry
    counterparty_name: str | None  # the person, where the case file names one
    balance: Decimal  # the account's balance after this entry (from the opening balance)


@dataclass
class AccountStatement:
    """One account over the period: ``opening`` (all entries before the start), ``received`` and
    ``paid`` (the period's entries in and out), and ``closing`` (all entries before the end, summed
    separately): ``reconciles`` when opening + received - paid == closing."""

    account: str
    opening: Decimal
    received: Decimal
    paid: Decimal
    closing: Decimal
    lines: list[StatementLine] = field(default_factory=list)

    @property
    def reconciles(self) -> bool:
        return self.opening + self.received - self.paid == self.closing


@dataclass
class Statement:
    panchayat: Panchayat
    period: Period
    accounts: list[AccountStatement]
    held: list[tuple[str, Decimal]] = field(default_factory=list)  # suspense only: (case number, balance at end)

    @property
    def reconciles(self) -> bool:
        return all(account.reconciles for account in self.accounts)


def _balances(session: Session, panchayat_id: int, accounts: tuple[str, ...], start: datetime,
              end: datetime) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """In minus out of each account over every entry of the Panchayat before ``start`` (opening)
    and before ``end`` (closing): one query of its own, apart from the period's lines, summed in
    Decimal here (SQLite's SUM of NUMERIC would be a float)."""
    opening = {account: ZERO for account in accounts}
    closing = dict(opening)
    rows = session.execute(select(LedgerEntry.at, LedgerEntry.from_account, LedgerEntry.to_account, LedgerEntry.amount)
                           .where(LedgerEntry.panchayat_id == panchayat_id, LedgerEntry.at < end,
                                  or_(LedgerEntry.to_account.in_(accounts), LedgerEntry.from_account.in_(accounts))))
    for at, from_account, to_account, amount in rows:
        for account, signed in ((to_account, amount), (from_account, -amount)):
            if account in closing:
                closing[account] += signed
                if at < start:
                    opening[account] += signed
    return opening, closing


def _entries(session: Session, panchayat_id: int, period: Period, accounts: tuple[str, ...]) -> list[LedgerEntry]:
    return list(session.scalars(
        select(LedgerEntry).where(LedgerEntry.panchayat_id == panchayat_id, LedgerEntry.at >= period.start,
                                  LedgerEntry.at < period.end,
                                  or_(LedgerEntry.to_account.in_(accounts), LedgerEntry.from_account.in_(accounts)))
        .order_by(LedgerEntry.at, LedgerEntry.id)))


def statement(session: Session, panchayat: Panchayat, period: Period,
              accounts: tuple[str, ...] = ACCOUNTS) -> Statement:
    """The Panchayat's accounts over ``period``: per account the opening balance, every entry of
    the period in posting order with its counterparty and running balance, the totals in and out,
    and the closing balance (summed by a query of its own over all entries before the period's end,
    so :attr:`Statement.reconciles` is a real check, not an identity).

    For the suspense account the statement also lists what each case still holds at the end
    (``held``: case numbers with a non-zero balance), which adds up to the closing balance.
    """
    rows = _entries(session, panchayat.id, period, accounts)
    files = _files(session, (e.case_id for e in rows))
    openings, closings = _balances(session, panchayat.id, accounts, period.start, period.end)
    result = []
    for account in accounts:
        opening = openings[account]
        balance, received, paid, lines = opening, ZERO, ZERO, []
        for entry in rows:
            if account not in (entry.to_account, entry.from_account):
                continue
            incoming = entry.to_account == account
            other = entry.from_account if incoming else entry.to_account
            if incoming:
                received += entry.amount
                balance += entry.amount
            else:
                paid += entry.amount
                balance -= entry.amount
            number, cf = files[entry.case_id]
            lines.append(StatementLine(entry, number, "in" if incoming else "out", other,
                                       party_name(cf, other, entry.kind), balance))
        result.append(AccountStatement(account, opening, received, paid, closings[account], lines))
    held: list[tuple[str, Decimal]] = []
    if "suspense" in accounts:
        held = held_in_suspense(session, panchayat, period.end)
    return Statement(panchayat, period, result, held)


def held_in_suspense(session: Session, panchayat: Panchayat, instant: datetime) -> list[tuple[str, Decimal]]:
    """What each case of the Panchayat holds in the suspense account just before ``instant``
    (auction money, remittances and securities not yet paid on: RULE130.md, "Money"), by case number;
    cases holding nothing are left out."""
    rows = session.execute(select(LedgerEntry.case_id, LedgerEntry.to_account, LedgerEntry.amount)
                           .where(LedgerEntry.panchayat_id == panchayat.id, LedgerEntry.at < instant,
                                  or_(LedgerEntry.to_account == "suspense", LedgerEntry.from_account == "suspense")))
    totals: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for case_id, to_account, amount in rows:
        totals[case_id] += amount if to_account == "suspense" else -amount
    numbers = {i: n for i, n in session.execute(select(Case.id, Case.case_number).where(Case.id.in_(list(totals))))}
    return sorted(((numbers[i], v) for i, v in totals.items() if v != ZERO), key=lambda item: item[0])


# -- receipts ------------------------------------------------------------------------------------------

@dataclass
class Receipt:
    number: str  # the case number and the receipt's place among the case's receipts: RMP/2026/0001/R1
    at: datetime
    case_id: int
    case_number: str
    payer: str  # owner | buyer | objector | receiving_officer
    payer_name: str | None
    account: str  # the Panchayat account credited
    amount: Decimal
    kind: str
    clause: str
    reversed: bool = False  # reversed since (a correction or a ledger reversal): not money received
    # the numbers of the documents the same act issued (the paper the payer holds: a sale or release
    # receipt, a delivery order ...), as printed on them, in the order issued; none for an entry no
    # act posted (a ledger reversal)
    papers: list[str] = field(default_factory=list)
    # those of :attr:`papers` cancelled since by a correction of the act (each printed CANCELLED)
    cancelled_papers: list[str] = field(default_factory=list)

    @property
    def counted(self) -> Decimal:
        """The amount as it counts in the total: nothing for a reversed receipt."""
        return ZERO if self.reversed else self.amount


def receipts(session: Session, panchayat: Panchayat, period: Period) -> list[Receipt]:
    """Every receipt issued in ``period``: money a party paid into one of the Panchayat's accounts
    (a ledger entry from an outside party to suspense, the pound account or the Panchayat fund), in
    the order received. A receipt's number is the case number and its place among all the case's
    receipts (entries are never edited or removed, so the number never changes); money received in a
    case brought in from the paper file has its paper receipt's own number (webapp.services.intake). A receipt whose
    entry was reversed since (a correction, a ledger reversal) is listed, marked ``reversed``, and
    counts for nothing in a total (:attr:`Receipt.counted`). Each receipt names the documents issued
    by the act that posted it (:attr:`Receipt.papers`, by :func:`webapp.services.running.acts.papers_of`: one
    query for the whole register); those cancelled since by a correction of that act are named in
    :attr:`Receipt.cancelled_papers` (one more query), so the register marks them CANCELLED as the
    documents themselves are marked."""
    rows = session.scalars(
        select(LedgerEntry).where(LedgerEntry.panchayat_id == panchayat.id, LedgerEntry.at >= period.start,
                                  LedgerEntry.at < period.end, LedgerEntry.to_account.in_(ACCOUNTS),
                                  LedgerEntry.from_account.notin_(ACCOUNTS))
        .order_by(LedgerEntry.at, LedgerEntry.id)).all()
    files = _files(session, (e.case_id for e in rows))
    ordinal = _receipt_ordinals(session, {e.case_id for e in rows})
    undone = set(session.scalars(select(LedgerEntry.reversal_of).where(
        LedgerEntry.reversal_of.in_([e.id for e in rows]))).all()) if rows else set()
    papers = acts.papers_of(session, rows)
    numbers = sorted({number for listed in papers.values() for number in listed})
    cancelled = set(session.scalars(select(CaseDocument.number).where(
        CaseDocument.number.in_(numbers), CaseDocument.cancelled_at.is_not(None)))) if numbers else set()
    # money received in a case brought in from the paper file keeps its paper receipt's own number
    on_paper = {entry_id: number for entry_id, number in session.execute(
        select(PaperReceipt.ledger_entry_id, PaperReceipt.number).where(
            PaperReceipt.ledger_entry_id.in_([e.id for e in rows])))} if rows else {}
    return [Receipt(on_paper.get(e.id) or f"{files[e.case_id][0]}/R{ordinal[e.id]}", e.at, e.case_id, files[e.case_id][0], e.from_account,
                    party_name(files[e.case_id][1], e.from_account, e.kind), e.to_account, e.amount, e.kind, e.clause,
                    reversed=e.id in undone, papers=papers.get(e.id, []),
                    cancelled_papers=[n for n in papers.get(e.id, []) if n in cancelled])
            for e in rows]


def _receipt_ordinals(session: Session, case_ids: set[int]) -> dict[int, int]:
    if not case_ids:
        return {}
    rows = session.execute(select(LedgerEntry.id, LedgerEntry.case_id)
                           .where(LedgerEntry.case_id.in_(sorted(case_ids)), LedgerEntry.to_account.in_(ACCOUNTS),
                                  LedgerEntry.from_account.notin_(ACCOUNTS))
                           .order_by(LedgerEntry.case_id, LedgerEntry.id))
    counts: dict[int, int] = defaultdict(int)
    ordinal = {}
    for entry_id, case_id in rows:
        counts[case_id] += 1
        ordinal[entry_id] = counts[case_id]
    return ordinal


# -- the pound register and the account of charges ---------------------------------------------------

def _impounded_in(session: Session, panchayat: Panchayat, period: Period) -> list[tuple[Case, CaseFile]]:
    """The Panchayat's cases whose cattle were impounded within ``period``, in impoundment order.
    A case is opened at most a year after the impoundment, so only cases opened from the period's
    start to a year after its end are read."""
    rows = session.scalars(select(Case).where(Case.panchayat_id == panchayat.id, Case.created_at >= period.start,
                                              Case.created_at < period.end + timedelta(days=MAX_CASE_AGE_DAYS))
                           .order_by(Case.id))
    found = [(c, casefile.load(c.file_json)) for c in rows]
    return sorted(((c, cf) for c, cf in found if period.contains(cf.impounded_at)),
                  key=lambda item: (item[1].impounded_at, item[0].id))


@dataclass
class Disposal:
    """What became of an animal: ``kind`` (released | sold | sold_by_receiver | sent_to_receiver |
    delivered_to_objector | interim_delivery | kept_by_objector | died | escaped | in_pound), the
    local day, and to whom (owner, buyer, objector or receiving officer) where someone took it."""

    kind: str
    day: date | None
    to: str | None = None


def disposal(cf: CaseFile, animal: Animal) -> Disposal:
    """The animal's disposal as the case file has it now (RULE130.md clauses (b) to (e)): a death or
    escape in the pound first; else the lot's last movement: released to the owner, delivered to
    the objector whose ownership was proved (or, where a receiving officer had sold the cattle,
    sold by them), kept by an objector whose security was forfeited, sold at the conditional
    auction, sent to or sold by a receiving officer, out on interim delivery, or still in the pound."""
    gone = animal.gone_on()
    lot_left = [d for d in (cf.sale.day if cf.sale else None, cf.dispatch.day if cf.dispatch else None,
                            cf.interim.day if cf.interim else None, cf.release.day if cf.release else None)
                if d is not None]
    if gone is not None and (not lot_left or gone <= min(lot_left) or (cf.interim and cf.interim.returned_on
                                                                         and gone >= cf.interim.returned_on)):
        return Disposal("died" if animal.died_on == gone else "escaped", gone)
    if cf.release is not None:
        return Disposal("released", cf.release.day, cf.release.owner)
    sold_away = cf.dispatch is not None and cf.dispatch.remitted_on is not None
    if cf.outcome == "returned_to_objector" and not sold_away:
        return Disposal("delivered_to_objector", cf.delivered_on or (cf.interim.day if cf.interim else None),
                        cf.winning_objector)
    if cf.outcome == "security_forfeited" and cf.interim:
        return Disposal("kept_by_objector", cf.interim.day, cf.interim.objector)
    if cf.sale is not None and cf.sale.returned_on is None:
        return Disposal("sold", cf.sale.day, cf.sale.buyer)
    if cf.dispatch is not None:
        if sold_away:
            return Disposal("sold_by_receiver", cf.dispatch.remitted_on, cf.dispatch.receiver)
        return Disposal("sent_to_receiver", cf.dispatch.day, cf.dispatch.receiver)
    if cf.interim is not None and cf.interim.returned_on is None:
        return Disposal("interim_delivery", cf.interim.day, cf.interim.objector)
    return Disposal("in_pound", None)


@dataclass
class PoundRow:
    case_id: int
    case_number: str
    impounded_at: datetime
    position: int
    species: str
    description: str
    tag: str | None
    place_seized: str
    place_impounded: str
    nearest_village: str
    fine: Decimal  # per head, by the tariff in force on the impound day
    feeding_per_day: Decimal
    disposal: Disposal


def pound_register(session: Session, panchayat: Panchayat, period: Period) -> list[PoundRow]:
    """The pound register: every animal impounded in ``period`` (by the instant of impoundment,
    in the Panchayat's days), in impoundment order, with where it was seized and kept, its tariff
    and its disposal (:func:`disposal`) with the day."""
    rows = []
    for case, cf in _impounded_in(session, panchayat, period):
        for animal in cf.animals:
            rows.append(PoundRow(case.id, case.case_number, cf.impounded_at, animal.position, animal.species,
                                 animal.description, animal.tag, cf.place_seized, cf.place_impounded,
                                 cf.nearest_village, animal.fine, animal.feeding_per_day, disposal(cf, animal)))
    return rows


@dataclass
class ChargesRow:
    """One case's charges and sale proceeds (rupees): F, C and Cb (RULE130.md, "Money"), the
    auction sale or the receiving officer's gross proceeds and expenses, the security, what went
    to the pound account and the Panchayat fund (net), what was repaid to the buyer, paid to the
    pound keeper and refunded to the objector, what suspense still holds, and the shortfall."""

    case_id: int
    case_number: str
    impounded_on: date
    animals: int
    outcome: str
    fine: Decimal
    pound_feeding: Decimal
    buyer_feeding: Decimal
    sale_amount: Decimal | None
    buyer: str | None
    remittance_proceeds: Decimal | None
    remittance_expenses: Decimal | None
    security: Decimal | None
    pound_account: Decimal
    panchayat_fund: Decimal
    suspense: Decimal
    paid_to_buyer: Decimal
    paid_to_pound_keeper: Decimal
    refunded_to_objector: Decimal
    shortfall: Decimal


def charges(session: Session, panchayat: Panchayat, period: Period) -> list[ChargesRow]:
    """The account of charges and sale proceeds, one row per case impounded in ``period``, with the
    case's ledger balances as they stand now (the case's whole ledger, whenever posted)."""
    found = _impounded_in(session, panchayat, period)
    by_case: dict[int, list[LedgerEntry]] = defaultdict(list)
    if found:
        for entry in session.scalars(select(LedgerEntry).where(LedgerEntry.case_id.in_([c.id for c, _ in found]))
                                     .order_by(LedgerEntry.id)):
            by_case[entry.case_id].append(entry)
    today = legal_time.local_day(clock.now(), panchayat.timezone)
    rows = []
    for case, cf in found:
        entries = by_case[case.id]
        net = ledger.net(entries)
        as_of = legal_time.local_day(case.closed_at, cf.timezone) if case.closed_at else today
        rows.append(ChargesRow(
            case.id, case.case_number, cf.impounded_on, len(cf.animals), cf.outcome, fees.fine(cf),
            fees.pound_feeding(cf, as_of), fees.buyer_feeding(cf), cf.sale.amount if cf.sale else None,
            cf.sale.buyer if cf.sale else None, cf.dispatch.proceeds if cf.dispatch else None,
            cf.dispatch.expenses if cf.dispatch else None, cf.interim.security if cf.interim else None,
            net.get("pound_account", ZERO), net.get("panchayat_fund", ZERO), net.get("suspense", ZERO),
            ledger.total_to(entries, "buyer"), ledger.total_to(entries, "pound_keeper"),
            ledger.total_to(entries, "objector", ("security_refund",)), cf.shortfall))
    return rows
