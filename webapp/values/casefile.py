"""The case file: the facts of one Rule 130 case, kept with the case (not in the engine state).

Officers' acts record facts here (who bid what, who objected, what was decided); the diagram's
handlers read them to compute money and the variables its gateways test. Money is ``Decimal``
(rupees with paise), days are local calendar dates, instants are offset-aware UTC datetimes.
The file is stored as JSON; :func:`dump` and :func:`load` convert by the field types.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, TypeVar

T = TypeVar("T")


class MissingFact(LookupError):
    """A step of the diagram needs a fact the case file does not hold (the sale before the buyer
    returns the cattle, say): the diagram reached the step by a path the rule does not allow. Raised
    inside a handler it fails the step, and the case's unit of work is rolled back with an incident."""


def present(value: T | None, what: str) -> T:
    """``value``, which the step that reads it needs; :class:`MissingFact` naming ``what`` (e.g.
    "the sale") when the case file does not hold it."""
    if value is None:
        raise MissingFact(f"the case file holds no {what} at this step")
    return value


def name_key(name: str | None) -> str:
    """A person's name as compared: Unicode compatibility forms made plain (NFKC: full-width letters,
    no-break spaces), invisible format characters (zero-width space, joiners) dropped, letter case
    folded, runs of whitespace made one space and the ends stripped ("Ramesh  Kumar", "ramesh kumar"
    and "Ｒａｍｅｓｈ Kumar" are one person)."""
    plain = unicodedata.normalize("NFKC", name or "")
    plain = "".join(ch for ch in plain if unicodedata.category(ch) != "Cf")
    return " ".join(plain.split()).casefold()

@dataclass
class Animal:
    position: int  # 1-based, in the order impounded
    species: str
    description: str
    tag: str | None
    fine: Decimal  # rupees per head (tariff in force on the impound day)
    feeding_per_day: Decimal  # rupees per head per day
    died_on: date | None = None
    escaped_on: date | None = None
    born_on: date | None = None  # a calf born in the pound (RULE130.md 0, reading): no fine, fed from this day
    mother: int | None = None  # the position of the calf's mother in the lot

    @property
    def label(self) -> str:
        return self.tag or f"#{self.position} {self.species}"

    def gone_on(self) -> date | None:
        """The day the animal died or escaped, if it did."""
        days = [d for d in (self.died_on, self.escaped_on) if d is not None]
        return min(days) if days else None


@dataclass
class Bid:
    bidder: str
    amount: Decimal
    at: datetime
    day: date


@dataclass
class Auction:
    round: int  # 1 = with the notice (Rule 130(b)); 2 = after return by an objector
    opened_at: datetime
    opened_on: date
    last_day: date  # the third scheduled day, A+2
    status: str = "open"  # open | sold | unsold | withdrawn | dispatched
    closed_on: date | None = None
    bids: list[Bid] = field(default_factory=list)

    def highest_bid(self) -> Bid | None:
        return max(self.bids, key=lambda b: b.amount, default=None)


@dataclass
class Notice:
    published_at: datetime
    published_on: date
    objection_period_days: int
    full_price: Decimal
    last_day: date


@dataclass
class Sale:
    buyer: str
    amount: Decimal
    day: date
    kind: str  # full_price | accepted_highest_bid
    auction_round: int = 1
    returned_on: date | None = None


@dataclass
class Dispatch:
    send_to: str  # neighbouring_panchayat | cattle_fair
    receiver: str  # display name of the receiving officer
    receiver_user_id: int | None
    day: date
    proceeds: Decimal | None = None
    expenses: Decimal | None = None
    remitted_on: date | None = None

    @property
    def net(self) -> Decimal | None:
        if self.proceeds is None or self.expenses is None:
            return None
        return self.proceeds - self.expenses


@dataclass
class Objection:
    objector: str
    filed_at: datetime
    filed_on: date
    decision: str | None = None  # proved | not_proved
    decided_on: date | None = None
    decided_at: datetime | None = None


@dataclass
class InterimDelivery:
    objector: str
    security: Decimal
    day: date
    reason: str | None = None
    returned_on: date | None = None
    refunded: bool = False
    forfeited: bool = False


@dataclass
class Appeal:
    appellant: str
    filed_at: datetime
    filed_on: date
    against: str  # order_auction_stand | ownership
    decision: str | None = None  # upheld | reversed
    decided_on: date | None = None
    # against an ownership decision: the objector whose claim's order it is against (the appellant's
    # own, else the claim proved, else the only claim decided); None where it is against the orders on
    # several claims, and in appeals recorded before this was kept (webapp.services.cases.claims)
    objector: str | None = None


@dataclass
class Release:
    owner: str
    day: date
    received: Decimal | None = None  # rupees the owner handed over (at least F + C); None before the field existed
    change: Decimal | None = None  # rupees given back: received - (F + C)


