"""Tariffs: the fine per head and the feeding per head per day, by species, with effective dates.

Rates are rows of ``tariff_rate`` (rupees, Decimal), only ever added (webapp/store/immutable.py).
A row belongs to the whole installation (``panchayat_id`` None) or to one Panchayat, and is in
force from its ``effective_from`` day (a local calendar day of the Panchayat, Rule 2).

Which rate a case takes (RULE130.md "Money": the tariff in force on the impoundment day): for each
species, the Panchayat's own latest rate effective on or before the impoundment day (its local
day) if it has one — an *override* — else the installation's latest rate effective on or before
that day. Between two rows of one scope with the same effective day, the later-added one counts:
it *supersedes* the other before it took effect.

Administrators add rates (RULE130.md "Roles": administrator, tariffs): an installation-wide
administrator for the installation or any Panchayat, a Samiti's administrator for its Panchayats,
a Panchayat's administrator for that Panchayat. A new rate takes effect from a day after today
(in every zone it reaches), so no case has yet been impounded under it: a tariff that a case has
used is never changed. The migration 0011_ledger seeds RULE130.md's example rates for the
installation, in force from 2000-01-01.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import bindparam, or_, select
from sqlalchemy.orm import Session

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.i18n.formats import format_rupees
from webapp.services.money.amounts import parse_amount
from webapp.store import audit
from webapp.store.models import Panchayat, TariffRate, User
from webapp.values import clock, legal_time, textguard
from webapp.values.tariff import SPECIES

NOTE_LIMIT = 500
MAX_YEARS_AHEAD = 5  # a rate further ahead than this is taken for a mistyped year (20266, 9999)
DEFAULT_ZONE = "Asia/Kolkata"


@dataclass(frozen=True)
class Rate:
    """The rate of one species in force on a day: rupees per head and per head per day."""

    species: str
    fine: Decimal
    feeding_per_day: Decimal
    effective_from: date
    scope: str  # "panchayat" (the Panchayat's own override) | "installation"
    rate_id: int


@dataclass(frozen=True)
class HistoryRow:
    """A row of the tariff history with its standing today: ``in_force`` (the rate cases
    impounded today take), ``scheduled`` (from a later day), ``replaced`` (a later rate took
    over) or ``superseded`` (another rate of the same day was added after it)."""

    rate: TariffRate
    status: str


_RATES_UP_TO = (select(TariffRate).where(
    TariffRate.effective_from <= bindparam("day"),
    or_(TariffRate.panchayat_id == bindparam("panchayat_id"), TariffRate.panchayat_id.is_(None)))
    .order_by(TariffRate.effective_from, TariffRate.id))  # built once: every new case reads it


def in_force(session: Session, panchayat_id: int, day: date) -> dict[str, Rate]:
    """The rate of every species in force for the Panchayat on local day ``day`` (see the module
    docstring for overrides). Species with no rate at all are absent."""
    rows = session.scalars(_RATES_UP_TO, {"day": day, "panchayat_id": panchayat_id})
    own: dict[str, TariffRate] = {}
    common: dict[str, TariffRate] = {}
    for row in rows:  # ascending: the last one seen of each scope is the one in force
        (own if row.panchayat_id is not None else common)[row.species] = row
    chosen = {**common, **own}
    return {species: Rate(species, row.fine, row.feeding_per_day, row.effective_from,
                          "panchayat" if row.panchayat_id is not None else "installation", row.id)
            for species, row in sorted(chosen.items(), key=lambda item: SPECIES.index(item[0])
                                       if item[0] in SPECIES else len(SPECIES))}


def for_case(session: Session, panchayat: Panchayat, impounded_at: datetime) -> dict[str, dict[str, Decimal]]:
    """The tariff a case impounded at ``impounded_at`` takes: the rates in force on its local
    impoundment day in the Panchayat's zone, as ``{species: {"fine", "feeding_per_day"}}`` (rupees)."""
    day = legal_time.local_day(impounded_at, panchayat.timezone or DEFAULT_ZONE)
    return {s: {"fine": r.fine, "feeding_per_day": r.feeding_per_day} for s, r in in_force(session, panchayat.id, day).items()}


# -- administrators ----------------------------------------------------------------------------------

def _require_admin(user: User) -> None:
    if user.role != "administrator":
        raise NotPermitted(M_("only an administrator sets tariffs; you are signed in as %(role)s",
                              role=M_(user.role.replace("_", " "))))


