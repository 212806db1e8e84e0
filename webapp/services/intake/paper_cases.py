"""A running paper case brought in at its stage (issue 31, item 2).

A Panchayat that adopts the product has cases in progress on paper: a notice published 12 days ago,
bids received, an objection filed. The secretary (or the sarpanch) brings such a case in with its
past facts and their dates; :func:`bring_in` replays it from the impoundment through every fact,
each at its own instant, on a virtual clock (as the simulator does: webapp.simulation.simulate),
through the same services as the live acts, and then fires every timer already due up to now, in
due order. All of it is one transaction (the caller's unit of work, webapp.services.running.uow):
the first refusal rolls everything back, names the fact (its row) and its field, and nothing of the
case is kept.

What follows from a case brought in:

- it stands at the step the facts lead to, with its timers computed from the past dates; a legal
  period that has already run out has fired (its timer's row in the history, at its due instant)
  and is listed in :attr:`Brought.ran_out`; the open tasks past their day are :attr:`Brought.overdue`;
- each paper receipt of money received is a :class:`~webapp.store.models.PaperReceipt` with its own
  number against the ledger entry the replay posted; the amounts must be what the act received;
- the documents the acts produce are stored with ``from_paper`` set and the paper's own numbers
  (webapp.services.papers.documents.PaperFile), saying "entered from the paper file";
- the history ends with a row ``intake`` ("Brought in from the paper file") naming who brought the
  case in and when (the real instant); every replayed act's row names them too, with the role whose
  act it was on paper.

Refused (each naming the fact and field; nothing is recorded): an instant in the future, before the
previous fact or the impoundment, or before the Panchayat was constituted
(``panchayat.established_on``); any fact a live act would refuse (a bid after the auction closed, an
objection after the notice period, a notice period under 30 days ...); money received that is not
what the act received, or money given for an act that received none; a paper number already issued
by the product, taken by another paper receipt of the Panchayat, or given twice.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from webapp.errors import NotPermitted, Refused, Rule130Error
from webapp.i18n import M_, N_, Message, message_list
from webapp.services.cases import cases
from webapp.services.papers import documents
from webapp.services.running.case_run import CaseRun
from webapp.services.tasks import tasks
from webapp.store.models import Case, CaseDocument, CaseEvent, CaseTask, LedgerEntry, Panchayat, PaperReceipt, User
from webapp.values import casefile, clock, legal_time, textguard
from webapp.values.digits import ascii_digits

BRINGERS = ("secretary", "sarpanch")  # who may bring a paper case in (of their own Panchayat)
RECEIVED_FROM = ("owner", "buyer", "objector", "receiving_officer")  # money from outside the Panchayat
CASE_FIELDS = ("impounded_at", "place_seized", "place_impounded", "nearest_village", "animals", "facts")
MAX_FACTS = 500
NUMBER_LENGTH = 60
US = timedelta(microseconds=1)
INTAKE_EVENT = N_("Brought in from the paper file")  # the history row of the bring-in (translated where shown)
SERVICE_LEVEL_TIMERS = ("bt_overdue_", "bt_escalate_")  # officers' service levels (README), not legal periods
MONEY = ("receipt_number", "amount_received")


@dataclass(frozen=True)
class FactKind:
    """One kind of past fact: the role whose act it was, its required and optional fields."""

    role: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    label: str = ""


# the past facts a paper case records, named as in the simulator's scenarios (tests/scenarios/FORMAT.md)
FACTS: dict[str, FactKind] = {
    "publish_notice": FactKind("secretary", ("objection_period_days", "full_price"), ("paper_number",),
                               M_("the notice")),
    "bid": FactKind("secretary", ("bidder", "amount"), ("paper_number", *MONEY), M_("a bid")),
    "accept_highest_bid": FactKind("sarpanch", (), ("paper_number", *MONEY), M_("the highest bid accepted")),
    "file_objection": FactKind("secretary", ("objector",), (), M_("an objection")),
    "interim_delivery": FactKind("sarpanch", ("objector", "security"), ("reason", "paper_number", *MONEY),
                                 M_("an interim delivery")),
    "decide_objection": FactKind("sarpanch", ("objector", "decision"), ("paper_number",),
                                 M_("a decision on an objection")),
    "order_auction_stand": FactKind("sarpanch", (), ("paper_number",), M_("the order that the auction stand")),
    "file_appeal": FactKind("secretary", ("appellant",), (), M_("an appeal")),
    "decide_appeal": FactKind("appellate_authority", ("decision",), ("paper_number",), M_("the appeal decided")),
    "death": FactKind("pound_keeper", (), ("animal", "tag"), M_("a death")),
    "escape": FactKind("pound_keeper", (), ("animal", "tag"), M_("an escape")),
}


@dataclass
class Fact:
    """One past fact as given: its kind, instant (aware), fields and where it came from (``where``:
    ``facts[3]`` in the API, ``row 7`` in a CSV file; ``fields`` names the field as the source does)."""

    do: str
    at: datetime
    values: dict[str, Any]
    where: Any
    names: dict[str, str] = field(default_factory=dict)  # field -> as the source names it (a CSV column)

    def name(self, key: str) -> str:
        return self.names.get(key, key)


@dataclass
class Brought:
    """A paper case brought in (or, on a check, that would be): what the officer is shown."""

    case_id: int
    case_number: str
    facts: int
    open_tasks: list[dict[str, Any]]  # {"title", "lane", "act_by" (date|None), "overdue" (bool), "deadline" ...}
    ran_out: list[dict[str, Any]]  # {"name", "due" (UTC instant)}: legal periods run out, fired at the bring-in
    documents: list[dict[str, Any]]  # {"kind", "title", "number"}
    receipts: list[dict[str, Any]]  # {"number", "amount" (Decimal), "kind", "received_at"}
    status: str = "running"
    outcome: str = "pending"

    @property
    def overdue(self) -> list[dict[str, Any]]:
        """The open tasks whose day to act by has passed: the acts overdue."""
        return [task for task in self.open_tasks if task["overdue"]]


# -- reading what was given -----------------------------------------------------------------------

def _refuse(where: Any, name: str, problem: Any) -> Refused:
    return Refused(M_("%(where)s, %(field)s: %(problem)s", where=where, field=name, problem=problem),
                   {f"{where}.{name}": problem})


def _instant(value: Any, where: Any, name: str, tz: str) -> datetime:
    """An aware instant (ISO 8601 with its offset; a datetime as it is)."""
    if isinstance(value, datetime):
        instant = value
    else:
        try:
            instant = legal_time.parse_instant(str(value or ""))
        except (ValueError, TypeError):
            raise _refuse(where, name, M_("not a date and time with its UTC offset, e.g. 2026-01-05T10:00:00+05:30")) from None
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise _refuse(where, name, M_("a date and time needs its UTC offset"))
    return instant


def _rupees(value: Any, where: Any, name: str) -> Decimal:
    try:
        amount = Decimal(str(value).strip().replace(",", "")) if not isinstance(value, bool) else None
    except (InvalidOperation, ValueError):
        amount = None
    if amount is None or not amount.is_finite() or amount < 0 or amount != amount.quantize(Decimal("0.01")):
        raise _refuse(where, name, M_("not an amount in rupees with at most two decimals"))
    return amount.quantize(Decimal("0.01"))


def _whole(value: Any, where: Any, name: str) -> int:
    text = str(value).strip() if not isinstance(value, bool) else ""
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        raise _refuse(where, name, M_("not a whole number"))
    return int(text)


def _line(value: Any, where: Any, name: str) -> str:
    if not isinstance(value, str) or textguard.is_blank(value):
        raise _refuse(where, name, M_("missing"))
    try:
        textguard.check_one_line(value, name, name)
    except Refused as refused:
        raise _refuse(where, name, refused.message) from None
    return " ".join(value.split())


def _paper_number(value: Any, where: Any, name: str) -> str:
    number = _line(value, where, name)
    if len(number) > NUMBER_LENGTH:
        raise _refuse(where, name, M_("a number of at most %(num)s characters", num=NUMBER_LENGTH))
    return number


def number_key(number: str) -> str:
    """The form of a paper number compared for collisions: upper case, without spaces."""
    return "".join(number.split()).upper()


def _fact_values(kind: FactKind, raw: dict[str, Any], where: Any, names: dict[str, str]) -> dict[str, Any]:
    def name(key: str) -> str:
        return names.get(key, key)

    values: dict[str, Any] = {}
    for key in kind.required:
        if raw.get(key) in (None, ""):
            raise _refuse(where, name(key), M_("missing"))
    for key in kind.required + kind.optional:
        value = raw.get(key)
        if value in (None, ""):
            continue
        if key in ("full_price", "amount", "security", "amount_received"):
            values[key] = _rupees(value, where, name(key))
        elif key in ("objection_period_days", "animal"):
            values[key] = _whole(value, where, name(key))
        elif key in ("paper_number", "receipt_number"):
            values[key] = _paper_number(value, where, name(key))
        elif key == "decision":
            values[key] = str(value).strip().lower().replace(" ", "_")
        else:
            values[key] = _line(value, where, name(key))
    if ("receipt_number" in values) != ("amount_received" in values):
        missing = "amount_received" if "receipt_number" in values else "receipt_number"
        raise _refuse(where, name(missing), M_("a paper receipt needs both its number and the amount received"))
    return values


def read_facts(raw_facts: Any, tz: str, *, names: dict[str, str] | None = None) -> list[Fact]:
    """The past facts of an API body (``[{"do", "at", ...}]``), read and typed; their order and dates
    are checked by :func:`bring_in`.

    Raises:
        Refused: not a list; a fact of an unknown kind, with an unknown field, a missing one, or one
            of the wrong kind (text for a number ...), naming ``facts[i]`` and the field.
    """
    if raw_facts is None:
        return []
    if not isinstance(raw_facts, list):
        raise Refused(M_("the facts must be a list"), {"facts": M_("not a list")})
    if len(raw_facts) > MAX_FACTS:
        raise Refused(M_("a paper case holds at most %(num)s facts", num=MAX_FACTS), {"facts": M_("too many")})
    facts = []
    for index, raw in enumerate(raw_facts):
        where = f"facts[{index}]"
        if not isinstance(raw, dict):
            raise Refused(M_("%(where)s: not an object", where=where), {where: M_("not an object")})
        facts.append(fact(raw, where, tz, names or {}))
    return facts


def fact(raw: dict[str, Any], where: Any, tz: str, names: dict[str, str]) -> Fact:
    """One past fact from ``raw`` (``do``, ``at`` and the fields of its kind, :data:`FACTS`).

    Raises:
        Refused: as :func:`read_facts`, naming ``where`` and the field.
    """
    do = str(raw.get("do") or "").strip()
    if do not in FACTS:
        raise _refuse(where, names.get("do", "do"), M_("unknown fact %(do)s; one of %(known)s", do=do[:40],
                                                      known=", ".join(FACTS)))
    kind = FACTS[do]
    unknown = sorted(key for key, value in raw.items() if key not in ("do", "at", *kind.required, *kind.optional)
                     and value not in (None, ""))
    if unknown:
        raise _refuse(where, names.get(unknown[0], unknown[0]),
                      M_("not a field of %(fact)s; it takes %(fields)s", fact=kind.label,
                         fields=", ".join(kind.required + kind.optional) or "at"))
    at = _instant(raw.get("at"), where, names.get("at", "at"), tz)
    return Fact(do=do, at=at, values=_fact_values(kind, raw, where, names), where=where, names=names)


# -- bringing a case in ---------------------------------------------------------------------------

def bring_in(session: Session, user: User, *, impounded_at: Any, place_seized: Any, place_impounded: Any,
             nearest_village: Any, animals: Any, facts: list[Fact], where: Any = None,
             taken: set[str] | None = None, impounded_field: str = "impounded_at") -> Brought:
    """Bring a running paper case in at its stage, inside the caller's transaction.

    Args:
        user: the secretary or sarpanch bringing it in; the case opens in their Panchayat.
        impounded_at: the impoundment's instant (aware datetime, or ISO 8601 text with its offset).
        animals: ``[{"species", "description", "tag"}]`` as for a new case.
        facts: the past facts in the order they happened (:func:`read_facts`, :mod:`.paper_csv`).
        where: how the impoundment is named in a refusal (``row 2`` of a CSV file; None: the field);
            ``impounded_field`` names its instant (``at`` in a CSV file).
        taken: the paper numbers (:func:`number_key`) already used by the other cases of the same
            import; this case's are added.
    Returns:
        what the officer is shown (:class:`Brought`).
    Raises:
        NotPermitted: not a secretary or sarpanch of a Panchayat.
        Refused: see the module's docstring; the message names the fact and field.
    """
    if user.role not in BRINGERS or user.panchayat_id is None:
        raise NotPermitted(M_("only the secretary or the sarpanch of a Panchayat brings in a paper case; you "
                              "are signed in as %(role)s", role=Message(user.role.replace("_", " "))))
    panchayat = session.get(Panchayat, user.panchayat_id)
    if panchayat is None:
        raise NotPermitted(M_("your account has no Panchayat"))
    now = clock.now()
    tz = panchayat.timezone
    start_where = where if where is not None else M_("the impoundment")
    start_at = _instant(impounded_at, start_where, impounded_field, tz)
    _check_dates(start_at, facts, now, panchayat, start_where, impounded_field)
    taken = taken if taken is not None else set()
    _check_numbers(session, panchayat, facts, taken)
    paper = documents.PaperFile(entered_by=user.display_name, entered_at=now)
    virtual = clock.VirtualClock(start_at)
    session.info[documents.PAPER_FILE] = paper
    try:
        with clock.installed(virtual), _numbers_unique():
            case = _replay(session, user, panchayat, virtual, paper, facts, start_where,
                           dict(impounded_at=start_at, place_seized=place_seized, place_impounded=place_impounded,
                                nearest_village=nearest_village, animals=animals))
            last = facts[-1].at if facts else start_at
            paper.strict = False
            ran_out = _fire_until(session, case, virtual, now)
            virtual.set(max(virtual.now(), now))
            session.add(CaseEvent(case_id=case.id, at=now, kind="intake", name=INTAKE_EVENT,
                                  element_id=None, actor_role=user.role, actor_user_id=user.id,
                                  detail_json=json.dumps({"facts": len(facts), "by": user.username,
                                                          "last_fact_at": last.isoformat(),
                                                          "ran_out": [r["name"] for r in ran_out]})))
            session.flush()
    finally:
        session.info.pop(documents.PAPER_FILE, None)
    return _brought(session, case, len(facts), ran_out, panchayat, now)


@contextlib.contextmanager
def _numbers_unique() -> Iterator[None]:
    """A paper receipt number taken by another import committed at the same moment (the unique
    index of ``paper_receipt``) is a refusal, not a server error; the caller's unit of work rolls back."""
    try:
        yield
    except IntegrityError as error:
        if "paper_receipt" not in str(error.orig) and "number_key" not in str(error.orig):
            raise
        raise Refused(M_("a receipt number of this case was recorded by another officer at the same moment; "
                         "nothing was recorded. Check the paper and try again"),
                      {"receipt_number": M_("already used")}) from None


