"""The documents of a case, issued once and kept exactly as issued (issue 5, item 4).

Each kind (:data:`KINDS`; what it says is :mod:`webapp.services.papers.document_texts`) is produced by one
act of the case and issued inside that act's transaction; among them:

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
Chromium's print of that same stored text (webapp.services.papers.pdf), tagged, with a text layer that reads back as
the document's text, and byte-identical on every reprint.

A document is issued for an act *of this unit of work* only: :func:`due_keys` of the case file
before and after the act are compared (:meth:`webapp.services.cases.cases.CaseRun.save`), so a case
that predates this module does not get back-dated documents when it next moves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from markupsafe import Markup
from sqlalchemy import Engine, bindparam, event, select
from sqlalchemy.orm import Session

from webapp import i18n
from webapp.errors import NotFound
from webapp.i18n import formats
from webapp.services.papers import pdf
from webapp.services.papers.document_texts import KINDS as KINDS
from webapp.services.papers.document_texts import LANGUAGES as LANGUAGES
from webapp.services.papers.document_texts import SERIES as SERIES
from webapp.services.papers.document_texts import Due as Due
from webapp.services.papers.document_texts import Issuer as Issuer
from webapp.services.papers.document_texts import appellate_forum as appellate_forum
from webapp.services.papers.document_texts import context as context
from webapp.services.papers.document_texts import due as due
from webapp.services.papers.document_texts import due_keys as due_keys
from webapp.services.papers.document_texts import environment as environment
from webapp.services.papers.document_texts import render as render
from webapp.services.papers.document_texts import sha256 as sha256
from webapp.services.papers.document_texts import title_of as title_of
from webapp.store import json_rows, txcache
from webapp.store.models import Case, CaseDocument, CaseEvent, Panchayat, User, get_row
from webapp.values.casefile import CaseFile

# -- issuing --------------------------------------------------------------------------------------

PAPER_FILE = "rule130.paper_file"  # session.info: the PaperFile of a paper case being brought in

RECEIPT_KINDS = ("sale_receipt", "release_receipt", "remittance")  # numbered by the paper receipt


@dataclass
class PaperFile:
    """A running paper case being brought in (webapp.services.intake.paper_cases), as the documents
    its replayed acts produce read it from ``session.info[PAPER_FILE]``: each is stored with
    ``from_paper`` set and says "entered from the paper file", by ``entered_by`` at ``entered_at``.

    ``receipt_number`` numbers the first receipt (:data:`RECEIPT_KINDS`) of the act being replayed,
    ``paper_number`` its first other document; each is used once. A document of an act for which
    none was given is noted in ``missing`` (its kind), numbered as the product would, so that the
    caller refuses it naming the field; with ``strict`` False (a timer between the acts) the
    product's own numbering applies without a word.
    """

    entered_by: str
    entered_at: datetime
    paper_number: str | None = None
    receipt_number: str | None = None
    strict: bool = False
    missing: list[str] = field(default_factory=list)

    def number_for(self, kind: str) -> str | None:
        """The paper's number for a document of ``kind``, used up; None: the product's numbering."""
        if kind in RECEIPT_KINDS:
            given, self.receipt_number = self.receipt_number, None
        else:
            given, self.paper_number = self.paper_number, None
        if given is None and self.strict:
            self.missing.append(kind)
        return given

_STORED = (select(CaseDocument.key, CaseDocument.kind, CaseDocument.number, CaseDocument.cancelled_at.is_(None))
           .where(CaseDocument.case_id == bindparam("case_id")).distinct())


_LOADED = "documents"  # txcache: case id -> (document writes when read, [(key, kind, number, in force)])
_WRITES = "rule130.document_writes"  # connection.info: statements on it that wrote document rows
_WRITING = ("INSERT INTO case_document", "UPDATE case_document", "DELETE FROM case_document")


def loaded(session: Session, case_id: int, value: Any) -> None:
    """Note the documents of case ``case_id`` read with its row (``[[key, kind, number, in force],
    ...]``, :func:`webapp.store.json_rows.parsed`; :func:`webapp.services.running.case_rows.load`):
    :func:`_stored` takes them instead of asking again while no statement on the transaction's
    connection has written a document row since (an issue, a cancellation, the rows of an act put
    back: the unit of work's or Core's)."""
    rows = [(key, kind, number, bool(in_force)) for key, kind, number, in_force in json_rows.parsed(value)]
    txcache.of(session, _LOADED)[case_id] = (session.connection().info.get(_WRITES, 0), rows)


@event.listens_for(Engine, "before_cursor_execute")
def _count_writes(connection: Any, _cursor: Any, statement: str, _parameters: Any, _context: Any,
                  _many: bool) -> None:
    if statement.lstrip().startswith(_WRITING):
        connection.info[_WRITES] = connection.info.get(_WRITES, 0) + 1


def _stored_rows(session: Session, case: Case) -> Any:
    known = txcache.of(session, _LOADED).get(case.id)
    if known is not None and known[0] == session.connection().info.get(_WRITES, 0):
        return known[1]
    return session.connection().execute(_STORED, {"case_id": case.id})


def _stored(session: Session, case: Case) -> tuple[set[str], dict[str, int], dict[str, int]]:
    """The keys of the case's documents in force (not cancelled), how many documents of each number
    series it has, cancelled ones included (a document counts once, not per language; a number is
    never given twice), and how many times each act's document was issued (by its first key,
    cancelled ones included): those read with the case row (:func:`loaded`) while they stand, else
    one query."""
    keys: set[str] = set()
    numbers: dict[str, set[str]] = {}
    issues: dict[str, int] = {}
    for key, kind, number, in_force in _stored_rows(session, case):
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
    """Issue the notice of a correction (webapp.services.cases.corrections) in English and Hindi, inside
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