def managed(session: Session, admin: User) -> list[Panchayat | None]:
    """The scopes ``admin`` sets tariffs for: None (the installation) first for an
    installation-wide administrator, then the Panchayats by code.

    Raises:
        NotPermitted: not an administrator.
    """
    _require_admin(admin)
    query = select(Panchayat).order_by(Panchayat.code)
    if admin.panchayat_id is not None:
        query = query.where(Panchayat.id == admin.panchayat_id)
    elif admin.samiti_code is not None:
        query = query.where(Panchayat.samiti_code == admin.samiti_code)
    panchayats: list[Panchayat | None] = list(session.scalars(query))
    if admin.panchayat_id is None and admin.samiti_code is None:
        panchayats.insert(0, None)
    return panchayats


def scope(session: Session, admin: User, code: str | None) -> Panchayat | None:
    """The scope named by ``code`` (a Panchayat code; empty: the administrator's own Panchayat, or
    the installation for an installation-wide administrator).

    Raises:
        NotPermitted: not an administrator. NotFound: a Panchayat outside the administrator's scope
        (or none with that code). Refused: a Samiti's administrator who named no Panchayat.
    """
    scopes = managed(session, admin)
    code = (code or "").strip()
    if not code:
        if admin.panchayat_id is not None:
            return scopes[0]
        if None in scopes:
            return None
        raise Refused(M_("choose one of your Panchayats"), {"panchayat": M_("this field is required")})
    for panchayat in scopes:
        if panchayat is not None and panchayat.code == code:
            return panchayat
    raise NotFound(M_("no Panchayat %(code)s is open to you", code=code))


def zone(session: Session, panchayat: Panchayat | None) -> str:
    """The zone whose calendar days a scope's dates are read in (the installation: Asia/Kolkata)."""
    return (panchayat.timezone if panchayat is not None else None) or DEFAULT_ZONE


def today(session: Session, panchayat: Panchayat | None) -> date:
    """The scope's today: the local day of its clock in its zone — for a training Panchayat its own
    clock, run ahead by the trainees (webapp.services.panchayats.training); else the real clock."""
    ahead = panchayat.clock_ahead if panchayat is not None else timedelta(0)
    return legal_time.local_day(clock.now() + ahead, zone(session, panchayat))


def first_allowed_day(session: Session, panchayat: Panchayat | None) -> date:
    """The earliest effective day a new rate may have: the day after the Panchayat's today (:func:`today`:
    a training Panchayat's on its own clock); for the installation, the day after the latest real
    "today" of any Panchayat's zone."""
    if panchayat is not None:
        return today(session, panchayat) + timedelta(days=1)
    now = clock.now()
    zones = {zone(session, None)} | {tz for tz in session.scalars(select(Panchayat.timezone)) if tz}
    return max(legal_time.local_day(now, tz) for tz in zones) + timedelta(days=1)


def history(session: Session, panchayat: Panchayat | None) -> list[HistoryRow]:
    """Every rate of the scope (the Panchayat's own rows; for the installation, its rows), newest
    effective day first, with its standing today in the scope's zone."""
    day = today(session, panchayat)
    query = select(TariffRate).where(TariffRate.panchayat_id == panchayat.id if panchayat is not None
                                     else TariffRate.panchayat_id.is_(None))
    rows = list(session.scalars(query.order_by(TariffRate.effective_from, TariffRate.id)))
    latest: dict[tuple[str, date], int] = {}
    current: dict[str, int] = {}
    for row in rows:
        latest[(row.species, row.effective_from)] = row.id
        if row.effective_from <= day:
            current[row.species] = row.id
    out = []
    for row in reversed(rows):
        if latest[(row.species, row.effective_from)] != row.id:
            status = "superseded"
        elif row.effective_from > day:
            status = "scheduled"
        elif current.get(row.species) == row.id:
            status = "in_force"
        else:
            status = "replaced"
        out.append(HistoryRow(row, status))
    return out


def _day(value: object) -> date:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    text = value.strip() if isinstance(value, str) else ""
    try:
        return legal_time.parse_day(text)  # Devanagari digits too (webapp.values.digits)
    except ValueError:
        raise Refused(M_("the effective date must be a date such as 2026-04-01"),
                      {"effective_from": M_("not a date")}) from None


