"""The shared builders of the tests that drive one case through the services (not the simulator):
:class:`Driver` (the ``drive`` fixture of conftest.py), the cattle most tests impound, and the steps
several test files take on the way to what they check — the notice, a sale at full price, the order
that the auction stand up to the final outcome, an interim delivery, a refused act.

Each step uses the real services (``uow.perform`` + ``cases`` / ``tasks`` / ``timers``) and moves the
virtual clock strictly past each due instant to fire timers.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import select

from webapp.errors import Refused
from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.money import ledger
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, TimerFiring
from webapp.values import casefile

D = Decimal
US = timedelta(microseconds=1)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def ist_midnight(day: str) -> datetime:
    """00:00 in Asia/Kolkata of ``day`` (YYYY-MM-DD), as an aware instant."""
    return at(f"{day}T00:00:00+05:30")


class Driver:
    """One case driven through the services, with the virtual clock."""

    def __init__(self, sessions, officers, clock) -> None:
        self.sessions, self.officers, self.clock = sessions, officers, clock
        self.case_id: int | None = None

    # -- acting --------------------------------------------------------------------------------
    def start(self, animals, impounded_at="2026-01-05T10:00:00+05:30", **tariff_overrides) -> Case:
        case = uow.perform(self.sessions, "start_case", cases.start_case, self.officers["pound_keeper"],
                           impounded_at=impounded_at, place_seized="Bhimpura",
                           place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                           animals=animals)
        self.case_id = case.id
        return case

    def move(self, instant: str | datetime) -> None:
        self.clock.set(at(instant) if isinstance(instant, str) else instant)

    def act(self, role, element_id, data=None, *, user=None, **match):
        user = user or self.officers[role]
        return uow.perform(self.sessions, element_id, tasks.act, user, self.case_id, element_id, data or {},
                           case_id=self.case_id, user=user, **match)

    def object(self, objector):
        sec = self.officers["secretary"]
        return uow.perform(self.sessions, "file_objection", cases.file_objection, sec, self.case_id, objector,
                           case_id=self.case_id, user=sec)

    def appeal(self, appellant):
        sec = self.officers["secretary"]
        return uow.perform(self.sessions, "file_appeal", cases.file_appeal, sec, self.case_id, appellant,
                           case_id=self.case_id, user=sec)

    def animal_event(self, kind, **which):
        pk = self.officers["pound_keeper"]
        return uow.perform(self.sessions, f"record_{kind}", cases.record_animal_event, pk, self.case_id, kind,
                           case_id=self.case_id, user=pk, **which)

    def fire_past(self, due: datetime, extra: timedelta = US) -> int:
        """Move the clock just past ``due`` and run one worker pass."""
        self.clock.set(due + extra)
        return timers.fire_due(self.sessions)

    # -- reading -------------------------------------------------------------------------------
    def case(self) -> Case:
        with self.sessions() as s:
            return s.get(Case, self.case_id)

    def file(self) -> casefile.CaseFile:
        return casefile.load(self.case().file_json)

    def ready(self, role: str) -> list[tuple[str, date | None]]:
        """(element id, due date) of the ready tasks in ``role``'s list for this case."""
        with self.sessions() as s:
            views = tasks.my_tasks(s, self.officers[role])
        return [(v.element_id, v.due) for v in views if v.case_id == self.case_id]

    def all_ready(self) -> dict[str, list[str]]:
        roles = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
        return {r: [e for e, _ in self.ready(r)] for r in roles if self.ready(r)}

    def summary(self) -> dict:
        with self.sessions() as s:
            return cases.summary(s, s.get(Case, self.case_id))

    def entries(self) -> list[tuple[str, str, Decimal, str, str]]:
        with self.sessions() as s:
            return [(e.from_account, e.to_account, e.amount, e.kind, e.clause)
                    for e in ledger.entries(s, self.case_id)]

    def history(self):
        with self.sessions() as s:
            return cases.history(s, s.get(Case, self.case_id))

    def firings(self) -> list[TimerFiring]:
        with self.sessions() as s:
            return list(s.scalars(select(TimerFiring).where(TimerFiring.case_id == self.case_id)
                                  .order_by(TimerFiring.id)))

    def snapshot(self):
        """Everything a refused act must leave alone."""
        case = self.case()
        with self.sessions() as s:
            events = [(e.kind, e.name) for e in cases.history(s, case) if e.kind != "refusal"]
        return (case.state_json, case.file_json, case.lock_version, case.next_timer_due, case.status,
                self.entries(), events)


TWO_COWS = [{"species": "cow", "description": "brown cow, white patch", "tag": "RJ-1"},
            {"species": "cow", "description": "black cow, broken horn", "tag": "RJ-2"}]
ONE_COW = [{"species": "cow", "description": "grey cow, bell on neck", "tag": "RJ-9"}]


def publish(drive, when="2026-01-09T11:00:00+05:30", days=30, full_price="12000.00"):
    drive.move(when)
    return drive.act("secretary", "ut_publish_notice", {"objection_period_days": days, "full_price": full_price})


def refused(drive, call, *args, error=Refused, match=None, **kwargs):
    """Call an act that must be refused: nothing changes and the refusal is in the history."""
    before = drive.snapshot()
    count = sum(1 for e in drive.history() if e.kind == "refusal")
    with pytest.raises(error) as info:
        call(*args, **kwargs)
    if match is not None:
        assert match.lower() in info.value.message.lower()
    assert drive.snapshot() == before
    refusals = [e for e in drive.history() if e.kind == "refusal"]
    assert len(refusals) == count + 1
    assert json.loads(refusals[-1].detail_json)["message"] == info.value.message
    return info.value


def sell(drive, bidder="Bidder B", amount="12000.00", when="2026-01-09T15:00:00+05:30"):
    """The secretary records ``bidder``'s bid of ``amount`` (rupees) at ``when``: at or above the full
    price it closes the auction (Rule 130(b))."""
    drive.move(when)
    return drive.act("secretary", "ut_record_bid", {"bidder": bidder, "amount": amount})


def order_stand_to_final(drive, period_end="2026-02-09", ordered_at="2026-02-09T11:00:00+05:30",
                         appeal_end="2026-03-12"):
    """The objection period ends (00:00 IST of ``period_end``), the sarpanch orders that the auction
    stand at ``ordered_at``, and the appeal window ends (00:00 IST of ``appeal_end``): the outcome is
    final (Rule 130(e))."""
    drive.fire_past(ist_midnight(period_end))
    drive.move(ordered_at)
    drive.act("sarpanch", "ut_order_stand")
    drive.fire_past(ist_midnight(appeal_end))


def send_unsold_to_kishanpura(drive) -> None:
    """One cow's case to the sarpanch's decision on unsold cattle: released to nobody, the notice
    published on 2026-01-09, the auction over unsold (00:00 IST of 2026-01-12), and the cattle sent
    on 2026-01-12 10:00 IST to Gram Panchayat Kishanpura for sale by its receiving officer
    (Rule 130(d))."""
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.fire_past(ist_midnight("2026-01-12"))
    drive.move("2026-01-12T10:00:00+05:30")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "neighbouring_panchayat",
                                               "receiver": "Gram Panchayat Kishanpura"})
