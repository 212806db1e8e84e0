"""What each document of a case says: the kinds (:data:`KINDS`: title, clause, template, signer),
which documents a case file calls for (:func:`due`), the facts of one document read from the case
file and the ledger at its issue (:func:`context`), and its text in English or Hindi
(:func:`render`: a plain Jinja environment with the language's gettext catalogue, no request
needed). Issuing and keeping them is :mod:`webapp.services.papers.documents`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from sqlalchemy.orm import Session

from webapp.i18n import N_, catalogues, formats, localize, stored_texts
from webapp.services.money import ledger
from webapp.services.papers.appeal_words import appeal_against
from webapp.store.models import Case, Panchayat
from webapp.values import fees
from webapp.values.casefile import Animal, CaseFile, name_key, present

LANGUAGES = ("en", "hi")
TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "documents"
TRANSFER_LOCK_DAYS = 30  # condition (b)(i): no transfer within 30 days of the sale

# kind -> (title, clause (both catalogue msgids), number prefix, the officer who signs)
KINDS: dict[str, tuple[str, str, str, str]] = {
    "notice": (N_("Notice of impounded cattle"), N_("Rule 130(a) and (b)"), "N", "secretary"),
    "sale_receipt": (N_("Receipt for auction money (conditional sale)"), N_("Rule 130(b)"), "R", "secretary"),
    "objection_order": (N_("Order on an objection"), N_("Rule 130(c)"), "O", "sarpanch"),
    "delivery_order": (N_("Delivery order"), N_("Rule 130(c) and (d)"), "D", "secretary"),
    "interim_delivery_order": (N_("Order of interim delivery on security"), N_("Rule 130(c) Explanation"), "D",
                               "sarpanch"),
    "remittance": (N_("Acknowledgement of sale proceeds remitted"), N_("Rule 130(b) proviso"), "A", "secretary"),
    "release_receipt": (N_("Receipt for fine and feeding paid on release"),
                        N_("reading: release within the 3-day window"), "R", "secretary"),
    "stand_order": (N_("Order that the auction stand"), N_("Rule 130(e)"), "O", "sarpanch"),
    "dispatch_letter": (N_("Letter sending unsold cattle for sale"), N_("Rule 130(b) proviso"), "L", "sarpanch"),
    "appeal_decision": (N_("Decision on an appeal"), N_("Rule 130(e) proviso"), "P", "appellate_authority"),
    "settlement": (N_("Final settlement with the owner"), N_("Rule 130(d)"), "S", "secretary"),
    "correction_notice": (N_("Notice of correction"), N_("reading: correcting a clerical mistake"), "C", "secretary"),
    "corrigendum_notice": (N_("Corrigendum"), N_("reading: amending a clerical mistake"), "C", "secretary"),
}
# one number series for the documents of one kind of paper: delivery orders (interim and final),
# orders of the Panchayat (on an objection, that the auction stand), receipts (sale and release)
SERIES = {"interim_delivery_order": "delivery_order", "stand_order": "objection_order",
          "corrigendum_notice": "correction_notice"}


# -- which documents the case file calls for ---------------------------------------------------

@dataclass(frozen=True)
class Due:
    """A document the case file calls for: ``key`` is unique within the case (``notice``,
    ``sale_receipt:1`` (auction round), ``objection_order:2`` (position of the objection),
    ``delivery_order:interim``, ``delivery_order``, ``remittance``, ``release_receipt``); ``kind`` is a
    key of :data:`KINDS`;
    ``objection`` the 1-based position of the objection an order is about, ``appeal`` that of the
    appeal a decision is on (``appeal_decision:1``); ``stand_order``, ``dispatch_letter``,
    ``settlement`` and ``correction:<act id>`` (issued by a correction, not by the case file) name the
    others."""

    key: str
    kind: str
    objection: int | None = None
    appeal: int | None = None


def due(cf: CaseFile) -> list[Due]:
    """Every document the facts of ``cf`` call for, in the order the acts happen in a case."""
    found: list[Due] = []
    if cf.release is not None:
        found.append(Due("release_receipt", "release_receipt"))
    if cf.notice is not None:
        found.append(Due("notice", "notice"))
    if cf.interim is not None:
        found.append(Due("delivery_order:interim", "interim_delivery_order"))
    if cf.dispatch is not None and cf.dispatch.remitted_on is not None:
        found.append(Due("remittance", "remittance"))
    if cf.sale is not None:
        found.append(Due(f"sale_receipt:{cf.sale.auction_round}", "sale_receipt"))
    for position, objection in enumerate(cf.objections, start=1):
        if objection.decision in ("proved", "not_proved") and objection.decided_on is not None:
            found.append(Due(f"objection_order:{position}", "objection_order", position))
    if cf.order_auction_stand_on is not None:
        found.append(Due("stand_order", "stand_order"))
    if cf.dispatch is not None:
        found.append(Due("dispatch_letter", "dispatch_letter"))
    for position, appeal in enumerate(cf.appeals, start=1):
        if appeal.decision is not None:
            found.append(Due(f"appeal_decision:{position}", "appeal_decision", appeal=position))
    if cf.delivered_on is not None:
        found.append(Due("delivery_order", "delivery_order"))
    if cf.outcome == "returned_to_objector":
        found.append(Due("settlement", "settlement"))
    return found


def due_keys(cf: CaseFile) -> set[str]:
    """The keys of :func:`due` (compared before and after an act)."""
    return {d.key for d in due(cf)}


# -- rendering ----------------------------------------------------------------------------------

_environments: dict[str, Environment] = {}


def environment(language: str) -> Environment:
    """The Jinja environment of ``language`` for the document templates (``templates/documents``):
    autoescaped HTML, ``_``/``ngettext`` from that language's catalogue (Flask-Babel's ``%(name)s``
    style), the filters ``day``, ``when``, ``rupees``, ``words``, ``listing``, ``memo`` of
    webapp.i18n.formats and webapp.i18n.stored_texts, and ``forum`` (:func:`appellate_forum` of an issuer)."""
    if language not in _environments:
        catalogue = catalogues.translations_for(language)

        def gettext(message: str, **params: Any) -> str:
            text: str = catalogue.gettext(message)
            return text % params if params else text

        def ngettext(singular: str, plural: str, num: int, **params: Any) -> str:
            params.setdefault("num", num)
            text: str = catalogue.ngettext(singular, plural, num)
            return text % params

        def words(value: Any) -> str:
            text = str(value or "").replace("_", " ")
            return str(catalogue.gettext(text)) if text else text

        # auto_reload off: the templates ship with the code (a new release restarts the process), so
        # no render asks the file system whether they changed
        env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(default=True),
                          undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, auto_reload=False)
        env.globals.update(_=gettext, gettext=gettext, ngettext=ngettext, language=language)
        env.filters.update(day=partial(_day, language=language), rupees=partial(formats.format_rupees, language=language),
                           when=lambda value, tz: formats.format_instant(value, tz, language), words=words,
                           listing=partial(formats.format_listing, language=language),
                           forum=partial(appellate_forum, language=language),
                           memo=lambda value: stored_texts.retranslate(value, stored_texts.MEMOS, language),
                           says=lambda message: localize(message, language=language))
        _environments[language] = env
    return _environments[language]


def _day(value: date | None, language: str) -> str:
    return formats.format_day(value, language)


def title_of(kind: str, language: str) -> str:
    """The document's title in ``language`` (the catalogue's translation of :data:`KINDS`)."""
    return str(catalogues.translations_for(language).gettext(KINDS[kind][0]))


@dataclass
class Issuer:
    """What the document says of the Panchayat and the officer at the moment of issue (a copy:
    later renames do not reach an issued document)."""

    name: str
    district: str
    appellate_forum: str
    officer: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    samiti: str = ""  # the Panchayat Samiti (its code, as the Panchayat record holds it)


DEFAULT_FORUM = N_("Vikas Adhikari, Panchayat Samiti")  # the default of Panchayat.appellate_forum
FORUM_OF_SAMITI = N_("Vikas Adhikari of Panchayat Samiti %(samiti)s")
OTHER_FORUM_OF_SAMITI = N_("%(forum)s, Panchayat Samiti %(samiti)s")


def appellate_forum(issuer: Issuer, language: str) -> str:
    """The appeal forum an order names, in ``language`` (``"en"``/``"hi"``), with the Panchayat
    Samiti: ``Vikas Adhikari of Panchayat Samiti SAM1`` / ``पंचायत समिति SAM1 के विकास अधिकारी`` for
    the default forum; another forum (a setting, as typed) translated when the catalogue has it,
    followed by the Samiti. Without a Samiti, the forum alone."""
    catalogue = catalogues.translations_for(language)
    forum = issuer.appellate_forum or DEFAULT_FORUM
    if not issuer.samiti:
        return str(catalogue.gettext(forum))
    if forum == DEFAULT_FORUM:
        return str(catalogue.gettext(FORUM_OF_SAMITI)) % {"samiti": issuer.samiti}
    return str(catalogue.gettext(OTHER_FORUM_OF_SAMITI)) % {"forum": catalogue.gettext(forum), "samiti": issuer.samiti}


def _animals_on(cf: CaseFile, day: date) -> list[Animal]:
    """The animals in the lot on ``day``: impounded, and not dead or escaped before it."""
    return cf.living_animals(on=day)


@dataclass(frozen=True)
class Gone:
    """An animal of the lot that left the pound other than with the lot: ``event`` is ``died`` or
    ``escaped``, ``day`` the local calendar day it happened."""

    animal: Animal
    event: str
    day: date


def gone_before(cf: CaseFile, day: date) -> list[Gone]:
    """The animals of ``cf`` that died or escaped on or before ``day`` (a local calendar day), in
    the order impounded: those a paper of that day cannot hand over (RULE130.md 0: a death or an
    escape is recorded with its date, and the animal's feeding stops that day). Where both a death
    and an escape are recorded, the earlier counts (the death on a tie)."""
    found = []
    for animal in cf.animals:
        gone = animal.gone_on()
        if gone is not None and gone <= day:
            found.append(Gone(animal, "died" if animal.died_on == gone else "escaped", gone))
    return found


def _is_training(session: Session, case: Case) -> bool:
    panchayat = session.get(Panchayat, case.panchayat_id)
    return panchayat is not None and panchayat.training


def context(session: Session, case: Case, cf: CaseFile, item: Due, issuer: Issuer, issued_at: datetime,
            number: str) -> dict[str, Any]:
    """The facts a document shows, read from the case file and the ledger at the moment of issue.

    Amounts are Decimal rupees, days local dates of the Panchayat's zone. Raises KeyError for an
    unknown kind.
    """
    base: dict[str, Any] = {"case_number": case.case_number, "cf": cf, "tz": cf.timezone, "issuer": issuer,
                            "issued_at": issued_at, "number": number, "kind": item.kind,
                            "clause": KINDS[item.kind][1], "signer": KINDS[item.kind][3],
                            # a training Panchayat's papers say so at the head and the foot (webapp.services.panchayats.training)
                            "training": _is_training(session, case),
                            # set by webapp.services.papers.documents for a case brought in from the paper file
                            "from_paper": None}
    if item.kind == "notice":
        notice = present(cf.notice, "notice")
        auction = cf.auctions[0]
        base.update(notice=notice, animals=_animals_on(cf, notice.published_on),
                    auction_days=[auction.opened_on + timedelta(days=n)
                                  for n in range((auction.last_day - auction.opened_on).days + 1)])
    elif item.kind == "sale_receipt":
        sale = present(cf.sale, "sale")
        animals = _animals_on(cf, sale.day)
        base.update(sale=sale, animals=animals, lock_until=sale.day + timedelta(days=TRANSFER_LOCK_DAYS),
                    feeding_per_day=sum((a.feeding_per_day for a in animals), Decimal("0.00")),
                    auction=next(a for a in cf.auctions if a.round == sale.auction_round))
    elif item.kind == "objection_order":
        objection = cf.objections[present(item.objection, "objection number") - 1]
        decided_on = present(objection.decided_on, "decision on the objection")
        base.update(objection=objection, animals=_animals_on(cf, decided_on),
                    appeal_last_day=decided_on + timedelta(days=cf.appeal_period_days),
                    sold=cf.sale is not None and cf.sale.returned_on is None,
                    dispatched=cf.dispatch is not None,
                    # the objector holds the cattle on security (Rule 130(c) Explanation): the
                    # auction was withdrawn, so a failed claim means returning them
                    held=(cf.interim if cf.interim is not None and cf.interim.returned_on is None
                          and name_key(cf.interim.objector) == name_key(objection.objector) else None),
                    proved_other=next((o for o in cf.objections if o is not objection and o.decision == "proved"), None))
    elif item.kind == "interim_delivery_order":
        interim = present(cf.interim, "interim delivery")
        base.update(interim=interim, animals=_animals_on(cf, interim.day),
                    objection=cf.objection_of(interim.objector))
    elif item.kind == "delivery_order":
        day = present(cf.delivered_on, "delivery day")
        rows = ledger.entries(session, case.id)
        base.update(day=day, owner=cf.winning_objector, animals=_animals_on(cf, day),
                    fine=fees.fine(cf), pound_feeding=fees.pound_feeding(cf, day),
                    buyer_feeding=fees.buyer_feeding(cf),
                    sold_by_receiver=cf.dispatch is not None and cf.dispatch.net is not None,
                    kept_by=(cf.interim if cf.interim is not None and cf.interim.forfeited else None),
                    remittance_balance=ledger.total_to(rows, "objector", ("remittance_balance",)),
                    security_refund=(cf.interim.security if cf.interim is not None and cf.interim.refunded
                                     and cf.interim.returned_on is None else None))
        base["total"] = base["fine"] + base["pound_feeding"] + base["buyer_feeding"]
    elif item.kind == "remittance":
        dispatch = present(cf.dispatch, "dispatch")
        base.update(dispatch=dispatch, animals=_animals_on(cf, dispatch.day))
    elif item.kind == "stand_order":
        day = present(cf.order_auction_stand_on, "order that the auction stand")
        money = cf.sale.amount if cf.sale is not None else (cf.dispatch.net if cf.dispatch is not None else None)
        dues = fees.fine(cf) + fees.pound_feeding(cf, day)
        to_pound = min(money, dues) if money is not None else None
        base.update(day=day, animals=_animals_on(cf, day), sale=cf.sale, dispatch=cf.dispatch, money=money,
                    fine=fees.fine(cf), pound_feeding=fees.pound_feeding(cf, day), dues=dues, to_pound=to_pound,
                    to_fund=(money - to_pound) if money is not None and to_pound is not None else None,
                    shortfall=(dues - to_pound) if to_pound is not None else None,
                    appeal_last_day=day + timedelta(days=cf.appeal_period_days))
    elif item.kind == "dispatch_letter":
        dispatch = present(cf.dispatch, "dispatch")
        base.update(dispatch=dispatch, animals=_animals_on(cf, dispatch.day), auction=cf.auctions[-1] if cf.auctions else None)
    elif item.kind == "appeal_decision":
        appeal = cf.appeals[present(item.appeal, "appeal number") - 1]
        base.update(appeal=appeal, against=appeal_against(cf, appeal), owner=cf.winning_objector if cf.owner_proved else None)
    elif item.kind == "settlement":
        rows = ledger.entries(session, case.id)
        paid_in = sum((e.amount for e in ledger.effective(rows) if e.from_account == "objector"), Decimal("0.00"))
        base.update(owner=cf.winning_objector, animals=_animals_on(cf, cf.delivered_on or issued_at.date()),
                    fine=fees.fine(cf), pound_feeding=fees.pound_feeding(cf, cf.delivered_on or issued_at.date()),
                    buyer_feeding=fees.buyer_feeding(cf), paid_in=paid_in,
                    paid_out={kind: ledger.total_to(rows, "objector", (kind,))
                              for kind in ("security_refund", "remittance_balance")},
                    buyer_repaid=ledger.total_to(rows, "buyer"),
                    feeding_charges=cf.feeding_charges or Decimal("0.00"),
                    to_fund=ledger.total_to(rows, "panchayat_fund", ("feeding_balance",)))
    elif item.kind in ("correction_notice", "corrigendum_notice"):
        pass  # its facts come from the correction (issue_correction_notice)
    elif item.kind == "release_receipt":
        release = present(cf.release, "release to the owner")
        base.update(release=release, animals=_animals_on(cf, release.day), fine=fees.fine(cf),
                    pound_feeding=fees.pound_feeding(cf, release.day), gone=gone_before(cf, release.day),
                    impounded_heads=sum(1 for a in cf.animals if a.born_on is None))
        base["total"] = base["fine"] + base["pound_feeding"]
    else:
        raise KeyError(item.kind)
    return base


def render(language: str, kind: str, facts: dict[str, Any]) -> str:
    """The HTML of one document (an ``<article>`` element) in ``language`` from :func:`context`'s facts."""
    template = environment(language).get_template(f"{kind}.html")
    return template.render(**facts).strip() + "\n"


def sha256(html: str) -> str:
    """SHA-256 (64 hex digits) of ``html``'s UTF-8 bytes: the content hash of a stored document."""
    return hashlib.sha256(html.encode("utf-8")).hexdigest()
