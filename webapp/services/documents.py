"""The documents of a case, issued once and kept exactly as issued (issue 5, item 4).

Six kinds, each produced by one act of the case and issued inside that act's transaction:

==========================  ============================================  ==================================
kind                        the act                                       clause
==========================  ============================================  ==================================
``notice``                  the secretary publishes the notice            Rule 130(a), (b)
``sale_receipt``            a conditional sale (full price, or the        Rule 130(b), conditions (b)(i), (ii)
                            sarpanch accepts the highest bid)
``objection_order``         the sarpanch decides a claim: proved / not    Rule 130(c)
``delivery_order``          interim delivery on security; delivery to     Rule 130(c) Explanation; 130(d)
                            the owner whose claim is final
``remittance``              the receiving officer records the remittance  Rule 130(b) proviso
``release_receipt``         the owner pays fine and feeding and takes     reading: release within the
                            the cattle back within the release window     3-day window
==========================  ============================================  ==================================

Each document is rendered at once in English and in Hindi (a plain Jinja environment with the
gettext catalogue of the language: no request is needed, so the simulator, the API and the timer
worker issue them too) and stored per language as the exact HTML text with the SHA-256 of its
UTF-8 bytes (:class:`~webapp.store.models.CaseDocument`). The issue is also a case history row
whose detail holds both hashes, so it enters the hash-chained audit trail (webapp.store.audit).
A reprint serves the stored text, never a new rendering: later changes of the tariff, the
Panchayat's name or the templates do not alter an issued document. The PDF is headless
Chromium's print of that same stored text (webapp.pdf), tagged, with a text layer that reads back as
the document's text, and byte-identical on every reprint.

A document is issued for an act *of this unit of work* only: :func:`due_keys` of the case file
before and after the act are compared (:meth:`webapp.services.cases.CaseRun.save`), so a case
that predates this module does not get back-dated documents when it next moves.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cache, partial
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from .. import fees, i18n, pdf
from ..casefile import Animal, CaseFile, name_key, present
from ..errors import NotFound
from ..i18n import N_
from ..store.models import Case, CaseDocument, CaseEvent, Panchayat, User, get_row
from . import ledger

LANGUAGES = ("en", "hi")
TEMPLATES = Path(__file__).resolve().parents[1] / "templates" / "documents"
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
}
# one number series for the documents of one kind of paper: delivery orders (interim and final),
# orders of the Panchayat (on an objection, that the auction stand), receipts (sale and release)
SERIES = {"interim_delivery_order": "delivery_order", "stand_order": "objection_order"}


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
    webapp.i18n and ``forum`` (:func:`appellate_forum` of an issuer)."""
    if language not in _environments:
        catalogue = i18n.translations_for(language)

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
        env.filters.update(day=partial(_day, language=language), rupees=partial(i18n.format_rupees, language=language),
                           when=lambda value, tz: i18n.format_instant(value, tz, language), words=words,
                           listing=partial(i18n.format_listing, language=language),
                           forum=partial(appellate_forum, language=language),
                           memo=lambda value: i18n.retranslate(value, i18n.MEMOS, language))
        _environments[language] = env
    return _environments[language]


def _day(value: date | None, language: str) -> str:
    return i18n.format_day(value, language)


def title_of(kind: str, language: str) -> str:
    """The document's title in ``language`` (the catalogue's translation of :data:`KINDS`)."""
    return str(i18n.translations_for(language).gettext(KINDS[kind][0]))


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
    catalogue = i18n.translations_for(language)
    forum = issuer.appellate_forum or DEFAULT_FORUM
    if not issuer.samiti:
        return str(catalogue.gettext(forum))
    if forum == DEFAULT_FORUM:
        return str(catalogue.gettext(FORUM_OF_SAMITI)) % {"samiti": issuer.samiti}
    return str(catalogue.gettext(OTHER_FORUM_OF_SAMITI)) % {"forum": catalogue.gettext(forum), "samiti": issuer.samiti}


