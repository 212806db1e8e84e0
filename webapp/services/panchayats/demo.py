"""Demo data for the quick start: Panchayat RMP (Rampura, Panchayat Samiti Dudu), one officer per
role, a case impounded four days ago (its 3-day timer has made the secretary's notice task) and a
case whose notice is running with an auction that closed unsold (the sarpanch decides)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, Panchayat, User
from webapp.values import clock

# (user name, role, display name): the display name is the person's name only; the pages show the
# role beside it in the reader's language ("Ramesh (pound keeper)"), so a role in the name would
# show twice, and in English on a Hindi page
DEMO_USERS = (
    ("keeper", "pound_keeper", "Ramesh"),
    ("secretary", "secretary", "Sunita"),
    ("sarpanch", "sarpanch", "Mohan Lal"),
    ("appellate", "appellate_authority", "Rajendra Singh"),
    ("receiver", "receiving_officer", "Kailash Meena"),
    ("admin", "administrator", "Pooja Sharma"),
)


def ensure_demo(sessions: sessionmaker[Session], password: str) -> list[str]:
    """Create the demo data unless Panchayat RMP exists. Returns lines describing what was made."""
    with sessions() as session:
        if session.scalar(select(Panchayat).where(Panchayat.code == "RMP")) is not None:
            return ["demo data already present"]
        users.create_panchayat(session, "RMP", "Rampura", "DUDU", district="Jaipur")
        made = {}
        for username, role, display in DEMO_USERS:
            made[role] = users.create_user(
                session, username, password, role, display_name=display,
                panchayat_code="RMP" if role in users.PANCHAYAT_ROLES else None,
                samiti_code="DUDU" if role == "appellate_authority" else None)
        session.commit()
    demo_cases(sessions, made["pound_keeper"], made["secretary"])
    return ["demo Panchayat RMP (Rampura) with users " + ", ".join(u for u, _, _ in DEMO_USERS),
            "demo cases: one impounded four days ago (the secretary publishes its notice), one with its notice "
            "running and its auction closed unsold (the sarpanch decides)"]


def demo_cases(sessions: sessionmaker[Session], keeper: User, secretary: User) -> None:
    """The two demo cases, opened by ``keeper`` (a pound keeper) and worked by ``secretary`` of one
    Panchayat, at the installed clock's instant: one impounded four days ago (the release window's
    timer has made the secretary's "Publish notice" task), one impounded eight days ago whose
    auction closed unsold today (the sarpanch's decision is due). Raises what the acts raise."""
    now = clock.now()
    start: Callable[..., Case] = cases.start_case
    uow.perform(sessions, "start_case", start, keeper, impounded_at=now - timedelta(days=4),
                place_seized="Bhimpura fields", place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                animals=[{"species": "cow", "description": "brown cow, white patch on forehead", "tag": "RJ-1001"},
                         {"species": "cow", "description": "black cow, left horn broken", "tag": "RJ-1002"}])
    # A second case, lived through on a virtual clock: impounded 8 days ago, notice 3 days ago,
    # one bid below full price, auction closed unsold at the start of today (the decision is due
    # tomorrow: a fresh install shows no task overdue).
    past = now - timedelta(days=8)
    virtual = clock.VirtualClock(past)
    with clock.installed(virtual):
        case = uow.perform(sessions, "start_case", start, keeper, impounded_at=past,
                           place_seized="Road to Kishanpura", place_impounded="Kanji House, Rampura",
                           nearest_village="Kishanpura",
                           animals=[{"species": "goat", "description": "white goat, red collar"},
                                    {"species": "goat", "description": "brown goat"}])
        _advance(sessions, virtual, now - timedelta(days=3))
        uow.perform(sessions, "publish_notice", tasks.act, secretary, case.id, "ut_publish_notice",
                    {"objection_period_days": 30, "full_price": "6000.00"})
        virtual.set(virtual.now() + timedelta(days=1))
        uow.perform(sessions, "bid", tasks.act, secretary, case.id, "ut_record_bid",
                    {"bidder": "Harish", "amount": "4500.00"})
        _advance(sessions, virtual, now)


def _advance(sessions: sessionmaker[Session], virtual: clock.VirtualClock, until: datetime) -> None:
    """Move the virtual clock to ``until``, firing timers on the way."""
    for _ in range(100):
        due = timers.next_due(sessions)
        if due is None or due >= until:
            break
        virtual.set(due + timedelta(microseconds=1))
        timers.fire_due(sessions)
    virtual.set(until)
