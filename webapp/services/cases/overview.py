"""The case on one screen: where the case is on its diagram, the next timer, the parties, the
money by account and the audit trail (who did what, when, with which data, under which clause).

Read-only: nothing here changes a case. Instants are aware UTC datetimes; money is Decimal rupees.
The clause of a diagram element is the beginning of its documentation, up to the first colon
(every flow node's documentation begins with its clause: webapp/engine/diagrams/parser.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from lxml import etree
from SpiffWorkflow.util.task import TaskState
from sqlalchemy import select
from sqlalchemy.orm import Session

from webapp.engine.diagrams.parser import FORM_PROPERTY
from webapp.engine.execution import runtime
from webapp.i18n import M_, Message, message_from_json
from webapp.i18n.catalogues import translations_for
from webapp.i18n.extract import DRAWN_ELEMENTS, SHOWN_ELEMENTS
from webapp.services.cases import cases
from webapp.services.money import ledger
from webapp.services.running import acts
from webapp.services.tasks import form_schema
from webapp.store.models import Case, CaseAct, CaseEvent, LedgerEntry, ProcessVersion, User
from webapp.values.casefile import CaseFile

BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
ZERO = Decimal("0.00")


@lru_cache(maxsize=16)
def labelled_for(bpmn_xml: str, language: str) -> bytes:
    """The diagram's XML with the labels drawn on it in ``language`` (``"en"``/``"hi"``), for the
    diagram viewer: the names of tasks, events, gateways, pools and sequence flows from the
    catalogue (webapp.i18n.extract extracts them), the lanes' roles as words (``pound_keeper`` →
    "pound keeper") in that language; a name the catalogue lacks stays as written. Ids, flows and
    layout are unchanged, so the case's marks still land on their elements.

    Returns UTF-8 XML bytes (English: the names as deployed, the lanes' roles as words). Entities are not resolved and nothing
    is fetched. Raises lxml's ``XMLSyntaxError`` for text that is not XML (a deployed version
    always is).
    """

    catalogue = translations_for(language)
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(bpmn_xml.encode("utf-8"), parser)
    for kind in (SHOWN_ELEMENTS + DRAWN_ELEMENTS) if language != "en" else ():
        for element in root.iter(f"{{{BPMN_NS}}}{kind}"):
            name = (element.get("name") or "").strip()
            if name:
                element.set("name", catalogue.gettext(name))
    for lane in root.iter(f"{{{BPMN_NS}}}lane"):
        name = (lane.get("name") or "").strip()
        if name:
            lane.set("name", catalogue.gettext(name.replace("_", " ")))
    drawn: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    return drawn


@dataclass
class DiagramMarks:
    """BPMN element ids by state: ``done`` (completed), ``active`` (ready for an officer or
    running), ``waiting`` (timers and events the case waits for)."""

    done: list[str]
    active: list[str]
    waiting: list[str]


@dataclass
class NextTimer:
    element_id: str
    name: str
    due: datetime  # aware, UTC


@dataclass
class Party:
    role: str  # owner | bidder | buyer | objector | appellant | receiving officer
    name: str
    facts: list[str] = field(default_factory=list)  # identifiers of what they did, shown as words


@dataclass
class AccountLine:
    entry: LedgerEntry
    direction: str  # "in" | "out"
    balance: Decimal  # running balance of the account after this entry


@dataclass
class Account:
    name: str
    lines: list[AccountLine]
    balance: Decimal


@dataclass
class AuditRow:
    at: datetime
    kind: str  # start | task | timer | refusal | notification | act
    name: str
    element_id: str | None
    who: str | None  # the user's display name (None: the timer worker or the system)
    role: str | None
    data: list[tuple[str, str | Decimal]]  # (key, value): a text, or Decimal rupees for an amount
    clause: str | None
    corrected: bool = False  # a row of an act later corrected (webapp.services.cases.corrections)
    amended: str | None = None  # the corrigenda that amended this act's facts (webapp.services.cases.corrigenda)


def diagram_marks(workflow: Any) -> DiagramMarks:
    """The element ids of a loaded SpiffWorkflow instance by state (an element both completed and
    active, as in a loop, counts as active; the armed timer events count as waiting)."""
    done, active, waiting = set(), set(), set()
    for task in workflow.get_tasks():
        bpmn_id = getattr(task.task_spec, "bpmn_id", None)
        if not bpmn_id:
            continue
        if task.state == TaskState.COMPLETED:
            done.add(bpmn_id)
        elif task.state in (TaskState.READY, TaskState.STARTED):
            active.add(bpmn_id)
        elif task.state == TaskState.WAITING:
            waiting.add(bpmn_id)
    # an event-based gateway waits for its events: mark each armed timer event too
    waiting.update(timer.bpmn_id for timer in runtime.armed_timers(workflow))
    waiting -= active
    return DiagramMarks(sorted(done - active - waiting), sorted(active), sorted(waiting))


def next_timer(workflow: Any) -> NextTimer | None:
    """The earliest armed timer of the instance (element, name and due instant), or None."""
    timers = runtime.armed_timers(workflow)
    if not timers:
        return None
    first = timers[0]
    return NextTimer(first.bpmn_id, first.name or first.bpmn_id, first.due)


@lru_cache(maxsize=32)
def elements(bpmn_xml: str) -> dict[str, tuple[str, str]]:
    """Every element of a BPMN diagram that has an id: ``{element id: (its name, its documentation)}``.

    ``bpmn_xml``: the diagram's XML text (a process version's ``bpmn_xml``); the name is "" when the
    element has none, the documentation the texts of its ``bpmn:documentation`` children joined by a
    space ("" when none). Cached per diagram text (the result is shared: do not change it). Entities
    are not resolved and nothing is fetched. Raises lxml's ``XMLSyntaxError`` for text that is not XML
    (a deployed version always is).
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(bpmn_xml.encode("utf-8"), parser)
    found: dict[str, tuple[str, str]] = {}
    for element in root.iter():
        bpmn_id = element.get("id") if isinstance(element.tag, str) else None
        if not bpmn_id:
            continue
        docs = " ".join((d.text or "").strip() for d in element.findall(f"{{{BPMN_NS}}}documentation"))
        found[bpmn_id] = (element.get("name") or "", docs)
    return found