def _check_dates(start_at: datetime, facts: list[Fact], now: datetime, panchayat: Panchayat, start_where: Any,
                 start_field: str) -> None:
    """Refuse an instant in the future, before the previous one, or before the Panchayat existed."""
    tz = panchayat.timezone
    founded = panchayat.established_on
    previous, previous_where = start_at, start_where
    for where, name, at in [(start_where, start_field, start_at)] + [(f.where, f.name("at"), f.at) for f in facts]:
        if at > now:
            raise _refuse(where, name, M_("%(when)s is in the future; a paper case records what has happened",
                                          when=at))
        if founded is not None and legal_time.local_day(at, tz) < founded:
            raise _refuse(where, name, M_("%(day)s is before the Panchayat %(name)s was constituted on %(founded)s",
                                          day=legal_time.local_day(at, tz), name=panchayat.name, founded=founded))
        if at < previous:
            raise _refuse(where, name, M_("%(when)s is before %(earlier)s (%(previous)s); give the facts in the "
                                          "order they happened", when=at, earlier=previous, previous=previous_where))
        previous, previous_where = at, where


def _check_numbers(session: Session, panchayat: Panchayat, facts: list[Fact], taken: set[str]) -> None:
    """Refuse a paper number given twice, already taken by a paper receipt of the Panchayat, or the
    number of a document the product issued in the Panchayat."""
    for f in facts:
        for key in ("paper_number", "receipt_number"):
            number = f.values.get(key)
            if number is None:
                continue
            wanted = number_key(number)
            if wanted.startswith((f"{panchayat.code}/".upper(), f"TRN-{panchayat.code}/".upper())):
                raise _refuse(f.where, f.name(key), M_("%(number)s is written as the product numbers its own cases, "
                                                       "documents and receipts (%(code)s/...); give the number on the "
                                                       "paper", number=number, code=panchayat.code))
            if wanted in taken:
                raise _refuse(f.where, f.name(key), M_("the number %(number)s is given twice", number=number))
            receipt = session.scalar(select(PaperReceipt.number).where(PaperReceipt.panchayat_id == panchayat.id,
                                                                       PaperReceipt.number_key == wanted))
            issued = session.scalar(
                select(CaseDocument.number).join(Case, Case.id == CaseDocument.case_id)
                .where(Case.panchayat_id == panchayat.id,
                       func.upper(func.replace(CaseDocument.number, " ", "")) == wanted).limit(1))
            if receipt is not None or issued is not None:
                raise _refuse(f.where, f.name(key), M_("the number %(number)s is already used in the Panchayat %(name)s "
                                                       "(%(by)s); check the paper", number=number, name=panchayat.name,
                                                       by=M_("a paper receipt") if receipt is not None
                                                       else M_("a document the product issued")))
            taken.add(wanted)