def _animals_on(cf: CaseFile, day: date) -> list[Animal]:
    """The animals in the lot on ``day``: impounded, and not dead or escaped before it."""
    return cf.living_animals(on=day)


def context(session: Session, case: Case, cf: CaseFile, item: Due, issuer: Issuer, issued_at: datetime,
            number: str) -> dict[str, Any]:
    """The facts a document shows, read from the case file and the ledger at the moment of issue.

    Amounts are Decimal rupees, days local dates of the Panchayat's zone. Raises KeyError for an
    unknown kind.
    """
    base: dict[str, Any] = {"case_number": case.case_number, "cf": cf, "tz": cf.timezone, "issuer": issuer,
                            "issued_at": issued_at, "number": number, "kind": item.kind,
                            "clause": KINDS[item.kind][1], "signer": KINDS[item.kind][3]}
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
        base.update(appeal=appeal, owner=cf.winning_objector if cf.owner_proved else None)
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
    elif item.kind == "correction_notice":
        pass  # its facts come from the correction (issue_correction_notice)
    elif item.kind == "release_receipt":
        release = present(cf.release, "release to the owner")
        base.update(release=release, animals=_animals_on(cf, release.day), fine=fees.fine(cf),
                    pound_feeding=fees.pound_feeding(cf, release.day))
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


# -- issuing --------------------------------------------------------------------------------------

_STORED = (select(CaseDocument.key, CaseDocument.kind, CaseDocument.number, CaseDocument.cancelled_at.is_(None))
           .where(CaseDocument.case_id == bindparam("case_id")).distinct())


def _stored(session: Session, case: Case) -> tuple[set[str], dict[str, int], dict[str, int]]:
    """The keys of the case's documents in force (not cancelled), how many documents of each number
    series it has, cancelled ones included (a document counts once, not per language; a number is
    never given twice), and how many times each act's document was issued (by its first key,
    cancelled ones included): one query."""
    keys: set[str] = set()
    numbers: dict[str, set[str]] = {}
    issues: dict[str, int] = {}
    for key, kind, number, in_force in session.connection().execute(_STORED, {"case_id": case.id}):
        if in_force:
            keys.add(_act_key(key))
        numbers.setdefault(SERIES.get(kind, kind), set()).add(number)
        issues[_act_key(key)] = max(issues.get(_act_key(key), 0), _issue_of(key))
    return keys, {series: len(found) for series, found in numbers.items()}, issues


def _act_key(key: str) -> str:
    """The key of the act a document was issued for: ``sale_receipt:1`` of ``sale_receipt:1#2``."""
    return key.split("#", 1)[0]


def _issue_of(key: str) -> int:
    """1 for a document's first issue, n for ``<key>#<n>`` (issued again after a correction)."""
    _head, _, tail = key.partition("#")
    return int(tail) if tail.isdigit() else 1


def issue_new(session: Session, case: Case, cf: CaseFile, before: set[str], user: User | None,
              issued_at: datetime) -> list[list[CaseDocument]]:
    """Issue every document that the act just done calls for (due now, not due ``before`` it) in
    English and Hindi, inside the caller's transaction.

    Args:
        before: :func:`due_keys` of the case file as loaded, before the act.
        user: the officer whose act produced the document (None for a timer).
        issued_at: the act's instant (UTC, the product clock).
    Returns:
        one list per document issued: its rows, English first. A key already stored for the case is
        never issued again.
    """
    fresh = [item for item in due(cf) if item.key not in before]
    if not fresh:
        return []
    # No autoflush while reading: flushing the case's pending changes here would update its row (and
    # its optimistic-lock version) a second time in this unit of work.
    with session.no_autoflush:
        return _issue(session, case, cf, fresh, user, issued_at)