def clause_of(version: ProcessVersion, element_id: str | None) -> str | None:
    """The clause an element implements: its documentation up to the first colon
    (``Rule 130(b)(ii)``, ``reading``), or None for an unknown element or one without documentation."""
    if not element_id:
        return None
    docs = elements(version.bpmn_xml).get(element_id, ("", ""))[1]
    if not docs:
        return None
    head = docs.split(":", 1)[0].strip()
    return head or None


def parties(cf: CaseFile) -> list[Party]:
    """Everyone the case names, in the order they appear in it."""
    found: list[Party] = []

    def add(role: str, name: str | None, *facts: str) -> None:
        if not name:
            return
        for party in found:
            if party.role == role and party.name == name:
                party.facts.extend(facts)
                return
        found.append(Party(role, name, list(facts)))

    if cf.release:
        add("owner", cf.release.owner, "released_by_owner")
    for auction in cf.auctions:
        for bid in auction.bids:
            add("bidder", bid.bidder)
    if cf.sale:
        add("buyer", cf.sale.buyer, cf.sale.kind)
    for objection in cf.objections:
        add("objector", objection.objector, objection.decision or "pending")
    if cf.interim:
        add("objector", cf.interim.objector, "interim_delivery")
    for appeal in cf.appeals:
        add("appellant", appeal.appellant, appeal.decision or "pending")
    if cf.dispatch:
        add("receiving_officer", cf.dispatch.receiver, cf.dispatch.send_to)
    return found