def _years_after(day: date, years: int) -> date:
    """The same calendar day ``years`` later (29 February: the 28th)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, day=28)


def add(session: Session, admin: User, code: str | None, *, species: object, fine: object, feeding_per_day: object,
        effective_from: object, note: object = "") -> TariffRate:
    """Add the rate of one species for a scope, in force from ``effective_from``.

    Args:
        code: the Panchayat's code, or empty (see :func:`scope`).
        species: one of webapp.values.tariff.SPECIES.
        fine, feeding_per_day: rupees as text ("500", "75.25") or Decimal; not negative; zero only
            with a note saying why (see :func:`_zero_needs_a_note`).
        effective_from: a local calendar day (``YYYY-MM-DD`` or a date) after today (see
            :func:`first_allowed_day`) and at most ``MAX_YEARS_AHEAD`` years after that day.
        note: why (at most 500 characters; optional unless a rate is zero).
    Returns:
        the new row (the previous rates stay, as history).
    Raises:
        NotPermitted, NotFound (see :func:`scope`); Refused: an unknown species, an amount that is
        not rupees with paise, an effective day that is not after today or is more than
        ``MAX_YEARS_AHEAD`` years after the first allowed day (each named), a long note, a zero
        fine or feeding rate without a note.
    """
    panchayat = scope(session, admin, code)
    kind = str(species or "").strip().lower() if isinstance(species, str) else ""
    if kind not in SPECIES:
        raise Refused(M_("unknown species %(species)s; known: %(known)s", species=kind or "(none)",
                         known=", ".join(SPECIES)), {"species": M_("unknown species")})
    fine_amount = parse_amount(fine, "fine", M_("the fine"))
    feeding_amount = parse_amount(feeding_per_day, "feeding_per_day", M_("the feeding per day"))
    day = _day(effective_from)
    first = first_allowed_day(session, panchayat)
    if day < first:
        raise Refused(M_("a new rate takes effect from a later day than today, so that no case already impounded "
                         "changes: choose %(day)s or later", day=first), {"effective_from": M_("too early")})
    last = _years_after(first, MAX_YEARS_AHEAD)
    if day > last:
        raise Refused(M_("a new rate takes effect at most %(years)s years ahead; check the year: choose %(day)s or "
                         "earlier", years=MAX_YEARS_AHEAD, day=last), {"effective_from": M_("too far ahead")})
    if note is not None and not isinstance(note, str):
        raise Refused(M_("the note must be text"), {"note": M_("not text")})
    note_text = (note or "").strip()
    textguard.check_one_line(note_text, "note", M_("the note"))
    if len(note_text) > NOTE_LIMIT:
        raise Refused(M_("the note is longer than %(limit)s characters", limit=NOTE_LIMIT), {"note": M_("too long")})
    _zero_needs_a_note(fine_amount, feeding_amount, note_text)
    row = TariffRate(panchayat_id=panchayat.id if panchayat is not None else None, species=kind, fine=fine_amount,
                     feeding_per_day=feeding_amount, effective_from=day, created_at=clock.now(),
                     created_by=admin.username, note=note_text)
    session.add(row)
    session.flush()
    audit.record(session, "tariff.added", actor=admin.username,
                 detail={"panchayat": panchayat.code if panchayat is not None else None, "species": kind,
                         "fine": f"{fine_amount:.2f}", "feeding_per_day": f"{feeding_amount:.2f}",
                         "effective_from": day.isoformat(), "note": note_text, "rate_id": row.id})
    return row


def _zero_needs_a_note(fine: Decimal, feeding_per_day: Decimal, note: str) -> None:
    """Refuse a fine or a feeding rate of ₹0.00 unless ``note`` says why. A Panchayat may lawfully
    waive either (nothing in Rule 130 forbids it), but a zero is almost always a typing slip, and a
    case impounded under it keeps it (module docstring); the note makes the choice deliberate.

    Raises:
        Refused: naming the zero field (or both) and asking for the note; field errors on each zero
            field and on ``note``.
    """
    if note:
        return
    zero = [(name, label) for name, label, amount in (("fine", M_("the fine"), fine),
                                                      ("feeding_per_day", M_("the feeding per day"), feeding_per_day))
            if amount == 0]
    if not zero:
        return
    nothing = format_rupees(Decimal("0.00"))
    if len(zero) == 2:
        message = M_("the fine and the feeding per day are %(amount)s: a Panchayat may waive them, but a zero is "
                     "usually a typing slip; write in the note why they are zero", amount=nothing)
    else:
        message = M_("%(field)s is %(amount)s: a Panchayat may waive it, but a zero is usually a typing slip; write "
                     "in the note why it is zero", field=zero[0][1], amount=nothing)
    fields: dict[str, str] = {name: M_("%(amount)s: say why in the note", amount=nothing) for name, _ in zero}
    raise Refused(message, fields | {"note": M_("needed: why the rate is zero")})