def acting_as(user: User, role: str, panchayat: Panchayat) -> User:
    """The officer bringing the case in, acting in the role whose act a past fact was on paper: a
    copy of ``user`` (never added to the session) with that role, in the Panchayat (the appellate
    authority: its Samiti). Every row the act writes names ``user``'s id."""
    return User(id=user.id, username=user.username, display_name=user.display_name, role=role,
                panchayat_id=None if role == "appellate_authority" else panchayat.id,
                samiti_code=panchayat.samiti_code if role == "appellate_authority" else None,
                language=user.language, active=True, simulated=user.simulated, password_hash="",
                created_at=user.created_at)


def _replay(session: Session, user: User, panchayat: Panchayat, virtual: clock.VirtualClock,
            paper: documents.PaperFile, facts: list[Fact], start_where: Any, start: dict[str, Any]) -> Case:
    keeper = acting_as(user, "pound_keeper", panchayat)
    try:
        case = cases.start_case(session, keeper, **start)
    except Refused as refused:
        problem = next(iter(refused.field_errors), None)
        raise Refused(M_("%(where)s: %(problem)s", where=start_where, problem=refused.message),
                      {f"{start_where}.{problem or 'impounded_at'}": refused.message}) from None
    for f in facts:
        _fire_until(session, case, virtual, f.at)
        virtual.set(f.at)
        mark = session.scalar(select(func.max(LedgerEntry.id)).where(LedgerEntry.case_id == case.id)) or 0
        paper.paper_number, paper.receipt_number = f.values.get("paper_number"), f.values.get("receipt_number")
        paper.strict, paper.missing = True, []
        officer = acting_as(user, FACTS[f.do].role, panchayat)
        try:
            _act(session, officer, case, f)
        except Rule130Error as refused:
            raise _refused_fact(f, refused) from None
        finally:
            paper.strict = False
        if paper.missing:
            key = "receipt_number" if paper.missing[0] in documents.RECEIPT_KINDS else "paper_number"
            raise _refuse(f.where, f.name(key), M_("%(fact)s issued %(document)s; give the number on the paper",
                                                   fact=FACTS[f.do].label,
                                                   document=Message(paper.missing[0].replace("_", " "))))
        if paper.paper_number is not None:
            raise _refuse(f.where, f.name("paper_number"), M_("%(fact)s issues no document to number",
                                                              fact=FACTS[f.do].label))
        _receipt(session, user, case, f, mark, paper.entered_at)
    return case