def accounts(rows: list[LedgerEntry]) -> list[Account]:
    """The ledger by account: the Panchayat's three accounts first (always listed), then each
    party touched; every entry in or out with the running balance (in minus out)."""
    names = list(ledger.PANCHAYAT_ACCOUNTS)
    for entry in rows:
        for name in (entry.from_account, entry.to_account):
            if name not in names:
                names.append(name)
    result = []
    for name in names:
        balance, lines = ZERO, []
        for entry in rows:
            if entry.to_account == name:
                balance += entry.amount
                lines.append(AccountLine(entry, "in", balance))
            elif entry.from_account == name:
                balance -= entry.amount
                lines.append(AccountLine(entry, "out", balance))
        result.append(Account(name, lines, balance))
    return result


# Amounts recorded by the services themselves (not by a form): "Ledger entry reversed".
SERVICE_AMOUNTS = frozenset({"amount"})
NAMED = frozenset({"task"})  # history data holding a diagram element's name (a reassigned task)


@lru_cache(maxsize=32)
def _form_amounts(bpmn_xml: str, forms_json: str) -> dict[str, frozenset[str]]:
    """Element id -> the amount fields (:func:`.form_schema.amount_fields`) of the form its user task names."""
    return {element: frozenset(form_schema.amount_fields(schema)) for element, schema in _forms_of(bpmn_xml, forms_json).items()}


@lru_cache(maxsize=32)
def _form_choices(bpmn_xml: str, forms_json: str) -> dict[str, frozenset[str]]:
    """Element id -> the fields of its user task's form that take one of a list of values (``enum``:
    a decision, a choice), whose recorded values the history shows as the form shows its options."""
    return {element: frozenset(name for name, prop in (schema.get("properties") or {}).items()
                               if isinstance(prop, dict) and "enum" in prop)
            for element, schema in _forms_of(bpmn_xml, forms_json).items()}


def _forms_of(bpmn_xml: str, forms_json: str) -> dict[str, dict[str, Any]]:
    """Element id -> the JSON Schema of the form its user task names (tasks without a form left out)."""
    forms = json.loads(forms_json or "{}")
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(bpmn_xml.encode("utf-8"), parser)
    found: dict[str, dict[str, Any]] = {}
    for prop in root.iter():
        if not isinstance(prop.tag, str) or etree.QName(prop).localname != "property" \
                or prop.get("name") != FORM_PROPERTY:
            continue
        owner = prop.getparent()
        while owner is not None and not owner.get("id"):
            owner = owner.getparent()
        schema = forms.get(prop.get("value") or "")
        if owner is not None and isinstance(schema, dict):
            found[owner.get("id")] = schema
    return found


def _amounts(data: list[tuple[str, str]], keys: frozenset[str],
             choices: frozenset[str] = frozenset()) -> list[tuple[str, str | Decimal | Message]]:
    """``data`` with the values of ``keys`` as Decimal rupees (shown as ₹ by the ``datum`` filter),
    a value that is not a decimal number staying text; and the values of ``choices`` (a form's
    ``enum`` fields) as catalogue words (``not_proved`` -> "not proved" / "सिद्ध नहीं", as the form's
    options read)."""
    shown: list[tuple[str, str | Decimal | Message]] = []
    for key, value in data:
        if key in choices and isinstance(value, str) and re.fullmatch(r"[a-z]+(_[a-z]+)*", value):
            shown.append((key, M_(value.replace("_", " "))))
            continue
        if key in NAMED and isinstance(value, str):  # a task's name, as the diagram's catalogue entry
            shown.append((key, M_(value)))
            continue
        if key in keys:
            try:
                amount = Decimal(value)
            except InvalidOperation:
                amount = None
            if amount is not None and amount.is_finite():
                shown.append((key, amount))
                continue
        shown.append((key, value))
    return shown


# kept in a history row for the audit trail, not shown to officers: a correction's act name and
# instant and the roles it told (its message says the act and the day in the reader's language)
UNSHOWN = frozenset({"act_name", "act_at", "told"})