def issue_correction_notice(session: Session, case: Case, cf: CaseFile, user: User, issued_at: datetime,
                            correction: dict[str, Any]) -> list[CaseDocument]:
    """Issue the notice of a correction (webapp.services.corrections) in English and Hindi, inside
    the caller's transaction: key ``correction:<act id>``.

    Args:
        correction: ``{"act_id": int, "act": the act's name, "act_at": UTC instant, "reason": text,
            "by": the officer's name, "cancelled": [document numbers], "reversed": [(rupees, from
            account, to account)]}``.
    Returns:
        the rows issued, English first.
    """
    item = Due(f"correction:{correction['act_id']}", "correction_notice")
    with session.no_autoflush:
        issued = _issue(session, case, cf, [item], user, issued_at, extra={"correction": correction})
    return issued[0] if issued else []


def _issue(session: Session, case: Case, cf: CaseFile, fresh: list[Due], user: User | None,
           issued_at: datetime, extra: dict[str, Any] | None = None) -> list[list[CaseDocument]]:
    stored, counts, issues = _stored(session, case)  # read once, before this act's rows are added
    panchayat = get_row(session, Panchayat, case.panchayat_id)
    issuer = Issuer(name=panchayat.name, district=panchayat.district or "",
                    appellate_forum=panchayat.appellate_forum or "", samiti=panchayat.samiti_code or "",
                    officer=user.display_name if user is not None else None)
    issued: list[list[CaseDocument]] = []
    for item in fresh:
        if item.key in stored:
            continue
        series = SERIES.get(item.kind, item.kind)
        counts[series] = counts.get(series, 0) + 1
        number = f"{case.case_number}/{KINDS[item.kind][2]}{counts[series]}"
        facts = {**context(session, case, cf, item, issuer, issued_at, number), **(extra or {})}
        # the act's document was issued before and cancelled by a correction: this is its next issue
        key = item.key if item.key not in issues else f"{item.key}#{issues[item.key] + 1}"
        rows = []
        for language in LANGUAGES:
            html = render(language, item.kind, facts)
            rows.append(CaseDocument(case_id=case.id, key=key, kind=item.kind, number=number,
                                     language=language, title=title_of(item.kind, language),
                                     clause=KINDS[item.kind][1], issued_at=issued_at,
                                     issued_by=user.id if user is not None else None, html=html,
                                     sha256=sha256(html)))
        session.add_all(rows)
        issued.append(rows)
    return issued


def history_detail(rows: list[CaseDocument]) -> dict[str, str]:
    """What the case history (and so the audit trail) records of one issued document: its number
    and the SHA-256 of each language's text."""
    detail = {"document": rows[0].number}
    for row in rows:
        detail[f"sha256_{row.language}"] = row.sha256
    return detail


# -- reading ----------------------------------------------------------------------------------------

@dataclass
class Listed:
    """One document on the case page: the version in the reader's language first, then the other."""

    key: str
    kind: str
    number: str
    clause: str
    issued_at: datetime
    versions: dict[str, CaseDocument]

    def title(self, language: str) -> str:
        """The stored title in ``language`` (English if that version is missing)."""
        return (self.versions.get(language) or self.versions["en"]).title


def list_for_case(session: Session, case: Case) -> list[Listed]:
    """The case's documents in the order issued, each with its language versions (caller checks scope)."""
    rows = session.scalars(select(CaseDocument).where(CaseDocument.case_id == case.id)
                           .order_by(CaseDocument.issued_at, CaseDocument.id))
    listed: dict[str, Listed] = {}
    for row in rows:  # by number: a document cancelled by a correction and its next issue are two
        entry = listed.setdefault(row.number, Listed(row.key, row.kind, row.number, row.clause, row.issued_at, {}))
        entry.versions[row.language] = row
    return list(listed.values())


def list_for_case_key(session: Session, case: Case, key: str) -> dict[str, CaseDocument]:
    """The language versions of one document of ``case``: ``{language: row}``."""
    rows = session.scalars(select(CaseDocument).where(CaseDocument.case_id == case.id, CaseDocument.key == key))
    return {row.language: row for row in rows}


