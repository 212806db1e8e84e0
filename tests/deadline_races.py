"""Acts at the last millisecond of a legal window, raced against the timer that ends it.

Used by tests/test_act_instant.py (a few races per window on each database) and by
tests/bench/races.py (hundreds, with figures). One race:

1. a case is carried, on a virtual clock, to the day a window ends (the release window, the
   conditional auction, the objection period, the appeal period or the return period);
2. two threads start together on real time: an officer's act sent through the JSON API, arriving
   within the last millisecond before the window's end (its thread's clock reads the end less
   0-1 ms), and a timer worker whose clock reads the end plus 0-1 ms, so that the window's timer is
   due for it at once;
3. the answer is compared with what the case then holds: a 2xx answer means the act is in the case
   (stamped before the end) and the window's timer did not overtake it; a refusal (409 conflict)
   means nothing of the act is in the case and the timer's effect is. A 5xx, a refusal with the act
   recorded, or success with the act lost is a defect.

The worker fires with a given settle time (0 s: the raw race; the product's default: the worker
stays behind the clock, so the act in flight always wins).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from webapp.engine.execution import runtime
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.simulation.simulate import fire_until
from webapp.store.models import Case, CaseEvent, TimerFiring
from webapp.values import casefile, clock, legal_time

IMPOUNDED = datetime.fromisoformat("2026-01-05T10:00:00+05:30")
TZ = "Asia/Kolkata"
ONE_COW = [{"species": "cow", "description": "grey cow, bell on neck", "tag": "RJ-9"}]
WINDOWS = ("release", "auction", "objection", "appeal", "return")


class ArrivingClock:
    """Reads ``start`` the first time (the request's arrival: the first reading is the web
    application's), then runs on in real time from there."""

    def __init__(self, start: datetime) -> None:
        self.start, self._offset = start, None
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            real = datetime.now(self.start.tzinfo)
            if self._offset is None:
                self._offset = self.start - real
            return real + self._offset


@dataclass
class Window:
    """A legal window: how a case reaches its last day, the act, and how to tell who won."""

    kind: str
    timer: str  # the element id of the timer that ends it
    request: Callable[[int], tuple[str, str, dict[str, Any]]]  # case id -> (role, path, body)
    applied: Callable[[casefile.CaseFile], bool]  # whether the act is in the case file


def _case_file(sessions, case_id: int) -> casefile.CaseFile:
    with sessions() as session:
        return casefile.load(session.get(Case, case_id).file_json)


WINDOW_SPECS = {
    "release": Window("release", "bt_release_window",
                      lambda cid: ("pound_keeper", f"/cases/{cid}/acts/ut_release", {"data": {"owner": "Owner O"}}),
                      lambda cf: cf.outcome == "released_by_owner"),
    "auction": Window("auction", "bt_auction_closes",
                      lambda cid: ("secretary", f"/cases/{cid}/acts/ut_record_bid",
                                   {"data": {"bidder": "Bidder Last", "amount": "12000.00"}}),
                      lambda cf: any(b.bidder == "Bidder Last" for a in cf.auctions for b in a.bids)),
    "objection": Window("objection", "n_ice_period_ends",
                        lambda cid: ("secretary", f"/cases/{cid}/objections", {"objector": "Objector Last"}),
                        lambda cf: any(o.objector == "Objector Last" for o in cf.objections)),
    "appeal": Window("appeal", "ice_appeal_window_ends",
                     lambda cid: ("secretary", f"/cases/{cid}/appeals", {"appellant": "Appellant Last"}),
                     lambda cf: any(a.appellant == "Appellant Last" for a in cf.appeals)),
    "return": Window("return", "bt_return_deadline",
                     lambda cid: ("secretary", f"/cases/{cid}/acts/ut_return_by_objector", {"data": {}}),
                     lambda cf: cf.interim is not None and cf.interim.returned_on is not None),
}


class Stager:
    """Carries new cases to the last day of a window on a virtual clock (services, no web)."""

    def __init__(self, sessions, officers) -> None:
        self.sessions, self.officers = sessions, officers

    def _act(self, role: str, element: str, data: dict[str, Any], case_id: int, **match: Any) -> None:
        user = self.officers[role]
        uow.perform(self.sessions, element, tasks.act, user, case_id, element, data, case_id=case_id,
                    user=user, **match)

    def stage(self, kind: str) -> tuple[int, datetime]:
        """A new case at the end of window ``kind``: (case id, the instant the window ends, UTC).

        Every timer due before the end has fired; the window's own timer is armed for the end."""
        virtual = clock.VirtualClock(IMPOUNDED)
        with clock.installed(virtual):
            case = uow.perform(self.sessions, "start_case", cases.start_case, self.officers["pound_keeper"],
                               impounded_at=IMPOUNDED, place_seized="Bhimpura", place_impounded="Kanji House",
                               nearest_village="Bhimpura", animals=ONE_COW)
            cid = case.id
            steps: list[tuple[str, Callable[[], None]]] = []
            sec = self.officers["secretary"]
            publish = lambda: self._act("secretary", "ut_publish_notice",
                                        {"objection_period_days": 30, "full_price": "12000.00"}, cid)
            if kind != "release":
                steps.append(("2026-01-09T11:00:00+05:30", publish))
            if kind in ("objection", "appeal"):
                steps.append(("2026-01-10T11:00:00+05:30", lambda: self._act(
                    "secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "9000.00"}, cid)))
            if kind == "appeal":
                steps.append(("2026-02-09T11:00:00+05:30", lambda: self._act("sarpanch", "ut_order_stand", {}, cid)))
            if kind == "return":
                steps.append(("2026-01-10T11:00:00+05:30", lambda: uow.perform(
                    self.sessions, "file_objection", cases.file_objection, sec, cid, "Objector L", case_id=cid,
                    user=sec)))
                steps.append(("2026-01-11T11:00:00+05:30", lambda: self._act(
                    "sarpanch", "ut_decide_objection", {"decision": "interim_delivery", "security": "20000.00"},
                    cid, objector="Objector L")))
                steps.append(("2026-01-20T11:00:00+05:30", lambda: self._act(
                    "sarpanch", "ut_decide_objection", {"decision": "not_proved"}, cid, objector="Objector L")))
            for when, step in steps:
                instant = datetime.fromisoformat(when)
                fire_until(self.sessions, cid, virtual, instant)
                virtual.set(instant)
                step()
            spec = WINDOW_SPECS[kind]
            for _ in range(50):  # fire what falls due before the window's own timer
                end = self.armed(cid, spec.timer)
                if end is not None:
                    break
                fire_until(self.sessions, cid, virtual, self.next_due(cid))
            else:
                raise AssertionError(f"the {kind} window's timer {spec.timer} was never armed")
            fire_until(self.sessions, cid, virtual, end - timedelta(microseconds=1))
            assert self.armed(cid, spec.timer) == end, f"the {kind} window's timer moved"
        return cid, end

    def armed(self, case_id: int, element_id: str) -> datetime | None:
        with self.sessions() as session:
            case = session.get(Case, case_id)
            loaded = repository.load_id(session, case.process_version_id)
            wf = runtime.load_state(case.state_json, loaded.parsed, lambda *_: {})
        return next((t.due for t in runtime.armed_timers(wf) if t.bpmn_id == element_id), None)

    def next_due(self, case_id: int) -> datetime:
        with self.sessions() as session:
            return session.get(Case, case_id).next_timer_due


@dataclass
class Race:
    """What one race gave: the answer, whether the act and the timer are in the case, and why not
    consistent (empty when the answer agrees with the case)."""

    kind: str
    status: int
    act_in_case: bool
    timer_fired: bool
    problems: list[str]


def race(app, sessions, officers, tokens: dict[str, str], kind: str, *, settle: float = 0.0,
         rng: random.Random | None = None) -> Race:
    """Run one race of window ``kind`` (see the module docstring) and judge it."""
    rng = rng or random.Random()
    spec = WINDOW_SPECS[kind]
    case_id, end = Stager(sessions, officers).stage(kind)
    role, path, body = spec.request(case_id)
    act_at = end - timedelta(microseconds=rng.randint(1, 1000))   # the window's last millisecond
    fire_at = end + timedelta(microseconds=rng.randint(1, 1000))  # the timer is due for the worker
    barrier = threading.Barrier(2)
    answer: dict[str, Any] = {}
    errors: list[BaseException] = []

    def officer() -> None:
        try:
            client = app.test_client()
            barrier.wait()
            clock.install(ArrivingClock(act_at))  # real time runs on from the last millisecond
            response = client.post(f"/api/v1{path}", json=body, headers={"Authorization": f"Bearer {tokens[role]}"})
            answer["status"], answer["json"] = response.status_code, response.get_json(silent=True)
        except BaseException as error:
            errors.append(error)

    def worker() -> None:
        try:
            barrier.wait()
            clock.install(clock.OffsetClock(fire_at))
            for _ in range(20):  # a worker's passes over the next ~0.2 s
                if timers.fire_due(sessions, settle_seconds=settle):
                    break
                threading.Event().wait(0.01)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=officer), threading.Thread(target=worker)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    if errors:
        raise errors[0]
    # the worker, later on, fires whatever is still due (with no act in flight)
    with clock.installed(clock.VirtualClock(end + timedelta(seconds=settle + 1))):
        timers.fire_due(sessions)
    return judge(sessions, case_id, kind, end, answer.get("status", 0), answer.get("json"))


def judge(sessions, case_id: int, kind: str, end: datetime, status: int, body: Any) -> Race:
    """Compare the answer with the case (see the module docstring)."""
    spec = WINDOW_SPECS[kind]
    cf = _case_file(sessions, case_id)
    in_case = bool(spec.applied(cf))
    with sessions() as session:
        fired = session.query(TimerFiring).filter_by(case_id=case_id, element_id=spec.timer).count()
        events = session.query(CaseEvent).filter_by(case_id=case_id).order_by(CaseEvent.id).all()
    problems: list[str] = []
    if status >= 500 or status == 0:
        problems.append(f"answered {status}: {body}")
    elif 200 <= status < 300:
        if not in_case:
            problems.append(f"answered {status} but the act is not in the case")
        acts = [e for e in events if e.kind != "refusal" and e.actor_role not in (None, "timer")
                and e.kind != "notification" and e.at >= end - timedelta(seconds=1)]
        late = [e for e in acts if e.at >= end]
        if late:
            problems.append(f"the act was stamped at {late[0].at.isoformat()}, not before {end.isoformat()}")
        timer_rows = [e for e in events if e.kind == "timer" and e.element_id == spec.timer]
        if timer_rows and acts and timer_rows[0].id < acts[0].id:
            problems.append("the window's timer is in the history before the act that answered success")
    else:
        if in_case:
            problems.append(f"answered {status} but the act is in the case")
        if not fired:
            problems.append(f"answered {status} while the window's timer never fired")
        code = (body or {}).get("error", {}).get("code")
        if code not in ("conflict", "deadline_passed", "refused"):
            problems.append(f"answered {status} with code {code!r}")
    last = legal_time.day_before_instant(end, TZ)
    if in_case and fired and kind in ("release", "auction"):
        problems.append(f"the act and the timer that ends the window on {last} both took effect")
    return Race(kind, status, in_case, bool(fired), problems)


def make_tokens(sessions, officers) -> dict[str, str]:
    """One API token per officer role (the roles of tests/conftest.py's ``officers``)."""
    made = {}
    with sessions() as session:
        for role, user in officers.items():
            made[role] = users.create_token(session, user.username)
        session.commit()
    return made
