"""Filling a training Panchayat from a scenario: a case at any stage, on the training clock.

``rule130 training TRN1 --fill tests/scenarios/s2-objection-proved-after-sale.yaml --through-step 3``
opens a case of the training Panchayat ``TRN1`` and runs the scenario's impoundment and its first
3 steps into it (tests/scenarios/FORMAT.md), through the real process and services as the
simulator does (:func:`webapp.simulation.simulate.run_into`), so the trainees take it from there ("an objection
was filed; the sarpanch must decide").

The scenario's instants are moved by whole calendar days of the Panchayat's zone (the times of day
kept) so that its last step falls on the training clock's today, or yesterday when its time of day
is still to come: every legal period keeps its length (RULE130.md: periods are counted in calendar
days), the timers due up to the training clock's now fire, and those after it wait for the clock.
The scenario's expectations are not checked (they are about the whole case).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import select

from webapp.services.panchayats import training
from webapp.simulation.scenario_file import Scenario, ScenarioError, Step, load_scenario
from webapp.simulation.simulate import Result, run_into
from webapp.store import db
from webapp.store.models import Case, CaseTask, Panchayat
from webapp.values import legal_time


@dataclasses.dataclass(frozen=True)
class Filled:
    """A case filled from a scenario: its number, how far its instants moved (calendar days) and the
    names of its tasks open now (ready), by lane."""

    case_number: str
    shifted_days: int
    open_tasks: tuple[tuple[str, str], ...]


def shift_days(last: datetime, now: datetime, tz: str) -> int:
    """The whole number of calendar days (zone ``tz``) that moves the instant ``last`` to ``now``'s
    local day at the same time of day, one day less when that would still be after ``now``."""
    days = (legal_time.local_day(now, tz) - legal_time.local_day(last, tz)).days
    if moved(last, days, tz) > now:
        days -= 1
    return days


def moved(instant: datetime, days: int, tz: str) -> datetime:
    """``instant`` moved by ``days`` calendar days in zone ``tz``, its local time of day kept."""
    local = instant.astimezone(ZoneInfo(tz))
    return (local.replace(tzinfo=None) + timedelta(days=days)).replace(tzinfo=ZoneInfo(tz))


def fill(database_url: str, code: str, path: str | Path, through_step: int | None = None) -> Filled:
    """Open a case of the training Panchayat ``code`` from the scenario file ``path``, through its
    step ``through_step`` (1-based; 0: only the impoundment; None: every step).

    Raises:
        ScenarioError: the file is invalid (as ``rule130 simulate``); ``code`` is not a training
            Panchayat in use; the step number is out of range; or the database refuses a simulation
            (:func:`webapp.simulation.simulate.run_scenarios`: a running timer worker, another schema).
    """
    scenario = load_scenario(Path(path))
    steps = scenario.steps if through_step is None else scenario.steps[:through_step]
    if through_step is not None and not 0 <= through_step <= len(scenario.steps):
        raise ScenarioError(f"--through-step: {scenario.name} has steps 1 to {len(scenario.steps)}, "
                            f"not {through_step}")
    engine = db.make_engine(database_url)
    try:
        with db.session_factory(engine)() as session:
            panchayat = session.scalar(select(Panchayat).where(Panchayat.code == code))
            if panchayat is None or not panchayat.training or panchayat.archived_at is not None:
                raise ScenarioError(f"--fill: {code} is not a training Panchayat (make one with rule130 training "
                                    f"{code}); a live Panchayat is never filled")
            now = training.clock_for(panchayat).now()
    finally:
        engine.dispose()
    last = steps[-1].at if steps else scenario.case["impounded_at"]
    days = shift_days(last, now, scenario.timezone)
    shifted = _shifted(scenario, steps, days)
    [result] = run_into(database_url, [shifted], code, end=now)
    return Filled(result.case_number, days, _open_tasks(database_url, result))


def _shifted(scenario: Scenario, steps: list[Step], days: int) -> Scenario:
    tz = scenario.timezone
    case = {**scenario.case, "impounded_at": moved(scenario.case["impounded_at"], days, tz)}
    return dataclasses.replace(scenario, case=case, expect={},
                               steps=[dataclasses.replace(step, at=moved(step.at, days, tz)) for step in steps])


def _open_tasks(database_url: str, result: Result) -> tuple[tuple[str, str], ...]:
    engine = db.make_engine(database_url)
    try:
        with db.session_factory(engine)() as session:
            rows = session.execute(select(CaseTask.lane, CaseTask.title).join(Case, Case.id == CaseTask.case_id)
                                   .where(Case.case_number == result.case_number, CaseTask.state == "ready")
                                   .order_by(CaseTask.id))
            return tuple((str(lane), str(name)) for lane, name in rows)
    finally:
        engine.dispose()

