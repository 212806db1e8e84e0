"""Who may and how much: the checks an officer's form must pass before its task runs.

Each check takes the case file, the submitted form (already valid against its JSON Schema) and
the instant of the act, and returns the cleaned form (amounts as ``Decimal``) or raises
:class:`Refused` / :class:`DeadlinePassed` with a message naming the problem (and the last day).
Deadlines are checked here, in Python, at the act's exact instant (RULE130.md, "Time"), against
the due instants of the diagram's own timers (recorded in ``case_file.timers``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from referencing.exceptions import Unresolvable
from sqlalchemy.orm import Session

from .. import fees, legal_time, textguard
from ..casefile import CaseFile
from ..deadlines import appeal_last_day
from ..digits import ascii_digits
from ..engine import conditions, forms
from ..errors import DeadlinePassed, Refused
from ..i18n import M_, N_, OR, format_rupees, message_list
from . import amounts, users
from .amounts import parse_amount

Check = Callable[[Session, CaseFile, dict[str, Any], datetime], dict[str, Any]]
CHECKS: dict[str, Check] = {}


def check(form_key: str) -> Callable[[Check], Check]:
    """Register the decorated function as the rule check of form ``form_key`` (see :func:`clean`)."""
    def register(fn: Check) -> Check:
        CHECKS[form_key] = fn
        return fn
    return register


def fmt_day(day: date) -> str:
    return day.isoformat()


def validate_schema(schema: dict[str, Any], data: dict[str, Any]) -> None:
    """Validate ``data`` against the form's JSON Schema, fetching nothing and matching patterns in
    linear time (:func:`webapp.engine.forms.validator`).

    Raises:
        Refused: with one message per field (``field_errors``); or, for a form deployed before
            deploy refused it, naming the reference outside the form or the pattern that cannot be
            checked in linear time (nothing fetched, nothing saved).
    """
    try:
        errors = sorted(forms.validator(schema).iter_errors(data), key=lambda e: list(e.path))
    except Unresolvable as unresolvable:
        raise Refused(M_("the form refers to %(ref)s outside itself, which is never fetched; nothing was saved. "
                         "An administrator must deploy a corrected form.",
                         ref=str(getattr(unresolvable, "ref", "") or unresolvable))) from None
    except forms.PatternRefused as refused:
        raise Refused(M_("the form has a pattern that cannot be checked in linear time (%(detail)s); nothing was "
                         "saved. An administrator must deploy a corrected form.", detail=str(refused))) from None
    if not errors:
        return
    check_conditions(schema, data)  # an if/then the form states is named in words, not jsonschema's
    field_errors: dict[str, Any] = {}
    for error in errors:
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else "?"
            field_errors[missing] = M_("this field is required")
        elif error.validator is None and error.validator_value is None and error.path:
            # a ``false`` subschema (a field an if/then/else of another shape forbids here)
            name = ".".join(str(p) for p in error.path)
            title = schema.get("properties", {}).get(name, {}).get("title")
            field_errors.setdefault(name, M_("%(title)s: %(message)s", title=M_(title) if title else name,
                                             message=M_("this field does not apply to the choices made; leave it "
                                                        "empty")))
        elif error.validator == "additionalProperties":
            known = set(schema.get("properties", {}))
            extra = sorted(str(k) for k in (error.instance or {}) if k not in known)
            field_errors["_form"] = M_("the form has no field %(unknown)s", unknown=", ".join(extra))
        else:
            name = ".".join(str(p) for p in error.path) or "_form"
            title = schema.get("properties", {}).get(name, {}).get("title")
            message = _schema_message(error)
            field_errors.setdefault(name, M_("%(title)s: %(message)s", title=M_(title) if title else name,
                                             message=message) if name != "_form" else message)
    raise Refused(M_("the form has errors: %(summary)s", summary=message_list(list(field_errors.values()), "; ")),
                  field_errors)


def _choice_words(condition: conditions.Condition) -> Any:
    return message_list([M_(value.replace("_", " ")) for value in condition.values], M_(OR))


def check_conditions(schema: dict[str, Any], data: dict[str, Any]) -> None:
    """Refuse ``data`` where a field that applies only for some choice of another field (the
    form's ``if``/``then``/``else``: :mod:`webapp.engine.conditions`) is missing for that choice or
    given for another, naming the field, its control and the choice, e.g. "Security for interim
    delivery (₹): required when Decision is “interim delivery”". Nothing else is checked here.

    Raises:
        Refused: with one message per such field (``field_errors``).
    """
    wrong = conditions.broken(schema, data)
    if not wrong:
        return
    properties = schema.get("properties", {})
    field_errors: dict[str, Any] = {}
    summary = []
    for name, (kind, condition) in wrong.items():
        control = M_(properties.get(condition.control, {}).get("title") or condition.control.replace("_", " "))
        if kind == "missing":
            field_errors[name] = M_("required when %(control)s is “%(choice)s”", control=control,
                                    choice=_choice_words(condition))
        else:
            field_errors[name] = M_("only when %(control)s is “%(choice)s”; leave it empty", control=control,
                                    choice=_choice_words(condition))
        title = properties.get(name, {}).get("title")
        summary.append(M_("%(title)s: %(message)s", title=M_(title) if title else name, message=field_errors[name]))
    raise Refused(M_("the form has errors: %(summary)s", summary=message_list(summary, "; ")), field_errors)


KINDS = {"integer": N_("a whole number"), "number": N_("a number"), "string": N_("text"),
         "boolean": N_("yes or no"), "object": N_("a group of fields"), "array": N_("a list")}


def _schema_message(error: Any) -> Any:
    """A JSON Schema validation error (jsonschema's English) as a catalogue message."""
    if error.validator == "pattern":
        return M_("give an amount in rupees with at most two decimals, e.g. 1200.50")
    if error.validator == "enum":
        return M_("choose one of: %(choices)s", choices=message_list([M_(str(v).replace("_", " "))
                                                                      for v in error.validator_value]))
    if error.validator == "minimum":
        return M_("%(value)s is below the minimum of %(limit)s", value=error.instance, limit=error.validator_value)
    if error.validator == "maximum":
        return M_("%(value)s is above the maximum of %(limit)s", value=error.instance, limit=error.validator_value)
    if error.validator == "type":
        kind = error.validator_value if isinstance(error.validator_value, str) else "string"
        return M_("%(value)s is not %(kind)s", value=repr(error.instance), kind=M_(KINDS.get(kind, kind)))
    if error.validator == "maxLength":
        return M_("too long: at most %(num)s characters", num=error.validator_value)
    if error.validator == "minLength":
        return M_("too short: at least %(num)s characters", num=error.validator_value)
    return M_("this value is not accepted (%(detail)s)", detail=error.message)


def clean(session: Session, form_key: str, schema: dict[str, Any], cf: CaseFile, data: dict[str, Any],
          at: datetime) -> dict[str, Any]:
    """Fill in what a field left out means (:func:`omitted_filled`), make the digits of numbers,
    amounts and dates ASCII (:func:`typed_digits`), then check required fields, then the fields
    that apply only for some choice (the form's ``if``/``then``: :func:`check_conditions`), then
    the rule checks, then the schema (the rule messages are the clearer ones).

    Returns:
        the cleaned form to store in the task's data.
    Raises:
        Refused, DeadlinePassed.
    """
    properties = schema.get("properties", {})
    data = typed_digits(schema, omitted_filled(form_key, schema, cf, data or {}, at))
    for name, value in data.items():
        textguard.check(value, name, M_(properties.get(name, {}).get("title", name)))
    # a value of spaces or of invisible characters alone (zero-width space...) is no value
    data = {k: v for k, v in (data or {}).items() if not textguard.is_blank(v)}
    for name, value in data.items():
        if name in properties and not is_multiline(properties[name]):
            textguard.check_one_line(value, name, M_(properties[name].get("title", name)))
    unknown = sorted(set(data) - set(schema.get("properties", {})))
    if unknown:
        raise Refused(M_("the form has no field %(unknown)s", unknown=', '.join(unknown)), {name: M_("unknown field") for name in unknown})
    missing = [name for name in schema.get("required", []) if name not in data]
    # every amount that is not one is named with the missing fields, in one answer (each form
    # error is listed at the top of the page and beside its field: webapp/templates/officer/task.html)
    bad: dict[str, Any] = {}
    for name in sorted(amount_fields(schema) & set(data)):
        try:
            amounts.parse_amount(data[name], name, M_(properties[name].get("title", name)))
        except Refused as refused:
            bad[name] = refused
    if missing:
        titles = [schema.get("properties", {}).get(name, {}).get("title", name) for name in missing]
        errors: dict[str, str] = {name: M_("this field is required") for name in missing}
        errors.update({name: refused.field_errors.get(name, refused.message) for name, refused in bad.items()})
        message = M_("the form has errors: %(fields)s: this field is required",
                     fields=message_list([M_(title) for title in titles]))
        if bad:
            message = M_("%(first)s; %(more)s", first=message, more=message_list([r.message for r in bad.values()], "; "))
        raise Refused(message, errors)
    check_conditions(schema, data)
    if len(bad) > 1:
        raise Refused(message_list([r.message for r in bad.values()], "; "),
                      {name: refused.field_errors.get(name, refused.message) for name, refused in bad.items()})
    prepared = {k: (str(v) if k in amount_fields(schema) and not isinstance(v, (float, bool)) else v)
                for k, v in data.items()}
    rule = CHECKS.get(form_key)
    cleaned = rule(session, cf, dict(prepared), at) if rule else dict(prepared)
    validate_schema(schema, {k: (f"{v:.2f}" if hasattr(v, "quantize") else v) for k, v in cleaned.items()
                             if k in schema.get("properties", {})})
    return cleaned


# What a field left out of a form means, for a form sent without it (the API, the simulator): the
# value the rule gives it at the act's instant. A page sends every field it shows, so an officer who
# leaves one empty has given no value, and the form's ``required`` refuses it.
OMITTED: dict[str, dict[str, Callable[[CaseFile, datetime], Any]]] = {
    # the owner handed over exactly the amount due (docs/api.md, ut_release)
    "release_by_owner": {"amount_received": lambda cf, at: f"{release_due(cf, at):.2f}"},
}


def omitted_filled(form_key: str, schema: dict[str, Any], cf: CaseFile, data: dict[str, Any],
                   at: datetime) -> dict[str, Any]:
    """``data`` with each field of :data:`OMITTED` that the form has and ``data`` leaves out (the
    key absent, not an empty value) filled with what its omission means at instant ``at``: for the
    release, the amount received is exactly F + C (:func:`release_due`, rupees). A form deployed
    before the field existed is left as it is."""
    properties = schema.get("properties") or {}
    filled = dict(data)
    for name, value_at in OMITTED.get(form_key, {}).items():
        if name in properties and name not in filled:
            filled[name] = value_at(cf, at)
    return filled


DIGIT_FORMATS = ("date", "date-time", "time")  # JSON Schema formats written with digits


def takes_digits(prop: dict[str, Any]) -> bool:
    """Whether the form field ``prop`` (a JSON Schema property) is written in digits: a whole
    number or number, an amount (a field with a ``pattern``: :func:`amount_fields`) or a date,
    date and time or time (``format``)."""
    return (prop.get("type") in ("integer", "number") or "pattern" in prop
            or prop.get("format") in DIGIT_FORMATS)


def typed_digits(schema: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the Devanagari digits of each field written in digits (:func:`takes_digits`)
    made ASCII (webapp.digits), before any check: "३०" days and "१२००" rupees, from a page or the
    API, are read as 30 and 1200. Other fields (names, reasons) are returned unchanged."""
    properties = schema.get("properties") or {}
    return {name: (ascii_digits(value) if isinstance(properties.get(name), dict) and takes_digits(properties[name])
                   else value) for name, value in data.items()}


MULTILINE_LENGTH = 200  # a text field of a form that allows more characters is a text area


def is_multiline(prop: dict[str, Any]) -> bool:
    """True when the form field ``prop`` (a JSON Schema property) is a text area (a reason, remarks:
    free text that may have line breaks): a string without choices whose ``maxLength`` is over
    :data:`MULTILINE_LENGTH`. Any other text field (a name, a user name) is one line."""
    return (prop.get("type") == "string" and "enum" not in prop
            and int(prop.get("maxLength", MULTILINE_LENGTH)) > MULTILINE_LENGTH)


def amount_fields(schema: dict[str, Any]) -> set[str]:
    """The names of the rupee amounts of a form: the top-level fields of the JSON Schema ``schema``
    that carry a ``pattern`` (every amount is a decimal text ``^[0-9]+(\\.[0-9]{1,2})?$`` of rupees;
    no other field of the process library has a pattern). Empty for a schema without properties."""
    return {name for name, prop in schema.get("properties", {}).items() if "pattern" in prop}


def _deadline(cf: CaseFile, timer_id: str, at: datetime, what: str) -> None:
    due = cf.timers.get(timer_id)
    if due and at >= legal_time.parse_instant(due):
        last = legal_time.day_before_instant(due, cf.timezone)
        raise DeadlinePassed(M_("%(what)s ended on %(day)s", what=what, day=last),
                             last_day=fmt_day(last))


def _require_text(data: dict[str, Any], field: str, label: str) -> str:
    raw = data.get(field)
    if raw is not None and not isinstance(raw, str):
        raise Refused(M_("%(label)s must be text", label=label), {field: M_("not text")})
    value = (raw or "").strip()
    if textguard.is_blank(value):
        raise Refused(M_("%(label)s is required", label=label), {field: M_("this field is required")})
    textguard.check_one_line(value, field, label)
    if len(value) > 200:
        raise Refused(M_("%(label)s is longer than 200 characters", label=label), {field: M_("too long")})
    return value


def release_due(cf: CaseFile, at: datetime) -> Decimal:
    """The total the owner pays to take the lot back at instant ``at``: the fine F plus the pound's
    feeding C up to the act's local day (both counted), as :func:`webapp.fees.fine_and_feeding`
    computes it (reading: release within the 3-day window). Rupees, Decimal with two decimals."""
    return fees.fine_and_feeding(cf, legal_time.local_day(at, cf.timezone))


@check("release_by_owner")
def _release(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    """The owner's name, the release window, and the amount received (``amount_received``, rupees).

    The amount received must be at least :func:`release_due`; more is accepted and the change
    returned to the owner is printed on the receipt (the ledger takes exactly the amount due:
    docs/RULE130.md, "Release: the amount received"). The form requires it: a page refuses it
    empty; left out of the form (the API, the simulator) it is exactly the amount due
    (:data:`OMITTED`, filled in by :func:`clean`). A form deployed before the field existed has no
    ``amount_received``; the release then records none.

    Raises:
        Refused: less than is due, naming both amounts, at the field ``amount_received``.
        DeadlinePassed: after the release window, naming its last day.
    """
    data["owner"] = _require_text(data, "owner", M_("the owner's name"))
    _deadline(cf, "bt_release_window", at, M_("the release window"))
    if "amount_received" in data:
        received = parse_amount(data.get("amount_received"), "amount_received", M_("the amount received"))
        due = release_due(cf, at)
        if received < due:
            message = M_("%(due)s is due; %(received)s was entered", due=format_rupees(due),
                         received=format_rupees(received))
            raise Refused(M_("the amount received is less than the fine and feeding: %(detail)s", detail=message),
                          {"amount_received": message})
        data["amount_received"] = received
    return data


@check("publish_notice")
def _publish(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    try:
        days = int(str(data.get("objection_period_days", "")).strip())
    except ValueError:
        raise Refused(M_("the objection period must be a whole number of days"),
                      {"objection_period_days": M_("not a whole number")}) from None
    if days < 30:
        raise Refused(M_("the objection period must be at least 30 days (Rule 130(a)); %(days)s was given", days=days),
                      {"objection_period_days": M_("at least 30 days")})
    if days > 365:
        raise Refused(M_("the objection period cannot be more than 365 days"), {"objection_period_days": M_("too long")})
    data["objection_period_days"] = days
    data["full_price"] = parse_amount(data.get("full_price"), "full_price", M_("the full price"), positive=True)
    if not cf.living_animals():
        raise Refused(M_("no animal is left in the pound to notify"))
    return data


@check("record_bid")
def _bid(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    data["bidder"] = _require_text(data, "bidder", M_("the bidder's name"))
    data["amount"] = parse_amount(data.get("amount"), "amount", M_("the bid"), positive=True)
    auction = cf.auction
    if auction is None:
        raise Refused(M_("no conditional auction is open for this case"))
    if cf.interim is not None and auction.round == 1:
        raise Refused(M_("the conditional auction was withdrawn when the cattle were delivered on security "
                      "(Rule 130(c) Explanation); no bid can be taken"))
    if auction.status == "withdrawn" or (cf.owner_proved is None and any(o.decision == "proved" for o in cf.objections)
                                         and auction.status == "open" and cf.sale is None):
        raise Refused(M_("the conditional auction was withdrawn: an objector proved the cattle to be his own "
                      "(Rule 130(c)); no bid can be taken"))
    if auction.status != "open":
        closed_on = auction.closed_on or auction.last_day  # a full-price bid closes it early (Note to Rule 130(b))
        raise DeadlinePassed(M_("the auction closed on %(day)s; no bid can be taken", day=closed_on),
                             last_day=fmt_day(min(closed_on, auction.last_day)))
    if not legal_time.is_within(at, auction.last_day, cf.timezone):
        raise DeadlinePassed(M_("the auction closed at the end of %(day)s; no bid can be taken", day=auction.last_day),
                             last_day=fmt_day(auction.last_day))
    if not cf.living_animals():  # the auction covers the living (RULE130.md "Money")
        raise Refused(M_("no animal of the lot is alive in the pound (each died or escaped); no bid can be taken"))
    return data


@check("decide_unsold")
def _unsold(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    choice = data.get("choice")
    auction = cf.auctions[-1] if cf.auctions else None
    if auction is not None and auction.status == "open" and cf.sale is None:
        # the proviso applies to cattle the auction left unsold: not before its third day ends
        raise Refused(M_("the conditional auction is still open; its last day is %(day)s", day=auction.last_day),
                      {"choice": M_("auction still open")})
    if choice in ("accept_highest_bid", "neighbouring_panchayat", "cattle_fair") and not cf.living_animals():
        raise Refused(M_("no animal of the lot is alive in the pound (each died or escaped); the cattle cannot be "
                         "sold or sent for sale"), {"choice": M_("no living animal")})
    if (cf.interim is not None and cf.interim.returned_on is None) or (auction is not None and auction.status == "withdrawn"):
        raise Refused(_unsold_withdrawn(cf) or M_("the sale of the unsold cattle was withdrawn on %(day)s",
                                                  day=auction.closed_on if auction else None),
                      {"choice": M_("sale withdrawn")})
    if choice == "accept_highest_bid":
        if cf.auction is None or not cf.auction.bids:
            raise Refused(M_("there is no bid to accept; send the cattle for sale instead"), {"choice": M_("no bid")})
        if not textguard.is_blank(data.get("receiver")):  # the officer may have meant to send them away
            raise Refused(M_("a receiving officer is named only when the cattle are sent for sale; to accept the "
                             "highest bid, leave the receiving officer empty"),
                          {"receiver": M_("only when the cattle are sent for sale")})
        data.pop("receiver", None)
        return data
    if choice in ("neighbouring_panchayat", "cattle_fair"):
        receiver = _require_text(data, "receiver", M_("the receiving officer"))
        # the users the simulator made are receiving officers of training Panchayats' cases only
        user = users.by_display_name(session, receiver, "receiving_officer",
                                     include_simulated=users.is_training_case(session, cf.case_number))
        if user is None:
            raise Refused(M_("no receiving officer is called %(receiver)s", receiver=receiver), {"receiver": M_("unknown receiving officer")})
        data["receiver"], data["receiver_user_id"] = user.display_name, user.id
    return data


@check("record_remittance")
def _remittance(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    data["proceeds"] = parse_amount(data.get("proceeds"), "proceeds", M_("the gross sale price"))
    data["expenses"] = parse_amount(data.get("expenses"), "expenses", M_("the expenses of sale"))
    if data["expenses"] > data["proceeds"]:
        raise Refused(M_("the expenses of sale (%(expenses)s) cannot exceed the sale price (%(proceeds)s)", expenses=data['expenses'], proceeds=data['proceeds']),
                      {"expenses": M_("more than the sale price")})
    return data


@check("decide_objection")
def _objection(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    decision = data.get("decision")
    if decision == "proved" and any(o.decision == "proved" for o in cf.objections):
        other = next(o.objector for o in cf.objections if o.decision == "proved")
        raise Refused(M_("the ownership of %(other)s is already proved; at most one claim can be proved", other=other),
                      {"decision": M_("another claim is proved")})
    if decision == "interim_delivery":
        if textguard.is_blank(data.get("security")):
            raise Refused(M_("give the security on which the cattle are delivered (Rule 130(c) Explanation)"),
                          {"security": M_("required for interim delivery")})
        data["security"] = parse_amount(data.get("security"), "security", M_("the security"), positive=True)
        proved = next((o.objector for o in cf.objections if o.decision == "proved"), None)
        if proved is not None:
            raise Refused(M_("the ownership of %(other)s is already proved; the cattle cannot be delivered on "
                             "security to another claimant", other=proved),
                          {"decision": M_("another claim is proved")})
        if cf.interim is not None:
            raise Refused(M_("the cattle were already delivered on security to %(objector)s", objector=cf.interim.objector))
        if cf.sale is not None:
            raise Refused(M_("the cattle were sold in the conditional auction; interim delivery is only possible "
                          "while they are in the pound"))
        if cf.dispatch is not None:
            raise Refused(M_("the cattle were sent for sale; interim delivery is only possible while they are in the pound"))
    else:
        if not textguard.is_blank(data.get("security")):  # the officer may have meant interim delivery
            raise Refused(M_("a security is taken only when the cattle are delivered on security (Rule 130(c) "
                             "Explanation); for this decision, leave the security empty"),
                          {"security": M_("only for delivery on security")})
        data.pop("security", None)
    return data


@check("pay_feeding_charges")
def _feeding(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    data["amount"] = parse_amount(data.get("amount"), "amount", M_("the feeding charges"))
    limit = fees.pound_feeding(cf, legal_time.local_day(at, cf.timezone))
    if data["amount"] > limit:
        raise Refused(M_("the feeding charges cannot exceed the pound's feeding expenses C = %(limit)s (Rule 130(d))", limit=limit),
                      {"amount": M_("at most %(limit)s", limit=limit)})
    return data


@check("return_by_objector")
def _return_by_objector(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    _deadline(cf, "bt_return_deadline", at, M_("the period to return the cattle"))
    return data


# -- why a task is not open ------------------------------------------------------------------------

def _unsold_withdrawn(cf: CaseFile) -> Any | None:
    """Why the sale of the cattle an auction left unsold was withdrawn (RULE130.md (b) proviso and (c)
    Explanation, readings): delivered on security, or an objector's ownership proved while they are
    in the pound; None when neither holds (the caller names the day it was withdrawn)."""
    if cf.interim is not None and cf.interim.returned_on is None:
        return M_("the cattle were delivered to %(name)s on security on %(day)s; they cannot be sold or sent for sale",
                  name=cf.interim.objector, day=cf.interim.day)
    proved = next((o for o in cf.objections if o.decision == "proved"), None)
    if proved is not None and cf.sale is None and cf.dispatch is None:
        return M_("the ownership of %(name)s was proved on %(day)s; the unsold cattle go to the owner and are not "
                  "sold or sent for sale", name=proved.objector, day=proved.decided_on)
    return None


def why_not_open(element_id: str, cf: CaseFile, at: datetime, objector: str | None = None) -> Any | None:
    """Why the officer's task ``element_id`` (e.g. ``ut_order_stand``) is not open in the case at
    instant ``at`` — for "Decide ownership claim", the one of ``objector``'s claim — from the case
    file: a message naming what must happen first and, where a period is still running, its last
    day (a local date), as RULE130.md asks of every refusal. None when the case file gives no
    reason (the caller says only that the task is not open).
    """
    today = legal_time.local_day(at, cf.timezone)
    notice, auction = cf.notice, (cf.auctions[-1] if cf.auctions else None)
    if element_id == "ut_publish_notice":
        if notice is not None:
            return M_("the notice was already published on %(day)s", day=notice.published_on)
        release = cf.timers.get("bt_release_window")
        if release and at < legal_time.parse_instant(release):
            return M_("the notice is published after the release window, whose last day is %(day)s",
                      day=legal_time.day_before_instant(release, cf.timezone))
    elif element_id == "ut_record_bid":
        if notice is None:
            return M_("no notice has been published yet; bids are taken in the conditional auction opened with it")
    elif element_id == "ut_order_stand":
        if notice is None:
            return M_("no notice has been published yet")
        if cf.order_auction_stand_on is not None:
            return M_("the order was already made on %(day)s", day=cf.order_auction_stand_on)
        if cf.objections:
            return M_("an objection was filed; the Panchayat decides the ownership claim instead (Rule 130(c))")
        if today <= notice.last_day:
            return M_("the order is made after the objection period, whose last day is %(day)s",
                      day=notice.last_day)
        if auction is not None and auction.status == "open":
            return M_("the conditional auction is still open; its last day is %(day)s", day=auction.last_day)
        if auction is not None and auction.status == "unsold" and cf.dispatch is None and cf.sale is None:
            return M_("the auction closed without a sale; the sarpanch first decides on the unsold cattle "
                      "(accept the highest bid or send them for sale)")
    elif element_id == "ut_decide_objection" and objector is not None:
        claim = cf.objection_of(objector)
        if claim is None:
            return M_("no objection by %(name)s is on the file", name=objector)
        if claim.decision is not None:
            return M_("the claim of %(name)s was already decided on %(day)s (%(decision)s)", name=claim.objector,
                      day=claim.decided_on, decision=M_(claim.decision.replace("_", " ")))
    elif element_id == "ut_decide_unsold":
        if auction is None:
            return M_("no conditional auction has been held yet")
        if auction.status == "open":
            return M_("the conditional auction is still open; its last day is %(day)s", day=auction.last_day)
        if cf.sale is not None:
            return M_("the cattle were sold on %(day)s", day=cf.sale.day)
        if auction.status == "withdrawn":
            return _unsold_withdrawn(cf) or M_("the sale of the unsold cattle was withdrawn on %(day)s",
                                              day=auction.closed_on)
    elif element_id == "ut_decide_appeal":
        if cf.pending_appeal() is None:
            return M_("no appeal is pending")
        if notice is not None and today <= notice.last_day:
            return M_("an appeal is decided once the objection period has ended (a later objection may still change "
                      "the Panchayat's decision); its last day is %(day)s", day=notice.last_day)
        undecided = [claim.objector for claim in cf.objections if claim.decision is None]
        if undecided:
            return M_("an appeal is decided once the Panchayat has decided every objection filed (its decision "
                      "is complete only then); still to be decided: the claim of %(names)s",
                      names=message_list(undecided))
    elif element_id == "ut_pay_feeding_charges":
        if cf.delivered_on is None:
            return M_("the feeding charges are paid after the cattle are delivered to the owner")
    elif element_id in ("ut_return_by_buyer", "ut_deliver_to_objector", "ut_return_by_objector"):
        if cf.final_on is None:
            return _not_final_yet(cf, today)
        if element_id == "ut_deliver_to_objector" and not cf.owner_proved:
            return M_("no objector's ownership stands proved; the cattle are delivered only to a proved owner")
        if element_id == "ut_deliver_to_objector" and cf.dispatch is not None and cf.dispatch.remitted_on is None:
            return M_("the cattle were sent to %(receiver)s for sale; the owner is paid the remittance less fine and "
                      "feeding once %(receiver)s records the sale and remittance", receiver=cf.dispatch.receiver)
        if element_id == "ut_deliver_to_objector" and cf.sale is not None and cf.sale.returned_on is None \
                and cf.owner_proved:
            return M_("the buyer %(buyer)s has not yet returned the cattle; taking them back from the buyer comes "
                      "first", buyer=cf.sale.buyer)
        if element_id == "ut_return_by_objector" and cf.interim is not None and cf.owner_proved \
                and cf.winning_objector == cf.interim.objector:
            return M_("the claim of %(name)s is proved; the cattle stay with %(name)s", name=cf.interim.objector)
        held = cf.held_by_another_objector()
        if element_id == "ut_deliver_to_objector" and held is not None and held.returned_on is None \
                and not held.forfeited:
            return M_("the cattle are with %(holder)s on interim delivery and come back first; the period to "
                      "return them ends on %(day)s", holder=held.objector,
                      day=cf.final_on + timedelta(days=cf.return_period_days))
    return None


def _not_final_yet(cf: CaseFile, today: date) -> Any | None:
    """Why the Panchayat's decision is not final on ``today``: an appeal to decide, or the later of
    the appeal window and the objection period still running (RULE130.md (d), (e) and the appeal
    proviso), named with its last day."""
    if cf.appeals and cf.appeals[-1].decision is None:
        return M_("an appeal against the decision is pending")

    running = []
    appeal_last = appeal_last_day(cf)
    if appeal_last is not None:
        running.append((appeal_last, M_("the decision becomes final after the appeal period, whose last day is %(day)s",
                                        day=appeal_last)))
    if cf.notice is not None:
        running.append((cf.notice.last_day,
                        M_("the decision becomes final after the objection period, whose last day is %(day)s",
                           day=cf.notice.last_day)))
    running = [(day, why) for day, why in running if today <= day]
    if running:
        return max(running, key=lambda item: item[0])[1]
    if cf.decision_on is None:
        return M_("the Panchayat has not decided the case yet")
    return None
