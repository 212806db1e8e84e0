"""Who may and how much: the checks an officer's form must pass before its task runs.

Each check takes the case file, the submitted form (already valid against its JSON Schema) and
the instant of the act, and returns the cleaned form (amounts as ``Decimal``) or raises
:class:`Refused` / :class:`DeadlinePassed` with a message naming the problem (and the last day).
Deadlines are checked here, in Python, at the act's exact instant (RULE130.md, "Time"), against
the due instants of the diagram's own timers (recorded in ``case_file.timers``). :func:`clean` runs
them with what the form's JSON Schema asks (:mod:`webapp.services.tasks.form_schema`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from webapp.errors import DeadlinePassed, Refused
from webapp.i18n import M_, Message, message_list
from webapp.i18n.formats import format_rupees
from webapp.services.money import amounts
from webapp.services.money.amounts import parse_amount
from webapp.services.people import users
from webapp.services.tasks.form_schema import (
    amount_fields,
    check_conditions,
    is_multiline,
    typed_digits,
    validate_schema,
)
from webapp.services.tasks.why_not_open import unsold_withdrawn
from webapp.values import fees, legal_time, textguard
from webapp.values.casefile import CaseFile

# next steps of the refusals below (webapp.errors.Rule130Error.then)
AUCTION_OVER = M_("Nothing more can be done in this auction: its period has ended. The sarpanch decides what "
                  "becomes of the cattle next.")
ON_MERITS = M_("The sarpanch decides the claim on its merits instead (proved or not proved); against the decision, "
               "any person may appeal.")

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


def clean(session: Session, form_key: str, schema: dict[str, Any], cf: CaseFile, data: dict[str, Any],
          at: datetime) -> dict[str, Any]:
    """Fill in what a field left out means (:func:`omitted_filled`), make the digits of numbers,
    amounts and dates ASCII (:func:`~webapp.services.tasks.form_schema.typed_digits`), then check required
    fields, then the fields that apply only for some choice (the form's ``if``/``then``:
    :func:`~webapp.services.tasks.form_schema.check_conditions`), then the rule checks, then the schema
    (the rule messages are the clearer ones).

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


def _deadline(cf: CaseFile, timer_id: str, at: datetime, what: str) -> None:
    due = cf.timers.get(timer_id)
    if due and at >= legal_time.parse_instant(due):
        last = legal_time.day_before_instant(due, cf.timezone)
        raise DeadlinePassed(M_("%(what)s ended on %(day)s", what=what, day=last),
                             last_day=fmt_day(last),
                             then=M_("Nothing more can be done for this act: its period has ended. The case page "
                                     "shows what is due now."))


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
    feeding C up to the act's local day (both counted), as :func:`webapp.values.fees.fine_and_feeding`
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
        raise Refused(M_("no animal is left in the pound to notify"),
                      then=M_("No notice is needed: no animal is left in the pound. The case page shows what is due "
                              "now."))
    return data


BID_MULTIPLE = 3  # a bid this many times the full price or more is most likely a digit too many


def bid_warnings(cf: CaseFile, amount: Decimal) -> list[Message]:
    """What the check step of a bid of ``amount`` rupees warns of before Confirm (the bid is still
    lawful: the Panchayat takes it, the officer may have mistyped it): a bid equal to or lower than
    an earlier bid of the current auction, and a bid :data:`BID_MULTIPLE` or more times the full
    price of the notice (Note to Rule 130(b): a bid at the full price closes the auction at once)."""
    found: list[Message] = []
    auction = cf.auction
    earlier = auction.highest_bid() if auction is not None else None
    if earlier is not None and amount <= earlier.amount:
        found.append(M_("this bid of %(amount)s is not higher than the earlier bid of %(earlier)s by %(bidder)s: "
                        "check the amount", amount=format_rupees(amount), earlier=format_rupees(earlier.amount),
                        bidder=earlier.bidder))
    full = cf.notice.full_price if cf.notice is not None else None
    if full is not None and full > 0 and amount >= full * BID_MULTIPLE:
        found.append(M_("this bid of %(amount)s is %(times)s times the full price of %(full)s: check the amount "
                        "(a digit too many?)", amount=format_rupees(amount), full=format_rupees(full),
                        times=(amount / full).quantize(Decimal("0.1"))))
    return found