def _act(session: Session, officer: User, case: Case, f: Fact) -> None:
    """Apply one past fact through the service of the live act (as the simulator's steps do)."""
    v = f.values
    if "objector" in v and f.do != "file_objection" and casefile.load(case.file_json).objection_of(v["objector"]) is None:
        raise Refused(M_("no objection of %(name)s was filed in the case before this fact", name=v["objector"]),
                      {"objector": M_("no such objection")})

    def task(element: str, data: dict[str, Any], **match: Any) -> None:
        tasks.act(session, officer, case.id, element, data, **match)

    if f.do == "publish_notice":
        task("ut_publish_notice", {"objection_period_days": v["objection_period_days"], "full_price": v["full_price"]})
    elif f.do == "bid":
        task("ut_record_bid", {"bidder": v["bidder"], "amount": v["amount"]})
    elif f.do == "accept_highest_bid":
        task("ut_decide_unsold", {"choice": "accept_highest_bid"})
    elif f.do == "file_objection":
        cases.file_objection(session, officer, case.id, v["objector"])
    elif f.do == "interim_delivery":
        data: dict[str, Any] = {"decision": "interim_delivery", "security": v["security"]}
        if v.get("reason"):
            data["reason"] = v["reason"]
        task("ut_decide_objection", data, objector=v["objector"])
    elif f.do == "decide_objection":
        task("ut_decide_objection", {"decision": v["decision"]}, objector=v["objector"])
    elif f.do == "order_auction_stand":
        task("ut_order_stand", {})
    elif f.do == "file_appeal":
        cases.file_appeal(session, officer, case.id, v["appellant"])
    elif f.do == "decide_appeal":
        task("ut_decide_appeal", {"decision": v["decision"]})
    elif f.do in ("death", "escape"):
        cases.record_animal_event(session, officer, case.id, f.do, tag=v.get("tag"), position=v.get("animal"))


