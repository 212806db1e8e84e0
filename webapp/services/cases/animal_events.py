"""What happens to the cattle in the pound that is not an officer's task: a death, an escape, or a
calf born in the pound (RULE130.md, clause 0 and "Cattle back in custody").
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy.orm import Session

from webapp.engine.execution import runtime
from webapp.errors import Refused
from webapp.i18n import M_
from webapp.services.people.scope import get_case
from webapp.services.running.case_run import CaseRun, open_run, require_role
from webapp.store.models import Case, User
from webapp.values import clock, legal_time, textguard
from webapp.values.casefile import Animal, CaseFile

ZERO = Decimal("0.00")


def _calf_day(value: date | str | None, cf: CaseFile, today: date) -> date:
    """The birth day given (a date, ``YYYY-MM-DD`` in ASCII or Devanagari digits, or None for
    today), checked against the custody.

    Raises:
        Refused: not a date, after today, or before the cattle were (back) in the pound.
    """
    if value is None or value == "":
        return today
    if isinstance(value, datetime) or not isinstance(value, (date, str)):
        raise Refused(M_("the day of birth must be a date such as 2026-01-07"), {"born_on": M_("not a date")})
    try:
        day: date | None = legal_time.parse_day(value)  # Devanagari digits too (webapp.values.digits)
    except ValueError:
        day = None
    if day is None:
        raise Refused(M_("the day of birth must be a date such as 2026-01-07"), {"born_on": M_("not a date")})
    if day > today:
        raise Refused(M_("the day of birth %(day)s is after today", day=day), {"born_on": M_("in the future")})
    since = cf.interim.returned_on if cf.interim and cf.interim.returned_on else cf.impounded_on
    if day < since:
        raise Refused(M_("the cattle have been in the pound since %(since)s; a calf born on %(day)s was not born in "
                         "the pound", since=since, day=day), {"born_on": M_("before the cattle were in the pound")})
    return day


def record_animal_event(session: Session, user: User, case_id: int | str, kind: str, *,
                        tag: str | None = None, position: int | None = None, born_on: date | str | None = None,
                        calf_description: str | None = None, calf_tag: str | None = None) -> Case:
    """Record that an animal died or escaped in the pound today (its feeding stops), or that a
    calf was born in the pound (RULE130.md 0).

    Death and escape: ``tag`` or ``position`` names the animal; if no animal is left before the
    notice is published, the case closes (closed_no_animals).

    Birth (RULE130.md 0, reading: "a calf born in the pound joins the lot — no fine, feeding from
    its birth day, and it goes with its mother"): ``tag`` or ``position`` names the mother, a living
    animal of the lot (not a bullock); ``born_on`` is the local calendar day of birth (default
    today; not after today, not before the cattle came into the pound). The calf is added to the
    case's animals with the mother's species, a fine of 0 and the mother's feeding rate per day
    (the tariff of the case's impoundment day), fed from its birth day (that day counted, as the
    impound day is); ``calf_description`` (default "calf of <mother>") and ``calf_tag`` (optional,
    unique in the case) describe it. It is released, sold, returned or delivered with the lot, and
    its own death or escape is recorded like any animal's.
    Raises:
        NotPermitted: not the pound keeper. NotFound: outside the user's scope.
        Refused: unknown kind or animal, an animal already gone, cattle no longer in the pound, a
            bad day of birth, a bullock or a calf born in the pound as mother, or a calf tag already used.
    """
    get_case(session, user, case_id)  # scope first: another Panchayat's case is "not found", not "forbidden"
    require_role(user, "pound_keeper")
    if kind not in ("death", "escape", "birth"):
        raise Refused(M_("unknown animal event %(kind)s; use death, escape or birth", kind=repr(kind)),
                      then=M_("Choose death, escape or birth and send it again."))
    run = open_run(session, user, case_id)
    cf = run.cf
    today = legal_time.local_day(clock.now(), cf.timezone)
    animal = next((a for a in cf.animals if (tag and a.tag == tag) or (position and a.position == position)), None)
    if animal is None and tag:  # the tag as written on the ear, in the other letter case
        animal = next((a for a in cf.animals if a.tag and a.tag.casefold() == str(tag).casefold()), None)
    if animal is None:
        which = tag or position
        raise Refused(M_("no animal %(which)s in case %(case)s", which=which, case=cf.case_number) if which
                      else M_("say which animal (its tag or number)"),
                      {"animal": M_("unknown animal")})
    if animal.gone_on() is not None:
        raise Refused(M_("%(animal)s is already recorded as gone on %(day)s", animal=animal.label, day=animal.gone_on()),
                      then=M_("Nothing more is recorded for this animal; if the entry was wrong, a corrigendum can "
                              "amend it."))
    # Out of the Panchayat's custody: with a buyer (until the buyer returns them), with a receiving
    # officer, released, delivered, or with an objector on interim delivery (until returned). Back
    # in custody after a return, what happens to them is recorded again (RULE130.md, "Cattle back
    # in custody").
    if ((cf.sale and cf.sale.returned_on is None) or cf.dispatch or cf.release or cf.delivered_on is not None
            or (cf.interim and not cf.interim.returned_on)):
        raise Refused(M_("%(animal)s is no longer in the pound", animal=animal.label),
                      then=M_("The pound keeper records a death, escape or birth only while the animal is in the "
                              "pound; once it is back in the pound, it can be recorded."))
    if kind == "birth":
        _record_birth(run, user, animal, _calf_day(born_on, cf, today), calf_description, calf_tag)
        run.run()
        run.save()
        return run.case
    if kind == "death":
        animal.died_on = today
    else:
        animal.escaped_on = today
    run.event("task", "Death recorded" if kind == "death" else "Escape recorded", actor_role=user.role,
              detail={"animal": animal.label})
    run.run()
    if not cf.living_animals() and runtime.is_waiting_for_message(run.wf, "lot_gone"):
        runtime.deliver_message(run.wf, "lot_gone", {})
        run.run()
    run.save()
    return run.case


def _record_birth(run: CaseRun, user: User, mother: Animal, day: date, description: str | None,
                  tag: str | None) -> Animal:
    cf = run.cf
    if mother.species == "bullock":
        raise Refused(M_("%(animal)s is a bullock; choose the calf's mother", animal=mother.label),
                      {"animal": M_("not a mother")})
    if mother.born_on is not None:  # a calf born in the pound is not yet a mother while it is there
        raise Refused(M_("%(animal)s is a calf born in the pound on %(day)s; choose the calf's mother",
                         animal=mother.label, day=mother.born_on), {"animal": M_("not a mother")})
    if (tag is not None and not isinstance(tag, str)) or (description is not None and not isinstance(description, str)):
        raise Refused(M_("the calf's description and tag must be text"), {"calf": M_("not text")})
    textguard.check({"calf_tag": tag or "", "calf_description": description or ""}, "")
    textguard.check_one_line(tag, "calf_tag", M_("the calf's tag"))
    textguard.check_one_line(description, "calf_description", M_("the calf's description"))
    tag = None if tag is None or textguard.is_blank(tag) else tag.strip()
    if tag and len(tag) > 200:
        raise Refused(M_("the calf's tag is longer than 200 characters"), {"calf_tag": M_("too long")})
    if tag and any(a.tag and a.tag.casefold() == tag.casefold() for a in cf.animals):
        raise Refused(M_("the tag %(tag)s is already on an animal of this case", tag=tag), {"calf_tag": M_("tag in use")})
    # stored in English, shown in each reader's language (stored_texts.MEMOS)
    text = f"calf of {mother.label}" if description is None or textguard.is_blank(description) else description.strip()
    if len(text) > 200:
        raise Refused(M_("the calf's description is longer than 200 characters"), {"calf_description": M_("too long")})
    calf = Animal(position=len(cf.animals) + 1, species=mother.species, description=text, tag=tag, fine=ZERO,
                  feeding_per_day=mother.feeding_per_day, born_on=day, mother=mother.position)
    cf.animals.append(calf)
    run.event("task", "Birth recorded", actor_role=user.role,
              detail={"calf": calf.label, "mother": mother.label, "born_on": day.isoformat()})
    return calf