@dataclass
class Owed:
    """Money a corrigendum found owed (webapp.services.cases.corrigenda): ``direction`` ``refund``
    — the Panchayat's ``account`` owes ``party`` ``amount`` rupees, still held there until paid —
    or ``collect`` — ``party`` owes that account the amount, not yet received. ``settled_on`` is
    the local day the secretary recorded the payment or receipt."""

    party: str
    account: str
    amount: Decimal
    direction: str  # refund | collect
    corrigendum: str  # the corrigendum's number, e.g. RMP/2026/0001/C1
    settled_on: date | None = None


@dataclass
class CaseFile:
    case_number: str
    timezone: str
    impounded_at: datetime
    impounded_on: date
    place_seized: str
    place_impounded: str
    nearest_village: str
    animals: list[Animal]
    appeal_period_days: int = 30
    return_period_days: int = 7
    release: Release | None = None
    report_raised_at: datetime | None = None
    notice: Notice | None = None
    auctions: list[Auction] = field(default_factory=list)
    sale: Sale | None = None
    dispatch: Dispatch | None = None
    objections: list[Objection] = field(default_factory=list)
    interim: InterimDelivery | None = None
    order_auction_stand_on: date | None = None
    decision_on: date | None = None  # the Panchayat's decision day D (last decision)
    decision_at: datetime | None = None
    appeals: list[Appeal] = field(default_factory=list)
    owner_proved: bool | None = None
    winning_objector: str | None = None
    final_on: date | None = None
    delivered_on: date | None = None
    feeding_charges: Decimal | None = None
    shortfall: Decimal = Decimal("0.00")
    outcome: str = "pending"
    timers: dict[str, str] = field(default_factory=dict)  # timer element id -> due instant (ISO)
    owed: list[Owed] = field(default_factory=list)  # money found owed by corrigenda, settled or not

    # -- derived views -------------------------------------------------------------------
    @property
    def auction(self) -> Auction | None:
        """The current (latest) conditional auction."""
        return self.auctions[-1] if self.auctions else None

    def living_animals(self, on: date | None = None) -> list[Animal]:
        def living(animal: Animal) -> bool:
            gone = animal.gone_on()
            return gone is None or (on is not None and gone > on)
        return [a for a in self.animals if living(a)]

    def objection_of(self, objector: str) -> Objection | None:
        """The objection filed under exactly ``objector``, else the one whose name is the same but for
        letter case and runs of spaces (:func:`name_key`; e.g. an appellant typed "ramesh  kumar")."""
        for objection in self.objections:
            if objection.objector == objector:
                return objection
        key = name_key(objector)
        return next((o for o in self.objections if name_key(o.objector) == key), None)

    def held_by_another_objector(self) -> InterimDelivery | None:
        """The interim delivery, when it went to an objector other than the owner (the objector whose
        ownership is proved, or an appellant made owner): that objector's cattle come back before the
        owner is settled with (RULE130.md (c) Explanation, reading), returned or not yet."""
        if self.interim is not None and self.winning_objector and \
                name_key(self.interim.objector) != name_key(self.winning_objector):
            return self.interim
        return None

    def pending_appeal(self) -> Appeal | None:
        return next((a for a in self.appeals if a.decision is None), None)


# -- JSON codec by field types --------------------------------------------------------------

@functools.cache
def _field_names(kind: Any) -> tuple[str, ...] | None:
    """The field names of a case-file dataclass, None for any other type (once per type)."""
    return tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None


def _encode(value: Any) -> Any:
    names = _field_names(value.__class__)
    if names is not None:
        return {name: _encode(getattr(value, name)) for name in names}
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    """The resolved field types of a case-file dataclass (resolved once per class: they never change)."""
    return typing.get_type_hints(kind)


def _decode(kind: Any, value: Any) -> Any:
    return None if value is None else _decoder(kind)(value)


def _keep(value: Any) -> Any:
    return value


@functools.cache
def _decoder(kind: Any) -> typing.Callable[[Any], Any]:
    """The function that reads a non-null JSON value of field type ``kind`` (made once per type:
    decoding a case file is part of every unit of work). Optional types read their inner type,
    lists their items, dataclasses their known fields; Decimal, datetime and date from text."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(kind) if a is not type(None)]
        return _decoder(inner[0])
    if origin is list:
        (item,) = typing.get_args(kind)
        read = _decoder(item)
        return lambda value: [None if v is None else read(v) for v in value]
    if origin is dict:
        return dict
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        fields = {name: _decoder(hint) for name, hint in _hints(kind).items()}
        return lambda value: kind(**{k: (None if v is None else fields[k](v)) for k, v in value.items() if k in fields})
    if kind is Decimal:
        return lambda value: Decimal(str(value))
    if kind is datetime:
        return datetime.fromisoformat
    if kind is date:
        return date.fromisoformat
    return _keep


def dump(case_file: CaseFile) -> str:
    """The case file as JSON text (amounts as strings with two decimals)."""
    return json.dumps(_encode(case_file), ensure_ascii=False, sort_keys=True)


def load(text: str) -> CaseFile:
    """Read a case file written by :func:`dump`."""
    case_file: CaseFile = _decode(CaseFile, json.loads(text))
    return case_file