def get_document(session: Session, case: Case, document_id: int) -> CaseDocument:
    """The stored document ``document_id`` of ``case`` (the caller has checked the case's scope).

    Raises:
        NotFound: no such document in this case (a document of another case is not found either).
    """
    row = session.get(CaseDocument, document_id) if 0 < document_id < 2**63 else None
    if row is None or row.case_id != case.id:
        raise NotFound(i18n.M_("no document %(id)s in this case", id=document_id))
    return row


def intact(session: Session, case: Case, row: CaseDocument) -> bool:
    """True when the stored text still hashes to its stored SHA-256 and to the one the case history
    (hash-chained in the audit trail) recorded when it was issued."""
    recorded = recorded_hashes(session, case).get(row.number, {}).get(row.language)
    return sha256(row.html) == row.sha256 == recorded


STYLESHEET = Path(__file__).resolve().parents[1] / "static" / "documents.css"


@cache
def _stylesheet() -> Markup:
    """``static/documents.css`` as text, read once (it ships with the code, as the templates do)."""
    return Markup(STYLESHEET.read_text(encoding="utf-8"))


def verify_line(row: CaseDocument, intact: bool) -> str:
    """The line printed under a document on its printable page, in the document's own language (as
    on its PDF): its number and SHA-256, or the warning that the stored text no longer matches."""
    gettext: Callable[..., str] = environment(row.language).globals["_"]  # type: ignore[assignment]
    if intact:
        return gettext("Document %(number)s as issued; SHA-256 of its text: %(hash)s", number=row.number, hash=row.sha256)
    return gettext("Warning: the stored text of document %(number)s no longer matches the SHA-256 recorded when it "
                   "was issued (%(hash)s).", number=row.number, hash=row.sha256)


def pdf_page(row: CaseDocument, tz: str = "Asia/Kolkata") -> str:
    """The whole HTML page the PDF is made from, self-contained (``static/documents.css`` in a
    ``<style>`` element, nothing to fetch): the stored text as issued, the title and number in the
    ``<title>`` and the number and SHA-256 in the ``description`` and ``keywords`` meta elements
    (the PDF's metadata, webapp.pdf.finish), and a line with its SHA-256 after it (outside the
    hashed text); a document cancelled by a correction is marked CANCELLED with the reason and the
    instant (shown in ``tz``, the Panchayat's zone)."""
    cancelled = None
    if row.cancelled_at is not None:  # printed with the word CANCELLED, the reason and the instant
        cancelled = {"day": i18n.format_instant(row.cancelled_at, tz, row.language), "reason": row.cancel_reason or ""}
    return environment(row.language).get_template("_pdf.html").render(
        html=Markup(row.html), title=row.title, number=row.number, sha256=row.sha256, cancelled=cancelled,
        stylesheet=_stylesheet())


def pdf_bytes(row: CaseDocument, tz: str = "Asia/Kolkata") -> bytes:
    """The PDF of a stored document: :func:`pdf_page` printed by headless Chromium (webapp.pdf),
    tagged, its text layer the document's text in its language. Created at the document's issue
    (``issued_at``) and modified at its cancellation, if any: the same bytes on every reprint of
    the same stored text (with the same Chromium, fonts and ``documents.css``).

    Raises:
        webapp.pdf.PdfUnavailable: no PDF can be made on this server now (HTTP 503).
    """
    return pdf.render(pdf_page(row, tz), created=row.issued_at, modified=row.cancelled_at)


def recorded_hashes(session: Session, case: Case) -> dict[str, dict[str, str]]:
    """The hashes the case history recorded at issue, by document number: ``{number: {language: sha256}}``
    (the history rows are in the hash-chained audit trail, so they are the reference for a reprint)."""
    found: dict[str, dict[str, str]] = {}
    for detail_json in session.scalars(select(CaseEvent.detail_json).where(CaseEvent.case_id == case.id,
                                                                           CaseEvent.kind == "document")):
        detail = json.loads(detail_json or "{}")
        found[detail.get("document", "")] = {k[len("sha256_"):]: v for k, v in detail.items()
                                             if k.startswith("sha256_")}
    return found
