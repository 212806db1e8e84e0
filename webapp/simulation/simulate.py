"""The case simulator: run a scenario file (tests/scenarios/FORMAT.md) through the real diagram,
engine and services on a fresh database with a virtual clock, or into an existing database's
training Panchayat (never a live one: :func:`run_scenarios`, with the checks of
:mod:`webapp.simulation.target`). Its officers are users it made, who cannot sign in
(webapp.services.people.users.create_simulator_user).

Timers due at or before a step's ``at`` fire first (the clock just past each due instant); the
step then acts at its exact ``at``. After the last step the clock runs on through every armed
timer until the case ends or only an officer can move it. Exit status: 0 every expectation held,
1 a mismatch, 2 an invalid file (:class:`ScenarioError`).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import Refused, Rule130Error
from webapp.services.cases import cases, corrections, corrigenda
from webapp.services.diagrams import repository
from webapp.services.jobs import reminders, timers
from webapp.services.running import acts, uow
from webapp.services.tasks import tasks
from webapp.simulation import target as simulation_target
from webapp.simulation.scenario_file import MAKER, Scenario, Step
from webapp.simulation.scenario_file import ScenarioError as ScenarioError
from webapp.simulation.scenario_file import load_scenario as load_scenario
from webapp.store import db
from webapp.store.models import Case, CaseEvent, User, get_row
from webapp.values import clock

# -- running ------------------------------------------------------------------------------------

@dataclass
class Result:
    result: dict[str, Any]
    mismatches: list[str]
    timeline: list[dict[str, Any]]
    case_number: str = ""  # e.g. TRN-SIM1/2026/0001 (a training Panchayat's)


DEFAULT_PANCHAYAT = "SIM1"  # the simulator's Panchayat (Samiti SIMS1) when none is named


def run_scenario(scenario: Scenario, database_url: str | None = None, panchayat_code: str | None = None) -> Result:
    """Run ``scenario`` on a fresh temporary SQLite database, or into the existing ``database_url``.

    The case is opened in the training Panchayat ``panchayat_code`` (default
    :data:`DEFAULT_PANCHAYAT`), created as a training Panchayat with the scenario's time zone and
    settings when the database has none of that code.
    Raises:
        ScenarioError: as :func:`run_scenarios`.
    """
    return run_scenarios([scenario], database_url, panchayat_code)[0]


def run_scenarios(scenarios: list[Scenario], database_url: str | None = None,
                  panchayat_code: str | None = None) -> list[Result]:
    """Run several scenarios, each as its own case, in the order given.

    With ``database_url`` every scenario runs into that one database and the same Panchayat
    (``panchayat_code``, default :data:`DEFAULT_PANCHAYAT`; its cases are numbered on from the
    Panchayat's sequence), so the Panchayat's registers and statement cover them all
    (webapp.services.reports.registers). Without it, each runs on a fresh temporary database of its own.

    The simulator moves a virtual clock and fires its cases' timers at virtual instants, so it
    writes only into a training Panchayat (``panchayat.training``): an existing one, or one it
    creates (as training) when the code is new. A live Panchayat is refused, whatever it holds.
    Everything is checked before anything runs (the database, its schema, the Panchayat, every
    scenario against it), so a refusal changes nothing.
    Raises:
        ScenarioError: the code is not 1-16 letters/digits; ``database_url`` cannot be opened, is
            served by a running timer worker, or has an older or newer schema than this code
            (``rule130 init-db`` upgrades it; an empty database is set up here); the Panchayat is a
            live one (the message names it and the real cases and officers it holds); a user name
            the simulator needs is taken by a user it did not make; a scenario's time zone or
            settings differ from the Panchayat's (the first scenario's, when the Panchayat does not
            exist yet).
    """
    code = panchayat_code or DEFAULT_PANCHAYAT
    if not (code.isascii() and code.isalnum() and 1 <= len(code) <= 16):
        raise ScenarioError(f"--panchayat: {code!r} is not a Panchayat code (1 to 16 letters or digits)")
    if database_url is None:
        results = []
        for scenario in scenarios:
            with tempfile.TemporaryDirectory(prefix="rule130-sim-") as tmp:
                results.append(run_into(f"sqlite:///{Path(tmp) / 'simulation.db'}", [scenario], code)[0])
        return results
    simulation_target.check_database(database_url)
    return run_into(database_url, scenarios, code)


def run_into(url: str, scenarios: list[Scenario], code: str, end: datetime | None = None) -> list[Result]:
    """Run ``scenarios`` into the database ``url``, in the training Panchayat ``code``, after the
    checks of :func:`run_scenarios`; each case's timers fire up to ``end`` after its last step (every
    armed timer when None, as a simulation does; a training case filled from a scenario stops at the
    training clock's now: :mod:`webapp.simulation.training_fill`).

    Raises:
        ScenarioError: as :func:`run_scenarios`.
    """
    engine = db.make_engine(url)
    try:
        simulation_target.check_schema(engine, url)
        sessions = db.session_factory(engine)
        with sessions() as session:
            simulation_target.no_live_worker(session)
            existing = simulation_target.check_panchayat(session, code)
            simulation_target.check_fit(scenarios, existing, code)
        return [_run(scenario, sessions, code, end) for scenario in scenarios]
    finally:
        engine.dispose()


def _run(scenario: Scenario, sessions: sessionmaker[Session], code: str, end: datetime | None = None) -> Result:
    virtual = clock.VirtualClock(scenario.case["impounded_at"])
    with clock.installed(virtual):
        with sessions() as session:
            repository.deploy_bundled(session, "simulator")
            people = simulation_target.people(session, code, scenario)
            session.commit()
        c = scenario.case
        case = uow.perform(sessions, "start_case", cases.start_case, people["pound_keeper"],
                           impounded_at=c["impounded_at"], place_seized=c["place_seized"],
                           place_impounded=c["place_impounded"], nearest_village=c["nearest_village"],
                           animals=c["animals"], tariff=scenario.tariff)
        mismatches: list[str] = []
        receivers: dict[str, User] = {}
        recorded: dict[int, tuple[int, str]] = {}  # step number -> (the act it recorded, who made it)
        for step in scenario.steps:
            fire_until(sessions, case.id, virtual, step.at)
            virtual.set(step.at)
            try:
                if step.do == "correct":
                    _correct(sessions, case.id, step, people, recorded)
                elif step.do in ("corrigendum", "settle_owed"):
                    _corrigendum(sessions, case.id, step, people, recorded)
                else:
                    _perform(sessions, case.id, step, people, receivers, code)
                    _note_act(sessions, case.id, step, recorded)
                error = None
            except Rule130Error as refused:
                error = refused
            _check_step(step, error, mismatches)
        fire_until(sessions, case.id, virtual, end)
        if end is not None:
            virtual.set(max(virtual.now(), end))
        with sessions() as session:
            case = get_row(session, Case, case.id)
            result = _result(cases.summary(session, case))
            number = case.case_number
            timeline = _timeline(session, case, scenario.timezone)
        result["timeline"] = timeline
        mismatches.extend(_compare(scenario.expect, result))
        return Result(result, mismatches, timeline, number)


def fire_until(sessions: sessionmaker[Session], case_id: int, virtual: clock.VirtualClock, until: datetime | None) -> None:
    """Fire every timer due at or before ``until`` (all armed timers when None), in due order."""
    for _ in range(10_000):
        with sessions() as session:
            case = get_row(session, Case, case_id)
            due, running = case.next_timer_due, case.status == "running"
            alert = case.next_alert_at
        if running and alert is not None and (due is None or alert < due) and (until is None or alert <= until):
            virtual.set(max(virtual.now(), alert))  # a "deadline near" notice falls due (reminders.remind_due)
            reminders.remind_case(sessions, case_id)
            continue
        if not running or due is None or (until is not None and due > until):
            return
        virtual.set(max(virtual.now(), due + timedelta(microseconds=1)))
        timers.fire_case(sessions, case_id)
    raise RuntimeError("the simulated case keeps firing timers")


def _note_act(sessions: sessionmaker[Session], case_id: int, step: Step, recorded: dict[int, tuple[int, str]]) -> None:
    """Remember the act a step just recorded (for a later ``correct`` naming the step)."""
    with sessions() as session:
        act = acts.latest(session, case_id)
        if act is not None and all(act.id != known for known, _ in recorded.values()):
            recorded[step.number] = (act.id, act.actor_role or MAKER[step.do])


def _correct(sessions: sessionmaker[Session], case_id: int, step: Step, people: dict[str, User],
             recorded: dict[int, tuple[int, str]]) -> None:
    """The ``correct`` action: the act step ``step`` recorded is corrected (webapp.services.cases.corrections),
    by ``by`` or else by the role that made it."""
    f = step.fields
    if f["step"] not in recorded:
        raise Refused(f"step {f['step']} recorded no act to correct (it was refused)")
    act_id, maker = recorded[f["step"]]
    role = f.get("by") or maker
    officer = people.get(role)
    if officer is None:
        with sessions() as session:
            case = get_row(session, Case, case_id)
            officer = session.get(User, case.receiving_officer_id) if case.receiving_officer_id else None
        if officer is None:
            raise Refused("the case has no receiving officer to correct the act")
    uow.perform(sessions, "correct_act", corrections.correct, officer, case_id, act_id, f["reason"],
                case_id=case_id, user=officer)


def _corrigendum(sessions: sessionmaker[Session], case_id: int, step: Step, people: dict[str, User],
                 recorded: dict[int, tuple[int, str]]) -> None:
    """The ``corrigendum`` action (webapp.services.cases.corrigenda): the facts of the act step
    ``step`` recorded (the opening record without ``step``) amended by ``values``, by ``by`` or else
    the secretary; and ``settle_owed``: the secretary records money owed item ``item`` settled."""
    f = step.fields
    if step.do == "settle_owed":
        secretary = people["secretary"]
        uow.perform(sessions, "settle_owed", corrigenda.settle, secretary, case_id, f["item"], case_id=case_id,
                    user=secretary)
        return
    if "step" in f and f["step"] not in recorded:
        raise Refused(f"step {f['step']} recorded no act to amend (it was refused)")
    act_ref: int | str = recorded[f["step"]][0] if "step" in f else corrigenda.OPENING
    officer = people[f.get("by") or "secretary"]
    uow.perform(sessions, "corrigendum", corrigenda.issue, officer, case_id, act_ref, dict(f["values"]), f["reason"],
                case_id=case_id, user=officer)


def _perform(sessions: sessionmaker[Session], case_id: int, step: Step, people: dict[str, User], receivers: dict[str, User],
             code: str) -> None:
    f = step.fields

    def act(role: str, element: str, data: dict[str, Any] | None = None, **match: Any) -> Any:
        return uow.perform(sessions, step.do, tasks.act, people[role], case_id, element, data or {},
                           case_id=case_id, user=people[role], **match)

    if step.do == "release_by_owner":
        # a step without the amount received leaves it out: the owner handed over exactly what is
        # due (the service's one rule for an omitted amount, webapp.services.tasks.rules.OMITTED)
        act("pound_keeper", "ut_release", {k: f[k] for k in ("owner", "amount_received") if f.get(k) is not None})
    elif step.do in ("record_death", "record_escape"):
        uow.perform(sessions, step.do, cases.record_animal_event, people["pound_keeper"], case_id,
                    "death" if step.do == "record_death" else "escape", tag=f.get("tag"),
                    position=f.get("animal"), case_id=case_id, user=people["pound_keeper"])
    elif step.do == "record_birth":
        uow.perform(sessions, step.do, cases.record_animal_event, people["pound_keeper"], case_id, "birth",
                    tag=f.get("tag"), position=f.get("animal"), born_on=f.get("born_on"),
                    calf_description=f.get("calf_description"), calf_tag=f.get("calf_tag"), case_id=case_id,
                    user=people["pound_keeper"])
    elif step.do == "publish_notice":
        act("secretary", "ut_publish_notice", {"objection_period_days": f["objection_period_days"],
                                               "full_price": f["full_price"]})
    elif step.do == "bid":
        act("secretary", "ut_record_bid", {"bidder": f["bidder"], "amount": f["amount"]})
    elif step.do == "decide_unsold":
        if f.get("accept_highest_bid") is True:
            act("sarpanch", "ut_decide_unsold", {"choice": "accept_highest_bid"})
        else:
            receiver = str(f["receiver"])
            if receiver not in receivers:
                with sessions() as session:  # one receiving officer per name, across scenarios too
                    receivers[receiver] = simulation_target.receiver(session, receiver, code)
                    session.commit()
            # by user name: the one meant, even where a real officer has the same display name
            act("sarpanch", "ut_decide_unsold", {"choice": f["send_to"], "receiver": receivers[receiver].username})
    elif step.do == "record_remittance":
        with sessions() as session:
            case = get_row(session, Case, case_id)
            officer = session.get(User, case.receiving_officer_id) if case.receiving_officer_id else None
        if officer is None:
            raise Refused("the cattle have not been sent to a receiving officer")
        uow.perform(sessions, step.do, tasks.act, officer, case_id, "ut_record_remittance",
                    {"proceeds": f["proceeds"], "expenses": f["expenses"]}, case_id=case_id, user=officer)
    elif step.do == "file_objection":
        uow.perform(sessions, step.do, cases.file_objection, people["secretary"], case_id, f["objector"],
                    case_id=case_id, user=people["secretary"])
    elif step.do == "grant_interim_delivery":
        data = {"decision": "interim_delivery", "security": f["security"]}
        if f.get("reason"):
            data["reason"] = str(f["reason"])
        act("sarpanch", "ut_decide_objection", data, objector=f["objector"])
    elif step.do == "decide_ownership":
        act("sarpanch", "ut_decide_objection", {"decision": "proved" if f["proved"] else "not_proved"},
            objector=f["objector"])
    elif step.do == "order_auction_stand":
        act("sarpanch", "ut_order_stand")
    elif step.do == "file_appeal":
        uow.perform(sessions, step.do, cases.file_appeal, people["secretary"], case_id, f["appellant"],
                    case_id=case_id, user=people["secretary"])
    elif step.do == "decide_appeal":
        act("appellate_authority", "ut_decide_appeal", {"decision": f["decision"]})
    elif step.do == "return_by_buyer":
        act("secretary", "ut_return_by_buyer")
    elif step.do == "deliver_to_objector":
        act("secretary", "ut_deliver_to_objector")
    elif step.do == "return_by_objector":
        act("secretary", "ut_return_by_objector")
    elif step.do == "pay_feeding_charges":
        act("sarpanch", "ut_pay_feeding_charges", {"amount": f["amount"]})


def _check_step(step: Step, error: Rule130Error | None, mismatches: list[str]) -> None:
    label = f"step {step.number} ({step.do} at {step.at.isoformat()})"
    if step.expect_error is None or step.expect_error is False:
        if error is not None:
            mismatches.append(f"{label}: unexpectedly refused: {error.message}")
        return
    if error is None:
        mismatches.append(f"{label}: expected a refusal, but it was accepted")
        return
    if step.expect_error is True:
        return
    wanted = str(step.expect_error).lower()
    if wanted not in error.message.lower():
        mismatches.append(f"{label}: refused with {error.message!r}, which does not contain {step.expect_error!r}")


def _text(value: Any) -> Any:
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _text(v) for k, v in value.items()}
    return value


def _result(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: _text(v) for k, v in summary.items() if k != "case_number"}


def _timeline(session: Session, case: Case, tz: str) -> list[dict[str, Any]]:
    events = session.scalars(select(CaseEvent).where(CaseEvent.case_id == case.id,
                                                     CaseEvent.kind.in_(("task", "timer", "refusal", "notification",
                                                                         "correction", "corrigendum"))))
    from zoneinfo import ZoneInfo
    ordered = cases.in_order(events)  # a timer due at a step's instant comes before the step
    timeline = []
    for e in ordered:
        entry = {"at": e.at.astimezone(ZoneInfo(tz)).isoformat(timespec="seconds"), "kind": e.kind, "name": e.name,
                 "actor": e.actor_role or "timer"}
        if e.kind == "refusal":
            entry["message"] = json.loads(e.detail_json or "{}").get("message")
        timeline.append(entry)
    return timeline


def _same(expected: Any, actual: Any) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return bool(expected == actual)
    try:
        return bool(Decimal(str(expected)) == Decimal(str(actual)))
    except InvalidOperation:
        return str(expected) == str(actual)


def _compare(expect: dict[str, Any], result: dict[str, Any]) -> list[str]:
    problems = []
    for key, wanted in expect.items():
        got = result.get(key)
        if isinstance(wanted, dict):
            if not isinstance(got, dict):
                problems.append(f"{key}: expected {wanted}, got {got}")
                continue
            for sub, value in wanted.items():
                if not _same(value, got.get(sub)):
                    problems.append(f"{key}.{sub}: expected {value}, got {got.get(sub)}")
        elif not _same(wanted, got):
            problems.append(f"{key}: expected {wanted}, got {got}")
    return problems
