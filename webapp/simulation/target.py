"""Where a simulation may write, and the officers it acts as: the database (a URL the product can
open, at this code's schema, served by no timer worker), the training Panchayat (never a live one),
the fit of each scenario to it, and the users the simulator makes (who cannot sign in).

Every check raises :class:`~webapp.simulation.scenario_file.ScenarioError` naming what is wrong and changes
nothing; :func:`webapp.simulation.simulate.run_scenarios` makes them all before anything runs.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session

from webapp.services.people import users
from webapp.simulation.scenario_file import Scenario, ScenarioError
from webapp.store import db
from webapp.store.models import Case, CaseEvent, Panchayat, User, WorkerLease
from webapp.values.casefile import name_key

# the simulator's officers (users the simulator made: webapp.services.people.users.create_simulator_user),
# named ``<name>-<Panchayat code>``; its receiving officers are ``sim-receiver-<code>-<n>``
ROLE_USERS = {"pound_keeper": "sim-pound-keeper", "secretary": "sim-secretary", "sarpanch": "sim-sarpanch",
              "appellate_authority": "sim-appellate"}


def check_database(url: str) -> None:
    """Refuse a ``--database`` that is not a database URL the product can open, or that cannot be
    reached, before anything runs.

    Raises:
        ScenarioError: naming the URL and what is wrong with it.
    """
    try:
        engine = db.make_engine(url)
    except (ArgumentError, ValueError) as error:  # NoSuchModuleError is an ArgumentError
        raise ScenarioError(f"--database: {url!r} is not a database URL rule130 can open "
                            f"(sqlite:///FILE or postgresql://...): {error}") from None
    try:
        with engine.connect():
            pass
    except SQLAlchemyError as error:
        raise ScenarioError(f"--database: cannot open {url!r}: {error.__class__.__name__}: "
                            f"{str(getattr(error, 'orig', None) or error).splitlines()[0]}") from None
    finally:
        engine.dispose()


def check_schema(engine: Engine, url: str) -> None:
    """Set up an empty database (Alembic, as ``rule130 init-db``); refuse one whose schema is not
    this code's newest revision, before anything is written to it (an upgrade is ``init-db``'s
    work, with the server stopped, not a side effect of a simulation).

    Raises:
        ScenarioError: naming the database's revision and the expected one.
    """
    revision, has_tables = db.schema_revision(engine)
    head = db.head_revision()
    if revision == head:
        return
    if revision is None and not has_tables:
        db.upgrade(url)
        return
    found = f"at schema revision {revision}" if revision else "tables but no rule130 schema revision"
    raise ScenarioError(f"--database: {url!r} has {found}, and this rule130 needs {head}; upgrade it first with "
                        f"rule130 init-db --database URL (the server stopped), or run into a new database; "
                        "nothing was changed")


def check_panchayat(session: Session, code: str) -> Panchayat | None:
    """The Panchayat ``code`` if the simulator may write into it (a training one), None if it does
    not exist yet (the simulator creates it as training); the simulator's user names must be free
    or its own.

    Raises:
        ScenarioError: a live Panchayat, in one sentence naming it and what it holds (its cases
            not started by the simulator's users, its users not made by the simulator); a user name
            the simulator needs that belongs to a user it did not make.
    """
    panchayat = session.scalar(select(Panchayat).where(Panchayat.code == code))
    if panchayat is not None and not panchayat.training:
        simulated = select(User.id).where(User.simulated.is_(True))
        by_simulator = select(CaseEvent.case_id).where(CaseEvent.kind == "start",
                                                       CaseEvent.actor_user_id.in_(simulated))
        cases_held = session.scalar(select(func.count(Case.id)).where(Case.panchayat_id == panchayat.id,
                                                                      Case.id.not_in(by_simulator))) or 0
        officers = session.scalar(select(func.count(User.id)).where(User.panchayat_id == panchayat.id,
                                                                    User.simulated.is_(False))) or 0
        held = [f"{n} real {word}{'' if n == 1 else 's'}" for n, word in ((cases_held, "case"), (officers, "officer"))
                if n]
        what = (f"it holds {' and '.join(held)}" + (" (users not made by the simulator)" if officers else "")
                if held else "it holds no real case or officer yet, but it is not a training Panchayat")
        raise ScenarioError(f"the Panchayat {code} ({panchayat.name}) is a live Panchayat: {what}; the simulator "
                            "writes only into a training Panchayat (rule130 create-panchayat CODE --training) or "
                            "into a new one it creates (--panchayat NEWCODE), so nothing was changed")
    for name in ROLE_USERS.values():
        user = session.scalar(select(User).where(func.lower(User.username) == f"{name}-{code}".lower()))
        if user is not None and not user.simulated:
            raise ScenarioError(f"the user {user.username} exists and was not made by the simulator, which needs "
                                f"that name for Panchayat {code}; run into another Panchayat (--panchayat CODE), "
                                "so nothing was changed")
    return panchayat


def no_live_worker(session: Session) -> None:
    """Refuse to run into a database a timer worker is serving (a running ``rule130 serve`` or
    ``rule130 worker``): the simulator moves its own virtual clock and fires its cases' timers
    itself, and a worker firing them at the same moment would race it step by step.

    A worker's lease or heartbeat row (``worker_lease``) is live until its expiry, in wall-clock
    time (not the scenario's clock).
    Raises:
        ScenarioError: naming the worker and what to do.
    """
    wall = datetime.now(UTC)
    live = [lease for lease in session.scalars(select(WorkerLease)) if lease.expires_at > wall]
    if live:
        raise ScenarioError(f"a timer worker is running on this database ({live[0].holder}); stop the server or "
                            "worker first, or run the scenarios into another database: the worker would fire "
                            "their timers at the same moment as the simulator")


def _settings(scenario: Scenario) -> tuple[str, int, int]:
    return (scenario.timezone, int(scenario.settings.get("appeal_period_days", 30)),
            int(scenario.settings.get("return_period_days", 7)))


def check_fit(scenarios: list[Scenario], existing: Panchayat | None, code: str) -> None:
    """Every scenario must fit the Panchayat its case is opened in (the settings are copied into the
    case file when it starts: RULE130.md, "A Panchayat record")."""
    if existing is not None:
        wanted = (existing.timezone, existing.appeal_period_days, existing.return_period_days)
        owner = f"the Panchayat {code}"
    else:
        wanted, owner = _settings(scenarios[0]), f"scenario {scenarios[0].name} (which creates {code})"
    names = ("timezone", "settings.appeal_period_days", "settings.return_period_days")
    for scenario in scenarios:
        for name, have, want in zip(names, _settings(scenario), wanted, strict=False):
            if have != want:
                raise ScenarioError(f"scenario {scenario.name}: {name} is {have}, but {owner} has {want}; "
                                    "run it into another Panchayat (--panchayat CODE)")


def people(session: Session, code: str, scenario: Scenario) -> dict[str, User]:
    """The simulator's officers of the training Panchayat ``code`` (created, with the Panchayat as a
    training one, when missing): users the simulator made, who cannot sign in.

    Raises:
        ScenarioError: the Panchayat is live, or a user name is another user's (checked before the
            run by :func:`check_panchayat`; checked again here, where the writing starts).
    """
    panchayat = check_panchayat(session, code)
    if panchayat is None:
        samiti = f"SIMS{code[3:]}" if code.startswith("SIM") and code[3:] else f"SIMS-{code}"
        tz, appeal, returns = _settings(scenario)
        panchayat = users.create_panchayat(session, code, f"Simulated Panchayat {code}", samiti, timezone=tz,
                                           appeal_period_days=appeal, training=True)
        panchayat.return_period_days = returns
    people = {}
    for role, name in ROLE_USERS.items():
        username = f"{name}-{code}"
        user = session.scalar(select(User).where(User.username == username))
        if user is None:
            user = users.create_simulator_user(
                session, username, role, display_name=role.replace("_", " "),
                panchayat_code=code if role != "appellate_authority" else None,
                samiti_code=panchayat.samiti_code if role == "appellate_authority" else None)
        people[role] = user
    return people


def receiver(session: Session, name: str, code: str) -> User:
    """The receiving officer the simulator made under the display name ``name`` (one per name,
    across scenarios and Panchayats), made now when there is none. Never a real receiving officer:
    a training case is never sent to a real person."""
    made = session.scalars(select(User).where(User.role == "receiving_officer", User.simulated.is_(True),
                                              User.active.is_(True)).order_by(User.id))
    found = next((user for user in made if name_key(user.display_name) == name_key(name)), None)
    if found is not None:
        return found
    taken = set(session.scalars(select(User.username).where(User.username.like(f"sim-receiver-{code}-%"))))
    number = next(n for n in range(1, len(taken) + 2) if f"sim-receiver-{code}-{n}" not in taken)
    return users.create_simulator_user(session, f"sim-receiver-{code}-{number}", "receiving_officer",
                                       display_name=name)