def rendered_now(session: Session, case: Case, cf: CaseFile, row: CaseDocument) -> str | None:
    """The text the in-force document ``row`` would have if rendered from ``cf`` with its own
    number and instant (None when ``cf`` no longer calls for it): compared before and after a
    corrigendum (webapp.services.cases.corrigenda), a difference means the document is affected."""
    item = next((d for d in due(cf) if d.key == _act_key(row.key)), None)
    if item is None:
        return None
    panchayat = get_row(session, Panchayat, case.panchayat_id)
    issued_by = session.get(User, row.issued_by) if row.issued_by is not None else None
    issuer = Issuer(name=panchayat.name, district=panchayat.district or "",
                    appellate_forum=panchayat.appellate_forum or "", samiti=panchayat.samiti_code or "",
                    officer=issued_by.display_name if issued_by is not None else None)
    with session.no_autoflush:
        facts = context(session, case, cf, item, issuer, row.issued_at, row.number)
    return render(row.language, item.kind, facts)


def reissue(session: Session, case: Case, cf: CaseFile, rows: list[CaseDocument], user: User, issued_at: datetime,
            corrigendum: str, reason: str) -> list[CaseDocument]:
    """Supersede the document ``rows`` (its language versions) by corrigendum ``corrigendum`` and
    issue it again from ``cf`` with the next number of its series, saying "in place of" the old
    number (webapp.services.cases.corrigenda). The old rows keep their text and hash and are
    marked cancelled with the reason "superseded by corrigendum …". Returns the new rows, English
    first ([] when ``cf`` no longer calls for the document)."""
    item = next((d for d in due(cf) if d.key == _act_key(rows[0].key)), None)
    if item is None:
        return []
    for row in rows:
        row.cancelled_at, row.cancelled_by = issued_at, user.id
        row.cancel_reason = f"superseded by corrigendum {corrigendum}: {reason}"
    session.flush()
    with session.no_autoflush:
        issued = _issue(session, case, cf, [item], user, issued_at,
                        extra={"in_place_of": rows[0].number, "by_corrigendum": corrigendum})
    return issued[0] if issued else []


def next_number(session: Session, case: Case, kind: str) -> str:
    """The number the next document of ``kind`` of ``case`` will get (e.g. ``…/C2``)."""
    _keys, counts, _issues = _stored(session, case)
    series = SERIES.get(kind, kind)
    return f"{case.case_number}/{KINDS[kind][2]}{counts.get(series, 0) + 1}"


def issue_corrigendum_notice(session: Session, case: Case, cf: CaseFile, user: User, issued_at: datetime,
                             corrigendum: dict[str, Any]) -> list[CaseDocument]:
    """Issue the corrigendum notice (English and Hindi) inside the caller's transaction, key
    ``corrigendum:<n>``: ``corrigendum`` holds its facts (webapp.services.cases.corrigenda.issue)."""
    item = Due(f"corrigendum:{corrigendum['serial']}", "corrigendum_notice")
    with session.no_autoflush:
        issued = _issue(session, case, cf, [item], user, issued_at, extra={"corrigendum": corrigendum})
    return issued[0] if issued else []