@check("record_bid")
def _bid(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    data["bidder"] = _require_text(data, "bidder", M_("the bidder's name"))
    data["amount"] = parse_amount(data.get("amount"), "amount", M_("the bid"), positive=True)
    auction = cf.auction
    if auction is None:
        raise Refused(M_("no conditional auction is open for this case"),
                      then=M_("The secretary opens the conditional auction with the notice; the case page shows what "
                              "is due now."))
    if cf.interim is not None and auction.round == 1:
        raise Refused(M_("the conditional auction was withdrawn when the cattle were delivered on security "
                      "(Rule 130(c) Explanation); no bid can be taken"),
                      then=M_("Nothing more can be done in the auction: the cattle are with the objector on security "
                              "until the sarpanch decides the claim."))
    if auction.status == "withdrawn" or (cf.owner_proved is None and any(o.decision == "proved" for o in cf.objections)
                                         and auction.status == "open" and cf.sale is None):
        raise Refused(M_("the conditional auction was withdrawn: an objector proved the cattle to be his own "
                      "(Rule 130(c)); no bid can be taken"),
                      then=M_("Nothing more can be done in the auction: the cattle go to the owner who proved them; "
                              "against that decision, any person may appeal."))
    if auction.status != "open":
        closed_on = auction.closed_on or auction.last_day  # a full-price bid closes it early (Note to Rule 130(b))
        raise DeadlinePassed(M_("the auction closed on %(day)s; no bid can be taken", day=closed_on),
                             last_day=fmt_day(min(closed_on, auction.last_day)), then=AUCTION_OVER)
    if not legal_time.is_within(at, auction.last_day, cf.timezone):
        raise DeadlinePassed(M_("the auction closed at the end of %(day)s; no bid can be taken", day=auction.last_day),
                             last_day=fmt_day(auction.last_day), then=AUCTION_OVER)
    if not cf.living_animals():  # the auction covers the living (RULE130.md "Money")
        raise Refused(M_("no animal of the lot is alive in the pound (each died or escaped); no bid can be taken"),
                      then=M_("Nothing more can be sold: each animal died or escaped. The case page shows what is "
                              "due now."))
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
        raise Refused(unsold_withdrawn(cf) or M_("the sale of the unsold cattle was withdrawn on %(day)s",
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
        training = users.is_training_case(session, cf.case_number)
        user = users.by_display_name(session, receiver, "receiving_officer", include_simulated=training)
        if user is None:
            try:  # one of the other world (a trainee for a live case, a live officer for a training one)?
                other = users.by_display_name(session, receiver, "receiving_officer", include_simulated=not training)
            except Refused:
                other = None
            if other is not None and training:
                raise Refused(M_("%(receiver)s is a live receiving officer: a training case goes only to a receiving "
                                 "officer of the training Panchayat", receiver=receiver),
                              {"receiver": M_("a live receiving officer")})
            if other is not None:
                raise Refused(M_("%(receiver)s is a receiving officer for training: a live case goes only to a live "
                                 "receiving officer", receiver=receiver), {"receiver": M_("a receiving officer for training")})
            raise Refused(M_("no receiving officer is called %(receiver)s", receiver=receiver), {"receiver": M_("unknown receiving officer")})
        if user not in users.receiving_officers(session, cf.case_number):  # bound to another Panchayat
            raise Refused(M_("%(receiver)s is a receiving officer of another Panchayat; choose one of the receiving "
                             "officers who may take this case from the list", receiver=receiver),
                          {"receiver": M_("a receiving officer of another Panchayat")})
        data["receiver"], data["receiver_user_id"] = user.display_name, user.id
    return data


@check("record_remittance")
def _remittance(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    data["proceeds"] = parse_amount(data.get("proceeds"), "proceeds", M_("the gross sale price"))
    data["expenses"] = parse_amount(data.get("expenses"), "expenses", M_("the expenses of sale"))
    if data["expenses"] > data["proceeds"]:
        raise Refused(M_("the expenses of sale (%(expenses)s) cannot exceed the sale price (%(proceeds)s)",
                         expenses=format_rupees(data["expenses"]), proceeds=format_rupees(data["proceeds"])),
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
            raise Refused(M_("the cattle were already delivered on security to %(objector)s", objector=cf.interim.objector),
                          then=M_("Nothing more is needed: the cattle are with the objector on security until the "
                                  "claim is decided."))
        if cf.sale is not None:
            raise Refused(M_("the cattle were sold in the conditional auction; interim delivery is only possible "
                          "while they are in the pound"), then=ON_MERITS)
        if cf.dispatch is not None:
            raise Refused(M_("the cattle were sent for sale; interim delivery is only possible while they are in the pound"),
                          then=ON_MERITS)
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
        raise Refused(M_("the feeding charges cannot exceed the pound's feeding expenses C = %(limit)s (Rule 130(d))",
                         limit=format_rupees(limit)),
                      {"amount": M_("at most %(limit)s", limit=format_rupees(limit))})
    return data


@check("return_by_objector")
def _return_by_objector(session: Session, cf: CaseFile, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    _deadline(cf, "bt_return_deadline", at, M_("the period to return the cattle"))
    return data