_FIELD_OF = {"objector": "objector", "amount": "amount", "bidder": "bidder", "security": "security",
             "objection_period_days": "objection_period_days", "full_price": "full_price", "decision": "decision",
             "appellant": "appellant", "reason": "reason", "tag": "tag", "animal": "animal", "choice": "do"}


def _refused_fact(f: Fact, refused: Rule130Error) -> Refused:
    """A live act's refusal of a past fact, naming the fact (its row), its field and its instant."""
    fields = getattr(refused, "field_errors", {}) or {}
    given = next((_FIELD_OF[k] for k in fields if k in _FIELD_OF), None)
    name = f.name(given) if given else f.name("at")
    return Refused(M_("%(where)s, %(field)s (%(fact)s at %(when)s): %(problem)s", where=f.where, field=name,
                      fact=FACTS[f.do].label, when=f.at, problem=refused.message),
                   {f"{f.where}.{name}": refused.message})


def _receipt(session: Session, user: User, case: Case, f: Fact, mark: int, entered_at: datetime) -> None:
    """Match the money the act received against the fact's paper receipt, and keep the receipt."""
    session.flush()
    received = list(session.scalars(select(LedgerEntry).where(
        LedgerEntry.case_id == case.id, LedgerEntry.id > mark, LedgerEntry.from_account.in_(RECEIVED_FROM),
        LedgerEntry.reversal_of.is_(None)).order_by(LedgerEntry.id)))
    total = sum((entry.amount for entry in received), Decimal("0.00"))
    number, amount = f.values.get("receipt_number"), f.values.get("amount_received")
    if not received:
        if number is not None:
            raise _refuse(f.where, f.name("receipt_number"), M_("%(fact)s received no money in the case; a "
                                                                "receipt belongs to the act that received it",
                                                                fact=FACTS[f.do].label))
        return
    if number is None or amount is None:
        raise _refuse(f.where, f.name("receipt_number"),
                      M_("%(fact)s received %(amount)s (%(kinds)s); give the paper receipt's number and amount",
                         fact=FACTS[f.do].label, amount=ledger_amount(total),
                         kinds=message_list([Message(e.kind.replace("_", " ")) for e in received])))
    if amount != total:
        raise _refuse(f.where, f.name("amount_received"),
                      M_("the paper receipt says %(paper)s, but %(fact)s received %(amount)s; the money does not "
                         "add up", paper=ledger_amount(amount), fact=FACTS[f.do].label, amount=ledger_amount(total)))
    session.add(PaperReceipt(case_id=case.id, panchayat_id=case.panchayat_id, number=number,
                             number_key=number_key(number), amount=amount, received_at=f.at, kind=received[0].kind,
                             ledger_entry_id=received[0].id, entered_by=user.id, entered_at=entered_at))