def _data(detail_json: str) -> list[tuple[str, str]]:
    try:
        detail = json.loads(detail_json or "{}")
    except ValueError:
        return []
    if not isinstance(detail, dict):
        return [("", str(detail))]
    if "message_i18n" in detail:  # a refusal: its message in the reader's language; the code is for programs
        detail["message"] = message_from_json(detail.pop("message_i18n"))
        detail.pop("code", None)
    shown = []
    for key, value in detail.items():
        if key in UNSHOWN or (key.endswith("_user_id") and key.removesuffix("_user_id") in detail):
            continue  # a person is shown by name (receiver: Kailash Meena), never by a user number
        if isinstance(value, list) and all(isinstance(item, (str, int)) for item in value):
            if not value:
                continue  # an empty list (no document cancelled, no entry reversed) says nothing
            value = ", ".join(str(item) for item in value)
        shown.append((str(key), value if isinstance(value, str) else "—" if value is None
                      else json.dumps(value, ensure_ascii=False)))
    return shown


def audit_trail(session: Session, case: Case, version: ProcessVersion) -> list[AuditRow]:
    """Every history row of the case in the order of :func:`cases.in_order` (time, and within a
    second the order written), with the acting officer's name and role, the data recorded and the
    clause of the element."""
    events = cases.history(session, case)
    user_ids = {e.actor_user_id for e in events if e.actor_user_id}
    names = {u.id: u.display_name for u in session.scalars(select(User).where(User.id.in_(user_ids)))} \
        if user_ids else {}
    rows = []
    named = elements(version.bpmn_xml)
    amounts = _form_amounts(version.bpmn_xml, version.forms_json)
    choices = _form_choices(version.bpmn_xml, version.forms_json)
    # the history rows of each corrected act: above its mark, up to its last row (webapp.services.running.acts)
    undone = [(acts.marks(act)["event"], act.last_event_id or 0) for act in acts.of_case(session, case.id)
              if act.corrected_at is not None]
    amended = _amended_rows(session, case, events)
    for event in events:
        role = (event.actor_role or "").replace(",", ", ") or None
        name = event.name
        if event.kind == "refusal" and named.get(name, ("", ""))[0]:
            name = named[name][0]  # an act by element id (the API, the simulator): the task's name
        rows.append(AuditRow(at=event.at, kind=event.kind, name=name, element_id=event.element_id,
                             who=names.get(event.actor_user_id) if event.actor_user_id is not None else None, role=role,
                             data=_amounts(_data(event.detail_json), amounts.get(event.element_id or "", SERVICE_AMOUNTS),
                                           choices.get(event.element_id or "", frozenset())),
                             clause=clause_of(version, event.element_id),
                             corrected=event.kind in ("task", "act", "document") and
                             any(low < event.id <= high for low, high in undone),
                             amended=amended.get(event.id)))
    return rows


def _amended_rows(session: Session, case: Case, events: list[CaseEvent]) -> dict[int, str]:
    """The history rows whose facts corrigenda amended (the task row of the act, or the opening
    record's row), by id: the corrigenda's numbers."""
    found: dict[int, list[str]] = {}
    for event in events:
        if event.kind != "corrigendum":
            continue
        detail = json.loads(event.detail_json or "{}")
        if detail.get("act") == "opening":
            target = next((e.id for e in events if e.kind == "start"), None)
        else:
            act = session.get(CaseAct, detail.get("act")) if isinstance(detail.get("act"), int) else None
            target = None if act is None else next(
                (e.id for e in events if e.kind == "task" and acts.marks(act)["event"] < e.id <= (act.last_event_id or 0)
                 and e.element_id == act.element_id), None)
        if target is not None:
            found.setdefault(target, []).append(str(detail.get("number", "")))
    return {key: ", ".join(numbers) for key, numbers in found.items()}
