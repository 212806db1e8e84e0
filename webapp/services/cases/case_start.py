"""Starting a case: the pound keeper's record of impounded cattle (Rule 130, heading: the 3-day
release window starts), its checks (every field at once), its case number (``<code>/<year>/<n>``,
per Panchayat and year) and the idempotency of the new-case form and API call.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from webapp.errors import AlreadySubmitted, Refused
from webapp.i18n import M_, message_list
from webapp.services.diagrams import repository
from webapp.services.money import tariffs
from webapp.services.running.case_run import CaseRun, require_role
from webapp.store.models import Case, CaseNumberSequence, Panchayat, User, get_row
from webapp.values import casefile, clock, legal_time, pound, textguard
from webapp.values.casefile import Animal, CaseFile

MAX_AGE_DAYS = 366  # a case is opened for cattle impounded within the last year
ANIMAL_FIELDS = ("species", "description", "tag")  # what a request gives of each animal


# -- starting a case ----------------------------------------------------------------------------

class TypedTime(str):
    """A date and time as typed in a page's form field, which the page could not read: refused in
    the page's words (the API's message speaks of UTC offsets)."""


def _impounded_instant(value: datetime | str) -> datetime:
    """The instant of impoundment: a valid date and time, not in the future, at most
    :data:`MAX_AGE_DAYS` days ago. Raises Refused naming the problem."""
    if isinstance(value, TypedTime):
        raise Refused(M_("the time of impoundment must be a valid date and time"),
                      {"impounded_at": M_("not a date and time")})
    try:
        when = legal_time.parse_instant(value)
    except (ValueError, TypeError):
        raise Refused(M_("the time of impoundment must be a valid date and time (in the API with its UTC offset, "
                      "e.g. 2026-01-05T10:00:00+05:30)"), {"impounded_at": M_("not a date and time")}) from None
    if when > clock.now():
        raise Refused(M_("the time of impoundment cannot be in the future"), {"impounded_at": M_("in the future")})
    if when < clock.now() - timedelta(days=MAX_AGE_DAYS):
        raise Refused(M_("the time of impoundment is more than %(days)s days ago; check the date", days=MAX_AGE_DAYS),
                      {"impounded_at": M_("too long ago")})
    return when


def _animal_records(animals: Any, tariff: dict[str, dict[str, Decimal]]) -> list[Animal]:
    """The impounded animals (one or more) priced by ``tariff``. Raises Refused at the first problem."""
    if not animals:
        raise Refused(M_("record at least one animal"), {"animals": M_("no animals")})
    if not isinstance(animals, list):
        raise Refused(M_("the animals must be a list"), {"animals": M_("not a list")})
    if len(animals) > 500:
        raise Refused(M_("a case holds at most 500 animals"), {"animals": M_("too many")})
    records: list[Animal] = []
    tags: set[str] = set()
    for position, raw in enumerate(animals, start=1):
        if not isinstance(raw, dict):
            raise Refused(M_("animal %(position)s: give species, description and tag", position=position), {"animals": M_("animal %(position)s", position=position)})
        unknown = sorted(str(key) for key in raw if key not in ANIMAL_FIELDS)
        if unknown:  # e.g. a fine: the Panchayat's tariff sets it, never the request
            raise Refused(M_("animal %(position)s: unknown field %(fields)s; give species, description and tag",
                             position=position, fields=", ".join(unknown)), {"animals": M_("unknown field")})
        textguard.check(raw, f"animals[{position - 1}]")
        species = str(raw.get("species") or "").strip().lower()
        if not species:
            raise Refused(M_("animal %(position)s: choose its species (%(known)s)", position=position,
                             known=message_list([M_(s) for s in tariff])),
                          {"animals": M_("animal %(position)s: no species", position=position)})
        if species not in tariff:
            raise Refused(M_("animal %(position)s: unknown species %(species)s; known: %(known)s", position=position,
                             species=species, known=message_list([M_(s) for s in tariff])),
                          {"animals": M_("animal %(position)s: unknown species", position=position)})
        typed_tag = str(raw.get("tag") or "").strip()
        textguard.check_one_line(typed_tag, "animals", M_("animal %(position)s: the tag", position=position))
        tag = None if textguard.is_blank(typed_tag) else typed_tag
        if tag and tag.casefold() in tags:  # an ear tag reads the same in either letter case
            raise Refused(M_("animal %(position)s: the tag %(tag)s is given twice", position=position, tag=tag), {"animals": M_("duplicate tag")})
        if tag:
            tags.add(tag.casefold())
        records.append(Animal(position=position, species=species,
                              description=textguard.required_line(raw.get("description"), M_("animal %(position)s: the description", position=position),
                                                "animals"),
                              tag=tag, fine=Decimal(str(tariff[species]["fine"])),
                              feeding_per_day=Decimal(str(tariff[species]["feeding_per_day"]))))
    return records


def start_case(session: Session, user: User, *, impounded_at: datetime | str, place_seized: str,
               place_impounded: str, nearest_village: str, animals: list[dict[str, Any]],
               tariff: dict[str, dict[str, Decimal]] | None = None, submission_key: str | None = None) -> Case:
    """The pound keeper records impounded cattle: a new case on the current process version.

    Args:
        impounded_at: the instant of impoundment (offset-aware; not in the future).
        animals: ``[{"species", "description", "tag" (optional)}]``, one or more.
        tariff: fine and feeding per species (rupees); default: the tariff in force on the local
            impoundment day in the Panchayat's zone (webapp.services.money.tariffs.for_case).
        submission_key: the key of the form or API call (8 to 80 letters, digits, ``-`` or ``_``),
            kept on the case with a hash of what was sent: the same key sent again in the Panchayat
            starts nothing; sent again with other details, it is refused.
    Returns:
        the case, with its 3-day release timer armed.
    Raises:
        NotPermitted: not a pound keeper of a Panchayat. Refused: any invalid field or key, or a
            key that recorded a case with other details.
        AlreadySubmitted: a case was started with this key (named; nothing recorded again).
    """
    require_role(user, "pound_keeper")
    panchayat = get_row(session, Panchayat, user.panchayat_id)
    sent = _fingerprint(impounded_at, place_seized, place_impounded, nearest_village, animals)
    if submission_key is not None:
        _check_submission_key(submission_key)
        earlier = case_for_submission(session, user, submission_key)
        if earlier is not None and earlier.submission_hash not in (None, sent):
            raise Refused(M_("this form already recorded case %(number)s, with other details; nothing was "
                             "recorded now. Check that case; to record another impoundment, send the form again",
                             number=earlier.case_number), {"submission": M_("already used for another case")})
        if earlier is not None:
            raise AlreadySubmitted(M_("this form was already sent: it recorded case %(number)s, which is not "
                                      "recorded again", number=earlier.case_number), earlier.id, earlier.case_number)
    # every field is checked, so that a form with several mistakes shows them all at once
    refusals: list[Refused] = []

    def checked(check: Callable[[], Any]) -> Any:
        try:
            return check()
        except Refused as refused:
            refusals.append(refused)
            return None

    when = checked(lambda: _impounded_instant(impounded_at))
    places = {field: checked(functools.partial(textguard.required_line, value, label, field))
              for field, value, label in (("place_seized", place_seized, M_("the place seized")),
                                          ("place_impounded", place_impounded, M_("the place impounded")),
                                          ("nearest_village", nearest_village,
                                           M_("the village nearest the place of seizure")))}
    # the tariff in force on the local impoundment day (today's, to check the species, when the day is wrong)
    records = checked(lambda: _animal_records(animals, tariff or tariffs.for_case(session, panchayat,
                                                                                  when or clock.now())))
    if len(refusals) == 1:
        raise refusals[0]
    if refusals:
        field_errors: dict[str, Any] = {}
        for refused in refusals:
            for field, error in refused.field_errors.items():
                field_errors.setdefault(field, error)
        raise Refused(M_("the form has errors: %(summary)s",
                         summary=message_list([refused.message for refused in refusals], "; ")), field_errors)
    version_id = repository.current_id(session)
    impounded_on = legal_time.local_day(when, panchayat.timezone)
    # a training Panchayat's case numbers start with TRN- (webapp.services.panchayats.training): never a real one's
    sequence = next_case_sequence(session, panchayat, impounded_on.year)
    number = f"{'TRN-' if panchayat.training else ''}{panchayat.code}/{impounded_on.year}/{sequence:04d}"
    cf = CaseFile(case_number=number, timezone=panchayat.timezone, impounded_at=when, impounded_on=impounded_on,
                  place_seized=places["place_seized"], place_impounded=places["place_impounded"],
                  nearest_village=places["nearest_village"],
                  animals=records, appeal_period_days=panchayat.appeal_period_days,
                  return_period_days=panchayat.return_period_days)
    now = clock.now()
    case = Case(case_number=number, panchayat_id=panchayat.id, process_version_id=version_id, status="running",
                outcome="pending", file_json=casefile.dump(cf), state_json="{}", created_at=now, updated_at=now,
                cattle_held=pound.cattle_in_pound(cf),
                submission_key=submission_key, submission_hash=sent if submission_key is not None else None)
    session.add(case)
    try:
        session.flush()
    except IntegrityError as error:  # the same key, sent twice at once: the other request recorded the case
        if submission_key is None or "submission_key" not in str(error.orig):
            raise
        raise AlreadySubmitted(M_("this form was already sent and is being recorded; it is not recorded again"),
                               0, "") from None
    start_data = {"case_number": number, "impounded_at": when.isoformat(), "timezone": panchayat.timezone,
                  "appeal_period_days": panchayat.appeal_period_days,
                  "return_period_days": panchayat.return_period_days}
    run = CaseRun(session, case, user, start_data=start_data)
    run.event("start", "Cattle impounded", element_id="start_impounded", actor_role=user.role,
              detail={"animals": len(records)})
    run.run()
    run.save()
    return case


def next_case_sequence(session: Session, panchayat: Panchayat, year: int) -> int:
    """The next number (from 1) of ``panchayat``'s cases impounded in ``year``, counted in the database.

    One ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` (PostgreSQL, SQLite 3.35+): the first case of
    a year makes its row with 1, each later one adds 1; the write holds the row's lock (PostgreSQL) or
    the database's (SQLite) until this transaction ends, so cases started at the same moment get
    different numbers, and a rolled-back start gives its number back.
    """
    statement = _NEXT_NUMBER[session.get_bind().dialect.name == "postgresql"]
    return int(session.execute(statement, {"panchayat_id": panchayat.id, "year": year, "last": 1}).scalar_one())


def _next_number(insert: Any) -> Any:
    return (insert(CaseNumberSequence)
            .on_conflict_do_update(index_elements=[CaseNumberSequence.panchayat_id, CaseNumberSequence.year],
                                   set_={"last": CaseNumberSequence.last + 1})
            .returning(CaseNumberSequence.last))


_NEXT_NUMBER = {False: _next_number(sqlite_insert), True: _next_number(postgresql_insert)}  # built once each


SUBMISSION_KEY = re.compile(r"[A-Za-z0-9_-]{8,80}")


def _fingerprint(impounded_at: Any, place_seized: Any, place_impounded: Any, nearest_village: Any,
                 animals: Any) -> str:
    """SHA-256 (hex) of what a new-case call sent, as sent (an instant as its ISO text): the same
    call repeated gives the same hash; any other detail, another."""
    instant = impounded_at.isoformat() if isinstance(impounded_at, datetime) else impounded_at
    payload = [instant, place_seized, place_impounded, nearest_village, animals]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _check_submission_key(key: Any) -> None:
    if not isinstance(key, str) or not SUBMISSION_KEY.fullmatch(key):
        raise Refused(M_("the submission key must be 8 to 80 letters, digits, '-' or '_'"),
                      {"submission": M_("not a submission key")})


def case_for_submission(session: Session, user: User, key: str) -> Case | None:
    """The case of the user's Panchayat started with submission key ``key``, if any."""
    if user.panchayat_id is None or not isinstance(key, str):
        return None
    return session.scalar(select(Case).where(Case.panchayat_id == user.panchayat_id, Case.submission_key == key))