def ledger_amount(amount: Decimal) -> str:
    """Rupees with two decimals, as a refusal names them (``5000.00``)."""
    return f"{amount:.2f}"


def _fire_until(session: Session, case: Case, virtual: clock.VirtualClock, until: datetime) -> list[dict[str, Any]]:
    """Fire every timer of ``case`` due before ``until``, each just past its own instant, in due order
    (as webapp.simulation.simulate.fire_until and the timer worker do). Returns what fired."""
    fired: list[dict[str, Any]] = []
    for _ in range(10_000):
        due = case.next_timer_due
        if case.status != "running" or due is None or due >= until:
            return fired
        virtual.set(max(virtual.now(), due + US))
        run = CaseRun(session, case, None)
        for timer in run.run():
            if not timer.bpmn_id.startswith(SERVICE_LEVEL_TIMERS):  # a legal period, not an officer's reminder
                fired.append({"name": timer.name or timer.bpmn_id, "element_id": timer.bpmn_id,
                              "due": timer.due.astimezone(UTC)})
        run.save()
    raise RuntimeError("the paper case keeps firing timers")


def _brought(session: Session, case: Case, facts: int, ran_out: list[dict[str, Any]], panchayat: Panchayat,
             now: datetime) -> Brought:
    today = legal_time.local_day(now, panchayat.timezone)
    rows = session.scalars(select(CaseTask).where(CaseTask.case_id == case.id, CaseTask.state == "ready")
                           .order_by(CaseTask.id))
    open_tasks = [{"title": row.title, "lane": row.lane, "subject": row.subject, "act_by": row.act_by,
                   "deadline_label": row.deadline_label, "deadline_on": row.deadline_on,
                   "overdue": row.act_by is not None and row.act_by < today} for row in rows]
    docs = [{"kind": d.kind, "title": d.title, "number": d.number, "id": d.id}
            for d in session.scalars(select(CaseDocument).where(CaseDocument.case_id == case.id,
                                                                CaseDocument.language == "en")
                                     .order_by(CaseDocument.id))]
    receipts = [{"number": r.number, "amount": r.amount, "kind": r.kind, "received_at": r.received_at}
                for r in session.scalars(select(PaperReceipt).where(PaperReceipt.case_id == case.id)
                                         .order_by(PaperReceipt.id))]
    return Brought(case_id=case.id, case_number=case.case_number, facts=facts, open_tasks=open_tasks,
                   ran_out=ran_out, documents=docs, receipts=receipts, status=case.status, outcome=case.outcome)