def _issue(session: Session, case: Case, cf: CaseFile, fresh: list[Due], user: User | None,
           issued_at: datetime, extra: dict[str, Any] | None = None) -> list[list[CaseDocument]]:
    stored, counts, issues = _stored(session, case)  # read once, before this act's rows are added
    panchayat = get_row(session, Panchayat, case.panchayat_id)
    paper: PaperFile | None = session.info.get(PAPER_FILE)
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
        from_paper = None
        if paper is not None:
            number = paper.number_for(item.kind) or number
            from_paper = {"by": paper.entered_by, "at": paper.entered_at}
        facts = {**context(session, case, cf, item, issuer, issued_at, number), **(extra or {}),
                 "from_paper": from_paper}
        # the act's document was issued before and cancelled by a correction: this is its next issue
        key = item.key if item.key not in issues else f"{item.key}#{issues[item.key] + 1}"
        rows = []
        for language in LANGUAGES:
            html = render(language, item.kind, facts)
            rows.append(CaseDocument(case_id=case.id, key=key, kind=item.kind, number=number,
                                     language=language, title=title_of(item.kind, language),
                                     clause=KINDS[item.kind][1], issued_at=issued_at,
                                     issued_by=user.id if user is not None else None, html=html,
                                     sha256=sha256(html), from_paper=paper is not None))
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


STYLESHEET = Path(__file__).resolve().parents[2] / "static" / "documents.css"


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


def pdf_page(row: CaseDocument, tz: str = "Asia/Kolkata", training: bool = False) -> str:
    """The whole HTML page the PDF is made from, self-contained (``static/documents.css`` in a
    ``<style>`` element, nothing to fetch): the stored text as issued, the title and number in the
    ``<title>`` and the number and SHA-256 in the ``description`` and ``keywords`` meta elements
    (the PDF's metadata, webapp.services.papers.pdf.finish), and a line with its SHA-256 after it (outside the
    hashed text); a document cancelled by a correction is marked CANCELLED with the reason and the
    instant (shown in ``tz``, the Panchayat's zone). The paper of a training Panchayat
    (``training``) has a running head on every page, "TRAINING · <number>" in the document's
    language (a CSS ``@page`` margin box, outside the hashed text: the stored text says TRAINING
    only at its head and foot, which a document of more than one page leaves some pages without)."""
    cancelled = None
    if row.cancelled_at is not None:  # printed with the word CANCELLED, the reason and the instant
        cancelled = {"day": formats.format_instant(row.cancelled_at, tz, row.language), "reason": row.cancel_reason or ""}
    env = environment(row.language)
    running_head = None
    if training:
        gettext: Callable[..., str] = env.globals["_"]  # type: ignore[assignment]
        running_head = Markup(css_string(f"{gettext('TRAINING')} · {row.number}"))
    return env.get_template("_pdf.html").render(
        html=Markup(row.html), title=row.title, number=row.number, sha256=row.sha256, cancelled=cancelled,
        stylesheet=_stylesheet(), running_head=running_head)


def css_string(text: str) -> str:
    """``text`` as a quoted CSS string, safe inside a ``<style>`` element of an HTML page: quotes and
    backslashes escaped, ``<`` written as the escape ``\\3c`` (no ``</style>`` can close the
    element), line breaks as spaces (CSS Syntax Level 3, 4.3.5)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\3c ")
    return '"' + " ".join(escaped.splitlines()) + '"'


def pdf_bytes(row: CaseDocument, tz: str = "Asia/Kolkata", training: bool = False) -> bytes:
    """The PDF of a stored document: :func:`pdf_page` printed by headless Chromium (webapp.services.papers.pdf),
    tagged, its text layer the document's text in its language (and, for a training Panchayat's
    document, ``training``, the running head TRAINING on every page). Created at the document's issue
    (``issued_at``) and modified at its cancellation, if any: the same bytes on every reprint of
    the same stored text (with the same Chromium, fonts and ``documents.css``).

    Raises:
        webapp.services.papers.pdf.PdfUnavailable: no PDF can be made on this server now (HTTP 503).
    """
    return pdf.render(pdf_page(row, tz, training), created=row.issued_at, modified=row.cancelled_at)


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
