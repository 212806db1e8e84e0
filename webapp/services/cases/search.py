"""Case search: by case number, village (or place), animal tag or party name, within the user's scope.

The database narrows the candidates (case number, or the case file's text, containing the words
asked for: SQL LIKE with its wildcards escaped); each candidate is then checked field by field, so a
word found elsewhere in the file (a species, a memo) is not a match, and the match says where.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from webapp.services.cases import cases
from webapp.store.models import Case, Panchayat, User
from webapp.values import casefile
from webapp.values.casefile import CaseFile

MAX_QUERY = 100  # characters
MAX_RESULTS = 50


@dataclass
class Match:
    case: Case
    cf: CaseFile
    panchayat: Panchayat | None
    fields: list[tuple[str, str]]  # (what matched: case_number | village | place | tag | party role, the text)


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fields_of(case: Case, cf: CaseFile, panchayat: Panchayat | None) -> list[tuple[str, str]]:
    """Everything a case can be found by: ``(kind, text)`` pairs."""
    found = [("case_number", case.case_number), ("village", cf.nearest_village), ("place", cf.place_seized),
             ("place", cf.place_impounded)]
    if panchayat is not None:
        found.append(("village", panchayat.name))
    found += [("tag", a.tag) for a in cf.animals if a.tag]
    if cf.release:
        found.append(("owner", cf.release.owner))
    for auction in cf.auctions:
        found += [("bidder", bid.bidder) for bid in auction.bids]
    if cf.sale:
        found.append(("buyer", cf.sale.buyer))
    found += [("objector", o.objector) for o in cf.objections]
    found += [("appellant", a.appellant) for a in cf.appeals]
    if cf.dispatch:
        found.append(("receiving_officer", cf.dispatch.receiver))
    return found


def search_cases(session: Session, user: User, query: str, *, limit: int = MAX_RESULTS) -> list[Match]:
    """Cases within ``user``'s scope (:func:`cases.scoped`) in which every word of ``query``
    (case-insensitive) appears in one of the searchable fields; newest first, at most ``limit``.
    A blank query, or one longer than :data:`MAX_QUERY` characters, finds nothing."""
    words = query.split()
    if not words or len(query) > MAX_QUERY:
        return []
    statement = select(Case).order_by(Case.id.desc())
    for word in words:
        pattern = _like(word)
        statement = statement.where(or_(Case.case_number.ilike(pattern, escape="\\"),
                                        Case.file_json.ilike(pattern, escape="\\")))
    statement = cases.scoped(statement, user)
    if statement is None:
        return []
    results: list[Match] = []
    panchayats: dict[int, Panchayat | None] = {}
    for case in session.scalars(statement.limit(limit * 4)):
        cf = casefile.load(case.file_json)
        if case.panchayat_id not in panchayats:
            panchayats[case.panchayat_id] = session.get(Panchayat, case.panchayat_id)
        fields = fields_of(case, cf, panchayats[case.panchayat_id])
        hits = []
        for word in (w.casefold() for w in words):
            hit = [(kind, text) for kind, text in fields if word in text.casefold()]
            if not hit:
                break
            hits += [h for h in hit if h not in hits]
        else:
            results.append(Match(case, cf, panchayats[case.panchayat_id], hits))
            if len(results) >= limit:
                break
    return results