def bring_in_many(session: Session, user: User, papers: list[dict[str, Any]]) -> list[Brought]:
    """Bring in several paper cases (one CSV file: :mod:`.paper_csv`), all in the caller's one
    transaction: the first refusal refuses them all (nothing is half imported).

    Args:
        papers: ``[{"impounded_at", "place_seized", "place_impounded", "nearest_village", "animals",
            "facts": [Fact], "where"}]``.
    Raises:
        NotPermitted, Refused: as :func:`bring_in`.
    """
    taken: set[str] = set()
    return [bring_in(session, user, **paper, taken=taken) for paper in papers]


def day_text(value: date | None) -> str:
    """A day as ``YYYY-MM-DD`` (the API's form), empty for None."""
    return value.isoformat() if value is not None else ""



# -- a fact as one row of columns (the page's form and the CSV file) ------------------------------

ROW_COLUMNS = ("do", "at", "name", "amount", "days", "decision", "animal", "reason", "paper_number",
               "receipt_number", "amount_received")
"""The columns of a fact written as one row: ``name`` is the bidder, objector or appellant; ``amount``
the full price of a notice, a bid or a security; ``days`` a notice's objection period; ``animal`` the
animal's number in the case or its tag."""

_NAME_OF = {"bidder": "name", "objector": "name", "appellant": "name", "full_price": "amount", "amount": "amount",
            "security": "amount", "objection_period_days": "days", "animal": "animal", "tag": "animal"}


def local_instant(text: str, tz: str) -> datetime | str:
    """``YYYY-MM-DD HH:MM`` (or ``T`` between) in the Panchayat's zone ``tz``, or ISO 8601 with its
    offset, as an aware instant; the text as it is when it is neither (refused where it is read)."""
    cleaned = " ".join(str(text or "").split())
    try:
        instant = legal_time.parse_instant(cleaned)
    except (ValueError, TypeError):
        try:
            naive = datetime.fromisoformat(ascii_digits(cleaned))
        except (ValueError, TypeError):
            return cleaned
        if naive.tzinfo is not None:
            return cleaned
        return naive.replace(tzinfo=ZoneInfo(tz))
    return instant


def fact_from_row(row: dict[str, str], where: Any, tz: str, label: Callable[[str], str] | None = None) -> Fact:
    """One past fact from a row of :data:`ROW_COLUMNS` (texts; blank cells are empty), its instant in
    the Panchayat's zone ``tz`` unless it has an offset; ``label`` names a column as the source shows it.

    Raises:
        Refused: as :func:`fact`, naming ``where`` and the column.
    """
    label = label or (lambda column: column)
    do = (row.get("do") or "").strip()
    kind = FACTS.get(do)
    raw: dict[str, Any] = {"do": do, "at": local_instant(row.get("at") or "", tz)}
    names: dict[str, str] = {"do": label("do"), "at": label("at")}
    if kind is not None:
        fields = kind.required + kind.optional
        used: set[str] = set()
        for key in fields:
            column = _NAME_OF.get(key, key)
            if column == "animal":
                text = (row.get("animal") or "").strip()
                if (key == "animal" and text.isdigit()) or (key == "tag" and text and not text.isdigit()):
                    raw[key] = text
                    used.add(column)
                names[key] = label(column)
                continue
            if column in row:
                raw[key] = row[column]
                used.add(column)
            names[key] = label(column)
        for column in ROW_COLUMNS[2:]:
            if column not in used and (row.get(column) or "").strip():
                raise _refuse(where, label(column), M_("not a field of %(fact)s", fact=kind.label))
    return fact(raw, where, tz, names)
